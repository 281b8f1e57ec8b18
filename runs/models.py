from typing import Any

from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy

from agents.models import AgentVersion
from foundation.ids import new_run_id
from tenancy.models import App, Tenant


class Run(models.Model):
    class Status(models.TextChoices):
        QUEUED = "QUEUED", _("排队中")
        RUNNING = "RUNNING", _("运行中")
        COMPLETED = "COMPLETED", _("已完成")
        PARTIAL = "PARTIAL", _("部分完成")
        FAILED = "FAILED", _("失败")
        CANCELLED = "CANCELLED", _("已取消")

    TERMINAL = (Status.COMPLETED, Status.PARTIAL, Status.FAILED, Status.CANCELLED)

    id = models.CharField(
        primary_key=True,
        max_length=40,
        default=new_run_id,
        editable=False,
        verbose_name=pgettext_lazy("field", "ID"),
    )
    tenant = models.ForeignKey(
        Tenant,
        on_delete=models.CASCADE,
        related_name="runs",
        verbose_name=pgettext_lazy("field", "租户"),
    )
    app = models.ForeignKey(
        App,
        on_delete=models.CASCADE,
        related_name="runs",
        verbose_name=pgettext_lazy("field", "应用"),
    )
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="runs",
        verbose_name=pgettext_lazy("field", "所有者"),
    )
    agent_version = models.ForeignKey(
        AgentVersion,
        on_delete=models.PROTECT,
        related_name="runs",
        verbose_name=pgettext_lazy("field", "智能体版本"),
    )
    input = models.TextField(verbose_name=pgettext_lazy("field", "问题"))
    session_id = models.CharField(
        max_length=200, blank=True, verbose_name=pgettext_lazy("field", "会话 ID")
    )
    status = models.CharField(
        max_length=10,
        choices=Status.choices,
        default=Status.QUEUED,
        verbose_name=pgettext_lazy("field", "状态"),
    )
    reason = models.CharField(
        max_length=64,
        blank=True,
        help_text=_("运行结束的原因代码"),
        verbose_name=pgettext_lazy("field", "原因"),
    )
    reason_detail = models.TextField(blank=True, verbose_name=pgettext_lazy("field", "原因详情"))
    # Policy epochs of the app when the run started (see App).
    security_policy_epoch = models.PositiveIntegerField(
        verbose_name=pgettext_lazy("field", "安全策略版本号")
    )
    knowledge_access_epoch = models.PositiveIntegerField(
        verbose_name=pgettext_lazy("field", "知识访问版本号")
    )
    created_at = models.DateTimeField(
        default=timezone.now, verbose_name=pgettext_lazy("field", "创建时间")
    )
    started_at = models.DateTimeField(
        null=True, blank=True, verbose_name=pgettext_lazy("field", "开始时间")
    )
    completed_at = models.DateTimeField(
        null=True, blank=True, verbose_name=pgettext_lazy("field", "完成时间")
    )
    cancel_requested_at = models.DateTimeField(
        null=True, blank=True, verbose_name=pgettext_lazy("field", "请求取消时间")
    )
    archived_at = models.DateTimeField(
        null=True, blank=True, verbose_name=pgettext_lazy("field", "归档时间")
    )
    # The worker that runs it and when it last said so; recovery uses both.
    worker_id = models.CharField(
        max_length=100, blank=True, verbose_name=pgettext_lazy("field", "工作进程 ID")
    )
    heartbeat_at = models.DateTimeField(
        null=True, blank=True, verbose_name=pgettext_lazy("field", "心跳时间")
    )
    # Which execution of the run may write: taken by claim_run, moved on by a takeover
    # (recovery, a worker handing the run back). A worker writes for the run only under
    # the epoch it claimed (runs/lifecycle.py lock_for_execution; docs/reliability.md).
    execution_epoch = models.PositiveIntegerField(
        default=0, db_default=0, verbose_name=pgettext_lazy("field", "执行轮次")
    )
    # Counters, changed only under a lock on this row (select_for_update).
    last_seq = models.PositiveIntegerField(
        default=0, verbose_name=pgettext_lazy("field", "最后事件序号")
    )
    block_count = models.PositiveIntegerField(
        default=0, verbose_name=pgettext_lazy("field", "区块数")
    )
    revision_quota_used = models.PositiveIntegerField(
        default=0, verbose_name=pgettext_lazy("field", "已用修改次数")
    )
    citation_count = models.PositiveIntegerField(
        default=0, verbose_name=pgettext_lazy("field", "引用数")
    )

    class Meta:
        verbose_name = pgettext_lazy("model", "运行")
        verbose_name_plural = pgettext_lazy("models", "运行")
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
        RUNNING = "RUNNING", _("运行中")
        COMPLETED = "COMPLETED", _("已完成")
        FAILED = "FAILED", _("失败")
        CANCELLED = "CANCELLED", _("已取消")

    run = models.ForeignKey(
        Run,
        on_delete=models.CASCADE,
        related_name="agent_calls",
        verbose_name=pgettext_lazy("field", "运行"),
    )
    parent = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="children",
        verbose_name=pgettext_lazy("field", "上级调用"),
    )
    depth = models.PositiveIntegerField(default=0, verbose_name=pgettext_lazy("field", "层级"))
    agent_version = models.ForeignKey(
        AgentVersion,
        on_delete=models.PROTECT,
        related_name="calls",
        verbose_name=pgettext_lazy("field", "智能体版本"),
    )
    task = models.TextField(verbose_name=pgettext_lazy("field", "任务"))
    status = models.CharField(
        max_length=10,
        choices=Status.choices,
        default=Status.RUNNING,
        verbose_name=pgettext_lazy("field", "状态"),
    )
    result_text = models.TextField(blank=True, verbose_name=pgettext_lazy("field", "结果文本"))
    started_at = models.DateTimeField(
        default=timezone.now, verbose_name=pgettext_lazy("field", "开始时间")
    )
    completed_at = models.DateTimeField(
        null=True, blank=True, verbose_name=pgettext_lazy("field", "完成时间")
    )

    class Meta:
        verbose_name = pgettext_lazy("model", "智能体调用")
        verbose_name_plural = pgettext_lazy("models", "智能体调用")
        ordering = ["id"]

    def __str__(self) -> str:
        return _("%(run)s 的智能体调用 %(id)s（层级 %(depth)s）") % {
            "run": self.run_id,
            "id": self.pk,
            "depth": self.depth,
        }

    @property
    def public_id(self) -> str:
        return f"call_{self.pk}"


