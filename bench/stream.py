"""Benchmark: the live text stream, model server → worker → Redis → daphne → WebSocket client.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/sparktide REDIS_URL=redis://127.0.0.1:6379/0 \
        .venv/bin/python bench/stream.py [--single 20] [--runs 100] [--workers 2] \
        [--concurrency 50] [--pool 25] [--tokens 40] [--rate 40] [--no-replay] [--keep-db]

It (re)creates the PostgreSQL database ``sparktide_bench_stream``, migrates it, builds a tenant /
app / owner and an agent on the ``openai`` provider whose server is the tests' fake model server
(tests/providers/fake_openai.py: a real local HTTP server, in a process of its own) streaming
``--tokens`` content tokens at ``--rate`` tokens/s in one text turn. It starts one daphne and
``--workers`` ``manage.py run_worker`` processes on the Redis channel layer, as bench/load.py
does, and prints:

  (a) the model's first content token written → the first text at a WebSocket client, p50/p99,
      one run at a time (``--single`` runs), and every token → the frame carrying it; the floor:
      the same text forwarded by a bare process that reads the model's stream and writes each
      piece as a WebSocket frame (no database, no channel layer), to the same client;
  (b) the same with ``--runs`` runs streaming at once on the workers, and what was lost or
      reordered: per run, the deltas must join exactly to the published text, with no gap, no
      overlap, no delta after its stream's close and the log's events in order;
  (c) what a streamed turn adds: its ``answer.stream`` events, the AnswerStream row writes
      (PostgreSQL's own counters) and the delta frames a client got;
  (d) the replay of a finished 10,000-event run: bench/delivery.py ``--only replay``, as is.

"Written" is the model server's clock after the piece was flushed to its socket; "client" is
when the frame was read and parsed. Every process is on this host and ``time.monotonic`` is the
system-wide CLOCK_MONOTONIC, so the times compare. Everything started is stopped; the bench
database is dropped unless --keep-db. No figure is asserted: they are printed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.delivery import percentile  # noqa: E402

BENCH_DB = "sparktide_bench_stream" + os.environ.get("BENCH_DB_SUFFIX", "")
SECRET_KEY = "sparktide-bench-secret-key-not-for-production-0123456789"
KEY_ENV = "SPARKTIDE_BENCH_OPENAI_KEY"
TIMEOUT = 300.0
WORDS = ["北辰医药", "三季度", "营收", "同比", "增长", " 12%", "，", "主要", "来自", "创新药", "。"]


def _bench_database_url(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    if parts.scheme not in ("postgres", "postgresql"):
        sys.exit("bench/stream.py needs DATABASE_URL=postgres://…")
    return (
        urlunsplit(parts._replace(path=f"/{BENCH_DB}")),
        urlunsplit(parts._replace(path="/postgres")),
    )


def _recreate_database(admin_url: str, *, drop_only: bool = False) -> None:
    import psycopg

    with psycopg.connect(
        admin_url.replace("postgres://", "postgresql://", 1), autocommit=True
    ) as c:
        c.execute(f'DROP DATABASE IF EXISTS "{BENCH_DB}" WITH (FORCE)')
        if not drop_only:
            c.execute(f'CREATE DATABASE "{BENCH_DB}"')


def tokens_of(index: int, count: int) -> list[str]:
    """Reply ``index``'s tokens: a tag naming it (so a client's text says which reply it got),
    then words."""
    return [f"R{index:04d}"] + [WORDS[i % len(WORDS)] for i in range(count - 1)]


# --- the model server, in a process of its own --------------------------------------------


def model_server_process(replies: int, tokens: int, rate: float, gated: bool, conn) -> None:
    """The fake model server with ``replies`` text turns. Gated: each reply waits for a "go"
    (the next one) or "go-all"; "stop" sends back when each reply's pieces were written."""
    import threading

    sys.path.insert(0, str(ROOT))
    from tests.providers.fake_openai import FakeOpenAI, finish_chunk, stream, text_chunk

    script = []
    for i in range(replies):
        chunks = [text_chunk(t) for t in tokens_of(i, tokens)]
        gate = threading.Event() if gated else None
        script.append(stream([*chunks, finish_chunk("stop")], delay_between=1 / rate, gate=gate))
    with FakeOpenAI(script) as server:
        conn.send(server.base_url)
        opened = 0
        while True:
            message = conn.recv()
            if message == "go":
                script[opened].gate.set()
                opened += 1
            elif message == "go-all":
                for reply in script:
                    reply.gate.set()
            elif message == "stop":
                conn.send([list(r.written_at) for r in script])
                return


