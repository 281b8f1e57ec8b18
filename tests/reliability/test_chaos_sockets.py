"""Runs streaming to live WebSockets while what they stand on is cut (docs/reliability.md
"Outages"):

* ``sessions-cut``: every PostgreSQL session of the daphne and the workers terminated
  (``pg_terminate_backend``) several times while runs stream to one socket each. Each socket
  either delivers or closes 4503 (DATABASE_UNAVAILABLE) and its client resumes after its last
  seq with a fresh ticket, as docs/events.md tells it to: no event lost, repeated or out of
  order, no socket silent, every run ended.
* ``redis-clients-killed`` / ``redis-restarted``: the Redis connections of the daphne's
  subscriptions killed (``CLIENT KILL``), or the test's own redis-server restarted, while
  sockets are live; the latency of the events after the fault shows when wake-ups were back (the sockets' poll is set to 5 s,
  so an event delivered by a poll is late by seconds, one delivered by a wake-up is not).

Each prints one line of figures. ``make test`` runs them small; SPARKTIDE_CHAOS=full with 10
runs and 10 sockets.
"""

import asyncio
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import psycopg
import pytest
from channels.db import database_sync_to_async
from django.db import connection
from django.db.models import Count

from publication.models import PublicationAttempt
from runs.models import Run, RunEvent
from tests import factories
from tests.realtime.helpers import public_events
from tests.realtime.processes import free_port
from tests.realtime.test_wakeups_after_redis_restart import REDIS_SERVER, OwnRedis
from tests.realtime.wsclient import Closed
from tests.reliability.support import (
    Worker,
    all_terminal,
    audit,
    conninfo,
    reliability_env,
    resume_stream,
    start_named_daphne,
    statuses,
    wait_for,
)
from tests.reliability.test_chaos_outages import DatabaseProxy, through

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

FULL = os.environ.get("SPARKTIDE_CHAOS") == "full"
RUNS = 10 if FULL else 4
CUTS = 8 if FULL else 6  # inside the runs' ~6 s (their sleeps)
CUT_EVERY = 0.5  # seconds between two cuts
SILENT = 10.0  # seconds without a frame on a socket whose run is still going: silent


def report(line: str) -> None:
    sys.__stdout__.write(f"chaos {line}\n")
    sys.__stdout__.flush()


@dataclass
class Follower:
    """One client of one run: its frames (events, without ``kind``), how its sockets ended,
    and when each event arrived."""

    frames: list[dict] = field(default_factory=list)
    arrived: list[float] = field(default_factory=list)  # time.time() of each event frame
    closes: dict[str, int] = field(default_factory=dict)
    silent: int = 0
    connections: int = 0

    def note(self, how: str) -> None:
        self.closes[how] = self.closes.get(how, 0) + 1


@database_sync_to_async
def undelivered_for(run_id: str, after: int) -> float:
    """How long the first event after seq ``after`` has been in the log (0: there is none)."""
    at = RunEvent.objects.filter(run_id=run_id, seq=after + 1).values_list("at", flat=True).first()
    return 0.0 if at is None else time.time() - at.timestamp()


async def follow(run, user, port: int, follower: Follower, *, patience: float = 120) -> None:
    """Read the run's stream to its normal close (1000); after any other end resume after
    the last seq with a fresh ticket. A socket is silent when the log has held an event it
    has not sent for SILENT seconds (counted, and abandoned as a client's watchdog would);
    a socket with nothing to send (its run waiting, e.g. for the database) is only quiet."""
    deadline = time.monotonic() + patience
    while time.monotonic() < deadline:
        client = await resume_stream(run, user, port, follower.frames)
        if client is None:
            follower.note("refused")
            await asyncio.sleep(0.5)
            continue
        follower.connections += 1
        try:
            while True:
                try:
                    frame = await client.recv_json(timeout=SILENT / 2)
                except TimeoutError:
                    after = follower.frames[-1]["seq"] if follower.frames else 0
                    if await undelivered_for(run.pk, after) >= SILENT:
                        raise
                    follower.note("quiet")
                    continue
                if frame.get("kind") == "event":
                    follower.frames.append({k: v for k, v in frame.items() if k != "kind"})
                    follower.arrived.append(time.time())
        except Closed as closed:
            follower.note(str(closed.code))
            if closed.code == 1000:
                return
        except TimeoutError:
            follower.silent += 1
            follower.note("silent")
        except (OSError, asyncio.IncompleteReadError):
            follower.note("dropped")
        finally:
            client.abort()
        await asyncio.sleep(0.2)
    raise AssertionError(f"stream of {run.pk} never closed normally: {follower}")


