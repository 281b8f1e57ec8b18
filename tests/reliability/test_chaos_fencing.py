"""A worker paused past the stale bound (SIGSTOP) while its runs wait on a slow model;
the sweep recovers them (WORKER_LOST); the worker is resumed (SIGCONT) and carries on
with its next tool call. Fencing (runs/lifecycle.py ``lock_for_execution``, the epoch
taken at claim) must leave every recovered run exactly as recovery left it: no event
after the terminal one, no citation, journal row or agent-call change, the task row
FAILED. ``make test`` runs it with 3 runs; ``SPARKTIDE_CHAOS=full`` with 20, and prints
one line of figures."""

import os
import re
import signal
import sys
import time
from datetime import timedelta

import pytest
from django.tasks import TaskResultStatus

from citations.models import CitationReference
from publication.models import AnswerBlock, PublicationAttempt
from publication.reader import RunReader
from runs.events import TERMINAL_EVENT_TYPES
from runs.models import AgentCall, JournalEntry, Run, RunEvent
from runtime import recovery
from tests.reliability.support import Worker, all_terminal, audit, reliability_env, wait_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

FULL = os.environ.get("SPARKTIDE_CHAOS") == "full"
RUNS = 20 if FULL else 3
STALE = 3.0  # seconds: SPARKTIDE_STALE_AFTER_SECONDS of the paused worker and of the sweep
# The model takes longer than the pause: the worker is stopped inside its model turn, and on
# SIGCONT the turn returns a search — the tool call a lost worker used to make after the end.
STEPS = (
    {"sleep": 6},
    {"search": "营收"},
    {"answerPart": "A：营收增长 [[cite:{{c1}}]]"},
)
TAKEN_OVER = re.compile(r"run (\S+): taken over \(execution epoch 1, now 2")


def report(line: str) -> None:
    sys.__stdout__.write(f"chaos {line}\n")
    sys.__stdout__.flush()


def _written(run_ids) -> dict:
    """What the executions wrote, per run: compared before and after the resume."""
    return {
        run_id: {
            "events": list(RunEvent.objects.filter(run_id=run_id).values_list("seq", "type")),
            "citations": CitationReference.objects.filter(run_id=run_id).count(),
            "journal": list(JournalEntry.objects.filter(run_id=run_id).values_list("pk", "kind")),
            "calls": list(
                AgentCall.objects.filter(run_id=run_id).values_list("pk", "status", "completed_at")
            ),
            "attempts": PublicationAttempt.objects.filter(run_id=run_id).count(),
            "blocks": AnswerBlock.objects.filter(run_id=run_id).count(),
            "run": Run.objects.values_list("status", "reason", "last_seq", "completed_at").get(
                pk=run_id
            ),
        }
        for run_id in run_ids
    }


@pytest.mark.timeout(600 if FULL else 180)
def test_a_paused_worker_resumed_after_recovery_writes_nothing(postgres, make_run):
    runs = [make_run(*STEPS) for _ in range(RUNS)]
    run_ids = [r.pk for r in runs]
    env = reliability_env(
        SPARKTIDE_STALE_AFTER_SECONDS=str(STALE),
        SPARKTIDE_HEARTBEAT_SECONDS="0.5",
        SPARKTIDE_SWEEP_SECONDS="600",  # the paused worker never sweeps its own runs
    )
    worker = Worker(env, args=("--concurrency", str(RUNS)))
    try:
        wait_for(
            lambda: Run.objects.filter(pk__in=run_ids, status=Run.Status.RUNNING).count() == RUNS,
            timeout=60,
            what=f"{RUNS} runs claimed",
        )
        time.sleep(0.5)  # each is inside its model turn (the scripted sleep)
        os.kill(worker.popen.pid, signal.SIGSTOP)
        stopped = time.monotonic()

        # Recovery, as any live worker's sweep does it, once the runs are past the bound.
        def swept() -> bool:
            recovery.sweep(timedelta(seconds=STALE))
            return all_terminal(run_ids)

        wait_for(swept, timeout=60, interval=0.25, what="recovery of the paused worker's runs")
        recovered_after = time.monotonic() - stopped
        before = _written(run_ids)
        assert {s for s, *_ in (w["run"] for w in before.values())} <= {"FAILED", "PARTIAL"}

        os.kill(worker.popen.pid, signal.SIGCONT)
        # Each execution meets the fence at its next write, logs one line and stops.
        fenced = wait_for(
            lambda: (
                (found := set(TAKEN_OVER.findall(worker.output(limit=10**6)))) >= set(run_ids)
                and found
            ),
            timeout=60,
            what="every resumed execution to meet the fence",
        )
        time.sleep(1.0)  # anything the worker still had to write, written
        after = _written(run_ids)
        output = worker.output(limit=10**6)
    finally:
        worker.stop()

    late = 0
    for run_id in run_ids:
        seqs = [seq for seq, kind in after[run_id]["events"] if kind in TERMINAL_EVENT_TYPES]
        assert len(seqs) == 1, after[run_id]["events"]
        late += sum(1 for seq, _ in after[run_id]["events"] if seq > seqs[0])
        # What REST lists is what the WebSocket replay sends before it closes on the end.
        run = Run.objects.select_related("app", "tenant", "owner").get(pk=run_id)
        listed = RunReader(run).hydrate(run.events.order_by("seq"))
        assert len(listed) == seqs[0] == run.last_seq
    changed = [run_id for run_id in run_ids if after[run_id] != before[run_id]]
    tasks = {
        run_id: list(recovery.run_tasks(run_id).values_list("status", "exception_class_path"))
        for run_id in run_ids
    }
    figures = audit(run_ids)

    if FULL:
        report(
            f"paused-worker runs={RUNS} started={RUNS} ended={sum(all_terminal([r]) for r in run_ids)}"
            f" fenced={len(fenced & set(run_ids))} writes-after-terminal={late}"
            f" rows-changed-after-recovery={len(changed)} recovered-in={recovered_after:.1f}s"
        )
    assert late == 0
    assert changed == [], {r: (before[r], after[r]) for r in changed}
    assert tasks == {
        run_id: [(TaskResultStatus.FAILED, "runtime.recovery.WorkerLost")] for run_id in run_ids
    }
    assert {k: figures[k] for k in ("stuck", "lost", "duplicated", "phantom")} == dict.fromkeys(
        ("stuck", "lost", "duplicated", "phantom"), 0
    )
    assert "Traceback" not in output, output[-3000:]