class ModelServer:
    def __init__(self, replies: int, tokens: int, rate: float, *, gated: bool) -> None:
        import multiprocessing

        context = multiprocessing.get_context("spawn")
        self.conn, child = context.Pipe()
        self.proc = context.Process(
            target=model_server_process, args=(replies, tokens, rate, gated, child), daemon=True
        )
        self.proc.start()
        self.base_url = self.conn.recv()

    def send(self, message: str) -> None:
        self.conn.send(message)

    def written(self) -> list[list[float]]:
        """Per reply, when each piece was written (the first is the first content token)."""
        self.conn.send("stop")
        times = self.conn.recv()
        self.proc.join(10)
        return times


# --- a client ---------------------------------------------------------------------------


@dataclass
class Followed:
    """What one socket was sent: (time read, frame) in order, and how it closed."""

    frames: list[tuple[float, dict]] = field(default_factory=list)
    close_code: int | None = None


async def follow(port: int, path: str, ready: asyncio.Event | None = None) -> Followed:
    from tests.realtime.wsclient import Closed, WSClient

    out = Followed()
    client = await WSClient.connect(
        "127.0.0.1", port, path, origin=f"http://127.0.0.1:{port}", timeout=60
    )
    if ready is not None:
        ready.set()
    try:
        while True:
            text = await client.recv(timeout=TIMEOUT)
            out.frames.append((time.monotonic(), json.loads(text)))
    except Closed as closed:
        out.close_code = closed.code
    finally:
        client.abort()
    return out


def client_process(port: int, paths: list[str], conn) -> None:
    """One child: connect every path, say "ready", read each socket until it closes."""
    sys.path.insert(0, str(ROOT))

    async def run() -> list[Followed]:
        events = [asyncio.Event() for _ in paths]
        tasks = [
            asyncio.create_task(follow(port, p, e)) for p, e in zip(paths, events, strict=True)
        ]
        await asyncio.gather(*(e.wait() for e in events))
        conn.send("ready")
        return await asyncio.gather(*tasks)

    conn.send(asyncio.run(run()))


class Clients:
    def __init__(self, port: int, paths: list[str], procs: int) -> None:
        import multiprocessing

        context = multiprocessing.get_context("spawn")
        self.children = []
        for i in range(procs):
            parent, child = context.Pipe()
            proc = context.Process(target=client_process, args=(port, paths[i::procs], child))
            proc.start()
            self.children.append((proc, parent, len(paths[i::procs])))
        self.order = [i for proc in range(procs) for i in range(proc, len(paths), procs)]

    def wait_ready(self) -> None:
        for _, conn, _ in self.children:
            if conn.recv() != "ready":
                raise RuntimeError("a client process failed")

    def results(self) -> list[Followed]:
        got: list[Followed] = []
        for proc, conn, _ in self.children:
            got += conn.recv()
            proc.join(30)
        ordered: list[Followed] = [Followed()] * len(self.order)
        for position, followed in zip(self.order, got, strict=True):
            ordered[position] = followed
        return ordered


# --- what a socket got ------------------------------------------------------------------


@dataclass
class Checked:
    tag: int = -1
    first_text_at: float = 0.0
    token_arrivals: list[float] = field(default_factory=list)  # per token, when it was shown
    stream_frames: int = 0
    problems: list[str] = field(default_factory=list)


def check(followed: Followed, tokens: int) -> Checked:
    """Rebuild the streamed text as a client does; note every gap, overlap, late delta,
    event out of order and any difference from the published text."""
    out = Checked()
    built: dict[str, str] = {}
    closed: set[str] = set()
    arrivals: list[tuple[float, int]] = []  # (time, the stream's length after the frame)
    last_seq = 0
    published = []
    for at, frame in followed.frames:
        data = frame.get("data") or {}
        if frame.get("kind") == "stream":
            stream, offset, delta = data["streamId"], data["offset"], data["delta"]
            have = built.get(stream, "")
            if stream in closed:
                out.problems.append("delta after close")
                continue
            if offset > len(have):
                out.problems.append("gap")
            elif offset < len(have) and not data.get("snapshot"):
                out.problems.append("overlap")
            built[stream] = have[:offset] + delta
            out.stream_frames += 1
            if delta and not out.first_text_at:
                out.first_text_at = at
            arrivals.append((at, len(built[stream])))
        elif frame.get("kind") == "event":
            if frame["seq"] <= last_seq:
                out.problems.append("event out of order")
            last_seq = frame["seq"]
            if frame["type"] == "answer.published":
                published.append(data["content"]["text"])
            if frame["type"] == "answer.stream":
                closed.add(data["streamId"])
    if followed.close_code != 1000:
        out.problems.append(f"close {followed.close_code}")
    streamed = list(built.values())
    if streamed != published:
        out.problems.append("text differs from the published text")
    if published and published[0][:1] == "R":
        out.tag = int(published[0][1:5])
        ends, total = [], 0
        for token in tokens_of(out.tag, tokens):
            total += len(token)
            ends.append(total)
        for end in ends:
            out.token_arrivals.append(next((t for t, n in arrivals if n >= end), float("nan")))
    return out


