"""The run's journal, batched, and the process's one heartbeat thread.

The engine keeps journal entries and writes them in one statement, never past a side
effect (runtime/state.py ``Journal``): these tests watch the journal on disk at
each side effect — a tool's handler, a Publication candidate, the fault point after
a commit's note — and check it is what writing each entry at once gave.
"""

import threading

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from runs.models import JournalEntry, Run
from runtime import engine as engine_module
from runtime import tools as tools_module

pytestmark = pytest.mark.django_db(transaction=True)

SCRIPT = ({"search": "营收"}, {"answerPart": "营收增长 [[cite:{{c1}}]]"}, {"text": "结论"})


def _on_disk(run_id: str) -> list[tuple[str, str, int]]:
    return list(
        JournalEntry.objects.filter(run_id=run_id)
        .order_by("id")
        .values_list("kind", "tool", "step")
    )


def test_the_journal_keeps_its_entries_and_their_order(make_run):
    run = make_run(*SCRIPT)
    assert run.status == Run.Status.COMPLETED
    assert _on_disk(run.pk) == [
        ("STEP", "", 1),
        ("TOOL_CALL", "search_knowledge", 1),
        ("TOOL_RECEIPT", "search_knowledge", 1),
        ("STEP", "", 2),
        ("TOOL_CALL", "send_answer_part", 2),
        ("NOTE", "publication", 2),
        ("TOOL_RECEIPT", "send_answer_part", 2),
        ("STEP", "", 3),
        ("NOTE", "publication", 3),
    ]
    entries = list(JournalEntry.objects.filter(run_id=run.pk).order_by("id"))
    assert [e.at for e in entries] == sorted(e.at for e in entries)
    assert entries[1].data["arguments"]["query"] == "营收"
    assert entries[2].data["receipt"]["citations"]


def test_every_entry_is_on_disk_before_the_next_side_effect(make_run, monkeypatch):
    """What each side effect saw of the journal: the tool call before its tool runs, the
    step before Publication acts, the commit's note before the fault point after it."""
    seen: dict[str, list] = {}
    original_search = tools_module.Tools.search_knowledge
    original_publish = tools_module.publish_candidate
    original_fault = tools_module.maybe_fault

    def search(self, call, state, step, args):
        seen.setdefault("search", []).append(_on_disk(self.run.pk))
        return original_search(self, call, state, step, args)

    def publish(*, run, **kwargs):
        seen.setdefault("publish", []).append(_on_disk(run.pk))
        return original_publish(run=run, **kwargs)

    def fault(point):
        if point == "after_journal_write":
            run_id = Run.objects.order_by("-created_at").values_list("pk", flat=True)[0]
            seen.setdefault("fault", []).append(_on_disk(run_id))
        return original_fault(point)

    monkeypatch.setattr(tools_module.Tools, "search_knowledge", search)
    monkeypatch.setattr(tools_module, "publish_candidate", publish)
    monkeypatch.setattr(tools_module, "maybe_fault", fault)
    make_run(*SCRIPT)

    assert seen["search"] == [[("STEP", "", 1), ("TOOL_CALL", "search_knowledge", 1)]]
    first, second = seen["publish"]
    assert first[-2:] == [("STEP", "", 2), ("TOOL_CALL", "send_answer_part", 2)]
    assert first[2] == ("TOOL_RECEIPT", "search_knowledge", 1)  # written before step 2's turn
    assert second[-2:] == [("TOOL_RECEIPT", "send_answer_part", 2), ("STEP", "", 3)]
    assert [entries[-1] for entries in seen["fault"]] == [
        ("NOTE", "publication", 2),
        ("NOTE", "publication", 3),
    ]


