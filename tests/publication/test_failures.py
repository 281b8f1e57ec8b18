"""Publication against real failures: a worker process SIGKILLed at each fault
point then recovered, a PostgreSQL connection cut during a commit, and
concurrent revisions from several threads, each with its own connection."""

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path
from urllib.parse import quote

import psycopg
import pytest
from django.core.management import call_command
from django.db import OperationalError, connection, connections

from publication.models import AnswerBlock, BlockRevision, PublicationAttempt
from publication.pipeline import publish_candidate
from publication.reader import VISIBLE, RunReader
from runs.models import JournalEntry, Run, RunEvent
from runtime.engine import execute_run
from runtime.services import start_run
from tests import factories

pytestmark = pytest.mark.django_db(transaction=True)

Outcome = PublicationAttempt.Outcome
ROOT = Path(__file__).resolve().parents[2]


def _database_url() -> str:
    db = connection.settings_dict
    if db["ENGINE"] == "django.db.backends.sqlite3":
        return f"sqlite:///{db['NAME']}"  # the test database's file (settings.py)
    auth = quote(db["USER"] or "")
    if db.get("PASSWORD"):
        auth += ":" + quote(db["PASSWORD"])
    return f"postgres://{auth}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


def _conninfo() -> dict:
    db = connection.settings_dict
    info = {"dbname": db["NAME"], "host": db["HOST"] or "127.0.0.1", "port": db["PORT"] or 5432}
    if db["USER"]:
        info["user"] = db["USER"]
    if db.get("PASSWORD"):
        info["password"] = db["PASSWORD"]
    return info


def _cut_own_connection() -> None:
    """Terminate *this* connection's backend from a second connection: only our
    own session dies; the server and everyone else's sessions stay up."""
    pid = connection.connection.info.backend_pid
    with psycopg.connect(**_conninfo(), autocommit=True) as killer:
        killer.execute("SELECT pg_terminate_backend(%s)", [pid])


# --- a worker SIGKILLed at each fault point, then recovered ------------------------


@pytest.mark.slow
@pytest.mark.parametrize("fault", ["after_publication_commit", "after_journal_write"])
def test_a_worker_killed_at_a_fault_point_is_recovered_with_its_commit_exactly_once(
    app, alice, knowledge, fault
):
    factories.make_agent(
        app.tenant,
        "killed",
        model=factories.scripted(
            {"search": "营收", "topK": 2},
            {"answerPart": "A：营收增长 [[cite:{{c1}}]]"},
            {"answerPart": "B：不应出现"},
        ),
        knowledge=[knowledge],
        pin_to=[app],
    )
    run = start_run(user=alice, app=app, agent_key="killed", input="营收？")

    worker = subprocess.run(
        [sys.executable, "manage.py", "run_worker", "--batch", "--no-startup-delay"],
        cwd=ROOT,
        env={
            **os.environ,
            "SPARKTIDE_FAULT": fault,
            "DJANGO_SETTINGS_MODULE": "tests.settings",
            "DATABASE_URL": _database_url(),
        },
        capture_output=True,
        timeout=120,
    )

    assert worker.returncode == -signal.SIGKILL, worker.stderr.decode()[-2000:]
    run.refresh_from_db()
    assert run.status == Run.Status.RUNNING  # nobody has noticed yet
    committed = PublicationAttempt.objects.get(run=run, outcome=Outcome.COMMITTED)

    call_command("recover_runs", stale_after=0)

    run.refresh_from_db()
    assert (run.status, run.reason) == (Run.Status.PARTIAL, "WORKER_LOST")
    # The committed block is readable exactly once; nothing is duplicated or redone.
    [block] = RunReader(run).blocks()
    assert (block.id, block.state, block.revision) == (committed.block_id, VISIBLE, 1)
    assert block.content["text"].startswith("A：营收增长 [[cite:cite_")
    assert AnswerBlock.objects.filter(run=run).count() == 1
    assert BlockRevision.objects.filter(block__run=run).count() == 1
    assert PublicationAttempt.objects.filter(run=run).count() == 1
    assert RunEvent.objects.filter(run=run, type="answer.published").count() == 1
    assert RunEvent.objects.filter(run=run).order_by("-seq").first().type == "run.partial"
    # The journal never calls the commit a rejection: its receipt stays unknown.
    journal = list(JournalEntry.objects.filter(run=run))
    assert not [e for e in journal if "REJECTED" in str(e.data)]
    receipts = [e for e in journal if e.kind == JournalEntry.Kind.TOOL_RECEIPT]
    publish_receipts = [e for e in receipts if e.tool == "send_answer_part"]
    assert [e.data["receipt"] for e in publish_receipts] == ["unknown"]
    notes = {e.tool: e.data for e in journal if e.kind == JournalEntry.Kind.NOTE}
    if fault == "after_publication_commit":
        assert notes["recovery"]["receipt"] == "unknown"
        assert notes["recovery"]["candidate_id"] == committed.candidate_id
        assert notes["recovery"]["store"]["publicationId"] == committed.block_id
        assert "publication" not in notes
    else:
        assert notes["publication"]["receipt"]["outcome"] == "COMMITTED"
        assert "recovery" not in notes

    # Recovery is idempotent and a later worker does not run the run again.
    call_command("recover_runs", stale_after=0)
    assert execute_run(run.pk) is None
    assert PublicationAttempt.objects.filter(run=run).count() == 1