def compare(expected: list[dict], got: list[dict]) -> dict[str, int]:
    seqs = [frame["seq"] for frame in got]
    want = {frame["seq"] for frame in expected}
    return {
        "lost": len(want - set(seqs)),
        "duplicated": len(seqs) - len(set(seqs)),
        "out_of_order": sum(1 for a, b in zip(seqs, seqs[1:], strict=False) if b <= a),
        "different": sum(1 for frame in got if frame not in expected and frame["seq"] in want),
    }


def terminate_sessions(names: list[str]) -> int:
    """pg_terminate_backend every session of the test's database that these processes hold."""
    with psycopg.connect(**conninfo(), autocommit=True) as admin:
        rows = admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid()"
            " AND application_name = ANY(%s)",
            [names],
        ).fetchall()
    return sum(1 for (ok,) in rows if ok)


STREAMED = (
    {"search": "营收"},
    {"answerPart": "一 [[cite:{{c1}}]]"},
    {"sleep": 1.5},
    {"answerPart": "二 [[cite:{{c1}}]]"},
    {"sleep": 1.5},
    {"answerPart": "三 [[cite:{{c1}}]]"},
    {"sleep": 1.5},
    {"text": "结论：营收增长。"},
)


async def stream_under(fault, *, env: dict, names: list[str], runs_count: int, alice, make_run):
    """``runs_count`` runs streamed to one socket each through a daphne (``names[0]``) and
    two workers (``names[1:]``); ``fault()`` awaited once every run is RUNNING. Returns the
    runs, their followers, what ``fault`` returned and the seconds from its end until every
    stream had closed normally."""
    port = free_port()
    server = await asyncio.to_thread(start_named_daphne, port, env, names[0])
    workers: list[Worker] = []
    try:
        runs = [await database_sync_to_async(make_run)(*STREAMED) for _ in range(runs_count)]
        run_ids = [run.pk for run in runs]
        followers = [Follower() for _ in runs]
        tasks = [
            asyncio.create_task(follow(run, alice, port, f))
            for run, f in zip(runs, followers, strict=True)
        ]
        await asyncio.sleep(0.5)
        workers = [
            Worker(env, name=name, args=("--concurrency", str(runs_count))) for name in names[1:]
        ]
        for _ in range(600):
            found = await database_sync_to_async(statuses)(run_ids)
            if sum(1 for s in found.values() if s != "QUEUED") == runs_count:
                break
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.5)
        done = await fault()
        fault_ended = time.monotonic()
        await asyncio.wait_for(asyncio.gather(*tasks), 150)
        settled = time.monotonic() - fault_ended
        assert await database_sync_to_async(all_terminal)(run_ids)
    finally:
        logs = [process.output(limit=10**6) for process in [server, *workers]]
        for process in [*workers, server]:
            await asyncio.to_thread(process.stop)
    kept = Path(os.environ.get("SPARKTIDE_VAR_DIR", "var")) / f"chaos-{names[0]}.log"
    kept.parent.mkdir(parents=True, exist_ok=True)
    kept.write_text("\n\n".join(logs))  # the processes' logs of the last run, to read
    problems = [
        line for log in logs for line in log.splitlines() if "ERROR" in line or "WARNING" in line
    ]
    return runs, followers, done, settled, problems


