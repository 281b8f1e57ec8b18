"""Each write of a run's execution is fenced by the epoch its worker claimed: once the run
was taken over (recovered as WORKER_LOST, or handed back), the execution that lost it —
a worker paused past the stale bound and resumed — writes nothing at all. Every site is
called here the way the engine calls it, with the lost execution's run, and what the
database holds is compared before and after (tests/reliability/test_chaos_fencing.py
drives the same thing with real processes and SIGSTOP)."""

from types import SimpleNamespace

import pytest
from django.db import transaction
from django.tasks import TaskResultStatus

from citations.issuance import issue_citations
from citations.models import CitationReference
from knowledge.retrieval import RetrievedItem
from publication.models import AnswerBlock, PublicationAttempt
from publication.pipeline import publish_candidate
from runs.events import RunEnded, RunFenced, append_event
from runs.lifecycle import finish_run, lock_for_execution, worker_identity
from runs.models import AgentCall, AnswerStream, JournalEntry, Run, RunEvent
from runs.streams import close_stream, extend_stream
from runtime import recovery
from runtime.engine import Engine, RunHeartbeats, _heartbeat
from runtime.state import Journal
from runtime.workers import _record_task

pytestmark = pytest.mark.django_db

STEPS = ({"search": "营收", "topK": 3}, {"text": "北辰医药营收增长12%。"})


def _running_again(run: Run) -> Run:
    """The executed run as its worker holds it mid-run: RUNNING, under the epoch it claimed."""
    Run.objects.filter(pk=run.pk).update(status=Run.Status.RUNNING, completed_at=None, reason="")
    return Run.objects.select_related("tenant", "app", "owner", "agent_version__agent").get(
        pk=run.pk
    )


def _snapshot(run_id: str) -> dict:
    """Everything an execution writes for its run."""
    row = Run.objects.get(pk=run_id)
    return {
        "run": (row.status, row.last_seq, row.citation_count, row.heartbeat_at, row.block_count),
        "events": list(RunEvent.objects.filter(run_id=run_id).values_list("seq", "type")),
        "citations": CitationReference.objects.filter(run_id=run_id).count(),
        "journal": JournalEntry.objects.filter(run_id=run_id).count(),
        "calls": list(
            AgentCall.objects.filter(run_id=run_id).values_list("pk", "status", "completed_at")
        ),
        "attempts": list(
            PublicationAttempt.objects.filter(run_id=run_id).values_list("pk", "outcome")
        ),
        "blocks": AnswerBlock.objects.filter(run_id=run_id).count(),
        "streams": list(
            AnswerStream.objects.filter(run_id=run_id).values_list(
                "agent_call_id", "step", "state", "text", "length", "updated_at"
            )
        ),
    }


def _lost(make_run, *, how: str) -> SimpleNamespace:
    """A run whose execution (epoch 1) was taken over: ``recovered`` (ended WORKER_LOST)
    or ``handed back`` (still RUNNING, its epoch moved on, for the next sweep)."""
    run = _running_again(make_run(*STEPS, execute=True))
    assert run.execution_epoch == 1
    if how == "recovered":
        assert recovery.recover_run(Run.objects.get(pk=run.pk)) is not None
    else:
        assert recovery.hand_back(worker_identity()) == 1
    assert Run.objects.get(pk=run.pk).execution_epoch == 2
    root = run.agent_calls.get(depth=0)
    return SimpleNamespace(run=run, root=root, before=_snapshot(run.pk))


@pytest.fixture(params=["recovered", "handed back"])
def lost(request, make_run):
    return _lost(make_run, how=request.param)


@pytest.fixture
def recovered(make_run):
    return _lost(make_run, how="recovered")


def _items(run: Run) -> list[RetrievedItem]:
    return [
        RetrievedItem(
            version=r.version,
            document=r.document,
            chunk=r.chunk,
            title=r.title,
            content=r.chunk.text if r.chunk else r.title,
            source_ref=r.source_ref,
            digest=r.digest,
            score=1.0,
        )
        for r in CitationReference.objects.filter(run=run).select_related("chunk")
    ]


def test_the_fence_refuses_a_lost_epoch_and_names_both_epochs(lost):
    with transaction.atomic(), pytest.raises(RunFenced) as refused:
        lock_for_execution(lost.run.pk, lost.run.execution_epoch)
    assert (refused.value.epoch, refused.value.current) == (1, 2)
    with transaction.atomic():  # the epoch that holds the run now passes (unless it ended)
        if Run.objects.get(pk=lost.run.pk).status == Run.Status.RUNNING:
            assert lock_for_execution(lost.run.pk, 2)["execution_epoch"] == 2


