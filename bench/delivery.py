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
import json
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
    from delivery.tickets import issue_ticket

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
#
# Subscribers run in child processes (a share each, --client-procs), so that hundreds or
# thousands of sockets are not read by one Python process whose own scheduling would then
# be most of the latency measured. time.monotonic is the system-wide CLOCK_MONOTONIC on
# Linux, so the children's receive times compare with this process's commit times.

# Sockets per client process when --client-procs is not given.
SOCKETS_PER_CLIENT_PROC = 250


class Subscriber:
    def __init__(self, port: int, path: str) -> None:
        self.port = port
        self.path = path
        self.received: dict[int, float] = {}
        self.close_code: int | None = None
        self.client = None
        # Every text frame as received, when kept (the replay floor serves them again).
        self.texts: list[str] | None = None

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
                if self.texts is not None:
                    self.texts.append(text)
                frame = json.loads(text)
                if frame.get("kind") == "event":
                    self.received[frame["seq"]] = now
                    if ack:
                        await self.client.send_json({"ack": frame["seq"], "kind": "received"})
        except Closed as closed:
            self.close_code = closed.code
        finally:
            self.client.abort()


# Handshakes in flight at once, over all client processes: each costs the server a few
# database calls, and daphne drops a handshake not accepted in --websocket_connect_timeout.
CONNECTS_IN_FLIGHT = 50


def client_process(port: int, paths: list[str], conn, connects: int) -> None:
    """One child: connect every path, say "ready", then read each socket until the server
    closes it, or until the parent says "close" (idle mode); send back what was received."""
    sys.path.insert(0, str(ROOT))

    async def run() -> list[tuple[dict[int, float], int | None]]:
        subs = [Subscriber(port, path) for path in paths]
        gate = asyncio.Semaphore(connects)
        listeners: list[asyncio.Task] = []

        async def connect(sub: Subscriber) -> None:
            async with gate:
                await sub.connect()
            # Read at once: a socket left unread while the others connect answers no
            # ping, and daphne drops it (ping interval 20 s, timeout 30 s).
            listeners.append(asyncio.create_task(sub.listen()))

        await asyncio.gather(*(connect(s) for s in subs))
        conn.send("ready")
        loop = asyncio.get_running_loop()
        stop = asyncio.Event()
        loop.add_reader(conn.fileno(), stop.set)  # the parent says "close" (idle mode)
        waiting = asyncio.create_task(stop.wait())
        listening = asyncio.gather(*listeners, return_exceptions=True)
        await asyncio.wait([waiting, listening], return_when=asyncio.FIRST_COMPLETED)
        waiting.cancel()
        loop.remove_reader(conn.fileno())
        for sub in subs:
            sub.client.abort()  # those still open (idle mode); the rest are closed already
        for task in listeners:
            task.cancel()
        await listening
        return [(s.received, s.close_code) for s in subs]

    try:
        conn.send(asyncio.run(run()))
    except BaseException:
        import traceback

        conn.send(("failed", traceback.format_exc()))
        raise


