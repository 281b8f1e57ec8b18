"""Retention and archive: past its app's retention a run keeps its public record
but loses its private references; preview and event replay answer 410."""

import threading
from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.utils import timezone

from citations.models import CitationReference
from runs.models import JournalEntry, Run
from runtime.archive import archive_runs
from tests.factories import client_for

pytestmark = pytest.mark.django_db


def age(run: Run, days: int) -> None:
    Run.objects.filter(pk=run.pk).update(created_at=timezone.now() - timedelta(days=days))


@pytest.fixture
def old(cited, app) -> Run:
    """The cited run, now older than the app's retention window."""
    age(cited.run, app.retention_days + 1)
    return cited.run


def test_archive_marks_the_run_and_clears_its_private_references(old, cited):
    summary = archive_runs()

    assert (summary.runs, summary.batches) == (1, 1)
    old.refresh_from_db()
    assert old.archived_at is not None
    references = CitationReference.objects.filter(run=old)
    assert references.exists()
    assert summary.references == references.count()
    assert set(references.values_list("digest", "query", "top_k")) == {(None, None, None)}


def test_archive_keeps_the_public_fields_of_each_reference(old, cited):
    before = cited.reference.public()
    archive_runs()
    after = CitationReference.objects.get(pk=cited.reference.pk)
    assert after.public() == before


def test_archive_clears_the_journaled_search_arguments(old):
    searches = JournalEntry.objects.filter(run=old, tool="search_knowledge", kind="TOOL_CALL")
    assert searches.first().data["arguments"]["query"] == "营收增长"
    archive_runs()
    for entry in searches:
        assert "arguments" not in entry.data
        assert entry.data["toolCallId"]


def test_after_archive_preview_is_expired(old, cited, alice):
    archive_runs()
    response = client_for(alice).get(cited.url)
    assert response.status_code == 410
    assert response.json()["code"] == "EVENT_CURSOR_EXPIRED"
    assert response["Cache-Control"] == "no-store"


def test_after_archive_even_a_restored_retention_window_does_not_bring_the_preview_back(
    old, cited, alice, app
):
    """Archive is final: the digests are gone, so nothing can be compared again."""
    archive_runs()
    Run.objects.filter(pk=old.pk).update(archived_at=None, created_at=timezone.now())
    response = client_for(alice).get(cited.url)
    assert response.json()["code"] == "CITATION_NOT_AVAILABLE"


def test_after_archive_event_replay_is_expired(old, alice):
    archive_runs()
    response = client_for(alice).get(f"/v1/apps/business/runs/{old.pk}/events")
    assert response.status_code == 410
    assert response.json()["code"] == "EVENT_CURSOR_EXPIRED"


def test_after_archive_the_public_run_is_still_readable(old, alice):
    archive_runs()
    response = client_for(alice).get(f"/v1/apps/business/runs/{old.pk}")
    assert response.status_code == 200
    assert response.json()["id"] == old.pk
    assert response.json()["status"] == "COMPLETED"


def test_archive_is_idempotent(old):
    assert archive_runs().runs == 1
    archived_at = Run.objects.get(pk=old.pk).archived_at
    assert archive_runs().runs == 0
    assert Run.objects.get(pk=old.pk).archived_at == archived_at


def test_runs_inside_the_retention_window_are_not_archived(cited, app):
    age(cited.run, app.retention_days - 1)
    assert archive_runs().runs == 0
    assert CitationReference.objects.get(pk=cited.reference.pk).digest is not None


def test_each_app_uses_its_own_retention(make_run, app):
    from tenancy.models import App

    run = make_run({"search": "营收"}, {"answerPart": "x [[cite:{{c1}}]]"})
    age(run, 10)
    assert archive_runs().runs == 0
    App.objects.filter(pk=app.pk).update(retention_days=7)
    assert archive_runs().runs == 1


def test_unfinished_runs_are_never_archived(make_run, app):
    queued = make_run({"text": "hi"}, execute=False)
    age(queued, app.retention_days + 5)
    assert archive_runs().runs == 0
    assert Run.objects.get(pk=queued.pk).archived_at is None


def test_archive_works_in_batches_and_reports_each(make_run, app):
    runs = [make_run({"search": "营收"}, {"text": "x"}, key=f"agent-{i}") for i in range(5)]
    for run in runs:
        age(run, app.retention_days + 1)
    seen = []
    summary = archive_runs(batch_size=2, progress=seen.append)
    assert summary.runs == 5
    assert [(b.batch, b.runs, b.total) for b in seen] == [(1, 2, 2), (2, 2, 4), (3, 1, 5)]
    assert all(b.app == "business" for b in seen)


def test_the_command_prints_progress_per_batch_and_a_summary(make_run, app):
    runs = [make_run({"search": "营收"}, {"text": "x"}, key=f"agent-{i}") for i in range(3)]
    for run in runs:
        age(run, app.retention_days + 1)
    out = StringIO()
    call_command("archive_runs", "--batch-size", "2", stdout=out)
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("batch 1 (business): archived 2 run(s)")
    assert lines[1].startswith("batch 2 (business): archived 1 run(s)")
    assert lines[-1].startswith("archived 3 run(s) in 2 batch(es)")
    out = StringIO()
    call_command("archive_runs", stdout=out)
    assert out.getvalue().strip().startswith("archived 0 run(s) in 0 batch(es)")


def test_the_command_dry_run_counts_and_changes_nothing(old):
    out = StringIO()
    call_command("archive_runs", "--dry-run", stdout=out)
    assert out.getvalue().splitlines() == [
        "business: 1 run(s) due",
        "dry run: 1 run(s) would be archived",
    ]
    assert Run.objects.get(pk=old.pk).archived_at is None


def test_the_command_refuses_a_batch_size_below_one():
    from django.core.management.base import CommandError

    with pytest.raises(CommandError):
        call_command("archive_runs", "--batch-size", "0")


@pytest.mark.timing
@pytest.mark.postgres(
    reason="SKIP LOCKED: SQLite has no row locks, its writers queue on the database"
)
@pytest.mark.django_db(transaction=True)
def test_an_overlapping_archiver_skips_runs_another_one_holds(make_run, app):
    """Two archivers at once never wait on each other: rows locked by one are
    skipped by the other, and archived when the lock is gone."""
    from django.db import connections, transaction

    held, other = (make_run({"text": "x"}, key=f"agent-{i}") for i in range(2))
    for run in (held, other):
        age(run, app.retention_days + 1)
    locked, release = threading.Event(), threading.Event()

    def hold_lock():
        try:
            with transaction.atomic():
                Run.objects.select_for_update().get(pk=held.pk)
                locked.set()
                release.wait(10)
        finally:
            connections.close_all()

    holder = threading.Thread(target=hold_lock)
    holder.start()
    try:
        assert locked.wait(10)
        assert archive_runs().runs == 1
        assert Run.objects.get(pk=held.pk).archived_at is None
    finally:
        release.set()
        holder.join(10)
    assert archive_runs().runs == 1
    assert Run.objects.get(pk=held.pk).archived_at is not None