def test_citation_issuance_of_a_lost_execution_issues_nothing(lost):
    items = _items(lost.run)
    assert items
    with pytest.raises(RunFenced):
        issue_citations(run=lost.run, agent_call=lost.root, items=items, query="营收", top_k=3)
    assert _snapshot(lost.run.pk) == lost.before


def test_an_event_of_a_lost_execution_is_not_appended(lost):
    with pytest.raises(RunFenced):
        append_event(lost.run, "agent.started", {}, epoch=lost.run.execution_epoch)
    assert _snapshot(lost.run.pk) == lost.before


def test_nothing_is_appended_after_the_terminal_event_even_under_the_callers_lock(recovered):
    """The terminal guard holds for every append, ``locked`` ones included."""
    run = recovered.run
    with transaction.atomic(), pytest.raises(RunEnded):
        Run.objects.select_for_update().get(pk=run.pk)
        append_event(run, "citation.created", {"id": "cite_late"}, locked=True)
    assert _snapshot(run.pk) == recovered.before


def test_the_journal_of_a_lost_execution_is_not_written(lost):
    journal = Journal(lost.run)
    journal.add(lost.root, JournalEntry.Kind.STEP, step=9, text="after the takeover")
    with pytest.raises(RunFenced):
        journal.flush()
    assert _snapshot(lost.run.pk) == lost.before


def test_a_lost_executions_step_heartbeat_neither_beats_nor_writes_its_journal(lost):
    journal = Journal(lost.run)
    journal.add(lost.root, JournalEntry.Kind.TOOL_RECEIPT, tool="search_knowledge", step=9)
    with pytest.raises(RunFenced):
        _heartbeat(lost.run, journal)
    assert _snapshot(lost.run.pk) == lost.before


@pytest.mark.django_db(transaction=True)  # its own connections, its task on commit
def test_the_heartbeat_thread_does_not_keep_a_handed_back_run_alive(make_run):
    handed = _lost(make_run, how="handed back")
    beats = RunHeartbeats()
    beats.add(handed.run.pk, handed.run.execution_epoch)
    try:
        assert beats.beat() == 0
    finally:
        beats.stop()
    assert _snapshot(handed.run.pk) == handed.before
    beats.add(handed.run.pk, 2)  # the epoch that holds it now is beaten
    try:
        assert beats.beat() == 1
    finally:
        beats.stop()


def test_a_lost_execution_neither_ends_its_agent_call_nor_records_it(lost):
    AgentCall.objects.filter(pk=lost.root.pk).update(status=AgentCall.Status.RUNNING)
    lost.before = _snapshot(lost.run.pk)
    engine = Engine(lost.run)
    engine.journal.add(lost.root, JournalEntry.Kind.STEP, step=9, text="late")
    with pytest.raises(RunFenced):
        engine._finish_call(lost.root, AgentCall.Status.COMPLETED, "late text")
    assert _snapshot(lost.run.pk) == lost.before


def test_a_lost_execution_opens_no_agent_call(lost):
    engine = Engine(lost.run)
    with pytest.raises(RunFenced):
        engine.open_call(parent=lost.root, depth=1, agent_version=lost.root.agent_version, task="t")
    assert _snapshot(lost.run.pk) == lost.before


@pytest.mark.parametrize("preview", [True, False])
def test_publication_of_a_lost_execution_commits_and_records_nothing(lost, preview):
    with pytest.raises(RunFenced):
        publish_candidate(
            run=lost.run,
            agent_call=lost.root,
            entry="B",
            body="迟到的答案：营收增长。",
            preview=preview,
        )
    assert _snapshot(lost.run.pk) == lost.before


def test_a_lost_execution_does_not_end_a_handed_back_run(make_run):
    handed = _lost(make_run, how="handed back")
    with pytest.raises(RunFenced):
        finish_run(handed.run, Run.Status.COMPLETED, "", epoch=handed.run.execution_epoch)
    assert _snapshot(handed.run.pk) == handed.before


@pytest.mark.django_db(transaction=True)  # its own connections, its task on commit
def test_a_lost_executions_task_row_stays_as_recovery_settled_it(make_run):
    run = make_run({"text": "x"})
    task = recovery.run_tasks(run.pk).get()
    task.claim("paused-worker")
    assert recovery.settle_run_tasks(run.pk) == 1  # recovery: FAILED, WorkerLost
    settled = type(task).objects.values("status", "finished_at", "exception_class_path")
    before = settled.get(pk=task.pk)

    assert _record_task(task, "COMPLETED", None) is False

    assert settled.get(pk=task.pk) == before
    assert before["status"] == TaskResultStatus.FAILED


