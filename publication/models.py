from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy

from citations.models import CitationReference
from foundation.ids import new_candidate_id, new_publication_id
from runs.models import AgentCall, Run

REVISIONS_PER_BLOCK = 2  # modifications after the first commit of a block
REVISIONS_PER_RUN = 8


class SourceHint(models.TextChoices):
    VERIFIED = "verified", _("来源已核验")
    PARTIAL = "sources_partial", _("部分来源已核验")
    UNVERIFIED = "sources_unverified", _("来源未核验")
    UNKNOWN = "unknown", _("来源状态未知")
    NONE = "none", _("无引用")


class Origin(models.TextChoices):
    ASSISTANT_TEXT = "A", _("助手文本")
    ANSWER_PART = "B", _("回答片段工具")


class AnswerBlock(models.Model):
    """A durable answer block: identity issued by the host, revised in place."""

    id = models.CharField(
        primary_key=True,
        max_length=40,
        default=new_publication_id,
        editable=False,
        verbose_name=pgettext_lazy("field", "ID"),
    )
    run = models.ForeignKey(
        Run,
        on_delete=models.CASCADE,
        related_name="blocks",
        verbose_name=pgettext_lazy("field", "运行"),
    )
    agent_call = models.ForeignKey(
        AgentCall,
        on_delete=models.CASCADE,
        related_name="blocks",
        verbose_name=pgettext_lazy("field", "智能体调用"),
    )
    delivery_ordinal = models.PositiveIntegerField(verbose_name=pgettext_lazy("field", "投递序号"))
    origin = models.CharField(
        max_length=1, choices=Origin.choices, verbose_name=pgettext_lazy("field", "来源方式")
    )
    current_revision = models.PositiveIntegerField(
        default=1, verbose_name=pgettext_lazy("field", "当前修订号")
    )
    created_at = models.DateTimeField(
        default=timezone.now, verbose_name=pgettext_lazy("field", "创建时间")
    )

    class Meta:
        verbose_name = pgettext_lazy("model", "回答块")
        verbose_name_plural = pgettext_lazy("models", "回答块")
        ordering = ["run_id", "delivery_ordinal"]
        constraints = [
            models.UniqueConstraint(
                fields=["run", "delivery_ordinal"], name="answerblock_unique_ordinal"
            )
        ]

    def __str__(self) -> str:
        return self.id


class BlockRevision(models.Model):
    class Role(models.TextChoices):
        ANSWER = "answer", pgettext_lazy("block role", "回答")
        NOTE = "note", pgettext_lazy("block role", "说明")

    block = models.ForeignKey(
        AnswerBlock,
        on_delete=models.CASCADE,
        related_name="revisions",
        verbose_name=pgettext_lazy("field", "回答块"),
    )
    # The block's run, kept on each revision (a block never changes run) so the
    # exact-duplicate check finds this run's revisions of a body by one index
    # lookup, whatever the planner knows of the run (see blockrevision_run_digest).
    # Every revision this release writes has it and migration 0004 filled the older
    # ones; nullable only so that processes of the previous release, which do not
    # write it, keep committing during a rolling upgrade (docs/deployment.md).
    run = models.ForeignKey(
        Run,
        null=True,
        on_delete=models.CASCADE,
        related_name="+",
        db_index=False,
        verbose_name=pgettext_lazy("field", "运行"),
    )
    revision = models.PositiveIntegerField(verbose_name=pgettext_lazy("field", "修订号"))
    # {type: text, text} or {type: table, columns, rows}
    content = models.JSONField(verbose_name=pgettext_lazy("field", "内容"))
    role = models.CharField(
        max_length=10,
        choices=Role.choices,
        default=Role.ANSWER,
        verbose_name=pgettext_lazy("field", "角色"),
    )
    body_digest = models.CharField(max_length=64, verbose_name=pgettext_lazy("field", "正文摘要值"))
    # Null for legacy revisions written before source status existed: reads as
    # "unknown", which is not the same as a verified empty source set ("none").
    source_hint = models.CharField(
        max_length=20,
        choices=SourceHint.choices,
        null=True,
        blank=True,
        verbose_name=pgettext_lazy("field", "来源提示"),
    )
    truncated = models.BooleanField(default=False, verbose_name=pgettext_lazy("field", "已截断"))
    committed_at = models.DateTimeField(
        default=timezone.now, verbose_name=pgettext_lazy("field", "保存时间")
    )
    attempt = models.OneToOneField(
        "PublicationAttempt",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="committed_revision",
        verbose_name=pgettext_lazy("field", "发布尝试"),
    )

    class Meta:
        verbose_name = pgettext_lazy("model", "块修订")
        verbose_name_plural = pgettext_lazy("models", "块修订")
        ordering = ["block_id", "revision"]
        constraints = [
            models.UniqueConstraint(
                fields=["block", "revision"], name="blockrevision_unique_revision"
            )
        ]
        # The exact-duplicate check looks this run's revisions up by digest on every
        # candidate. Reached from the run's blocks instead, it read every block of the
        # call (a plan chosen on statistics that did not know the run yet): linear in
        # the run's length. By digest alone, every run's copies of a common answer.
        indexes = [models.Index(fields=["run", "body_digest"], name="blockrevision_run_digest")]

    def __str__(self) -> str:
        return f"{self.block_id} r{self.revision}"