async def stream_figures(runs, followers) -> tuple[str, dict]:
    """The line's figures for runs streamed under a fault, and what the asserts need."""
    run_ids = [run.pk for run in runs]
    faults = await database_sync_to_async(audit)(run_ids)
    totals = dict.fromkeys(("lost", "duplicated", "out_of_order", "different"), 0)
    for run, follower in zip(runs, followers, strict=True):
        for key, value in compare(await public_events(run), follower.frames).items():
            totals[key] += value
    final = await database_sync_to_async(statuses)(run_ids)
    reasons = await database_sync_to_async(
        lambda: sorted(set(Run.objects.filter(pk__in=run_ids).values_list("reason", flat=True)))
    )()
    outcomes = await database_sync_to_async(
        lambda: {
            f"{outcome}{'/' + reason if reason else ''}": n
            for outcome, reason, n in PublicationAttempt.objects.filter(run_id__in=run_ids)
            .values_list("outcome", "reason")
            .annotate(n=Count("pk"))
            .values_list("outcome", "reason", "n")
        }
    )()
    closes: dict[str, int] = {}
    for follower in followers:
        for how, count in follower.closes.items():
            closes[how] = closes.get(how, 0) + count
    silent = sum(f.silent for f in followers)
    completed = sum(1 for s in final.values() if s == "COMPLETED")
    line = (
        f"ended={sum(1 for s in final.values() if s in ('COMPLETED', 'PARTIAL', 'FAILED'))}"
        f" completed={completed} reasons={reasons}"
        f" events lost {totals['lost']}, duplicated {totals['duplicated']},"
        f" out of order {totals['out_of_order']}, different {totals['different']},"
        f" sockets silent {silent}, socket ends {dict(sorted(closes.items()))},"
        f" blocks {faults['blocks']} (lost {faults['lost']}, duplicated {faults['duplicated']},"
        f" phantom {faults['phantom']}), publication attempts {outcomes}"
    )
    return line, {
        "totals": totals,
        "silent": silent,
        "closes": closes,
        "faults": faults,
        "completed": completed,
        "reasons": reasons,
    }


def assert_nothing_lost_and_no_socket_silent(found: dict) -> None:
    assert found["totals"] == dict.fromkeys(found["totals"], 0), found
    assert found["silent"] == 0, found
    # Every socket ended either normally or with the reconnect code: nothing else.
    assert set(found["closes"]) <= {"1000", "4503", "quiet"}, found
    faults = found["faults"]
    assert {k: faults[k] for k in ("stuck", "lost", "duplicated", "phantom")} == dict.fromkeys(
        ("stuck", "lost", "duplicated", "phantom"), 0
    )


async def test_database_sessions_cut_while_runs_stream_lose_nothing_and_silence_no_socket(
    redis_and_postgres, make_run, alice
):
    env = reliability_env(SPARKTIDE_WS_POLL_SECONDS="0.5", SPARKTIDE_DB_POOL_SIZE="8")
    names = ["sparktide-daphne-cut", "sparktide-worker-cut-0", "sparktide-worker-cut-1"]

    async def cut_every_session() -> int:
        cut = 0
        for _ in range(CUTS):
            cut += await asyncio.to_thread(terminate_sessions, names)
            await asyncio.sleep(CUT_EVERY)
        return cut

    runs, followers, cut, settled, problems = await stream_under(
        cut_every_session, env=env, names=names, runs_count=RUNS, alice=alice, make_run=make_run
    )
    line, found = await stream_figures(runs, followers)
    report(
        f"sessions-cut runs={RUNS} sockets={RUNS} cuts={CUTS} every {CUT_EVERY}s"
        f" sessions-terminated={cut} {line}, seconds to settle after the last cut {settled:.1f}"
    )
    assert cut >= CUTS
    assert_nothing_lost_and_no_socket_silent(found)
    assert found["completed"] == RUNS, line


RESTART_RUNS = 20 if FULL else 4
RESTART_SECONDS = 2.0  # what `pg_ctl restart -m fast` takes on a small database