class RunEvent(models.Model):
    """Append-only event log of a run: the truth every client reads from.

    Answer events store block identity and revision in ``data``; bodies are read
    through Publication's reader at delivery time so revocation applies to replay.
    """

    run = models.ForeignKey(
        Run,
        on_delete=models.CASCADE,
        related_name="events",
        verbose_name=pgettext_lazy("field", "运行"),
    )
    seq = models.PositiveIntegerField(verbose_name=pgettext_lazy("field", "事件序号"))
    type = models.CharField(max_length=40, verbose_name=pgettext_lazy("field", "类型"))
    data = models.JSONField(default=dict, verbose_name=pgettext_lazy("field", "数据"))
    at = models.DateTimeField(default=timezone.now, verbose_name=pgettext_lazy("field", "时间"))

    class Meta:
        verbose_name = pgettext_lazy("model", "运行事件")
        verbose_name_plural = pgettext_lazy("models", "运行事件")
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
        STEP = "STEP", _("步骤")
        TOOL_CALL = "TOOL_CALL", _("工具调用")
        TOOL_RECEIPT = "TOOL_RECEIPT", _("工具回执")
        NOTE = "NOTE", _("记录")

    run = models.ForeignKey(
        Run,
        on_delete=models.CASCADE,
        related_name="journal",
        verbose_name=pgettext_lazy("field", "运行"),
    )
    agent_call = models.ForeignKey(
        AgentCall,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="journal",
        verbose_name=pgettext_lazy("field", "智能体调用"),
    )
    kind = models.CharField(
        max_length=12, choices=Kind.choices, verbose_name=pgettext_lazy("field", "类别")
    )
    tool = models.CharField(max_length=40, blank=True, verbose_name=pgettext_lazy("field", "工具"))
    step = models.PositiveIntegerField(default=0, verbose_name=pgettext_lazy("field", "步骤"))
    data = models.JSONField(default=dict, verbose_name=pgettext_lazy("field", "数据"))
    at = models.DateTimeField(default=timezone.now, verbose_name=pgettext_lazy("field", "时间"))

    class Meta:
        verbose_name = pgettext_lazy("model", "运行日志条目")
        verbose_name_plural = pgettext_lazy("models", "运行日志")
        ordering = ["id"]

    def __str__(self) -> str:
        return f"{self.run_id}#{self.step} {self.get_kind_display()}"


