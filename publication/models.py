from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from citations.models import CitationReference
from foundation.ids import new_candidate_id, new_publication_id
from runs.models import AgentCall, Run

REVISIONS_PER_BLOCK = 2  # modifications after the first commit of a block
REVISIONS_PER_RUN = 8


class SourceHint(models.TextChoices):
    VERIFIED = "verified"
    PARTIAL = "sources_partial"
    UNVERIFIED = "sources_unverified"
    UNKNOWN = "unknown"
    NONE = "none"


class Origin(models.TextChoices):
    ASSISTANT_TEXT = "A", "Assistant text"
    ANSWER_PART = "B", "send_answer_part"


class AnswerBlock(models.Model):
    """A durable answer block: identity issued by the host, revised in place."""

    id = models.CharField(
        primary_key=True, max_length=40, default=new_publication_id, editable=False
    )
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="blocks")
    agent_call = models.ForeignKey(AgentCall, on_delete=models.CASCADE, related_name="blocks")
    delivery_ordinal = models.PositiveIntegerField()
    origin = models.CharField(max_length=1, choices=Origin.choices)
    current_revision = models.PositiveIntegerField(default=1)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        verbose_name = _("回答块")
        verbose_name_plural = _("回答块")
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
        ANSWER = "answer"
        NOTE = "note"

    block = models.ForeignKey(AnswerBlock, on_delete=models.CASCADE, related_name="revisions")
    # The block's run, kept on each revision (a block never changes run) so the
    # exact-duplicate check finds this run's revisions of a body by one index
    # lookup, whatever the planner knows of the run (see blockrevision_run_digest).
    # Every revision this release writes has it and migration 0004 filled the older
    # ones; nullable only so that processes of the previous release, which do not
    # write it, keep committing during a rolling upgrade (docs/deployment.md).
    run = models.ForeignKey(
        Run, null=True, on_delete=models.CASCADE, related_name="+", db_index=False
    )
    revision = models.PositiveIntegerField()
    # {type: text, text} or {type: table, columns, rows}
    content = models.JSONField()
    role = models.CharField(max_length=10, choices=Role.choices, default=Role.ANSWER)
    body_digest = models.CharField(max_length=64)
    # Null for legacy revisions written before source status existed: reads as
    # "unknown", which is not the same as a verified empty source set ("none").
    source_hint = models.CharField(max_length=20, choices=SourceHint.choices, null=True, blank=True)
    truncated = models.BooleanField(default=False)
    committed_at = models.DateTimeField(default=timezone.now)
    attempt = models.OneToOneField(
        "PublicationAttempt",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="committed_revision",
    )

    class Meta:
        verbose_name = _("块修订")
        verbose_name_plural = _("块修订")
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

    revision = models.ForeignKey(BlockRevision, on_delete=models.CASCADE, related_name="bindings")
    cited_id = models.CharField(max_length=200, help_text="The ID as written in the marker")
    citation = models.ForeignKey(
        CitationReference, null=True, blank=True, on_delete=models.SET_NULL
    )
    verified = models.BooleanField(default=False)

    class Meta:
        verbose_name = _("来源绑定")
        verbose_name_plural = _("来源绑定")
        constraints = [
            models.UniqueConstraint(fields=["revision", "cited_id"], name="sourcebinding_unique")
        ]


class BlockDependency(models.Model):
    """A revision inherits the sources of the blocks it references ([[block:…]])."""

    revision = models.ForeignKey(
        BlockRevision, on_delete=models.CASCADE, related_name="dependencies"
    )
    depends_on = models.ForeignKey(AnswerBlock, on_delete=models.CASCADE, related_name="dependents")

    class Meta:
        verbose_name = _("块依赖")
        verbose_name_plural = _("块依赖")
        constraints = [
            models.UniqueConstraint(
                fields=["revision", "depends_on"], name="blockdependency_unique"
            )
        ]


class PublicationAttempt(models.Model):
    """Every candidate and what became of it: the audit trail and quota ledger."""

    class Entry(models.TextChoices):
        ASSISTANT_TEXT = "A"
        ANSWER_PART = "B"

    class Outcome(models.TextChoices):
        COMMITTED = "COMMITTED"
        UNCHANGED = "UNCHANGED"
        PREVIEWED = "PREVIEWED"
        REJECTED = "REJECTED"
        SAVE_UNKNOWN = "SAVE_UNKNOWN"

    candidate_id = models.CharField(max_length=40, unique=True, default=new_candidate_id)
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="publication_attempts")
    agent_call = models.ForeignKey(
        AgentCall, on_delete=models.CASCADE, related_name="publication_attempts"
    )
    entry = models.CharField(max_length=1, choices=Entry.choices)
    outcome = models.CharField(max_length=14, choices=Outcome.choices)
    reason = models.CharField(max_length=64, blank=True)
    effect = models.CharField(
        max_length=20, blank=True, help_text="The effect refused: create, revise"
    )
    replaces = models.CharField(max_length=200, blank=True)
    block = models.ForeignKey(
        AnswerBlock, null=True, blank=True, on_delete=models.SET_NULL, related_name="attempts"
    )
    revision = models.PositiveIntegerField(null=True, blank=True)
    body_digest = models.CharField(max_length=64, blank=True)
    quota_consumed = models.BooleanField(default=False)
    # The prepared candidate, kept so a preview can be re-read (through the
    # reader, with a fresh authorization check of cited_ids) and audited.
    content = models.JSONField(null=True, blank=True)
    source_hint = models.CharField(max_length=20, blank=True)
    cited_ids = models.JSONField(default=list, blank=True)
    truncated = models.BooleanField(default=False)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        verbose_name = _("发布尝试")
        verbose_name_plural = _("发布尝试")
        ordering = ["id"]
