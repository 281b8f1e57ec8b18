"""Retention: a run older than its app's retention window, or archived, is gone
for event replay and source preview (410 EVENT_CURSOR_EXPIRED)."""

from datetime import datetime, timedelta

from django.db.models import Q
from django.utils import timezone

from foundation.errors import ErrorCode, SparkTideError
from runs.models import Run
from tenancy.models import App


def retention_cutoff(app: App, now: datetime | None = None) -> datetime:
    return (now or timezone.now()) - timedelta(days=app.retention_days)


def is_expired(run: Run, now: datetime | None = None) -> bool:
    return run.archived_at is not None or run.created_at < retention_cutoff(run.app, now)


def within_retention(app: App, now: datetime | None = None) -> Q:
    """``is_expired`` as a filter of ``app``'s runs: the runs it keeps (not archived, not
    older than the window). For a list of runs (conversation history)."""
    return Q(archived_at__isnull=True) & ~_window_over(app, now)


def past_retention(app: App, now: datetime | None = None) -> Q:
    """The complement among runs not archived yet: ``app``'s runs whose window is over,
    which the archiver takes (runtime/archive.py). A run not archived is in exactly one of
    ``within_retention`` and ``past_retention``; ``is_expired`` says which."""
    return Q(archived_at__isnull=True) & _window_over(app, now)


def _window_over(app: App, now: datetime | None) -> Q:
    """The one comparison with the cutoff, for both filters (``is_expired``'s ``<``)."""
    return Q(created_at__lt=retention_cutoff(app, now))


def require_within_retention(run: Run) -> None:
    if is_expired(run):
        raise SparkTideError(ErrorCode.EVENT_CURSOR_EXPIRED)
