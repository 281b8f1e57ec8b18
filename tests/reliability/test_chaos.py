"""The fault suite: ``make chaos`` runs it at full size (SPARKTIDE_CHAOS=full,
≤ 15 minutes) and prints one line of figures per scenario; ``make test`` runs
the short version of each scenario. Any loss, duplicate, phantom receipt,
stuck run or 5xx fails it."""

import os
import sys
import threading
import time
import urllib.error
import urllib.request
from datetime import timedelta

import pytest

from runs.models import Run
from runs.runtime import recovery
from sparktide.faults import KILL_POINTS
from tests.realtime.processes import free_port
from tests.reliability.support import (
    Worker,
    all_terminal,
    audit,
    reliability_env,
    start_named_daphne,
    terminate_backends,
    wait_for,
)

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

FULL = os.environ.get("SPARKTIDE_CHAOS") == "full"
KILLS_PER_POINT = 20 if FULL else 2
COMMIT_RUNS, PARTS_PER_RUN = (100, 10) if FULL else (4, 3)
# Every established session of the worker is cut every CUT_EVERY seconds (sessions
# younger than a second are spared: see support.terminate_backends).
CUT_EVERY = 5.0 if FULL else 2.0
CLEAN = {"stuck": 0, "lost": 0, "duplicated": 0, "phantom": 0}


def report(line: str) -> None:
    sys.__stdout__.write(f"chaos {line}\n")
    sys.__stdout__.flush()


def _clean(figures: dict) -> dict:
    return {k: v for k, v in figures.items() if k in CLEAN}


@pytest.mark.timeout(900 if FULL else 300)
@pytest.mark.parametrize("point", sorted(KILL_POINTS))
def test_a_worker_sigkilled_at_a_fault_point_loses_and_repeats_nothing(postgres, make_run, point):
    """Each kill: a worker takes one run, commits its first block, dies at the
    point. Then the sweep every live worker runs — the runs' silence taken as
    past the stale bound — recovers each run with its block, once."""
    runs = [
        make_run(
            {"search": "营收"},
            {"answerPart": "A：营收增长 [[cite:{{c1}}]]"},
            {"answerPart": "B：不应出现"},
        )
        for _ in range(KILLS_PER_POINT)
    ]
    env = reliability_env(SPARKTIDE_STALE_AFTER_SECONDS="600")  # only this test's sweep
    started = time.monotonic()
    kills = 0
    for _ in runs:
        worker = Worker(env, args=("--concurrency", "1", "--batch"), SPARKTIDE_FAULT=point)
        try:
            code = worker.wait(120)
        finally:
            output = worker.output()
            worker.stop()
        assert code == -9, output
        kills += 1
    waits = []
    for run in runs:
        Run.objects.filter(pk=run.pk).update(heartbeat_at=recovery.HANDED_BACK)
    t0 = time.monotonic()
    swept = recovery.sweep(timedelta(seconds=30))
    waits.append(time.monotonic() - t0)
    run_ids = [r.pk for r in runs]
    figures = audit(run_ids)
    statuses = set(Run.objects.filter(pk__in=run_ids).values_list("status", "reason"))
    report(
        f"kill@{point}: {kills} SIGKILLs, {len(swept.recovered)} recovered, "
        f"{figures['blocks']} blocks kept, lost {figures['lost']}, "
        f"duplicated {figures['duplicated']}, phantom receipts {figures['phantom']}, "
        f"stuck {figures['stuck']}, {time.monotonic() - started:.1f} s"
    )
    assert _clean(figures) == CLEAN
    assert len(swept.recovered) == KILLS_PER_POINT
    assert figures["blocks"] == KILLS_PER_POINT  # the block committed before the kill, once
    assert statuses == {("PARTIAL", "WORKER_LOST")}


