"""The vocabulary an operator declared, tenant-wide or for one knowledge
(``Vocabulary``, ``declare_vocabulary``); ``knowledge.vocabulary`` validates it."""

from typing import Any

from django.db import models
from django.utils.translation import pgettext_lazy

from knowledge.models.versions import Knowledge
from tenancy.models import Tenant


class Vocabulary(models.Model):
    """Vocabulary an operator declared (manifest ``vocabulary:``, ``ingest --vocabulary``):
    tenant-wide when ``knowledge`` is null, else for that knowledge. ``entries`` is
    ``{term: [expansion, …]}`` as ``knowledge.vocabulary.validate_entries`` accepted it."""

    tenant = models.ForeignKey(
        Tenant,
        on_delete=models.CASCADE,
        related_name="+",
        verbose_name=pgettext_lazy("field", "租户"),
    )
    knowledge = models.OneToOneField(
        Knowledge,
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="vocabulary",
        verbose_name=pgettext_lazy("field", "知识库"),
    )
    entries = models.JSONField(default=dict, verbose_name=pgettext_lazy("field", "词条"))

    class Meta:
        verbose_name = pgettext_lazy("model", "领域词表")
        verbose_name_plural = pgettext_lazy("models", "领域词表")
        constraints = [
            models.UniqueConstraint(
                fields=["tenant"],
                condition=models.Q(knowledge__isnull=True),
                name="vocabulary_one_tenant_wide",
            )
        ]

    def __str__(self) -> str:
        return f"{self.tenant_id}/{self.knowledge_id or '—'}"


def declare_vocabulary(
    tenant: Tenant, knowledge: Knowledge | None, entries: dict[str, Any]
) -> bool:
    """Store validated entries (``knowledge.vocabulary.validate_entries(...).entries()``)
    as the tenant's (knowledge None) or one knowledge's, replacing what was declared;
    True if anything changed. It applies from the next search; no statistics change."""
    current = Vocabulary.objects.filter(tenant=tenant, knowledge=knowledge).first()
    if current is not None and current.entries == entries:
        return False
    Vocabulary.objects.update_or_create(
        tenant=tenant, knowledge=knowledge, defaults={"entries": entries}
    )
    return True
