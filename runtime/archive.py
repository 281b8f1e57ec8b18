"""Archive: runs past their app's retention lose their private references.

An archived run keeps its public record (the run, its events, its answer blocks
and the public fields of its citations) but its private references — snippet
digests and retrieval parameters (query, topK), and the search arguments the
runtime journal recorded — are cleared. Without a digest nothing can be
previewed any more, and ``archived_at`` makes preview and event replay answer
410 EVENT_CURSOR_EXPIRED (runs/retention.py).

Idempotent and safe to overlap: each batch locks its rows with
``SELECT … FOR UPDATE SKIP LOCKED`` (PostgreSQL), so two archivers running at
once take disjoint batches instead of waiting on each other, and an archived run
is never selected again. docs/retention.md says how to schedule it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from django.db import connection, transaction
from django.db.models import QuerySet
from django.utils import timezone

from citations.models import CitationReference
from runs.models import JournalEntry, Run
from runs.retention import past_retention
from tenancy.models import App

DEFAULT_BATCH_SIZE = 500


@dataclass(frozen=True)
class BatchDone:
    app: str  # app slug
    batch: int  # 1-based, across the whole call
    runs: int  # runs archived in this batch
    references: int  # citation references cleared in this batch
    total: int  # runs archived so far in this call


@dataclass(frozen=True)
class ArchiveSummary:
    runs: int
    references: int
    batches: int


def due_for_archive(app: App, now: datetime) -> QuerySet[Run]:
    """Finished runs of ``app`` created before its retention cutoff, not yet archived.

    A run still QUEUED or RUNNING is left alone whatever its age: recovery ends
    it first, and the next archive run takes it.
    """
    return Run.objects.filter(past_retention(app, now), app_id=app.pk, status__in=Run.TERMINAL)


def count_due(now: datetime | None = None) -> dict[str, int]:
    """Runs each app would have archived now (for ``--dry-run``); apps with none omitted."""
    now = now or timezone.now()
    counts = {app.slug: due_for_archive(app, now).count() for app in App.objects.order_by("slug")}
    return {slug: count for slug, count in counts.items() if count}


def archive_runs(
    *,
    batch_size: int = DEFAULT_BATCH_SIZE,
    now: datetime | None = None,
    progress: Callable[[BatchDone], None] | None = None,
) -> ArchiveSummary:
    """Archive every run past its app's retention, ``batch_size`` runs per transaction."""
    if batch_size < 1:
        raise ValueError("batch_size must be at least 1")
    now = now or timezone.now()
    runs = references = batches = 0
    # Few apps, many runs: one cutoff per app keeps the query plain and portable
    # (no interval arithmetic on retention_days) and uses the (app, created_at) index.
    for app in App.objects.order_by("slug").only("pk", "slug", "retention_days"):
        while True:
            archived, cleared = _archive_batch(app, now, batch_size)
            if not archived:
                break
            runs += archived
            references += cleared
            batches += 1
            if progress is not None:
                progress(BatchDone(app.slug, batches, archived, cleared, runs))
    return ArchiveSummary(runs=runs, references=references, batches=batches)


def _archive_batch(app: App, now: datetime, batch_size: int) -> tuple[int, int]:
    with transaction.atomic():
        due = due_for_archive(app, now).order_by("created_at", "pk")
        if connection.features.has_select_for_update_skip_locked:
            # Rows another archiver holds are skipped, not waited for; it archives them.
            due = due.select_for_update(skip_locked=True)
        ids = list(due.values_list("pk", flat=True)[:batch_size])
        if not ids:
            return 0, 0
        cleared = CitationReference.objects.filter(run_id__in=ids).update(
            digest=None, query=None, top_k=None
        )
        _clear_journaled_search_arguments(ids)
        archived = Run.objects.filter(pk__in=ids, archived_at__isnull=True).update(archived_at=now)
    return archived, cleared


def _clear_journaled_search_arguments(run_ids: list[str]) -> None:
    """The journal's record of each search_knowledge call holds the same retrieval
    parameters (query, top_k) as the references: clear them too, keep the entry."""
    entries = list(
        JournalEntry.objects.filter(
            run_id__in=run_ids, kind=JournalEntry.Kind.TOOL_CALL, tool="search_knowledge"
        ).only("pk", "data")
    )
    for entry in entries:
        entry.data = {key: value for key, value in entry.data.items() if key != "arguments"}
        entry.data["argumentsCleared"] = "archived"
    JournalEntry.objects.bulk_update(entries, ["data"], batch_size=500)
