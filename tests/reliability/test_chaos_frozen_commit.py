"""A worker frozen inside a commit (docs/reliability.md "Outages"): the worker stops itself
(SIGSTOP, fault point ``frozen_holding_run_lock``) right after Publication's commit took the
run's row lock through the fence, its transaction open. What must hold while it is frozen and
after it resumes:

* the lock is freed by ``idle_in_transaction_session_timeout`` (the worker role's, shortened
  here through SPARKTIDE_DB_IDLE_IN_TRANSACTION_TIMEOUT);
* the run's ticket and cancel are answered (201/202 when the frozen session is cut first, 503
  DATABASE_UNAVAILABLE at the web role's ``lock_timeout`` when it is cut later, as with the
  default timeouts), never held;
* ``/readyz`` answers, and says 503 once no worker has beaten for SPARKTIDE_READY_WORKER_SECONDS;
* the run is recovered by the sweep within the stale window (not held by the lock);
* after SIGCONT the worker writes nothing (its session is gone, its retry meets the fence).

``make test`` freezes 1 run; ``SPARKTIDE_CHAOS=full`` 5 (the commits in flight at the stop
hold their runs' locks, the others are frozen with them mid-step; the first held run is
probed). One line of figures either way."""

import json
import os
import signal
import sys
import threading
import time
import urllib.error
import urllib.request
from datetime import timedelta
from pathlib import Path

import pytest
from django.db import close_old_connections, transaction

from runs.events import TERMINAL_EVENT_TYPES
from runs.models import Run, RunEvent
from runtime import recovery
from tests.realtime.processes import free_port
from tests.reliability.support import (
    Worker,
    all_terminal,
    audit,
    conninfo,
    reliability_env,
    start_named_daphne,
    wait_for,
)
from tests.reliability.test_chaos_fencing import _written

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

FULL = os.environ.get("SPARKTIDE_CHAOS") == "full"
RUNS = 5 if FULL else 1
STALE = 3.0  # SPARKTIDE_STALE_AFTER_SECONDS of the frozen worker and of the sweep
WEB_LOCK = 3.0  # the web role's lock_timeout (its default)
READY_WORKER = 5  # /readyz's worker check: no beat for this long → 503
STEPS = ({"text": "北辰医药营收增长12%。"},)


def report(line: str) -> None:
    sys.__stdout__.write(f"chaos {line}\n")
    sys.__stdout__.flush()


