"""Kept evaluations: who ran which set against which agent versions, and what it measured
(docs/evaluation.md, "Kept evaluations")."""

from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy

from foundation.ids import new_id
from tenancy.models import App


def new_evaluation_id() -> str:
    return new_id("eval_")


class Evaluation(models.Model):
    class Status(models.TextChoices):
        QUEUED = "QUEUED", _("排队中")
        RUNNING = "RUNNING", _("运行中")
        DONE = "DONE", _("已完成")
        FAILED = "FAILED", _("失败")

    class Origin(models.TextChoices):
        CONSOLE = "CONSOLE", pgettext_lazy("evaluation origin", "控制台")
        API = "API", pgettext_lazy("evaluation origin", "API")
        COMMAND = "COMMAND", pgettext_lazy("evaluation origin", "命令行")

    TERMINAL = (Status.DONE, Status.FAILED)

    id = models.CharField(
        primary_key=True,
        max_length=40,
        default=new_evaluation_id,
        editable=False,
        verbose_name=pgettext_lazy("field", "ID"),
    )
    app = models.ForeignKey(
        App,
        on_delete=models.CASCADE,
        related_name="evaluations",
        verbose_name=pgettext_lazy("field", "应用"),
    )
    # The member the questions run as: the runs are theirs, with their authorization.
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="evaluations",
        verbose_name=pgettext_lazy("field", "所有者"),
    )
    # Who asked for it: a staff user in the console, the owner over REST, nobody (the command).
    started_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=pgettext_lazy("field", "发起人"),
    )
    origin = models.CharField(
        max_length=10, choices=Origin.choices, verbose_name=pgettext_lazy("field", "来源方式")
    )
    set_name = models.CharField(max_length=200, verbose_name=pgettext_lazy("field", "评测集名称"))
    set_digest = models.CharField(
        max_length=64,
        help_text=_("评测集规范 JSON 的 sha256"),
        verbose_name=pgettext_lazy("field", "评测集摘要值"),
    )
    set_data = models.JSONField(
        help_text=_("检查后的评测集，由后台任务逐题提问"),
        verbose_name=pgettext_lazy("field", "评测集内容"),
    )
    agents = models.JSONField(
        default=list,
        help_text=_("按顺序排列的 KEY@VERSION 标签"),
        verbose_name=pgettext_lazy("field", "智能体版本列表"),
    )
    status = models.CharField(
        max_length=10,
        choices=Status.choices,
        default=Status.QUEUED,
        verbose_name=pgettext_lazy("field", "状态"),
    )
    error = models.TextField(blank=True, verbose_name=pgettext_lazy("field", "错误"))
    questions_total = models.PositiveIntegerField(
        default=0, verbose_name=pgettext_lazy("field", "问题总数")
    )
    questions_done = models.PositiveIntegerField(
        default=0, verbose_name=pgettext_lazy("field", "已完成问题数")
    )
    created_at = models.DateTimeField(
        default=timezone.now, verbose_name=pgettext_lazy("field", "创建时间")
    )
    started_at = models.DateTimeField(
        null=True, blank=True, verbose_name=pgettext_lazy("field", "开始时间")
    )
    finished_at = models.DateTimeField(
        null=True, blank=True, verbose_name=pgettext_lazy("field", "结束时间")
    )
    progress_at = models.DateTimeField(
        null=True, blank=True, verbose_name=pgettext_lazy("field", "进度时间")
    )
    # {label: summarize(...)} per agent version; per-question rows; every run ID.
    summaries = models.JSONField(default=dict, verbose_name=pgettext_lazy("field", "汇总"))
    results = models.JSONField(default=list, verbose_name=pgettext_lazy("field", "逐题结果"))
    run_ids = models.JSONField(default=list, verbose_name=pgettext_lazy("field", "运行 ID"))

    class Meta:
        verbose_name = pgettext_lazy("model", "评测")
        verbose_name_plural = pgettext_lazy("models", "评测")
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["app", "-created_at"], name="evaluation_app_created")]

    def __str__(self) -> str:
        return f"{self.pk} {self.set_name} ({self.status})"

    @property
    def finished(self) -> bool:
        return self.status in self.TERMINAL