def test_a_steps_heartbeat_writes_the_receipts_kept_since_its_tool_ran(make_run):
    """Before the model's next turn, one statement: the kept receipt and the beat."""
    make_run(*SCRIPT, key="warm")
    with CaptureQueriesContext(connection) as queries:
        run = make_run(*SCRIPT)
    carried = [
        q["sql"]
        for q in queries.captured_queries
        if q["sql"].startswith("WITH alive AS") and "journaled AS" in q["sql"]
    ]
    if connection.vendor == "postgresql":
        assert len(carried) == 2
        assert all("TOOL_RECEIPT" in sql and "heartbeat_at" in sql for sql in carried)
    assert JournalEntry.objects.filter(run=run, kind=JournalEntry.Kind.TOOL_RECEIPT).count() == 2


def test_a_cancelled_runs_kept_receipt_is_still_written(make_run, monkeypatch):
    """The run is cancelled while its tool runs: the next heartbeat refuses the step and
    the receipt it carries is on disk anyway (nothing is lost to the batching)."""
    original_search = tools_module.Tools.search_knowledge

    def search_then_cancel(self, call, state, step, args):
        result = original_search(self, call, state, step, args)
        Run.objects.filter(pk=self.run.pk).update(cancel_requested_at=timezone.now())
        return result

    monkeypatch.setattr(tools_module.Tools, "search_knowledge", search_then_cancel)
    run = make_run(*SCRIPT)
    assert run.status == Run.Status.CANCELLED
    assert _on_disk(run.pk) == [
        ("STEP", "", 1),
        ("TOOL_CALL", "search_knowledge", 1),
        ("TOOL_RECEIPT", "search_knowledge", 1),
    ]


def test_one_statement_beats_every_run_in_flight_and_only_running_ones(
    make_run, django_assert_num_queries
):
    runs = [make_run({"text": "x"}, key=f"beat-{i}", execute=False) for i in range(3)]
    long_ago = timezone.now() - timezone.timedelta(hours=1)
    Run.objects.filter(pk__in=[r.pk for r in runs[:2]]).update(
        status=Run.Status.RUNNING, heartbeat_at=long_ago
    )
    Run.objects.filter(pk=runs[2].pk).update(heartbeat_at=long_ago)  # QUEUED: not beaten
    beats = engine_module.RunHeartbeats()
    for run in runs:
        beats.add(run.pk, run.execution_epoch)
    beats.discard(runs[1].pk)  # ended: no longer beaten

    try:
        with django_assert_num_queries(1):
            assert beats.beat() == 1
    finally:
        beats.stop()
    after = dict(Run.objects.filter(pk__in=[r.pk for r in runs]).values_list("pk", "heartbeat_at"))
    assert after[runs[0].pk] > long_ago
    assert after[runs[1].pk] == long_ago
    assert after[runs[2].pk] == long_ago


def test_runs_share_one_heartbeat_thread_and_leave_it_when_they_end(make_run, monkeypatch):
    shared = engine_module.RunHeartbeats()
    monkeypatch.setattr(engine_module, "heartbeats", shared)
    started: list[str] = []
    original_start = threading.Thread.start

    def start(thread):
        started.append(thread.name)
        return original_start(thread)

    monkeypatch.setattr(threading.Thread, "start", start)
    try:
        make_run({"text": "一"}, key="one")
        make_run({"text": "二"}, key="two")
    finally:
        shared.stop()
    assert [name for name in started if "heartbeat" in name] == ["sparktide-run-heartbeats"]
    assert shared.runs == {}


def test_the_heartbeat_thread_beats_a_run_while_its_model_thinks(make_run, settings):
    settings.SPARKTIDE_HEARTBEAT_SECONDS = 0.1
    run = make_run({"text": "x"}, key="thinking", execute=False)
    long_ago = timezone.now() - timezone.timedelta(hours=1)
    Run.objects.filter(pk=run.pk).update(status=Run.Status.RUNNING, heartbeat_at=long_ago)
    beats = engine_module.RunHeartbeats()
    beats.add(run.pk, run.execution_epoch)
    try:
        for _ in range(100):  # up to 10 s on a loaded machine; usually the first beat
            beaten = Run.objects.values_list("heartbeat_at", flat=True).get(pk=run.pk)
            if beaten > long_ago:
                break
            threading.Event().wait(0.1)
        assert beaten > long_ago
    finally:
        beats.stop()