class Clients:
    """Subscribers split over child processes."""

    def __init__(self, port: int, paths: list[str], procs: int) -> None:
        import multiprocessing

        context = multiprocessing.get_context("spawn")
        procs = max(1, min(procs, len(paths)))
        self.children = []
        for i in range(procs):
            parent, child = context.Pipe()
            share = (port, paths[i::procs], child, max(1, CONNECTS_IN_FLIGHT // procs))
            proc = context.Process(target=client_process, args=share)
            proc.start()
            self.children.append((proc, parent))

    def wait_ready(self) -> None:
        for _, conn in self.children:
            message = conn.recv()
            if message != "ready":
                raise RuntimeError(f"a client process failed:\n{message[1]}")

    def close(self) -> None:
        for _, conn in self.children:
            conn.send("close")

    def results(self) -> list[tuple[dict[int, float], int | None]]:
        out = []
        for proc, conn in self.children:
            out += conn.recv()
            proc.join(30)
        return out


def client_procs(args, sockets: int) -> int:
    return args.client_procs or max(1, -(-sockets // SOCKETS_PER_CLIENT_PROC))


# --- scenarios ----------------------------------------------------------------------


def window(pid: int | None, start: bool) -> None:
    """Start or end the profiled window of a daphne run by bench/profiled_daphne.py."""
    import signal

    if pid is not None:
        os.kill(pid, signal.SIGUSR1 if start else signal.SIGUSR2)


async def live_latency(
    port: int,
    world,
    *,
    subscribers: int,
    events: int,
    gap: float,
    procs: int,
    profiled: int | None = None,
    profile_dir: str | None = None,
):
    from asgiref.sync import sync_to_async

    from tests.realtime.helpers import events_path

    app, owner, version = world
    run = await sync_to_async(new_run)(app, owner, version)
    raw = await sync_to_async(tickets)(run, owner, subscribers)
    paths = [events_path(app.slug, run.pk, after=0, ticket=t) for t in raw]
    clients = Clients(port, paths, procs)
    await asyncio.to_thread(clients.wait_ready)
    await asyncio.sleep(1.0)  # let every consumer finish its (empty) replay

    commits: dict[int, float] = {}

    def produce() -> None:
        for i in range(events):
            append_timed(run, i, commits)
            time.sleep(gap)
        finish(run)

    window(profiled, True)
    await asyncio.to_thread(produce)
    results = await asyncio.wait_for(asyncio.to_thread(clients.results), SCENARIO_TIMEOUT)
    window(profiled, False)
    if profile_dir is not None:
        (Path(profile_dir) / "commits.json").write_text(json.dumps(commits))
    latencies, missing = [], 0
    for received, _ in results:
        for seq, committed in commits.items():
            if seq in received:
                latencies.append(received[seq] - committed)
            else:
                missing += 1
    codes = Counter(code for _, code in results)
    return latencies, missing, codes


async def replay(
    port: int, world, *, count: int, ack: bool, profiled: int | None = None
) -> tuple[float, int, int | None, list[str]]:
    from asgiref.sync import sync_to_async

    from tests.realtime.helpers import events_path

    app, owner, version = world
    run = await sync_to_async(new_run)(app, owner, version)
    await sync_to_async(fill_finished_run)(run, count)
    (raw,) = await sync_to_async(tickets)(run, owner, 1)
    sub = Subscriber(port, events_path(app.slug, run.pk, after=0, ticket=raw))
    sub.texts = []
    window(profiled, True)
    started = time.monotonic()
    await sub.connect()
    await asyncio.wait_for(sub.listen(ack=ack), SCENARIO_TIMEOUT)
    elapsed = time.monotonic() - started
    window(profiled, False)
    return elapsed, len(sub.received), sub.close_code, sub.texts


# --- the replay's floor ---------------------------------------------------------------
#
# The same client reading the same frames from a server that does nothing else: a bare
# asyncio server in a process of its own (as daphne is), which answers the handshake and
# writes the frames the replay received, already encoded, a page at a time, reading and
# discarding what the client sends. No database, no checks, no JSON: what is left of the
# replay's time above this is SparkTide's; this itself is the client, the kernel and the
# two cores they share.


def floor_server_process(texts: list[str], page: int, conn) -> None:
    import base64
    import hashlib

    from delivery.wire import frame_text  # the server's own framing of a text frame

    pages = [
        b"".join(frame_text(t)[1] for t in texts[i : i + page]) for i in range(0, len(texts), page)
    ]
    close_1000 = b"\x88\x02\x03\xe8"  # FIN + close, 2-byte payload: code 1000
    guid = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

    async def serve_one(reader, writer) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        key = next(
            line.split(b":", 1)[1].strip()
            for line in head.split(b"\r\n")
            if line.lower().startswith(b"sec-websocket-key:")
        )
        accept = base64.b64encode(hashlib.sha1(key + guid).digest())
        writer.write(
            b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
            b"Connection: Upgrade\r\nSec-WebSocket-Accept: " + accept + b"\r\n\r\n"
        )

        async def discard() -> None:  # the client's acks and its close, unread
            while await reader.read(1 << 16):
                pass

        reading = asyncio.create_task(discard())
        for chunk in pages:
            writer.write(chunk)
            await writer.drain()
        writer.write(close_1000)
        await writer.drain()
        await reading
        writer.close()
        done.set()

    async def main() -> None:
        server = await asyncio.start_server(serve_one, "127.0.0.1", 0)
        conn.send(server.sockets[0].getsockname()[1])
        await done.wait()
        server.close()

    done = asyncio.Event()
    asyncio.run(main())


async def replay_floor(texts: list[str], *, ack: bool, page: int) -> float:
    """Seconds for the replay's client to read ``texts`` from the bare server."""
    import multiprocessing

    from tests.realtime.wsclient import WSClient

    ctx = multiprocessing.get_context("fork")
    parent, child = ctx.Pipe()
    proc = ctx.Process(target=floor_server_process, args=(texts, page, child), daemon=True)
    proc.start()
    port = await asyncio.to_thread(parent.recv)
    sub = Subscriber(port, "/floor")
    started = time.monotonic()
    sub.client = await WSClient.connect("127.0.0.1", port, "/floor", timeout=60)
    await asyncio.wait_for(sub.listen(ack=ack), SCENARIO_TIMEOUT)
    elapsed = time.monotonic() - started
    await asyncio.to_thread(proc.join, 10)
    if len(sub.received) != len(texts) or sub.close_code != 1000:
        raise RuntimeError(f"floor: {len(sub.received)} of {len(texts)}, close {sub.close_code}")
    return elapsed


def rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for {pid}")


async def idle_memory(port: int, world, *, sockets: int, per_run: int, procs: int, pid: int):
    """daphne's RSS before and after ``sockets`` idle subscribed sockets (``per_run`` a run)."""
    from asgiref.sync import sync_to_async

    from tests.realtime.helpers import events_path

    app, owner, version = world

    def make_paths_of(count: int) -> list[str]:
        paths = []
        for start in range(0, count, per_run):
            run = new_run(app, owner, version)
            n = min(per_run, count - start)
            paths += [
                events_path(app.slug, run.pk, after=0, ticket=t) for t in tickets(run, owner, n)
            ]
        return paths

    # Warm-up: one socket of a run of its own opened and closed, so that imports, the
    # database pool and the Redis connections are already in "before".
    (warm_path,) = await sync_to_async(lambda: make_paths_of(1))()
    warm = Clients(port, [warm_path], 1)
    await asyncio.to_thread(warm.wait_ready)
    await asyncio.sleep(1.0)
    warm.close()
    await asyncio.to_thread(warm.results)
    paths = await sync_to_async(lambda: make_paths_of(sockets))()
    await asyncio.sleep(1.0)
    before = rss_kb(pid)
    clients = Clients(port, paths, procs)
    await asyncio.to_thread(clients.wait_ready)
    await asyncio.sleep(3.0)  # every consumer has made its first (empty) read and is waiting
    after = rss_kb(pid)
    clients.close()
    results = await asyncio.to_thread(clients.results)
    opened = sum(1 for _, code in results if code is None)  # still open when told to close
    return before, after, opened


# Goals of issue 12; each figure is printed with goal / measured (≥ 1 meets the goal).
GOAL_SINGLE_P99_MS = 5.0
GOAL_FANOUT_P99_MS = {500: 50.0, 2000: 150.0}
GOAL_REPLAY_S = 0.3
GOAL_REPLAY_ACKS_S = 0.5
GOAL_IDLE_KB = 100.0
MODES = ("single", "fanout", "replay", "idle")


def versus(goal: float, measured: float) -> str:
    return f"goal {goal:g} → {goal / measured:5.2f}× of goal" if measured > 0 else "goal met"


def fanout_goal(subscribers: int) -> float:
    """The p99 goal for N subscribers: 50 ms up to 500, 150 ms up to 2,000 (interpolated)."""
    if subscribers <= 500:
        return GOAL_FANOUT_P99_MS[500]
    if subscribers >= 2000:
        return GOAL_FANOUT_P99_MS[2000]
    return 50.0 + (subscribers - 500) * (100.0 / 1500)


async def main_async(args, port: int, pid: int) -> None:
    from asgiref.sync import sync_to_async

    world = await sync_to_async(make_world)()
    # Profiled: each scenario's measured part is the profile's window (the last one run
    # is what the profile holds: profile one mode at a time).
    profiled = pid if args.profile else None

    if "single" in args.modes:
        latencies, missing, codes = await live_latency(
            port,
            world,
            subscribers=1,
            events=args.events_single,
            gap=0.02,
            procs=1,
            profiled=profiled,
        )
        report("(a) commit→client, 1 subscriber", latencies)
        p99 = percentile([v * 1000 for v in latencies], 99)
        print(
            f"    missing={missing} close codes: {dict(codes)}  p99 {versus(GOAL_SINGLE_P99_MS, p99)}"
        )

    if "fanout" in args.modes:
        procs = client_procs(args, args.subscribers)
        latencies, missing, codes = await live_latency(
            port,
            world,
            subscribers=args.subscribers,
            events=args.events,
            gap=args.gap,
            procs=procs,
            profiled=profiled,
            profile_dir=args.profile,
        )
        report(f"(b) commit→client, {args.subscribers} subscribers", latencies)
        p99 = percentile([v * 1000 for v in latencies], 99)
        print(
            f"    missing={missing} close codes: {dict(codes)}  client processes={procs}  "
            f"p99 {versus(fanout_goal(args.subscribers), p99)}"
        )

    if "replay" in args.modes:
        from django.conf import settings

        for ack in (False, True):
            seconds, received, code, texts = await replay(
                port, world, count=args.replay, ack=ack, profiled=profiled
            )
            floor = await replay_floor(texts, ack=ack, page=settings.SPARKTIDE_WS_PAGE_SIZE)
            label = "with a received-ack per event" if ack else "no acks"
            goal = GOAL_REPLAY_ACKS_S if ack else GOAL_REPLAY_S
            print(
                f"(c) replay of a {args.replay}-event run, {label:<30} {seconds:6.2f} s  "
                f"({received / seconds:8.0f} events/s, received {received}, close {code})  "
                f"{versus(goal, seconds)}"
            )
            print(
                f"    floor: the same frames from a bare server, the same client {floor:6.2f} s  "
                f"→ replay {seconds / floor:4.2f}× the floor; the goal is "
                f"{goal / floor:4.2f}× the floor"
            )

    if "idle" in args.modes and args.idle:
        procs = client_procs(args, args.idle)
        before, after, still_open = await idle_memory(
            port, world, sockets=args.idle, per_run=args.idle_per_run, procs=procs, pid=pid
        )
        per = (after - before) / args.idle
        print(
            f"(d) daphne RSS, {args.idle} idle subscribed sockets ({args.idle_per_run} a run): "
            f"before {before / 1024:.1f} MB, after {after / 1024:.1f} MB, "
            f"{per:.1f} KB per connection ({still_open} open at the end)  {versus(GOAL_IDLE_KB, per)}"
        )


def print_timeline(out: Path) -> None:
    """Where the time of each live event went, from daphne's timeline (bench/profiled_daphne.py)."""
    commits_file, timeline_file = out / "commits.json", out / "timeline.json"
    if not commits_file.exists() or not timeline_file.exists():
        return
    commits = {int(k): v for k, v in json.loads(commits_file.read_text()).items()}
    timeline = {int(k): v for k, v in json.loads(timeline_file.read_text()).items()}
    rows = []
    print(
        "per event, ms after the commit: wake-up first/last socket | read start/end | send first/last"
    )
    for seq, committed in sorted(commits.items()):
        t = timeline.get(seq)
        if not t or not t.get("wake") or not t.get("send"):
            continue
        reads = t.get("read") or [(float("nan"), float("nan"))]
        row = [
            min(t["wake"]) - committed,
            max(t["wake"]) - committed,
            min(r[0] for r in reads) - committed,
            min(r[1] for r in reads) - committed,
            min(t["send"]) - committed,
            max(t["send"]) - committed,
        ]
        rows.append(row)
        cells = "  ".join(f"{v * 1000:8.1f}" for v in row)
        print(f"  seq {seq:>4}: {cells}   reads={len(t.get('read', []))} sends={len(t['send'])}")
    if rows:
        medians = [percentile([r[i] * 1000 for r in rows], 50) for i in range(6)]
        print("  median   : " + "  ".join(f"{v:8.1f}" for v in medians))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--subscribers", type=int, default=500)
    parser.add_argument("--events", type=int, default=30, help="events for the N-subscriber run")
    parser.add_argument("--gap", type=float, default=0.25, help="seconds between those events")
    parser.add_argument("--events-single", type=int, default=200)
    parser.add_argument("--replay", type=int, default=10_000)
    parser.add_argument(
        "--idle", type=int, default=0, help="also measure daphne's RSS with N idle sockets"
    )
    parser.add_argument("--idle-per-run", type=int, default=10, help="idle sockets per run")
    parser.add_argument(
        "--client-procs",
        type=int,
        default=0,
        help=f"client processes (default: one per {SOCKETS_PER_CLIENT_PROC} sockets)",
    )
    parser.add_argument(
        "--only", default="", help=f"comma-separated subset of {','.join(MODES)} (default: all)"
    )
    parser.add_argument(
        "--profile", metavar="DIR", help="run daphne under cProfile with a statement log into DIR"
    )
    parser.add_argument("--keep-db", action="store_true")
    parser.add_argument("--server-log", action="store_true", help="print daphne's log tail")
    args = parser.parse_args()
    args.modes = set(args.only.split(",")) if args.only else set(MODES)
    if args.modes - set(MODES):
        parser.error(f"--only takes {','.join(MODES)}")

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
        # Tickets of thousands of sockets are issued (here) before the first one connects.
        SPARKTIDE_WS_TICKET_TTL="600",
    )
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)

    from tests.realtime.processes import DAPHNE, free_port, process_env, start_daphne

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
    # Hundreds of handshakes at once on a loaded machine take longer than the 5 s daphne
    # allows by default (each costs the server a few database calls): this bench
    # measures delivery, so handshakes get a minute (and ten under the profiler).
    command = [DAPHNE, "--websocket_connect_timeout", "60"]
    if args.profile:
        command = [
            sys.executable,
            str(ROOT / "bench" / "profiled_daphne.py"),
            args.profile,
            "--websocket_connect_timeout",
            "600",
        ]
    server = start_daphne(port, env, command=command)
    try:
        asyncio.run(main_async(args, port, server.popen.pid))
    finally:
        if args.server_log:
            # Everything but daphne's access log lines.
            log = server.output(limit=10_000_000).splitlines()
            print("\n".join(line for line in log if not line.startswith("127.0.0.1:")))
        server.stop(timeout=60)  # a profiled daphne writes its profile on the way out
        if args.profile:
            print(f"profile and statement log in {args.profile}")
            print_timeline(Path(args.profile))
        from django.db import connections

        connections.close_all()
        if not args.keep_db:
            _recreate_database(admin_url, drop_only=True)


if __name__ == "__main__":
    main()