def stopped(pid: int) -> bool:
    """The process is stopped (SIGSTOP): state ``T`` in /proc/<pid>/stat."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] == "T"


def idle_in_transaction(application_name: str) -> int:
    import psycopg

    with psycopg.connect(**conninfo(), autocommit=True) as admin:
        return admin.execute(
            "SELECT count(*) FROM pg_stat_activity"
            " WHERE application_name = %s AND state LIKE 'idle in transaction%%'",
            [application_name],
        ).fetchone()[0]


def call(method: str, url: str, token: str | None = None) -> tuple[int, str, float]:
    """(status, problem code or "", seconds to the answer); status 0: no answer in 30 s."""
    headers = {"Host": "127.0.0.1"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(
        url, method=method, headers=headers, data=b"" if method == "POST" else None
    )
    started = time.monotonic()
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, "", time.monotonic() - started
    except urllib.error.HTTPError as error:
        try:
            code = json.loads(error.read() or b"{}").get("code", "")
        except ValueError:
            code = ""
        return error.code, code or "", time.monotonic() - started
    except OSError:
        return 0, "no answer", time.monotonic() - started


@pytest.mark.timeout(300)
@pytest.mark.parametrize(
    "idle",
    [
        # The frozen session is cut before a waiting request's lock_timeout: it is served.
        pytest.param(2.0, id="cut-before-the-web-lock-timeout"),
        # As with the defaults (worker 15 s, web 3 s): the waiting request gets 503 first.
        pytest.param(6.0, id="cut-after-the-web-lock-timeout"),
    ],
)
def test_a_worker_frozen_inside_a_commit_is_cut_recovered_and_writes_nothing(
    redis_and_postgres, alice, make_run, idle
):
    env = reliability_env(
        SPARKTIDE_STALE_AFTER_SECONDS=str(STALE),
        SPARKTIDE_HEARTBEAT_SECONDS="0.5",
        SPARKTIDE_SWEEP_SECONDS="600",  # the frozen worker never sweeps its own runs
    )
    port = free_port()
    server = start_named_daphne(
        port, {**env, "SPARKTIDE_READY_WORKER_SECONDS": str(READY_WORKER)}, "sparktide-frozen-web"
    )
    worker = Worker(
        env,
        args=("--concurrency", str(RUNS)),
        SPARKTIDE_FAULT="frozen_holding_run_lock",
        SPARKTIDE_DB_IDLE_IN_TRANSACTION_TIMEOUT=str(idle),
    )
    base = f"http://127.0.0.1:{port}"
    probes: dict[str, tuple[int, str, float]] = {}
    readiness: list[tuple[float, int, float]] = []
    try:
        runs = [make_run(*STEPS) for _ in range(RUNS)]
        run_ids = [r.pk for r in runs]
        wait_for(lambda: stopped(worker.popen.pid), timeout=60, what="the worker to freeze")
        frozen_at = time.monotonic()
        held = idle_in_transaction(worker.name)
        with transaction.atomic():  # the run whose row the frozen commit holds
            free = Run.objects.select_for_update(skip_locked=True).filter(pk__in=run_ids)
            locked = set(run_ids) - set(free.values_list("pk", flat=True))
        assert locked, "no run's row is held by the frozen worker"
        frozen = Run.objects.select_related("app").get(pk=sorted(locked)[0])
        run_url = f"{base}/v1/apps/{frozen.app.slug}/runs/{frozen.pk}"

        def probe(name: str, method: str, url: str, token: str | None) -> None:
            probes[name] = call(method, url, token)

        threads = [
            threading.Thread(
                target=probe, args=("ticket", "POST", f"{run_url}/events/ticket", alice.raw_token)
            ),
            threading.Thread(
                target=probe, args=("cancel", "POST", f"{run_url}/cancel", alice.raw_token)
            ),
        ]
        for thread in threads:
            thread.start()

        stop_readiness = threading.Event()

        def watch_readiness() -> None:
            while not stop_readiness.is_set():
                status, _, seconds = call("GET", f"{base}/readyz")
                readiness.append((time.monotonic() - frozen_at, status, seconds))
                stop_readiness.wait(0.5)

        watcher = threading.Thread(target=watch_readiness)
        watcher.start()

        # The lock is cut by the timeout; the sweep (any live worker's) recovers the runs.
        freed_in = recovered_in = None
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and (freed_in is None or recovered_in is None):
            if freed_in is None and idle_in_transaction(worker.name) == 0:
                freed_in = time.monotonic() - frozen_at
            if recovered_in is None:
                recovery.sweep(timedelta(seconds=STALE))
                if all_terminal(run_ids):
                    recovered_in = time.monotonic() - frozen_at
            time.sleep(0.1)
        for thread in threads:
            thread.join(40)
        # Frozen long enough for /readyz's worker check to see no beat.
        while time.monotonic() - frozen_at < READY_WORKER + 1.5:
            time.sleep(0.1)
        stop_readiness.set()
        watcher.join(10)
        close_old_connections()
        before = _written(run_ids)

        os.kill(worker.popen.pid, signal.SIGCONT)
        resumed = time.monotonic()
        # It resumes inside its commit on a session PostgreSQL ended; it meets the fence.
        wait_for(
            lambda: "taken over" in worker.output(limit=10**6) or not worker.alive(),
            timeout=30,
            what="the resumed worker to meet the fence",
        )
        time.sleep(1.0)
        after = _written(run_ids)
        output = worker.output(limit=10**6)
        alive_after = worker.alive()
    finally:
        if worker.alive():
            os.kill(worker.popen.pid, signal.SIGCONT)
        worker.stop()
        server_output = server.output(limit=10**6)
        server.stop()

    changed = [r for r in run_ids if after[r] != before[r]]
    late = RunEvent.objects.filter(run_id__in=run_ids).count() - sum(
        len(before[r]["events"]) for r in run_ids
    )
    after_terminal = 0
    for r in run_ids:
        seqs = [seq for seq, kind in after[r]["events"] if kind in TERMINAL_EVENT_TYPES]
        assert len(seqs) == 1, after[r]["events"]
        after_terminal += sum(1 for seq, _ in after[r]["events"] if seq > seqs[0])
    figures = audit(run_ids)
    reasons = sorted(set(Run.objects.filter(pk__in=run_ids).values_list("reason", flat=True)))
    not_ready = [at for at, status, _ in readiness if status == 503]
    slowest_ready = max((seconds for _, _, seconds in readiness), default=0.0)
    fivexx = sum(1 for s, _, _ in probes.values() if s >= 500 and s != 503)
    report(
        f"frozen-commit idle-timeout={idle:.0f}s runs={RUNS} locked-runs={len(locked)} frozen-sessions={held} lock-freed-in={freed_in:.1f}s"
        f" ticket={probes['ticket'][0]}{'/' + probes['ticket'][1] if probes['ticket'][1] else ''}"
        f" in {probes['ticket'][2]:.1f}s"
        f" cancel={probes['cancel'][0]}{'/' + probes['cancel'][1] if probes['cancel'][1] else ''}"
        f" in {probes['cancel'][2]:.1f}s"
        f" readyz-503-after={(min(not_ready) if not_ready else float('nan')):.1f}s"
        f" (slowest {slowest_ready:.1f}s) recovered-in={recovered_in:.1f}s reasons={reasons}"
        f" writes-after-sigcont={late} rows-changed={len(changed)}"
        f" events lost {figures['lost']}, duplicated {figures['duplicated']},"
        f" after the terminal {after_terminal}, 5xx (not 503) {fivexx}"
        f" worker-alive-after={alive_after} resumed-for={time.monotonic() - resumed:.1f}s"
    )
    assert held >= 1, "the worker froze outside a transaction"
    assert freed_in is not None and freed_in < idle + 3, freed_in
    assert recovered_in is not None and recovered_in < STALE + idle + 3, recovered_in
    # Both wait on the run's row (the ticket's row references it): answered when the lock is
    # cut, or 503 DATABASE_UNAVAILABLE at the web role's lock_timeout — never held.
    if idle < WEB_LOCK:
        assert probes["ticket"][0] == 201, probes
        assert probes["cancel"][0] == 202, probes
    else:
        assert probes["ticket"][:2] == (503, "DATABASE_UNAVAILABLE"), probes
        assert probes["cancel"][:2] == (503, "DATABASE_UNAVAILABLE"), probes
    assert all(seconds < WEB_LOCK + 2 for _, _, seconds in probes.values()), probes
    assert readiness and slowest_ready < 5, readiness
    assert not_ready, readiness  # no worker beat for READY_WORKER seconds: not ready
    assert late == 0 and changed == [], {r: (before[r], after[r]) for r in changed}
    assert after_terminal == 0
    assert {k: figures[k] for k in ("stuck", "lost", "duplicated", "phantom")} == dict.fromkeys(
        ("stuck", "lost", "duplicated", "phantom"), 0
    )
    assert "Traceback" not in server_output, server_output[-3000:]
    assert "Traceback" not in output, output[-3000:]
