"""Benchmark: run event delivery over WebSocket through a real daphne and Redis.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/sparktide REDIS_URL=redis://127.0.0.1:6379/0 \
        .venv/bin/python bench/delivery.py [--subscribers 500] [--events 30] [--replay 10000] [--keep-db]

It (re)creates the PostgreSQL database ``sparktide_bench_delivery`` on the server of
DATABASE_URL, migrates it, builds a tenant / app / owner and runs, starts one daphne
process on a free loopback port (the wake-up path only: its poll interval is set far
above the measurement, so every live event reaches it through Redis) and prints:

  (a) commit-to-client latency p50/p99 for 1 subscriber of a run;
  (b) the same for N concurrent subscribers of one run (every subscriber × event pair);
  (c) the time to replay a finished 10,000-event run to one client from after=0, without
      acks and with an SDK-style "received" ack per event.

"Commit" is taken in the committing process's on_commit, before the wake-up is sent;
"client" is when the frame has been read and parsed by the bench's asyncio client on
the same host (one process drives all subscribers, so its own scheduling is included).
Events are appended the way the runtime appends them (runs.events.append_event), from a
thread of this process standing in for a worker. Everything it starts (the daphne process
group) is stopped; the bench database is dropped unless --keep-db.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
import uuid
from collections import Counter
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

BENCH_DB = "sparktide_bench_delivery" + os.environ.get("BENCH_DB_SUFFIX", "")  # parallel benches
SECRET_KEY = "sparktide-bench-secret-key-not-for-production-0123456789"
SCENARIO_TIMEOUT = 300.0


def _bench_database_url(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    if parts.scheme not in ("postgres", "postgresql"):
        sys.exit("bench/delivery.py needs DATABASE_URL=postgres://…")
    bench = urlunsplit(parts._replace(path=f"/{BENCH_DB}"))
    admin = urlunsplit(parts._replace(path="/postgres"))
    return bench, admin


def _recreate_database(admin_url: str, *, drop_only: bool = False) -> None:
    import psycopg

    with psycopg.connect(
        admin_url.replace("postgres://", "postgresql://", 1), autocommit=True
    ) as c:
        c.execute(f'DROP DATABASE IF EXISTS "{BENCH_DB}" WITH (FORCE)')
        if not drop_only:
            c.execute(f'CREATE DATABASE "{BENCH_DB}"')


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]


def report(label: str, latencies: list[float]) -> None:
    ms = [v * 1000 for v in latencies]
    print(
        f"{label:<44} n={len(ms):>6}  p50={percentile(ms, 50):8.1f} ms  "
        f"p99={percentile(ms, 99):8.1f} ms  max={max(ms):8.1f} ms"
    )


# --- data (this process, Django set up) ---------------------------------------------


def make_world():
    from tests import factories

    tenant = factories.make_tenant(f"bench-{uuid.uuid4().hex[:8]}", "Bench")
    owner = factories.make_user(tenant, f"bench-owner-{uuid.uuid4().hex[:8]}")
    app = factories.make_app(tenant, "business", members=[owner])
    version = factories.make_agent(
        tenant, "bench", model=factories.scripted({"text": "unused"}), pin_to=[app]
    )
    return app, owner, version


def new_run(app, owner, version):
    from runs.models import Run

    return Run.objects.create(
        tenant=app.tenant,
        app=app,
        owner=owner,
        agent_version=version,
        input="bench",
        status=Run.Status.RUNNING,
        security_policy_epoch=app.security_policy_epoch,
        knowledge_access_epoch=app.knowledge_access_epoch,
    )


def tickets(run, owner, count: int) -> list[str]:
    from runs.delivery.tickets import issue_ticket

    return [issue_ticket(run=run, user=owner)[0] for _ in range(count)]


def event_data(i: int) -> dict:
    return {
        "id": f"cite_{i:024d}",
        "agentCallId": "call_1",
        "knowledgeId": "fund-reports",
        "knowledgeVersion": "2026-10",
        "documentId": "report-a",
        "chunkId": str(i),
        "title": "北辰医药 2026 年三季度报告",
        "sourceRef": {"type": "document", "id": "report-a", "page": 1},
    }


def append_timed(run, i: int, commits: dict[int, float]) -> None:
    """Append one event; record the commit time before the wake-up goes out."""
    from django.db import transaction

    from runs.events import append_event

    stamp: dict[str, float] = {}
    with transaction.atomic():
        # Registered before append_event's own on_commit (the wake-up), so it runs first.
        transaction.on_commit(lambda: stamp.setdefault("t", time.monotonic()))
        event = append_event(run, "citation.created", event_data(i))
    commits[event.seq] = stamp["t"]


def finish(run) -> None:
    from runs.lifecycle import finish_run
    from runs.models import Run

    finish_run(run, Run.Status.COMPLETED, "")


def fill_finished_run(run, count: int) -> None:
    """A finished run of ``count`` events, written in bulk (setup, not the path measured)."""
    from django.db import transaction
    from django.utils import timezone

    from runs.models import Run, RunEvent

    now = timezone.now()
    with transaction.atomic():
        RunEvent.objects.bulk_create(
            [
                RunEvent(run=run, seq=i, type="citation.created", data=event_data(i), at=now)
                for i in range(1, count)
            ],
            batch_size=2000,
        )
        RunEvent.objects.create(
            run=run, seq=count, type="run.completed", data={"status": "COMPLETED"}, at=now
        )
        Run.objects.filter(pk=run.pk).update(
            last_seq=count, status=Run.Status.COMPLETED, completed_at=now
        )


# --- clients ------------------------------------------------------------------------


class Subscriber:
    def __init__(self, port: int, path: str) -> None:
        self.port = port
        self.path = path
        self.received: dict[int, float] = {}
        self.close_code: int | None = None
        self.client = None

    async def connect(self) -> None:
        from tests.realtime.wsclient import WSClient

        self.client = await WSClient.connect(
            "127.0.0.1", self.port, self.path, origin=f"http://127.0.0.1:{self.port}", timeout=60
        )

    async def listen(self, *, ack: bool = False) -> None:
        import json

        from tests.realtime.wsclient import Closed

        try:
            while True:
                text = await self.client.recv(timeout=SCENARIO_TIMEOUT)
                now = time.monotonic()
                frame = json.loads(text)
                if frame.get("kind") == "event":
                    self.received[frame["seq"]] = now
                    if ack:
                        await self.client.send_json({"ack": frame["seq"], "kind": "received"})
        except Closed as closed:
            self.close_code = closed.code
        finally:
            self.client.abort()


# --- scenarios ----------------------------------------------------------------------


async def live_latency(port: int, world, *, subscribers: int, events: int, gap: float):
    from asgiref.sync import sync_to_async

    app, owner, version = world
    run = await sync_to_async(new_run)(app, owner, version)
    raw = await sync_to_async(tickets)(run, owner, subscribers)
    from tests.realtime.helpers import events_path

    subs = [Subscriber(port, events_path(app.slug, run.pk, after=0, ticket=t)) for t in raw]
    gate = asyncio.Semaphore(50)

    async def connect(sub: Subscriber) -> None:
        async with gate:
            await sub.connect()

    await asyncio.gather(*(connect(s) for s in subs))
    listeners = [asyncio.create_task(s.listen()) for s in subs]
    await asyncio.sleep(1.0)  # let every consumer finish its (empty) replay

    commits: dict[int, float] = {}

    def produce() -> None:
        for i in range(events):
            append_timed(run, i, commits)
            time.sleep(gap)
        finish(run)

    await asyncio.to_thread(produce)
    await asyncio.wait_for(asyncio.gather(*listeners), SCENARIO_TIMEOUT)
    latencies, missing = [], 0
    for sub in subs:
        for seq, committed in commits.items():
            if seq in sub.received:
                latencies.append(sub.received[seq] - committed)
            else:
                missing += 1
    codes = Counter(s.close_code for s in subs)
    return latencies, missing, codes


async def replay(port: int, world, *, count: int, ack: bool) -> tuple[float, int, int | None]:
    from asgiref.sync import sync_to_async

    from tests.realtime.helpers import events_path

    app, owner, version = world
    run = await sync_to_async(new_run)(app, owner, version)
    await sync_to_async(fill_finished_run)(run, count)
    (raw,) = await sync_to_async(tickets)(run, owner, 1)
    sub = Subscriber(port, events_path(app.slug, run.pk, after=0, ticket=raw))
    started = time.monotonic()
    await sub.connect()
    await asyncio.wait_for(sub.listen(ack=ack), SCENARIO_TIMEOUT)
    return time.monotonic() - started, len(sub.received), sub.close_code


async def main_async(args, port: int) -> None:
    from asgiref.sync import sync_to_async

    world = await sync_to_async(make_world)()

    latencies, missing, normal = await live_latency(
        port, world, subscribers=1, events=args.events_single, gap=0.02
    )
    report("(a) commit→client, 1 subscriber", latencies)
    print(f"    missing={missing} close codes: {dict(normal)}")

    latencies, missing, normal = await live_latency(
        port, world, subscribers=args.subscribers, events=args.events, gap=args.gap
    )
    report(f"(b) commit→client, {args.subscribers} subscribers", latencies)
    print(f"    missing={missing} close codes: {dict(normal)}")

    for ack in (False, True):
        seconds, received, code = await replay(port, world, count=args.replay, ack=ack)
        label = "with a received-ack per event" if ack else "no acks"
        print(
            f"(c) replay of a {args.replay}-event run, {label:<30} {seconds:6.2f} s  "
            f"({received / seconds:8.0f} events/s, received {received}, close {code})"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--subscribers", type=int, default=500)
    parser.add_argument("--events", type=int, default=30, help="events for the N-subscriber run")
    parser.add_argument("--gap", type=float, default=0.25, help="seconds between those events")
    parser.add_argument("--events-single", type=int, default=200)
    parser.add_argument("--replay", type=int, default=10_000)
    parser.add_argument("--keep-db", action="store_true")
    parser.add_argument("--server-log", action="store_true", help="print daphne's log tail")
    args = parser.parse_args()

    database_url, redis_url = os.environ.get("DATABASE_URL"), os.environ.get("REDIS_URL")
    if not database_url or not redis_url:
        sys.exit("bench/delivery.py needs DATABASE_URL (PostgreSQL) and REDIS_URL")
    bench_url, admin_url = _bench_database_url(database_url)
    _recreate_database(admin_url)

    prefix = f"sparktide-bench-{uuid.uuid4().hex[:8]}"
    os.environ.update(
        DATABASE_URL=bench_url,
        SECRET_KEY=SECRET_KEY,
        SPARKTIDE_CHANNEL_PREFIX=prefix,
        DJANGO_SETTINGS_MODULE="sparktide.settings",
        ALLOWED_HOSTS="127.0.0.1",
    )
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)

    from tests.realtime.processes import free_port, process_env, start_daphne

    port = free_port()
    env = process_env(
        DATABASE_URL=bench_url,
        REDIS_URL=redis_url,
        SECRET_KEY=SECRET_KEY,
        SPARKTIDE_CHANNEL_PREFIX=prefix,
        DJANGO_SETTINGS_MODULE="sparktide.settings",
        ALLOWED_HOSTS="127.0.0.1",
        SPARKTIDE_WS_POLL_SECONDS="600",
    )
    print(
        f"daphne on 127.0.0.1:{port}, Redis {redis_url} (prefix {prefix}), "
        f"database {BENCH_DB}, {os.cpu_count()} CPUs"
    )
    server = start_daphne(port, env)
    try:
        asyncio.run(main_async(args, port))
    finally:
        if args.server_log:
            # Everything but daphne's access log lines.
            log = server.output(limit=10_000_000).splitlines()
            print("\n".join(line for line in log if not line.startswith("127.0.0.1:")))
        server.stop()
        from django.db import connections

        connections.close_all()
        if not args.keep_db:
            _recreate_database(admin_url, drop_only=True)


if __name__ == "__main__":
    main()
