"""Releasing an agent version that uses a newly published knowledge version.

An app answers only from the exact knowledge versions its pinned agent version allows, and a
published agent version never changes. So making an app use a new knowledge version is a
release: a new agent version, a copy of the pinned one that also allows the new knowledge
version, published and pinned in the app. Citations keep naming the exact version they came
from; rolling back is pinning the previous agent version again (docs/ingest.md).
"""

from django.db import transaction

from agents.models import AgentPin, AgentVersion
from knowledge.models import ImmutableVersionError, KnowledgeVersion
from tenancy.models import App


class ReleaseRefused(Exception):
    """Why the release cannot be made, in words an operator can act on."""


def _next_label(pinned: AgentVersion) -> str:
    taken = set(pinned.agent.versions.values_list("version", flat=True))
    numbers = [int(label) for label in taken if label.isdigit()]
    number = max(numbers, default=0) + 1
    while str(number) in taken:
        number += 1
    return str(number)


@transaction.atomic
def release_with_knowledge(
    *, app: App, agent_key: str, version: KnowledgeVersion
) -> tuple[AgentVersion, AgentVersion]:
    """Publish a copy of the agent version ``app`` pins for ``agent_key`` that also allows
    ``version``, and pin it in ``app``. Returns (the version pinned before, the new one)."""
    if version.status != KnowledgeVersion.Status.PUBLISHED:
        raise ReleaseRefused(f"{version.label} is {version.status}: publish it first")
    if version.knowledge.tenant_id != app.tenant_id:
        raise ReleaseRefused(f"{version.label} belongs to another tenant than {app.slug}")
    pin = (
        AgentPin.objects.select_for_update()
        .select_related("version__agent")
        .filter(app=app, agent__key=agent_key)
        .first()
    )
    if pin is None:
        raise ReleaseRefused(f"{app.slug} pins no agent {agent_key!r}")
    pinned = pin.version
    allowed = list(pinned.allowed_knowledge.all())
    if version in allowed:
        raise ReleaseRefused(f"{pinned} already allows {version.label}")
    released = AgentVersion.objects.create(
        agent=pinned.agent,
        version=_next_label(pinned),
        instructions=pinned.instructions,
        model=pinned.model,
        routing=pinned.routing,
        max_steps=pinned.max_steps,
    )
    released.allowed_knowledge.set([*allowed, version])
    released.sub_agents.set(pinned.sub_agents.all())
    released.status = AgentVersion.Status.PUBLISHED
    try:
        released.save()
        pin.version = released
        pin.save()
    except ImmutableVersionError as exc:
        raise ReleaseRefused(str(exc))
    return pinned, released