def latencies(
    checked: list[Checked], written: list[list[float]]
) -> tuple[list[float], list[float]]:
    """(first token → first text, per run) and (each token → the frame showing it)."""
    first, each = [], []
    for c in checked:
        if c.tag < 0 or not c.first_text_at:
            continue
        times = written[c.tag]
        first.append(c.first_text_at - times[0])
        each += [a - w for a, w in zip(c.token_arrivals, times, strict=False) if a == a]
    return first, each


def report(label: str, seconds: list[float]) -> str:
    ms = [s * 1000 for s in seconds]
    if not ms:
        return f"{label:<52} n=     0"
    return (
        f"{label:<52} n={len(ms):>6}  p50={percentile(ms, 50):7.1f} ms  "
        f"p99={percentile(ms, 99):7.1f} ms  max={max(ms):7.1f} ms"
    )


# --- the floor: the same text, a bare forwarder -----------------------------------------


def floor_process(model_url: str, conn) -> None:
    """Per WebSocket connection: POST the model's stream, write each content piece as a frame
    at once, then close. What the platform's path costs above this is SparkTide's."""
    import base64
    import hashlib

    import httpx

    sys.path.insert(0, str(ROOT))
    from delivery.wire import frame_text

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
        body = {"model": "m", "messages": [{"role": "user", "content": "?"}], "stream": True}
        offset = 0
        async with (
            httpx.AsyncClient(timeout=60) as http,
            http.stream("POST", f"{model_url}/chat/completions", json=body) as response,
        ):
            async for line in response.aiter_lines():
                if not line.startswith("data: ") or line == "data: [DONE]":
                    continue
                choices = json.loads(line[6:]).get("choices") or [{}]
                piece = (choices[0].get("delta") or {}).get("content")
                if piece:
                    frame = {
                        "kind": "stream",
                        "data": {"streamId": "floor", "offset": offset, "delta": piece},
                    }
                    writer.write(frame_text(json.dumps(frame, ensure_ascii=False))[1])
                    await writer.drain()
                    offset += len(piece)
        writer.write(b"\x88\x02\x03\xe8")  # close 1000
        await writer.drain()
        writer.close()

    async def main() -> None:
        server = await asyncio.start_server(serve_one, "127.0.0.1", 0)
        conn.send(server.sockets[0].getsockname()[1])
        await asyncio.get_running_loop().run_in_executor(None, conn.recv)  # "stop"
        server.close()

    asyncio.run(main())


async def floor(count: int, tokens: int, rate: float) -> tuple[list[float], list[float]]:
    import multiprocessing

    model = ModelServer(count, tokens, rate, gated=False)
    context = multiprocessing.get_context("spawn")
    parent, child = context.Pipe()
    proc = context.Process(target=floor_process, args=(model.base_url, child), daemon=True)
    proc.start()
    port = await asyncio.to_thread(parent.recv)
    runs = [await follow(port, "/floor") for _ in range(count)]
    parent.send("stop")
    proc.join(10)
    written = model.written()
    first, each = [], []
    for i, followed in enumerate(runs):
        times = written[i]
        arrivals = [t for t, _ in followed.frames]
        first.append(arrivals[0] - times[0])
        each += [a - w for a, w in zip(arrivals, times, strict=False)]
    return first, each


# --- the scenarios ----------------------------------------------------------------------


def make_world():
    from tests import factories

    tenant = factories.make_tenant(f"bench-{uuid.uuid4().hex[:8]}", "Bench")
    owner = factories.make_user(tenant, f"bench-owner-{uuid.uuid4().hex[:8]}")
    app = factories.make_app(tenant, "business", members=[owner])
    return app, owner


def make_agent(app, key: str, base_url: str) -> None:
    from tests import factories

    model = {
        "provider": "openai",
        "baseUrl": base_url,
        "model": "bench",
        "apiKeyEnv": KEY_ENV,
        "timeoutSeconds": 120,
    }
    factories.make_agent(app.tenant, key, model=model, pin_to=[app], max_steps=2)