async def test_a_database_restart_while_runs_stream_loses_nothing_and_silences_no_socket(
    proxy, redis_and_postgres, make_run, alice
):
    """PostgreSQL restarted (every connection reset, new ones refused for RESTART_SECONDS)
    under RESTART_RUNS runs streaming to as many sockets — the issue's "PostgreSQL restart,
    20 runs + 20 sockets". The shared server is not restarted: the processes reach it through
    the test's proxy (test_chaos_outages.py), which is cut and opened again."""
    env = reliability_env(
        DATABASE_URL=through(proxy), SPARKTIDE_WS_POLL_SECONDS="0.5", SPARKTIDE_DB_POOL_SIZE="8"
    )
    names = ["sparktide-daphne-restart", "sparktide-worker-restart-0", "sparktide-worker-restart-1"]

    async def restart() -> float:
        proxy.down()
        await asyncio.sleep(RESTART_SECONDS)
        proxy.up()
        return RESTART_SECONDS

    runs, followers, _, settled, problems = await stream_under(
        restart, env=env, names=names, runs_count=RESTART_RUNS, alice=alice, make_run=make_run
    )
    line, found = await stream_figures(runs, followers)
    failed = [p for p in problems if " ERROR " in p]
    if failed:
        report(f"database-restart errors logged: {len(failed)}, first: {failed[0][:200]}")
    report(
        f"database-restart runs={RESTART_RUNS} sockets={RESTART_RUNS} down {RESTART_SECONDS:.0f}s"
        f" {line}, seconds to settle after it {settled:.1f}"
    )
    assert_nothing_lost_and_no_socket_silent(found)
    # Every run completes: a search, a sub-agent's opening or a Publication commit cut inside
    # its transaction is replayed once the database answers (runtime/durable.py,
    # tests/reliability/test_replay.py); before, such a run ended WORKER_LOST.
    assert found["completed"] == RESTART_RUNS, line
    assert found["reasons"] == [""], line
    assert not failed, failed[0][:400]


# -- Redis: the subscription's connection killed ----------------------------------------


@pytest.fixture
def proxy(postgres):
    """PostgreSQL behind a TCP proxy the test can cut (test_chaos_outages.py)."""
    db = connection.settings_dict
    proxy = DatabaseProxy(db["HOST"] or "127.0.0.1", int(db["PORT"] or 5432))
    proxy.up()
    yield proxy
    proxy.down()

    def sessions_left() -> int:
        with psycopg.connect(**conninfo(), autocommit=True) as admin:
            return admin.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                " AND application_name LIKE 'sparktide-%%'"
            ).fetchone()[0]

    # The sessions behind the proxy end once PostgreSQL reads the closed sockets: the test
    # database is dropped after them.
    wait_for(lambda: sessions_left() == 0, timeout=10, what="the proxied sessions to end")


@pytest.fixture
def own_redis(postgres):
    """The test's own redis-server: killing clients on the shared one would cut others'."""
    factories.require(REDIS_SERVER is not None, "needs redis-server")
    server = OwnRedis()
    server.start()
    yield server
    server.stop()


def redis_cli(port: int, *args: str) -> str:
    return subprocess.run(
        ["redis-cli", "-p", str(port), *args], capture_output=True, text=True, timeout=10
    ).stdout.strip()


PACED = tuple(
    step
    for n in range(9)
    for step in ({"sleep": 0.5}, {"answerPart": f"第{n}段 [[cite:{{{{c1}}}}]]"})
)


def _at(frame: dict) -> float:
    return datetime.fromisoformat(frame["at"].replace("Z", "+00:00")).timestamp()