@pytest.mark.timeout(900 if FULL else 300)
def test_backends_terminated_during_commits_lose_nothing_and_leave_no_5xx(
    postgres, make_run, alice
):
    """A worker commits COMMIT_RUNS × PARTS_PER_RUN blocks while its database
    sessions are terminated every CUT_EVERY seconds; then a server's sessions are cut
    and its next requests must all succeed."""
    steps = [{"search": "营收"}]
    for i in range(PARTS_PER_RUN):  # the model waits a moment between blocks
        steps += [{"answerPart": f"第{i}段 [[cite:{{{{c1}}}}]]"}, {"sleep": 0.2}]
    runs = [make_run(*steps) for _ in range(COMMIT_RUNS)]
    run_ids = [r.pk for r in runs]
    env = reliability_env(SPARKTIDE_DB_POOL_SIZE="24")
    worker = Worker(env, name="sparktide-chaos-worker", args=("--concurrency", "8"))
    port = free_port()
    server = start_named_daphne(port, {**env, "SPARKTIDE_DB_POOL_SIZE": "4"}, "sparktide-chaos-web")
    stop = threading.Event()
    cuts = []

    def killer():
        from django.db import connections

        from publication.models import AnswerBlock

        try:  # cuts begin once commits do
            while (
                not stop.wait(0.1) and not AnswerBlock.objects.filter(run_id__in=run_ids).exists()
            ):
                pass
        finally:
            connections.close_all()
        while not stop.is_set() and not sum(cuts):  # the first cut at once
            cuts.append(terminate_backends("sparktide-chaos-worker"))
            stop.wait(0.05)
        while not stop.wait(CUT_EVERY):
            cuts.append(terminate_backends("sparktide-chaos-worker", older_than=1.0))

    cutter = threading.Thread(target=killer, daemon=True)
    started = time.monotonic()
    cutter.start()
    try:
        try:
            wait_for(lambda: all_terminal(run_ids), timeout=600 if FULL else 120, what="every run")
        except AssertionError:
            print(worker.output(20000))
            print(
                list(
                    Run.objects.filter(pk__in=run_ids).values_list(
                        "status", "reason", "block_count"
                    )
                )
            )
            print(cuts)
            raise
        stop.set()
        cutter.join(5)
        elapsed = time.monotonic() - started
        assert worker.alive(), worker.output()
        # The faults over, the same worker completes the next run.
        after = make_run({"text": "之后"})
        wait_for(lambda: all_terminal([after.pk]), timeout=60, what="the run after the faults")
        after_status = Run.objects.get(pk=after.pk).status

        # The server's pooled sessions cut; every following request must succeed.
        url = f"http://127.0.0.1:{port}/v1/apps/{runs[0].app.slug}/runs/{runs[0].pk}"
        for _ in range(5):
            _get(url, alice.raw_token)
        terminate_backends("sparktide-chaos-web")
        codes = [_get(url, alice.raw_token) for _ in range(50)]
    finally:
        stop.set()
        worker_output = worker.output()
        worker.stop()
        server.stop()

    figures = audit(run_ids)
    completed = Run.objects.filter(pk__in=run_ids, status=Run.Status.COMPLETED).count()
    errors = sum(1 for c in codes if c >= 500)
    report(
        f"backends-cut-during-commits: {figures['blocks']} commits in {COMMIT_RUNS} runs, "
        f"{sum(cuts)} sessions terminated, {completed} runs completed, "
        f"{COMMIT_RUNS - completed} ended early keeping their blocks, lost {figures['lost']}, "
        f"phantom {figures['phantom']}, duplicated {figures['duplicated']}, "
        f"stuck {figures['stuck']}, 5xx after the fault {errors}/{len(codes)}, {elapsed:.1f} s"
    )
    assert _clean(figures) == CLEAN, worker_output
    assert errors == 0
    assert sum(cuts) >= 1
    assert figures["blocks"] >= 1  # commits happened under the cuts
    assert after_status == Run.Status.COMPLETED, worker_output


def _get(url: str, token: str) -> int:
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code
