"""A step's write that meets a lost connection is written again — once — and still
fenced (runtime/durable.py, docs/reliability.md "Outages").

Each test cuts this test's own PostgreSQL session (pg_terminate_backend, what a
failover or a proxy reset does to it) around a real write of a claimed run."""

import psycopg
import pytest
from django.db import OperationalError, connection

from runs.events import RunFenced, append_event
from runs.lifecycle import claim_run, take_over
from runs.models import JournalEntry, Run, RunEvent
from runtime.durable import Landed, durable, event_landed
from runtime.state import Journal
from tests.reliability.support import conninfo

pytestmark = pytest.mark.django_db(transaction=True)


def cut_own_session() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        pid = cursor.fetchone()[0]
    with psycopg.connect(**conninfo(), autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", [pid])


@pytest.fixture
def running(postgres, make_run):
    run = make_run({"text": "段"})
    claimed = claim_run(run.pk)
    assert claimed is not None
    return claimed


def notes(run: Run) -> list[dict]:
    return list(
        JournalEntry.objects.filter(run=run, kind=JournalEntry.Kind.NOTE).values_list(
            "data", flat=True
        )
    )


def test_a_journal_flush_on_a_cut_session_is_written_once_on_a_fresh_one(running):
    journal = Journal(running)
    journal.add(None, JournalEntry.Kind.NOTE, tool="t", note="kept")
    cut_own_session()
    durable("journal", journal.flush, journal=journal)
    assert notes(running) == [{"note": "kept"}]
    assert journal.pending == []


def test_a_write_whose_acknowledgement_was_lost_is_found_and_not_written_twice(running):
    """The append commits, then the session dies before its answer is read: the retry
    finds the event (and the journal rows it carried) and writes nothing more."""
    journal = Journal(running)
    journal.add(None, JournalEntry.Kind.NOTE, tool="t", note="once")
    tries = []

    def write() -> None:
        tries.append(1)
        journal.flush()
        append_event(running, "citation.verified", {"citations": []}, epoch=running.execution_epoch)
        if len(tries) == 1:
            cut_own_session()
            connection.cursor().execute("SELECT 1")  # the lost acknowledgement

    with pytest.raises(Landed):
        durable(
            "verified",
            write,
            journal=journal,
            landed=event_landed(running.pk, "citation.verified", {}),
        )
    assert len(tries) == 1
    assert RunEvent.objects.filter(run=running, type="citation.verified").count() == 1
    assert notes(running) == [{"note": "once"}]


def test_a_journal_found_written_is_not_written_again_and_the_rest_is_retried(running):
    journal = Journal(running)
    journal.add(None, JournalEntry.Kind.NOTE, tool="t", note="once")
    tries = []

    def write() -> None:
        tries.append(len(journal.pending))
        journal.flush()
        if len(tries) == 1:
            cut_own_session()
            connection.cursor().execute("SELECT 1")

    durable("journal", write, journal=journal)
    assert tries == [1, 0]  # the second try carried nothing: the rows were found
    assert notes(running) == [{"note": "once"}]


def test_a_retried_write_after_a_takeover_writes_nothing(running):
    """Recovery took the run while this execution's connection was away: the retry
    meets the fence (RunFenced), the run's log and journal are as recovery left them."""
    journal = Journal(running)
    journal.add(None, JournalEntry.Kind.NOTE, tool="t", note="late")
    take_over(Run.objects.filter(pk=running.pk))
    last_seq = Run.objects.values_list("last_seq", flat=True).get(pk=running.pk)
    cut_own_session()

    def write() -> None:
        journal.flush()
        append_event(running, "citation.verified", {}, epoch=running.execution_epoch)

    with pytest.raises(RunFenced):
        durable("late", write, journal=journal, landed=event_landed(running.pk, "x", {}))
    assert notes(running) == []
    assert Run.objects.values_list("last_seq", flat=True).get(pk=running.pk) == last_seq


def test_a_write_is_given_up_after_its_bound(running):
    calls = []

    def write() -> None:
        calls.append(1)
        raise OperationalError("connection lost")

    with pytest.raises(OperationalError):
        durable("bounded", write, bound=0.0)
    assert calls == [1]
