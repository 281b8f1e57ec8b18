from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from runs.models import Run


class Rerun(models.Model):
    """A run started from 运行详情's 用其他版本重跑: the new run, the run whose question it
    asked again, and the staff member who clicked. The new run itself is an ordinary run of
    the original's owner (console/reruns.py); this row is only the link between the two."""

    run = models.OneToOneField(
        Run,
        on_delete=models.CASCADE,
        primary_key=True,
        related_name="rerun_link",
        verbose_name=_("重跑的运行"),
    )
    original = models.ForeignKey(
        Run, on_delete=models.CASCADE, related_name="reruns", verbose_name=_("原运行")
    )
    started_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        related_name="+",
        verbose_name=_("发起重跑的管理员"),
    )
    created_at = models.DateTimeField(default=timezone.now, verbose_name=_("创建时间"))

    class Meta:
        verbose_name = _("重跑")
        verbose_name_plural = _("重跑")

    def __str__(self) -> str:
        return f"{self.original_id} → {self.run_id}"
