"""Benchmark: N runs created at once through REST, followed over WebSocket, M task workers.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/sparktide REDIS_URL=redis://127.0.0.1:6379/0 \
        .venv/bin/python bench/load.py [--runs 60] [--wait 0] [--workers 1,2] \
        [--daphnes 1] [--concurrency 16] [--interval 0.2] [--keep-db]

It (re)creates the PostgreSQL database ``sparktide_bench_load`` (suffix
``BENCH_DB_SUFFIX``), migrates it, builds a tenant / app / owner and a scripted agent
whose model waits ``--wait`` seconds on each of its two turns (``sleep`` steps: what a
run spends its life doing; 0 = the scripted floor), starts ``--daphnes`` daphne processes (the
clients use them in turn), and for each worker count M:

* starts M ``manage.py run_worker --concurrency C --interval I`` processes;
* warms them up (2 × M runs), then measures one run alone (the floor);
* starts N clients at once, each as an SDK user would: POST /v1/apps/{app}/runs, POST
  …/events/ticket, then the run's WebSocket from after=0, read until it closes;
* prints create → first ``answer.published`` frame *at the client* p50/p95/p99, create
  → terminal, runs/s (N / from the first create to the last terminal), and where the
  time goes, from the log's own timestamps: create → the POST's answer, → ``run.started``
  (queue wait + claim), → the first ``answer.published`` committed (the engine: first
  model turns, retrieval, Publication), → the frame read by the client (delivery).

"Create" is the client's clock just before the POST; the workers, daphne and the
clients share this host's clock. Everything started is stopped; the bench database is
dropped unless --keep-db.
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

from bench.delivery import percentile  # noqa: E402

BENCH_DB = "sparktide_bench_load" + os.environ.get("BENCH_DB_SUFFIX", "")  # parallel benches
SECRET_KEY = "sparktide-bench-secret-key-not-for-production-0123456789"
GOAL_P50, GOAL_P95 = 0.300, 1.0  # issue 12: create → first answer.published, 60 runs, 2 workers
TIMEOUT = 600.0


def _bench_database_url(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    if parts.scheme not in ("postgres", "postgresql"):
        sys.exit("bench/load.py needs DATABASE_URL=postgres://…")
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


def make_world(wait: float):
    from tests import factories

    tenant = factories.make_tenant(f"bench-{uuid.uuid4().hex[:8]}", "Bench")
    owner = factories.make_user(tenant, f"bench-owner-{uuid.uuid4().hex[:8]}")
    app = factories.make_app(tenant, "business", members=[owner])
    knowledge = factories.fund_reports(
        tenant, app, owner, pages=[factories.REPORT_PAGES[0].split("\n")[0]], source_version=""
    )
    waiting = ({"sleep": wait},) if wait > 0 else ()
    factories.make_agent(
        tenant,
        "waiting",
        model=factories.scripted(
            {"search": "营收"},
            *waiting,
            {"answerPart": "营收增长 [[cite:{{c1}}]]"},
            *waiting,
            {"text": "结论"},
        ),
        knowledge=[knowledge],
        pin_to=[app],
    )
    return app, owner


# --- one client: create, ticket, follow ---------------------------------------------


class Follower:
    """One SDK-style user: creates a run and follows its events until the socket closes."""

    def __init__(self, http, port: int, app_slug: str, token: str) -> None:
        self.http, self.port, self.app_slug = http, port, app_slug
        self.origin = f"http://127.0.0.1:{port}"
        self.headers = {"Authorization": f"Bearer {token}"}
        self.run_id = ""
        self.sent = self.created = self.first_block = self.closed = 0.0
        self.close_code: int | None = None
        self.reconnects = 0
        self.why: list[str] = []  # each reconnect's cause: a refused handshake, a close code

    async def follow(self) -> None:
        from tests.realtime.helpers import events_path
        from tests.realtime.wsclient import Closed, HandshakeRefused, WSClient

        base = f"/v1/apps/{self.app_slug}/runs"
        self.sent = time.time()
        response = await self.http.post(
            f"{self.origin}{base}",
            json={"agent": "waiting", "input": "营收？"},
            headers=self.headers,
        )
        response.raise_for_status()
        self.created = time.time()
        self.run_id = response.json()["id"]
        after = 0
        for _attempt in range(4):  # as the SDK does: a fresh ticket, resume after the last seq
            response = await self.http.post(
                f"{self.origin}{base}/{self.run_id}/events/ticket", headers=self.headers
            )
            response.raise_for_status()
            ticket = response.json()["ticket"]
            path = events_path(self.app_slug, self.run_id, after=after, ticket=ticket)
            try:
                client = await WSClient.connect(
                    "127.0.0.1", self.port, path, origin=self.origin, timeout=60
                )
            except HandshakeRefused:
                self.reconnects += 1
                self.why.append("handshake")
                await asyncio.sleep(0.25)
                continue
            try:
                while True:
                    frame = json.loads(await client.recv(timeout=TIMEOUT))
                    after = max(after, frame.get("seq", after))
                    if not self.first_block and frame.get("type") == "answer.published":
                        self.first_block = time.time()
            except Closed as closed:
                self.close_code = closed.code
                self.closed = time.time()
            finally:
                client.abort()
            if self.close_code in (4401, 1006, None):  # refused ticket or cut: reconnect
                self.reconnects += 1
                self.why.append(str(self.close_code))
                continue
            return


async def follow_runs(ports: list[int], app_slug: str, token: str, count: int) -> list[Follower]:
    """``count`` followers at once, spread over the daphne processes in turn."""
    import httpx

    limits = httpx.Limits(max_connections=count, max_keepalive_connections=count)
    async with httpx.AsyncClient(limits=limits, timeout=120) as http:
        followers = [Follower(http, ports[i % len(ports)], app_slug, token) for i in range(count)]
        await asyncio.gather(*(f.follow() for f in followers))
    return followers


# --- figures ------------------------------------------------------------------------


def figures(followers: list[Follower]) -> dict:
    from runs.models import Run, RunEvent

    by_id = {f.run_id: f for f in followers}
    started, published = {}, {}
    for run_id, kind, at in (
        RunEvent.objects.filter(
            run_id__in=list(by_id), type__in=["run.started", "answer.published"]
        )
        .order_by("seq")
        .values_list("run_id", "type", "at")
    ):
        (started if kind == "run.started" else published).setdefault(run_id, at.timestamp())
    rows = Run.objects.filter(pk__in=list(by_id)).values_list("pk", "status", "completed_at")
    out: dict[str, list[float]] = {
        k: [] for k in ("first_block", "terminal", "answered", "claimed", "engine", "delivered")
    }
    ends = []
    for run_id, status, completed in rows:
        f = by_id[run_id]
        if status != Run.Status.COMPLETED or f.close_code != 1000 or not f.first_block:
            raise SystemExit(f"{run_id} ended {status}, socket closed {f.close_code}")
        ends.append(completed.timestamp())
        out["first_block"].append(f.first_block - f.sent)
        out["terminal"].append(completed.timestamp() - f.sent)
        out["answered"].append(f.created - f.sent)
        out["claimed"].append(started[run_id] - f.sent)
        out["engine"].append(published[run_id] - started[run_id])
        out["delivered"].append(f.first_block - published[run_id])
    span = max(ends) - min(f.sent for f in followers)
    reconnects = sum(f.reconnects for f in followers)
    if reconnects:
        print("reconnects by cause:", dict(Counter(w for f in followers for w in f.why)))
    return {**out, "runs_per_s": len(followers) / span, "reconnects": reconnects}


def cpu_seconds(processes) -> float:
    """User + system CPU of these processes so far (Linux /proc)."""
    total = 0
    for process in processes:
        fields = Path(f"/proc/{process.popen.pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / os.sysconf("SC_CLK_TCK")


def ms(values: list[float], q: float) -> str:
    return f"{percentile(values, q) * 1000:7.0f}"


def print_figures(label: str, f: dict) -> None:
    fb, term = f["first_block"], f["terminal"]
    print(
        f"{label}: create → first answer.published at the client "
        f"p50 {ms(fb, 50)} ms  p95 {ms(fb, 95)} ms  p99 {ms(fb, 99)} ms | terminal "
        f"p50 {ms(term, 50)} ms  p95 {ms(term, 95)} ms | {f['runs_per_s']:5.2f} runs/s | "
        f"{f['reconnects']} reconnect(s)"
    )
    print(
        f"{'':>{len(label)}}  where it goes (p50 / p95 ms): POST answered "
        f"{ms(f['answered'], 50)} / {ms(f['answered'], 95)} · run.started "
        f"{ms(f['claimed'], 50)} / {ms(f['claimed'], 95)} · started → published "
        f"{ms(f['engine'], 50)} / {ms(f['engine'], 95)} · published → client "
        f"{ms(f['delivered'], 50)} / {ms(f['delivered'], 95)}"
    )


# --- the bench ----------------------------------------------------------------------


def start_workers(env: dict, count: int, concurrency: int, interval: float) -> list:
    from tests.realtime.processes import PYTHON, Process

    args = ["manage.py", "run_worker", "--no-startup-delay"]
    args += ["--concurrency", str(concurrency), "--interval", str(interval)]
    worker_env = {
        **env,
        "SPARKTIDE_DB_POOL_SIZE": str(concurrency + 4),
        "PYTHONUNBUFFERED": "1",
    }
    return [Process([PYTHON, *args], worker_env) for _ in range(count)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=60)
    parser.add_argument("--wait", type=float, default=0.0, help="seconds per model turn")
    parser.add_argument("--workers", default="1,2", help="run_worker process counts to compare")
    parser.add_argument("--daphnes", type=int, default=1, help="daphne processes (N)")
    parser.add_argument("--concurrency", type=int, default=16, help="runs at once per worker")
    parser.add_argument("--interval", type=float, default=0.2, help="the workers' poll interval")
    parser.add_argument("--keep-db", action="store_true")
    args = parser.parse_args()

    database_url, redis_url = os.environ.get("DATABASE_URL"), os.environ.get("REDIS_URL")
    if not database_url:
        sys.exit("bench/load.py needs DATABASE_URL (PostgreSQL)")
    bench_url, admin_url = _bench_database_url(database_url)
    _recreate_database(admin_url)
    common = dict(
        DATABASE_URL=bench_url,
        SECRET_KEY=SECRET_KEY,
        DJANGO_SETTINGS_MODULE="sparktide.settings",
        ALLOWED_HOSTS="127.0.0.1",
        SECURE_SSL_REDIRECT="0",
        SECURE_HSTS_SECONDS="0",
        SPARKTIDE_CHANNEL_PREFIX=f"sparktide-load-{uuid.uuid4().hex[:8]}",
    )
    os.environ.update(common)
    import logging

    import django

    django.setup()
    from django.core.management import call_command
    from django.db import close_old_connections

    call_command("migrate", verbosity=0)
    logging.getLogger("httpx").setLevel(logging.WARNING)
    app, owner = make_world(args.wait)

    from tests.realtime.processes import free_port, process_env, start_daphne

    env = process_env(**common, **({"REDIS_URL": redis_url} if redis_url else {}))
    ports = [free_port() for _ in range(args.daphnes)]
    servers = [start_daphne(port, {**env, "SPARKTIDE_DB_POOL_SIZE": "8"}) for port in ports]
    print(
        f"{args.runs} runs at once via REST + WebSocket, scripted model waiting "
        f"{args.wait:.1f} s × 2 turns; {args.daphnes} daphne process(es); workers of {args.concurrency} "
        f"runs at once polling every {args.interval:.1f} s; {os.cpu_count()} CPUs"
    )

    def follow(count: int) -> list[Follower]:
        close_old_connections()
        return asyncio.run(follow_runs(ports, app.slug, owner.raw_token, count))

    results = {}
    try:
        for count in [int(m) for m in args.workers.split(",")]:
            workers = start_workers(env, count, args.concurrency, args.interval)
            try:
                follow(2 * count)  # warm-up: process start, imports, pools, first claims
                floor = figures(follow(1))
                print_figures(f"M={count} one run alone", floor)
                before = cpu_seconds(workers), cpu_seconds(servers), os.times()
                results[count] = figures(follow(args.runs))
                print_figures(f"M={count} {args.runs} runs at once", results[count])
                after = cpu_seconds(workers), cpu_seconds(servers), os.times()
                client = (after[2].user + after[2].system) - (before[2].user + before[2].system)
                per_run = [
                    (after[0] - before[0]) / args.runs,
                    (after[1] - before[1]) / args.runs,
                    client / args.runs,
                ]
                print(
                    f"{'':>{len(str(count)) + 2}}  CPU per run: workers {per_run[0] * 1000:.0f} ms, "
                    f"daphne {per_run[1] * 1000:.0f} ms, this bench's clients "
                    f"{per_run[2] * 1000:.0f} ms (PostgreSQL and Redis not counted); "
                    f"{args.runs} runs × that / {os.cpu_count()} CPUs = "
                    f"{args.runs * sum(per_run) / os.cpu_count():.2f} s of CPU at the least"
                )
            finally:
                for worker in workers:
                    worker.stop(timeout=30)
    finally:
        for server in servers:
            server.stop()
        from django.db import connections

        connections.close_all()
        if not args.keep_db:
            _recreate_database(admin_url, drop_only=True)
    if args.wait == 0 and results:
        best = results[max(results)]
        p50, p95 = percentile(best["first_block"], 50), percentile(best["first_block"], 95)
        print(
            f"goal (M={max(results)}): p50 {p50 * 1000:.0f} / {GOAL_P50 * 1000:.0f} ms "
            f"({p50 / GOAL_P50:.2f}×), p95 {p95 * 1000:.0f} / {GOAL_P95 * 1000:.0f} ms "
            f"({p95 / GOAL_P95:.2f}×)"
        )


if __name__ == "__main__":
    main()
