"""Feedback: the run owner's rating of a run, or of one answer block of it.

One row per (run, block or none, owner): giving feedback again replaces it. Two
partial unique constraints say so on PostgreSQL and SQLite alike (a NULL block
would otherwise never collide with another NULL).
"""

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy

from publication.models import AnswerBlock
from runs.models import Run

# The longest note an owner may leave, in characters (docs/api.md, Feedback).
MAX_NOTE = 2000


class Feedback(models.Model):
    class Rating(models.TextChoices):
        UP = "up", "👍"
        DOWN = "down", "👎"

    run = models.ForeignKey(
        Run,
        on_delete=models.CASCADE,
        related_name="feedback",
        verbose_name=pgettext_lazy("field", "运行"),
    )
    block = models.ForeignKey(
        AnswerBlock,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="+",
        verbose_name=pgettext_lazy("field", "回答块"),
    )
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="+",
        verbose_name=pgettext_lazy("field", "所有者"),
    )
    rating = models.CharField(
        max_length=4, choices=Rating.choices, verbose_name=pgettext_lazy("field", "评价")
    )
    note = models.TextField(
        blank=True, max_length=MAX_NOTE, verbose_name=pgettext_lazy("field", "备注")
    )
    created_at = models.DateTimeField(
        default=timezone.now, verbose_name=pgettext_lazy("field", "创建时间")
    )
    updated_at = models.DateTimeField(
        default=timezone.now, verbose_name=pgettext_lazy("field", "更新时间")
    )

    class Meta:
        verbose_name = _("反馈")
        verbose_name_plural = _("反馈")
        ordering = ["run_id", "created_at", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["run", "owner"],
                condition=Q(block__isnull=True),
                name="feedback_one_per_run",
            ),
            models.UniqueConstraint(
                fields=["run", "block", "owner"],
                condition=Q(block__isnull=False),
                name="feedback_one_per_block",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.run_id} {self.block_id or '-'} {self.rating}"
