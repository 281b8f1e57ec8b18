from typing import Any

from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy

from foundation.ids import new_citation_id, new_numeric_handle
from knowledge.models import Chunk, Document, Fact, KnowledgeVersion
from runs.models import AgentCall, Run

MAX_CITATIONS_PER_RUN = 256


class CitationReference(models.Model):
    """A run's private reference behind a platform-issued cite_ ID.

    Never serialized into the public run or events (they carry only the public
    fields). Digest, retrieval parameters and the excerpt are cleared on archive.
    """

    # Not a field: where the chunk begins on its page, set by a preview (citations/preview.py).
    chunk_paragraph: int | None

    id = models.CharField(
        primary_key=True,
        max_length=40,
        default=new_citation_id,
        editable=False,
        verbose_name=pgettext_lazy("field", "ID"),
    )
    run = models.ForeignKey(
        Run,
        on_delete=models.CASCADE,
        related_name="citations",
        verbose_name=pgettext_lazy("field", "运行"),
    )
    agent_call = models.ForeignKey(
        AgentCall,
        on_delete=models.CASCADE,
        related_name="citations",
        verbose_name=pgettext_lazy("field", "智能体调用"),
    )
    version = models.ForeignKey(
        KnowledgeVersion,
        on_delete=models.PROTECT,
        related_name="citations",
        verbose_name=pgettext_lazy("field", "版本"),
    )
    document = models.ForeignKey(
        Document,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        verbose_name=pgettext_lazy("field", "文档"),
    )
    chunk = models.ForeignKey(
        Chunk,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        verbose_name=pgettext_lazy("field", "文本片段"),
    )
    ordinal = models.PositiveIntegerField(
        help_text=_("在本次运行中的发放顺序（从 1 开始）"),
        verbose_name=pgettext_lazy("field", "序号"),
    )
    title = models.CharField(max_length=500, verbose_name=pgettext_lazy("field", "标题"))
    # Public source reference {type, id, version?, page?, locator?, uri?}.
    source_ref = models.JSONField(verbose_name=pgettext_lazy("field", "来源定位"))
    # REMOTE: the item's id and version as the endpoint returned them.
    remote_item_id = models.CharField(
        max_length=500, blank=True, verbose_name=pgettext_lazy("field", "远程条目 ID")
    )
    remote_item_version = models.CharField(
        max_length=200, blank=True, verbose_name=pgettext_lazy("field", "远程条目版本")
    )
    # Private: cleared on archive; a reference without digest cannot be previewed.
    digest = models.CharField(
        max_length=64, null=True, blank=True, verbose_name=pgettext_lazy("field", "摘要值")
    )
    query = models.TextField(null=True, blank=True, verbose_name=pgettext_lazy("field", "检索问题"))
    top_k = models.PositiveIntegerField(
        null=True, blank=True, verbose_name=pgettext_lazy("field", "返回条数")
    )
    created_at = models.DateTimeField(
        default=timezone.now, verbose_name=pgettext_lazy("field", "创建时间")
    )

    class Meta:
        verbose_name = pgettext_lazy("model", "引用")
        verbose_name_plural = pgettext_lazy("models", "引用")
        ordering = ["run_id", "ordinal"]
        constraints = [
            models.UniqueConstraint(fields=["run", "ordinal"], name="citation_unique_ordinal")
        ]

    def __str__(self) -> str:
        return self.id

    def public(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "agentCallId": f"call_{self.agent_call_id}",
            "knowledgeId": self.version.knowledge.key,
            "knowledgeVersion": self.version.version,
            "documentId": self.document.key if self.document is not None else self.remote_item_id,
            "chunkId": str(self.chunk_id) if self.chunk_id else self.remote_item_id,
            "title": self.title,
            "sourceRef": self.source_ref,
        }


class NumericHandle(models.Model):
    """A num_ handle for one declared fact, scoped to a run and a knowledge version."""

    # Not a field: the cite_ ID of the search that reported it (citations/issuance.py).
    retrieved_with: str

    id = models.CharField(
        primary_key=True,
        max_length=40,
        default=new_numeric_handle,
        editable=False,
        verbose_name=pgettext_lazy("field", "ID"),
    )
    run = models.ForeignKey(
        Run,
        on_delete=models.CASCADE,
        related_name="numeric_handles",
        verbose_name=pgettext_lazy("field", "运行"),
    )
    agent_call = models.ForeignKey(
        AgentCall,
        on_delete=models.CASCADE,
        related_name="numeric_handles",
        verbose_name=pgettext_lazy("field", "智能体调用"),
    )
    version = models.ForeignKey(
        KnowledgeVersion, on_delete=models.PROTECT, verbose_name=pgettext_lazy("field", "版本")
    )
    fact = models.ForeignKey(
        Fact, on_delete=models.PROTECT, verbose_name=pgettext_lazy("field", "事实")
    )
    citation = models.ForeignKey(
        CitationReference,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        verbose_name=pgettext_lazy("field", "引用"),
    )
    ordinal = models.PositiveIntegerField(verbose_name=pgettext_lazy("field", "序号"))
    created_at = models.DateTimeField(
        default=timezone.now, verbose_name=pgettext_lazy("field", "创建时间")
    )

    class Meta:
        verbose_name = pgettext_lazy("model", "数值句柄")
        verbose_name_plural = pgettext_lazy("models", "数值句柄")
        ordering = ["run_id", "ordinal"]
        constraints = [
            models.UniqueConstraint(fields=["run", "ordinal"], name="numerichandle_unique_ordinal"),
            models.UniqueConstraint(
                fields=["run", "agent_call", "fact"], name="numerichandle_unique_fact"
            ),
        ]

    def __str__(self) -> str:
        return self.id