class EventTicket(models.Model):
    """A short-lived, single-use credential for opening one run's WebSocket."""

    run = models.ForeignKey(
        Run,
        on_delete=models.CASCADE,
        related_name="tickets",
        verbose_name=pgettext_lazy("field", "运行"),
    )
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        verbose_name=pgettext_lazy("field", "用户"),
    )
    # The bearer token it was issued with (none for the console's session):
    # revoking the token voids its unused tickets (delivery/tickets.py).
    token = models.ForeignKey(
        "tenancy.ApiToken",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="+",
        verbose_name=pgettext_lazy("field", "令牌"),
    )
    digest = models.CharField(
        max_length=64, unique=True, verbose_name=pgettext_lazy("field", "摘要值")
    )
    expires_at = models.DateTimeField(verbose_name=pgettext_lazy("field", "过期时间"))
    used_at = models.DateTimeField(
        null=True, blank=True, verbose_name=pgettext_lazy("field", "使用时间")
    )

    class Meta:
        verbose_name = pgettext_lazy("model", "事件票据")
        verbose_name_plural = pgettext_lazy("models", "事件票据")


class DeliveryAck(models.Model):
    """A client's own statement that it received or rendered an event.

    The server having sent an event proves only that it sent it.
    """

    class Kind(models.TextChoices):
        RECEIVED = "received", pgettext_lazy("delivery ack", "已接收")
        RENDERED = "rendered", pgettext_lazy("delivery ack", "已显示")

    run = models.ForeignKey(
        Run,
        on_delete=models.CASCADE,
        related_name="acks",
        verbose_name=pgettext_lazy("field", "运行"),
    )
    connection_id = models.CharField(max_length=64, verbose_name=pgettext_lazy("field", "连接 ID"))
    client_id = models.CharField(
        max_length=100, blank=True, verbose_name=pgettext_lazy("field", "客户端 ID")
    )
    seq = models.PositiveIntegerField(verbose_name=pgettext_lazy("field", "事件序号"))
    kind = models.CharField(
        max_length=10, choices=Kind.choices, verbose_name=pgettext_lazy("field", "类别")
    )
    at = models.DateTimeField(default=timezone.now, verbose_name=pgettext_lazy("field", "时间"))

    class Meta:
        verbose_name = pgettext_lazy("model", "投递确认")
        verbose_name_plural = pgettext_lazy("models", "投递确认")
        constraints = [
            models.UniqueConstraint(
                fields=["run", "connection_id", "seq", "kind"], name="deliveryack_unique"
            )
        ]