# --- the connection cut during a commit ---------------------------------------------


@pytest.fixture
def running(live_run):
    return live_run()


def _assert_no_phantom(receipt, run):
    """If the receipt says saved, the revision exists; if it exists, no rejection."""
    attempt = PublicationAttempt.objects.get(candidate_id=receipt.candidate_id)
    revision = BlockRevision.objects.filter(attempt=attempt).first()
    assert receipt.saved == (revision is not None)
    if revision is not None:
        assert attempt.outcome == Outcome.COMMITTED
        assert receipt.outcome == Outcome.COMMITTED
        assert receipt.publication_id == revision.block_id
    else:
        assert attempt.outcome in (Outcome.REJECTED, Outcome.SAVE_UNKNOWN)
        assert not AnswerBlock.objects.filter(run=run).exists()
    return attempt, revision


@pytest.mark.postgres(reason="cuts its own session with pg_terminate_backend")
def test_a_connection_cut_right_before_commit_is_save_unknown_never_saved(
    running, publish, monkeypatch
):
    import publication.pipeline as pipeline

    def cut(point):
        if point == "during_publication_commit":
            _cut_own_connection()

    monkeypatch.setattr(pipeline, "maybe_fault", cut)
    receipt = publish(running, "切断连接时的段落")
    monkeypatch.undo()

    assert (receipt.outcome, receipt.reason, receipt.saved) == (
        Outcome.SAVE_UNKNOWN,
        "SAVE_OUTCOME_UNKNOWN",
        False,
    )
    attempt, revision = _assert_no_phantom(receipt, running)
    assert revision is None and attempt.outcome == Outcome.SAVE_UNKNOWN
    assert RunEvent.objects.filter(run=running, type="answer.save_unknown").exists()
    assert not RunEvent.objects.filter(run=running, type="answer.published").exists()
    # The connection comes back and the next candidate commits.
    assert publish(running, "恢复后的段落").outcome == Outcome.COMMITTED