class SourceBinding(models.Model):
    """A revision's dependency on a citation marker, resolved or not."""

    revision = models.ForeignKey(
        BlockRevision,
        on_delete=models.CASCADE,
        related_name="bindings",
        verbose_name=pgettext_lazy("field", "修订号"),
    )
    cited_id = models.CharField(
        max_length=200,
        help_text=_("引用标记中所写的 ID"),
        verbose_name=pgettext_lazy("field", "标记中的引用 ID"),
    )
    citation = models.ForeignKey(
        CitationReference,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        verbose_name=pgettext_lazy("field", "引用"),
    )
    verified = models.BooleanField(default=False, verbose_name=pgettext_lazy("field", "已核验"))

    class Meta:
        verbose_name = pgettext_lazy("model", "来源绑定")
        verbose_name_plural = pgettext_lazy("models", "来源绑定")
        constraints = [
            models.UniqueConstraint(fields=["revision", "cited_id"], name="sourcebinding_unique")
        ]

    def __str__(self) -> str:
        return self.cited_id


class BlockDependency(models.Model):
    """A revision inherits the sources of the blocks it references ([[block:…]])."""

    revision = models.ForeignKey(
        BlockRevision,
        on_delete=models.CASCADE,
        related_name="dependencies",
        verbose_name=pgettext_lazy("field", "修订号"),
    )
    depends_on = models.ForeignKey(
        AnswerBlock,
        on_delete=models.CASCADE,
        related_name="dependents",
        verbose_name=pgettext_lazy("field", "依赖的回答块"),
    )

    class Meta:
        verbose_name = pgettext_lazy("model", "块依赖")
        verbose_name_plural = pgettext_lazy("models", "块依赖")
        constraints = [
            models.UniqueConstraint(
                fields=["revision", "depends_on"], name="blockdependency_unique"
            )
        ]

    def __str__(self) -> str:
        return f"{self.revision_id} → {self.depends_on_id}"


class PublicationAttempt(models.Model):
    """Every candidate and what became of it: the audit trail and quota ledger."""

    class Entry(models.TextChoices):
        ASSISTANT_TEXT = "A", _("助手文本")
        ANSWER_PART = "B", _("回答片段工具")

    class Outcome(models.TextChoices):
        COMMITTED = "COMMITTED", _("已保存")
        UNCHANGED = "UNCHANGED", _("未变化")
        PREVIEWED = "PREVIEWED", _("仅预览，未保存")
        REJECTED = "REJECTED", _("已拒绝")
        SAVE_UNKNOWN = "SAVE_UNKNOWN", _("保存结果未知")

    candidate_id = models.CharField(
        max_length=40,
        unique=True,
        default=new_candidate_id,
        verbose_name=pgettext_lazy("field", "候选 ID"),
    )
    run = models.ForeignKey(
        Run,
        on_delete=models.CASCADE,
        related_name="publication_attempts",
        verbose_name=pgettext_lazy("field", "运行"),
    )
    agent_call = models.ForeignKey(
        AgentCall,
        on_delete=models.CASCADE,
        related_name="publication_attempts",
        verbose_name=pgettext_lazy("field", "智能体调用"),
    )
    entry = models.CharField(
        max_length=1, choices=Entry.choices, verbose_name=pgettext_lazy("field", "入口")
    )
    outcome = models.CharField(
        max_length=14, choices=Outcome.choices, verbose_name=pgettext_lazy("field", "结果")
    )
    reason = models.CharField(
        max_length=64, blank=True, verbose_name=pgettext_lazy("field", "原因")
    )
    effect = models.CharField(
        max_length=20,
        blank=True,
        help_text=_("被拒绝的操作：create（新建区块）、revise（修改区块）"),
        verbose_name=pgettext_lazy("field", "操作"),
    )
    replaces = models.CharField(
        max_length=200, blank=True, verbose_name=pgettext_lazy("field", "替换的区块")
    )
    block = models.ForeignKey(
        AnswerBlock,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="attempts",
        verbose_name=pgettext_lazy("field", "回答块"),
    )
    revision = models.PositiveIntegerField(
        null=True, blank=True, verbose_name=pgettext_lazy("field", "修订号")
    )
    body_digest = models.CharField(
        max_length=64, blank=True, verbose_name=pgettext_lazy("field", "正文摘要值")
    )
    quota_consumed = models.BooleanField(
        default=False, verbose_name=pgettext_lazy("field", "占用修改次数")
    )
    # The prepared candidate, kept so a preview can be re-read (through the
    # reader, with a fresh authorization check of cited_ids) and audited.
    content = models.JSONField(null=True, blank=True, verbose_name=pgettext_lazy("field", "内容"))
    source_hint = models.CharField(
        max_length=20, blank=True, verbose_name=pgettext_lazy("field", "来源提示")
    )
    cited_ids = models.JSONField(
        default=list, blank=True, verbose_name=pgettext_lazy("field", "引用 ID")
    )
    truncated = models.BooleanField(default=False, verbose_name=pgettext_lazy("field", "已截断"))
    created_at = models.DateTimeField(
        default=timezone.now, verbose_name=pgettext_lazy("field", "创建时间")
    )

    class Meta:
        verbose_name = pgettext_lazy("model", "发布尝试")
        verbose_name_plural = pgettext_lazy("models", "发布尝试")
        ordering = ["id"]

    def __str__(self) -> str:
        return self.candidate_id