@pytest.mark.parametrize("fault", ["clients-killed", "restarted"])
async def test_wake_ups_come_back_after_the_redis_subscription_is_killed(
    postgres, own_redis, make_run, alice, fault
):
    """``clients-killed``: every client connection of the test's redis-server killed
    (``CLIENT KILL``): the groups stay in Redis. ``restarted``: redis-server killed and started
    again on its port, forgetting every group: the subscription must join again."""
    redis_url = f"redis://127.0.0.1:{own_redis.port}/0"
    env = reliability_env(REDIS_URL=redis_url, SPARKTIDE_WS_POLL_SECONDS="5")
    port = free_port()
    server = await asyncio.to_thread(start_named_daphne, port, env, "sparktide-daphne-redis")
    worker = None
    sockets = RUNS
    try:
        runs = [
            await database_sync_to_async(make_run)({"search": "营收"}, *PACED, max_steps=30)
            for _ in range(sockets)
        ]
        run_ids = [run.pk for run in runs]
        followers = [Follower() for _ in runs]
        tasks = [
            asyncio.create_task(follow(run, alice, port, f))
            for run, f in zip(runs, followers, strict=True)
        ]
        await asyncio.sleep(0.5)
        worker = Worker(env, args=("--concurrency", str(sockets)))
        # Live: every socket has had events by wake-up before the kill.
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not all(len(f.frames) >= 3 for f in followers):
            await asyncio.sleep(0.05)
        await asyncio.sleep(1.0)
        if fault == "clients-killed":
            killed = (
                f"killed pubsub={redis_cli(own_redis.port, 'CLIENT', 'KILL', 'TYPE', 'pubsub') or 0}"
                f" normal={redis_cli(own_redis.port, 'CLIENT', 'KILL', 'TYPE', 'normal')}"
            )
        else:
            down = time.monotonic()
            await asyncio.to_thread(own_redis.stop)
            await asyncio.sleep(0.5)
            await asyncio.to_thread(own_redis.start)
            killed = f"down {time.monotonic() - down:.1f}s"
        killed_at = time.time()  # Redis answers again from here
        await asyncio.wait_for(asyncio.gather(*tasks), 150)
        assert await database_sync_to_async(all_terminal)(run_ids)
    finally:
        for process in [p for p in (worker, server) if p is not None]:
            await asyncio.to_thread(process.stop)

    totals = dict.fromkeys(("lost", "duplicated", "out_of_order", "different"), 0)
    for run, follower in zip(runs, followers, strict=True):
        for key, value in compare(await public_events(run), follower.frames).items():
            totals[key] += value
    before, after = [], []  # (seconds after the kill the event was written, its latency)
    for follower in followers:
        for frame, arrived in zip(follower.frames, follower.arrived, strict=True):
            at = _at(frame)
            (after if at >= killed_at else before).append((at - killed_at, arrived - at))
    after.sort()
    latencies = sorted(latency for _, latency in after)
    first_since, first_latency = after[0] if after else (float("nan"), float("nan"))
    slow = [(since, latency) for since, latency in after if latency > 1.0]
    back_in = max((since for since, _ in slow), default=0.0)

    def pct(values: list[float], p: float) -> float:
        return values[min(len(values) - 1, int(p * len(values)))] if values else float("nan")

    before_latencies = sorted(latency for _, latency in before)
    report(
        f"redis-{fault} sockets={sockets} {killed} events before {len(before)} (p50"
        f" {pct(before_latencies, 0.5) * 1000:.0f} ms) after {len(after)} (p50"
        f" {pct(latencies, 0.5) * 1000:.0f} ms, p95 {pct(latencies, 0.95) * 1000:.0f} ms,"
        f" max {max(latencies, default=0) * 1000:.0f} ms), events later than 1 s {len(slow)},"
        f" first event after the kill written {first_since:.2f}s after it, delivered in"
        f" {first_latency * 1000:.0f} ms; events delivered late (> 1 s) until {back_in:.1f}s"
        f" after the kill, events lost {totals['lost']},"
        f" duplicated {totals['duplicated']}, out of order {totals['out_of_order']}"
    )
    assert totals == dict.fromkeys(totals, 0), totals
    assert after, "no event was written after the kill"
    # Wake-ups are back within 2 s: nothing written later than that waits for a poll (5 s).
    assert [(since, latency) for since, latency in slow if since > 2.0] == [], slow
