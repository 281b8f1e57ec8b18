"""Many-to-many writes bypass save(): refuse them on published agent versions,
and allow only published knowledge versions in allowed_knowledge."""

from typing import Any

from django.db.models import Model
from django.db.models.signals import m2m_changed
from django.dispatch import receiver

from agents.models import AgentVersion
from knowledge.models import ImmutableVersionError, KnowledgeVersion


def _guard(instance: object, action: str, pk_set: set[int] | None, field: str) -> None:
    if not action.startswith("pre_"):
        return
    if isinstance(instance, AgentVersion):
        versions = [instance]
    else:  # reverse side: instance is a KnowledgeVersion / Agent, pk_set are agent versions
        versions = list(AgentVersion.objects.filter(pk__in=pk_set or ()))
    for version in versions:
        if (
            AgentVersion.objects.filter(pk=version.pk)
            .exclude(status=AgentVersion.Status.DRAFT)
            .exists()
        ):
            raise ImmutableVersionError(
                f"Agent version {version} is published; its {field} cannot change."
            )
    if field == "allowed_knowledge" and action == "pre_add" and isinstance(instance, AgentVersion):
        unpublished = KnowledgeVersion.objects.filter(pk__in=pk_set or ()).exclude(
            status=KnowledgeVersion.Status.PUBLISHED
        )
        if unpublished.exists():
            raise ImmutableVersionError(
                "allowed_knowledge may only name PUBLISHED knowledge versions."
            )


@receiver(m2m_changed, sender=AgentVersion.allowed_knowledge.through)
def guard_allowed_knowledge(sender: type[Model], **signal: Any) -> None:
    _guard(signal["instance"], signal["action"], signal["pk_set"], "allowed_knowledge")


@receiver(m2m_changed, sender=AgentVersion.sub_agents.through)
def guard_sub_agents(sender: type[Model], **signal: Any) -> None:
    _guard(signal["instance"], signal["action"], signal["pk_set"], "sub_agents")
