"""Kept evaluations: who ran which set against which agent versions, and what it measured
(docs/evaluation.md, "Kept evaluations")."""

from django.conf import settings
from django.db import models
from django.utils import timezone

from foundation.ids import new_id
from tenancy.models import App


def new_evaluation_id() -> str:
    return new_id("eval_")


class Evaluation(models.Model):
    class Status(models.TextChoices):
        QUEUED = "QUEUED"
        RUNNING = "RUNNING"
        DONE = "DONE"
        FAILED = "FAILED"

    class Origin(models.TextChoices):
        CONSOLE = "CONSOLE"
        API = "API"
        COMMAND = "COMMAND"

    TERMINAL = (Status.DONE, Status.FAILED)

    id = models.CharField(
        primary_key=True, max_length=40, default=new_evaluation_id, editable=False
    )
    app = models.ForeignKey(App, on_delete=models.CASCADE, related_name="evaluations")
    # The member the questions run as: the runs are theirs, with their authorization.
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="evaluations"
    )
    # Who asked for it: a staff user in the console, the owner over REST, nobody (the command).
    started_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
    )
    origin = models.CharField(max_length=10, choices=Origin.choices)
    set_name = models.CharField(max_length=200)
    set_digest = models.CharField(max_length=64, help_text="sha256 of the set's canonical JSON")
    set_data = models.JSONField(help_text="the set as checked, asked by the background task")
    agents = models.JSONField(default=list, help_text="KEY@VERSION labels, in order")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    error = models.TextField(blank=True)
    questions_total = models.PositiveIntegerField(default=0)
    questions_done = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(default=timezone.now)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    progress_at = models.DateTimeField(null=True, blank=True)
    # {label: summarize(...)} per agent version; per-question rows; every run ID.
    summaries = models.JSONField(default=dict)
    results = models.JSONField(default=list)
    run_ids = models.JSONField(default=list)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["app", "-created_at"], name="evaluation_app_created")]

    def __str__(self) -> str:
        return f"{self.pk} {self.set_name} ({self.status})"

    @property
    def finished(self) -> bool:
        return self.status in self.TERMINAL
