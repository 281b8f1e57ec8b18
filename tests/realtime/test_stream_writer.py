"""A worker process writes the live text of all its streaming turns in one statement per
interval (runtime/streaming.py ``StreamWriter``, runs/streams.py ``extend_streams``), on a
connection of its own: the runs' pool is never waited on for a preview, the writes stay
fenced (an ended or taken-over run gets nothing more) and bounded, and a turn's last text is
still written by the run before its close."""

import threading
import time

import pytest
from django.db import connection

from publication.text import MAX_DISPLAY_CHARS
from runs import streams
from runs.models import AgentCall, AnswerStream, Run
from runtime import streaming
from runtime.streaming import StreamWriter, TurnStream
from tests import factories

# The batched writer is PostgreSQL's (one statement with arrays); on SQLite each run writes
# its own text (tests/runtime/test_text_stream.py).
pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's writer"),
]


def live_calls(app, owner, count: int) -> list[tuple[Run, AgentCall]]:
    made = []
    for i in range(count):
        run = factories.scripted_run(app, owner, [{"text": "x"}], key=f"w{i}", execute=False)
        Run.objects.filter(pk=run.pk).update(status=Run.Status.RUNNING)
        run.refresh_from_db()
        call = AgentCall.objects.create(run=run, depth=0, agent_version=run.agent_version, task="q")
        made.append((run, call))
    return made


@pytest.fixture
def writer(monkeypatch):
    """A writer of this test's own (the process's may hold another test's streams)."""
    own = StreamWriter()
    monkeypatch.setattr(streaming, "_writer", own)
    return own


def wait_for(condition, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "not in time"
        time.sleep(0.01)


def text_of(call) -> str:
    row = AnswerStream.objects.filter(agent_call=call).first()
    return row.text if row is not None else ""


def test_many_turns_are_written_in_one_statement_and_announced(app, alice, writer, monkeypatch):
    sent: list[tuple[str, dict]] = []
    monkeypatch.setattr(streams, "_senders", [lambda run_id, data: sent.append((run_id, data))])
    made = live_calls(app, alice, 6)
    turns = [TurnStream(run, call, 1) for run, call in made]
    assert all(t.writer is writer for t in turns)
    with writer.cond:  # held: every first text gathers for one batch
        for i, turn in enumerate(turns):
            turn.feed(f"T{i}")
    wait_for(lambda: all(text_of(call) for _, call in made))
    first = writer.statements
    assert first <= 2  # one batch (the thread may have taken the first text alone)
    with writer.cond:
        for turn in turns:
            turn.feed("续")
    wait_for(lambda: all(text_of(call).endswith("续") for _, call in made))
    assert writer.statements == first + 1
    for i, (turn, (_, call)) in enumerate(zip(turns, made, strict=True)):
        turn.close("committed")
        assert text_of(call) == f"T{i}续"
    for i, (run, _) in enumerate(made):
        deltas = [d for r, d in sent if r == run.pk]
        assert [(d["offset"], d["delta"]) for d in deltas] == [(0, f"T{i}"), (2, "续")]


def test_an_ended_run_and_a_taken_over_run_get_nothing_more_from_the_writer(app, alice, writer):
    (ended, ended_call), (taken, taken_call), (going, going_call) = live_calls(app, alice, 3)
    turns = [TurnStream(r, c, 1) for r, c in ((ended, ended_call), (taken, taken_call))]
    going_turn = TurnStream(going, going_call, 1)
    for turn in [*turns, going_turn]:
        turn.feed("开头")
    wait_for(lambda: all(text_of(c) == "开头" for c in (ended_call, taken_call, going_call)))
    Run.objects.filter(pk=ended.pk).update(status=Run.Status.FAILED)
    Run.objects.filter(pk=taken.pk).update(execution_epoch=taken.execution_epoch + 1)
    for turn in [*turns, going_turn]:
        turn.feed("之后")
    wait_for(lambda: all(t.stopped for t in turns) and text_of(going_call) == "开头之后")
    assert text_of(ended_call) == text_of(taken_call) == "开头"


def test_a_run_whose_row_is_locked_is_written_after_without_holding_up_the_others(
    app, alice, writer
):
    """Another transaction holds one run's row: the other run's text is written meanwhile;
    the locked run's text is kept and written once the lock is gone."""
    (locked, locked_call), (free, free_call) = live_calls(app, alice, 2)
    held, release = threading.Event(), threading.Event()

    def hold() -> None:
        from django.db import connection as own
        from django.db import transaction

        with transaction.atomic():
            Run.objects.select_for_update().get(pk=locked.pk)
            held.set()
            release.wait(10)
        own.close()

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert held.wait(10)
        locked_turn, free_turn = TurnStream(locked, locked_call, 1), TurnStream(free, free_call, 1)
        locked_turn.feed("等锁")
        free_turn.feed("先到")
        wait_for(lambda: text_of(free_call) == "先到")
        assert text_of(locked_call) == "" and not locked_turn.stopped
    finally:
        release.set()
        holder.join(10)
    wait_for(lambda: text_of(locked_call) == "等锁")


def test_the_writer_keeps_the_display_bound(app, alice, writer):
    [(run, call)] = live_calls(app, alice, 1)
    turn = TurnStream(run, call, 1)
    for _ in range(MAX_DISPLAY_CHARS // 1000 + 5):
        turn.feed("字" * 1000)
    turn.flush()
    stored = AnswerStream.objects.get(agent_call=call)
    assert stored.length == len(stored.text) == MAX_DISPLAY_CHARS and stored.truncated
    assert turn.stopped
    assert writer.statements <= MAX_DISPLAY_CHARS // streaming.COALESCE_CHARS + 1