@pytest.mark.postgres(reason="cuts its own session with pg_terminate_backend")
def test_a_connection_cut_inside_the_commit_transaction_is_a_clean_failure(
    running, publish, monkeypatch
):
    import publication.pipeline as pipeline

    real_append = pipeline.append_event_seq

    def cut_then_append(run, type, data=None, **kwargs):
        if type == "answer.published":
            _cut_own_connection()
        return real_append(run, type, data, **kwargs)

    monkeypatch.setattr(pipeline, "append_event_seq", cut_then_append)
    receipt = publish(running, "事务中被切断的段落")
    monkeypatch.undo()

    assert (receipt.outcome, receipt.reason, receipt.saved) == (
        Outcome.REJECTED,
        "SAVE_FAILED",
        False,
    )
    _assert_no_phantom(receipt, running)
    assert RunEvent.objects.filter(run=running, type="answer.rejected").exists()


def test_a_commit_whose_acknowledgement_is_lost_is_read_back_as_committed(
    running, publish, monkeypatch
):
    """The COMMIT landed but its answer never arrived: reading back finds it, so
    it is reported as the commit it is, and never as a rejection."""
    wrapper = connections["default"]
    real_commit = wrapper.commit
    lost = []

    def commit_then_lose_the_answer():
        real_commit()
        if not lost:
            lost.append(True)
            raise OperationalError("server closed the connection unexpectedly")

    monkeypatch.setattr(wrapper, "commit", commit_then_lose_the_answer)
    receipt = publish(running, "回执丢失的段落", preview=False)
    monkeypatch.undo()

    assert lost
    assert receipt.outcome == Outcome.COMMITTED
    attempt, revision = _assert_no_phantom(receipt, running)
    assert revision.content["text"] == "回执丢失的段落"
    assert not RunEvent.objects.filter(run=running, type="answer.save_unknown").exists()


# --- concurrent revisions --------------------------------------------------------------


def _race(run, jobs):
    """Run publish_candidate jobs in threads that start together, each on its own connection."""
    root = run.agent_calls.get(depth=0)
    barrier = threading.Barrier(len(jobs))
    receipts, errors = [], []

    def work(body, replaces, preview):
        try:
            own = Run.objects.select_related("tenant", "app", "owner").get(pk=run.pk)
            barrier.wait(timeout=30)
            receipts.append(
                publish_candidate(
                    run=own,
                    agent_call=root,
                    entry="B",
                    body=body,
                    replaces=replaces,
                    preview=preview,
                )
            )
        except Exception as exc:  # surfaced below
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=work, args=job) for job in jobs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not errors, errors
    assert len(receipts) == len(jobs)
    return receipts


@pytest.mark.timing
def test_concurrent_revisions_of_one_block_never_exceed_two(running, publish):
    block = publish(running, "v0").publication_id

    receipts = _race(running, [(f"v{i}", block, i % 2 == 0) for i in range(1, 9)])

    committed = [r for r in receipts if r.outcome == Outcome.COMMITTED]
    assert len(committed) == 2
    assert {r.reason for r in receipts if r.outcome == Outcome.REJECTED} == {
        "BLOCK_REVISION_QUOTA_EXCEEDED"
    }
    assert sorted(r.revision for r in committed) == [2, 3]
    assert BlockRevision.objects.filter(block_id=block).count() == 3
    running.refresh_from_db()
    assert running.revision_quota_used == 2
    assert PublicationAttempt.objects.filter(block_id=block, quota_consumed=True).count() == 2


@pytest.mark.timing
def test_concurrent_revisions_across_blocks_never_exceed_eight_per_run(running, publish):
    blocks = [publish(running, f"段落{i}").publication_id for i in range(10)]

    receipts = _race(
        running, [(f"段落{i % 10} 修订{i}", blocks[i % 10], i % 3 != 0) for i in range(16)]
    )

    assert sum(r.outcome == Outcome.COMMITTED for r in receipts) == 8
    running.refresh_from_db()
    assert running.revision_quota_used == 8
    assert BlockRevision.objects.filter(block__run=running).count() == 18
    for block in blocks:
        assert BlockRevision.objects.filter(block_id=block).count() <= 3
    seqs = list(RunEvent.objects.filter(run=running).order_by("seq").values_list("seq", flat=True))
    assert seqs == list(range(1, len(seqs) + 1))