def new_run_path(app, owner, key: str) -> tuple[str, str]:
    from delivery.tickets import issue_ticket
    from runtime.services import start_run
    from tests.realtime.helpers import events_path

    run = start_run(user=owner, app=app, agent_key=key, input="北辰医药三季度营收如何？")
    ticket = issue_ticket(run=run, user=owner)[0]
    return run.pk, events_path(app.slug, run.pk, after=0, ticket=ticket)


async def one_at_a_time(port: int, world, args) -> tuple[list[Checked], list[list[float]]]:
    from asgiref.sync import sync_to_async

    app, owner = world
    model = ModelServer(args.single, args.tokens, args.rate, gated=True)
    await sync_to_async(make_agent)(app, "single", model.base_url)
    checked = []
    for _ in range(args.single):
        _, path = await sync_to_async(new_run_path)(app, owner, "single")
        ready = asyncio.Event()
        task = asyncio.create_task(follow(port, path, ready))
        await ready.wait()
        await asyncio.sleep(0.2)  # the socket's (empty) replay is over
        model.send("go")
        checked.append(check(await asyncio.wait_for(task, TIMEOUT), args.tokens))
    return checked, model.written()


def table_writes(table: str) -> int:
    from django.db import connection

    with connection.cursor() as c:
        c.execute("SELECT pg_stat_clear_snapshot()")
        c.execute(
            "SELECT coalesce(n_tup_ins + n_tup_upd, 0) FROM pg_stat_user_tables WHERE relname = %s",
            [table],
        )
        row = c.fetchone()
    return int(row[0]) if row else 0


async def many_at_once(port: int, world, args):
    from asgiref.sync import sync_to_async

    from runs.models import AnswerStream

    app, owner = world
    table = AnswerStream._meta.db_table
    model = ModelServer(args.runs, args.tokens, args.rate, gated=True)
    await sync_to_async(make_agent)(app, "many", model.base_url)
    made = [await sync_to_async(new_run_path)(app, owner, "many") for _ in range(args.runs)]
    clients = Clients(port, [path for _, path in made], procs=2)
    await asyncio.to_thread(clients.wait_ready)
    await asyncio.sleep(1.0)
    await asyncio.sleep(1.0)  # PostgreSQL's counters are flushed within a second
    writes_before = await sync_to_async(table_writes)(table)
    model.send("go-all")
    followed = await asyncio.wait_for(asyncio.to_thread(clients.results), TIMEOUT)
    await asyncio.sleep(1.5)
    writes = await sync_to_async(table_writes)(table) - writes_before
    checked = [check(f, args.tokens) for f in followed]
    return checked, model.written(), [run_id for run_id, _ in made], writes


def per_turn(run_ids: list[str]) -> tuple[float, float, int]:
    """(answer.stream events per run, all events per run, runs not COMPLETED)."""
    from runs.models import Run, RunEvent

    events = RunEvent.objects.filter(run_id__in=run_ids)
    streams = events.filter(type="answer.stream").count()
    failed = Run.objects.filter(pk__in=run_ids).exclude(status=Run.Status.COMPLETED).count()
    return streams / len(run_ids), events.count() / len(run_ids), failed


