from typing import Any

from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from agents.models import AgentVersion
from foundation.ids import new_run_id
from tenancy.models import App, Tenant


class Run(models.Model):
    class Status(models.TextChoices):
        QUEUED = "QUEUED"
        RUNNING = "RUNNING"
        COMPLETED = "COMPLETED"
        PARTIAL = "PARTIAL"
        FAILED = "FAILED"
        CANCELLED = "CANCELLED"

    TERMINAL = (Status.COMPLETED, Status.PARTIAL, Status.FAILED, Status.CANCELLED)

    id = models.CharField(primary_key=True, max_length=40, default=new_run_id, editable=False)
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="runs")
    app = models.ForeignKey(App, on_delete=models.CASCADE, related_name="runs")
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="runs"
    )
    agent_version = models.ForeignKey(AgentVersion, on_delete=models.PROTECT, related_name="runs")
    input = models.TextField()
    session_id = models.CharField(max_length=200, blank=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    reason = models.CharField(max_length=64, blank=True, help_text="Terminal reason code")
    reason_detail = models.TextField(blank=True)
    # Policy epochs of the app when the run started (see App).
    security_policy_epoch = models.PositiveIntegerField()
    knowledge_access_epoch = models.PositiveIntegerField()
    created_at = models.DateTimeField(default=timezone.now)
    started_at = models.DateTimeField(null=True, blank=True)
    completed_at = models.DateTimeField(null=True, blank=True)
    cancel_requested_at = models.DateTimeField(null=True, blank=True)
    archived_at = models.DateTimeField(null=True, blank=True)
    # The worker that runs it and when it last said so; recovery uses both.
    worker_id = models.CharField(max_length=100, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    # Which execution of the run may write: taken by claim_run, moved on by a takeover
    # (recovery, a worker handing the run back). A worker writes for the run only under
    # the epoch it claimed (runs/lifecycle.py lock_for_execution; docs/reliability.md).
    execution_epoch = models.PositiveIntegerField(default=0, db_default=0)
    # Counters, changed only under a lock on this row (select_for_update).
    last_seq = models.PositiveIntegerField(default=0)
    block_count = models.PositiveIntegerField(default=0)
    revision_quota_used = models.PositiveIntegerField(default=0)
    citation_count = models.PositiveIntegerField(default=0)

    class Meta:
        verbose_name = _("运行")
        verbose_name_plural = _("运行")
        ordering = ["-created_at"]
        indexes = [
            models.Index(fields=["app", "-created_at"], name="run_app_created"),
            models.Index(fields=["status"], name="run_status"),
        ]

    def __str__(self) -> str:
        return self.id

    @property
    def is_terminal(self) -> bool:
        return self.status in self.TERMINAL


class AgentCall(models.Model):
    class Status(models.TextChoices):
        RUNNING = "RUNNING"
        COMPLETED = "COMPLETED"
        FAILED = "FAILED"
        CANCELLED = "CANCELLED"

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="agent_calls")
    parent = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.CASCADE, related_name="children"
    )
    depth = models.PositiveIntegerField(default=0)
    agent_version = models.ForeignKey(AgentVersion, on_delete=models.PROTECT, related_name="calls")
    task = models.TextField()
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.RUNNING)
    result_text = models.TextField(blank=True)
    started_at = models.DateTimeField(default=timezone.now)
    completed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name = _("智能体调用")
        verbose_name_plural = _("智能体调用")
        ordering = ["id"]

    def __str__(self) -> str:
        return f"call {self.pk} of {self.run_id} (depth {self.depth})"

    @property
    def public_id(self) -> str:
        return f"call_{self.pk}"


class RunEvent(models.Model):
    """Append-only event log of a run: the truth every client reads from.

    Answer events store block identity and revision in ``data``; bodies are read
    through Publication's reader at delivery time so revocation applies to replay.
    """

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="events")
    seq = models.PositiveIntegerField()
    type = models.CharField(max_length=40)
    data = models.JSONField(default=dict)
    at = models.DateTimeField(default=timezone.now)

    class Meta:
        verbose_name = _("运行事件")
        verbose_name_plural = _("运行事件")
        ordering = ["run_id", "seq"]
        constraints = [models.UniqueConstraint(fields=["run", "seq"], name="runevent_unique_seq")]

    def __str__(self) -> str:
        return f"{self.run_id}#{self.seq} {self.type}"