def _live_stream(lost: SimpleNamespace, text: str = "暂停前") -> None:
    """The turn's live preview as the paused worker left it: a LIVE row at step 9."""
    AnswerStream.objects.update_or_create(
        agent_call=lost.root,
        defaults={"run": lost.run, "step": 9, "state": "LIVE", "text": text, "length": len(text)},
    )
    lost.before = _snapshot(lost.run.pk)


def _under_current_epoch(run: Run) -> Run:
    """The same run as the execution that holds it now (epoch 2) sees it."""
    current = Run.objects.get(pk=run.pk)
    current.execution_epoch = Run.objects.get(pk=run.pk).execution_epoch
    return current


def test_a_lost_execution_starts_no_live_preview(lost, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks() as announced:
        assert extend_stream(lost.run, lost.root, 9, offset=0, delta="迟到的预览") is False
    assert announced == []
    assert _snapshot(lost.run.pk) == lost.before


def test_a_lost_execution_extends_no_live_preview(lost, django_capture_on_commit_callbacks):
    _live_stream(lost)
    with django_capture_on_commit_callbacks() as announced:
        assert extend_stream(lost.run, lost.root, 9, offset=3, delta="又多了几个字") is False
    assert announced == []
    assert _snapshot(lost.run.pk) == lost.before


def test_a_lost_execution_does_not_close_the_live_preview(lost):
    _live_stream(lost)
    close_stream(lost.run, lost.root, 9, length=3, reason="committed")
    assert _snapshot(lost.run.pk) == lost.before


def test_the_execution_that_holds_a_handed_back_run_still_streams(make_run):
    """The control: the same writes under the epoch that holds the run now do land, so the
    refusals above are the fence's, not a stream that could not be written anyway."""
    handed = _lost(make_run, how="handed back")
    run = _under_current_epoch(handed.run)
    assert extend_stream(run, handed.root, 9, offset=0, delta="新的")
    assert extend_stream(run, handed.root, 9, offset=2, delta="执行")
    close_stream(run, handed.root, 9, length=4, reason="committed")
    row = AnswerStream.objects.get(agent_call=handed.root)
    assert (row.text, row.length, row.state) == ("新的执行", 4, AnswerStream.State.CLOSED)
    closed = RunEvent.objects.filter(run_id=run.pk, type="answer.stream").last()
    assert closed.data["state"] == "closed" and closed.data["offset"] == 4


@pytest.mark.django_db(transaction=True)  # two sessions: the takeover's and the stream's
@pytest.mark.parametrize("offset", [0, 3])
def test_a_stream_write_waiting_on_a_takeover_is_refused_once_the_takeover_commits(
    postgres, make_run, offset
):
    """The fence is taken in the write's own statement (or transaction) under the run's row
    lock: a write that queued behind a takeover still in progress is judged by the epoch the
    takeover committed, not by what the run said when the write began."""
    import threading

    import psycopg
    from django.db import connection as django_connection

    from tests.reliability.support import conninfo, wait_for

    run = _running_again(make_run(*STEPS, execute=True))
    root = run.agent_calls.get(depth=0)
    lost = SimpleNamespace(run=run, root=root)
    _live_stream(lost)
    table = Run._meta.db_table
    result: list[bool] = []

    def write() -> None:
        try:
            result.append(extend_stream(run, root, 9, offset=offset, delta="迟到"))
        finally:
            django_connection.close()

    with psycopg.connect(**conninfo()) as takeover:
        takeover.execute(
            f"UPDATE {table} SET execution_epoch = execution_epoch + 1 WHERE id = %s",  # noqa: S608
            [run.pk],
        )
        writer = threading.Thread(target=write)
        writer.start()
        with psycopg.connect(**conninfo(), autocommit=True) as admin:
            wait_for(
                lambda: (
                    admin.execute(
                        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                        " AND wait_event_type = 'Lock'"
                    ).fetchone()[0]
                    >= 1
                ),
                timeout=10,
                what="the stream's write to wait on the run's row lock",
            )
        takeover.commit()
        writer.join(10)
    assert result == [False]
    assert Run.objects.get(pk=run.pk).execution_epoch == 2
    assert _snapshot(run.pk) == lost.before