class DeliveryLog(models.Model):
    """How far a connection was sent: one row per connection, advanced as it goes."""

    run = models.ForeignKey(
        Run,
        on_delete=models.CASCADE,
        related_name="deliveries",
        verbose_name=pgettext_lazy("field", "运行"),
    )
    connection_id = models.CharField(
        max_length=64, unique=True, verbose_name=pgettext_lazy("field", "连接 ID")
    )
    client_id = models.CharField(
        max_length=100, blank=True, verbose_name=pgettext_lazy("field", "客户端 ID")
    )
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        on_delete=models.SET_NULL,
        verbose_name=pgettext_lazy("field", "用户"),
    )
    opened_at = models.DateTimeField(
        default=timezone.now, verbose_name=pgettext_lazy("field", "打开时间")
    )
    closed_at = models.DateTimeField(
        null=True, blank=True, verbose_name=pgettext_lazy("field", "关闭时间")
    )
    last_sent_seq = models.PositiveIntegerField(
        default=0, verbose_name=pgettext_lazy("field", "最后发送序号")
    )
    # Closed by the sweep, not by its server: the process that held the socket died
    # (runtime/recovery.py ``close_abandoned_deliveries``); closed_at is when it was found.
    abandoned = models.BooleanField(default=False, verbose_name=pgettext_lazy("field", "已失联"))

    class Meta:
        verbose_name = pgettext_lazy("model", "投递记录")
        verbose_name_plural = pgettext_lazy("models", "投递记录")
        # The sweep looks for open rows only (few: the sockets of this moment).
        indexes = [
            models.Index(
                fields=["run"], condition=models.Q(closed_at__isnull=True), name="deliverylog_open"
            )
        ]


class WorkerHeartbeat(models.Model):
    """One row per task worker, refreshed on each of its sweep ticks (runs/heartbeats.py);
    /readyz is not ready when the newest beat is older than its threshold."""

    worker_id = models.CharField(
        max_length=64, primary_key=True, verbose_name=pgettext_lazy("field", "工作进程 ID")
    )
    host = models.CharField(max_length=255, verbose_name=pgettext_lazy("field", "主机"))
    pid = models.PositiveIntegerField(verbose_name=pgettext_lazy("field", "进程号"))
    beat_at = models.DateTimeField(db_index=True, verbose_name=pgettext_lazy("field", "心跳时间"))

    class Meta:
        verbose_name = pgettext_lazy("model", "工作进程心跳")
        verbose_name_plural = pgettext_lazy("models", "工作进程心跳")

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
        LIVE = "LIVE", pgettext_lazy("stream state", "进行中")
        CLOSED = "CLOSED", pgettext_lazy("stream state", "已关闭")

    agent_call = models.OneToOneField(
        AgentCall,
        primary_key=True,
        on_delete=models.CASCADE,
        related_name="answer_stream",
        verbose_name=pgettext_lazy("field", "智能体调用"),
    )
    run = models.ForeignKey(
        Run,
        on_delete=models.CASCADE,
        related_name="answer_streams",
        verbose_name=pgettext_lazy("field", "运行"),
    )
    step = models.PositiveIntegerField(verbose_name=pgettext_lazy("field", "步骤"))
    state = models.CharField(
        max_length=6,
        choices=State.choices,
        default=State.LIVE,
        verbose_name=pgettext_lazy("field", "流状态"),
    )
    text = models.TextField(blank=True, verbose_name=pgettext_lazy("field", "文本"))
    # Unicode code points of ``text``: the stream's offset unit.
    length = models.PositiveIntegerField(default=0, verbose_name=pgettext_lazy("field", "长度"))
    truncated = models.BooleanField(default=False, verbose_name=pgettext_lazy("field", "已截断"))
    updated_at = models.DateTimeField(
        default=timezone.now, verbose_name=pgettext_lazy("field", "更新时间")
    )

    class Meta:
        verbose_name = pgettext_lazy("model", "回答文字流")
        verbose_name_plural = pgettext_lazy("models", "回答文字流")