class JournalEntry(models.Model):
    """The runtime's own record of steps, tool calls and tool receipts.

    It is not the source of truth for answers: Publication's store is.
    """

    # Not fields: what a journal view shows of the entry, attached by its reader.
    shown: dict[str, Any]
    summary: str

    class Kind(models.TextChoices):
        STEP = "STEP"
        TOOL_CALL = "TOOL_CALL"
        TOOL_RECEIPT = "TOOL_RECEIPT"
        NOTE = "NOTE"

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="journal")
    agent_call = models.ForeignKey(
        AgentCall, null=True, blank=True, on_delete=models.CASCADE, related_name="journal"
    )
    kind = models.CharField(max_length=12, choices=Kind.choices)
    tool = models.CharField(max_length=40, blank=True)
    step = models.PositiveIntegerField(default=0)
    data = models.JSONField(default=dict)
    at = models.DateTimeField(default=timezone.now)

    class Meta:
        verbose_name = _("运行日志条目")
        verbose_name_plural = _("运行日志")
        ordering = ["id"]


class EventTicket(models.Model):
    """A short-lived, single-use credential for opening one run's WebSocket."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="tickets")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE)
    # The bearer token it was issued with (none for the console's session):
    # revoking the token voids its unused tickets (delivery/tickets.py).
    token = models.ForeignKey(
        "tenancy.ApiToken", null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    digest = models.CharField(max_length=64, unique=True)
    expires_at = models.DateTimeField()
    used_at = models.DateTimeField(null=True, blank=True)


class DeliveryAck(models.Model):
    """A client's own statement that it received or rendered an event.

    The server having sent an event proves only that it sent it.
    """

    class Kind(models.TextChoices):
        RECEIVED = "received"
        RENDERED = "rendered"

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="acks")
    connection_id = models.CharField(max_length=64)
    client_id = models.CharField(max_length=100, blank=True)
    seq = models.PositiveIntegerField()
    kind = models.CharField(max_length=10, choices=Kind.choices)
    at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["run", "connection_id", "seq", "kind"], name="deliveryack_unique"
            )
        ]


class DeliveryLog(models.Model):
    """How far a connection was sent: one row per connection, advanced as it goes."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="deliveries")
    connection_id = models.CharField(max_length=64, unique=True)
    client_id = models.CharField(max_length=100, blank=True)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL)
    opened_at = models.DateTimeField(default=timezone.now)
    closed_at = models.DateTimeField(null=True, blank=True)
    last_sent_seq = models.PositiveIntegerField(default=0)
    # Closed by the sweep, not by its server: the process that held the socket died
    # (runtime/recovery.py ``close_abandoned_deliveries``); closed_at is when it was found.
    abandoned = models.BooleanField(default=False)

    class Meta:
        # The sweep looks for open rows only (few: the sockets of this moment).
        indexes = [
            models.Index(
                fields=["run"], condition=models.Q(closed_at__isnull=True), name="deliverylog_open"
            )
        ]


class WorkerHeartbeat(models.Model):
    """One row per task worker, refreshed on each of its sweep ticks (runs/heartbeats.py);
    /readyz is not ready when the newest beat is older than its threshold."""

    worker_id = models.CharField(max_length=64, primary_key=True)
    host = models.CharField(max_length=255)
    pid = models.PositiveIntegerField()
    beat_at = models.DateTimeField(db_index=True)

    class Meta:
        verbose_name = _("工作进程心跳")
        verbose_name_plural = _("工作进程心跳")

    def __str__(self) -> str:
        return f"{self.worker_id} @ {self.host}:{self.pid}"


class AnswerStream(models.Model):
    """The live text of the model turn an agent call is generating: one row per agent call.

    Not a save and not the log: the text a client connecting mid-turn is shown at once
    (runs/streams.py, docs/events.md "The text stream"). Each turn starts it again; when
    the turn ends the row is closed and emptied in the statement that appends its
    ``answer.stream`` close event, and what the turn said goes through Publication.
    """

    class State(models.TextChoices):
        LIVE = "LIVE"
        CLOSED = "CLOSED"

    agent_call = models.OneToOneField(
        AgentCall, primary_key=True, on_delete=models.CASCADE, related_name="answer_stream"
    )
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="answer_streams")
    step = models.PositiveIntegerField()
    state = models.CharField(max_length=6, choices=State.choices, default=State.LIVE)
    text = models.TextField(blank=True)
    # Unicode code points of ``text``: the stream's offset unit.
    length = models.PositiveIntegerField(default=0)
    truncated = models.BooleanField(default=False)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        verbose_name = _("回答文字流")
        verbose_name_plural = _("回答文字流")