async def main_async(args, port: int) -> None:
    from asgiref.sync import sync_to_async

    world = await sync_to_async(make_world)()
    rate = f"{args.tokens} tokens at {args.rate:g}/s"

    floor_first, floor_each = await floor(args.single, args.tokens, args.rate)
    print(report("floor: first token → client, bare forwarder", floor_first))
    print(report("floor: each token → client, bare forwarder", floor_each))

    checked, written = await one_at_a_time(port, world, args)
    first, each = latencies(checked, written)
    print(report(f"(a) first token → first text, 1 run ({rate})", first))
    if first and floor_first:
        print(f"    p50 {percentile(first, 50) / percentile(floor_first, 50):.1f}× the floor's p50")
    print(report("    each token → the frame showing it", each))
    problems = [p for c in checked for p in c.problems]
    print(f"    problems: {problems or 'none'}")

    checked, written, run_ids, writes = await many_at_once(port, world, args)
    first, each = latencies(checked, written)
    print(
        report(f"(b) first token → first text, {args.runs} runs at once", first)
        + f"  ({args.workers} workers × {args.concurrency})"
    )
    print(report("    each token → the frame showing it", each))
    problems = [p for c in checked for p in c.problems]
    lost = sum(1 for c in checked if c.problems)
    print(
        f"    runs whose deltas did not join exactly to the published text, or lost or "
        f"reordered anything: {lost} of {len(checked)}  {sorted(set(problems)) or ''}"
    )
    silent = sum(1 for c in checked if not c.stream_frames)
    partial = sum(1 for c in checked if c.stream_frames and c.problems)
    print(f"    sockets shown no text at all: {silent}; shown part of it: {partial}")
    streams, events, failed = await sync_to_async(per_turn)(run_ids)
    frames = sum(c.stream_frames for c in checked) / len(checked)
    print(
        f"(c) per streamed turn: {streams:.2f} answer.stream event(s) in the log (of {events:.1f} "
        f"events a run), {writes / len(run_ids):.1f} AnswerStream row writes, {frames:.1f} delta "
        f"frames at the client for {args.tokens} tokens; runs not COMPLETED: {failed}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--single", type=int, default=20, help="runs measured one at a time")
    parser.add_argument("--runs", type=int, default=100, help="runs streaming at once")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--concurrency", type=int, default=50, help="runs at once per worker")
    parser.add_argument("--pool", type=int, default=25, help="database connections per worker")
    parser.add_argument("--tokens", type=int, default=40, help="content tokens per turn")
    parser.add_argument("--rate", type=float, default=40.0, help="tokens per second")
    parser.add_argument("--no-replay", action="store_true", help="skip bench/delivery.py's replay")
    parser.add_argument("--keep-db", action="store_true")
    args = parser.parse_args()

    database_url, redis_url = os.environ.get("DATABASE_URL"), os.environ.get("REDIS_URL")
    if not database_url or not redis_url:
        sys.exit("bench/stream.py needs DATABASE_URL (PostgreSQL) and REDIS_URL")
    bench_url, admin_url = _bench_database_url(database_url)
    _recreate_database(admin_url)
    common = dict(
        DATABASE_URL=bench_url,
        SECRET_KEY=SECRET_KEY,
        DJANGO_SETTINGS_MODULE="sparktide.settings",
        ALLOWED_HOSTS="127.0.0.1",
        SECURE_SSL_REDIRECT="0",
        SECURE_HSTS_SECONDS="0",
        SPARKTIDE_CHANNEL_PREFIX=f"sparktide-stream-{uuid.uuid4().hex[:8]}",
        SPARKTIDE_WS_TICKET_TTL="600",
        REDIS_URL=redis_url,
    )
    os.environ.update(common)
    import logging

    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    logging.getLogger("httpx").setLevel(logging.WARNING)

    from tests.realtime.processes import PYTHON, Process, free_port, process_env, start_daphne

    env = process_env(**common, **{KEY_ENV: "sk-bench"})
    port = free_port()
    server = start_daphne(port, {**env, "SPARKTIDE_DB_POOL_SIZE": "8"})
    # PostgreSQL here allows 100 connections: a pool of concurrency + 4 per worker would
    # not fit, so a streaming run may wait for a connection (which the figures then show).
    worker_env = {**env, "SPARKTIDE_DB_POOL_SIZE": str(args.pool), "PYTHONUNBUFFERED": "1"}
    command = [PYTHON, "manage.py", "run_worker", "--no-startup-delay"]
    command += ["--concurrency", str(args.concurrency), "--interval", "0.2"]
    workers = [Process(command, worker_env) for _ in range(args.workers)]
    print(
        f"daphne + {args.workers} workers (each {args.concurrency} runs at once, {args.pool} "
        f"connections), Redis {redis_url}, {os.cpu_count()} CPUs"
    )
    try:
        asyncio.run(main_async(args, port))
    finally:
        for worker in workers:
            worker.stop(timeout=30)
        server.stop()
        from django.db import connections

        connections.close_all()
        if not args.keep_db:
            _recreate_database(admin_url, drop_only=True)

    if not args.no_replay:
        # The replay is bench/delivery.py's measurement, run as it is, on a database of its own.
        result = subprocess.run(
            [sys.executable, str(ROOT / "bench" / "delivery.py"), "--only", "replay"],
            env={**os.environ, "DATABASE_URL": database_url, "BENCH_DB_SUFFIX": "_stream"},
            capture_output=True,
            text=True,
            check=False,
        )
        lines = [
            line for line in result.stdout.splitlines() if line.startswith(("(c)", "    floor"))
        ]
        print("(d) bench/delivery.py --only replay:")
        print("\n".join(lines) if lines else result.stdout + result.stderr)


if __name__ == "__main__":
    main()
