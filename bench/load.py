"""Benchmark: runs created at once through REST, one task worker, a model that waits.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/sparktide REDIS_URL=redis://127.0.0.1:6379/0 \
        .venv/bin/python bench/load.py [--runs 50] [--wait 2.0] [--concurrency 1,16] [--keep-db]

It (re)creates the PostgreSQL database ``sparktide_bench_load``, migrates it, builds
a tenant / app / owner and a scripted agent whose model waits ``--wait`` seconds on
each of its two turns (``sleep`` steps: what a run spends its life doing), starts one
daphne process, and for each worker concurrency:

* starts one ``manage.py run_worker --concurrency C``;
* creates N runs at once with POST /v1/apps/{app}/runs (N client threads);
* waits until every run ended and prints, from the log: time to the first block
  (create → answer.published) and to terminal (create → completed_at), p50/p95,
  runs/s, and the ratio of terminal p50 to the floor — one run alone's duration.

The floor is measured first, one run through the same worker. Everything started
is stopped; the bench database is dropped unless --keep-db.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import urllib.request
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.delivery import percentile  # noqa: E402

BENCH_DB = "sparktide_bench_load"
SECRET_KEY = "sparktide-bench-secret-key-not-for-production-0123456789"


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
    factories.make_agent(
        tenant,
        "waiting",
        model=factories.scripted(
            {"search": "营收"},
            {"sleep": wait},
            {"answerPart": "营收增长 [[cite:{{c1}}]]"},
            {"sleep": wait},
            {"text": "结论"},
        ),
        knowledge=[knowledge],
        pin_to=[app],
    )
    return app, owner


def create_run(port: int, app_slug: str, token: str) -> tuple[str, float]:
    body = json.dumps({"agent": "waiting", "input": "营收？"}).encode()
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/v1/apps/{app_slug}/runs",
        data=body,
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
        method="POST",
    )
    sent = time.time()
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.load(response)["id"], sent


def wait_terminal(run_ids: list[str], timeout: float = 900.0) -> None:
    from django.db import close_old_connections

    from runs.models import Run

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        close_old_connections()
        if not Run.objects.filter(
            pk__in=run_ids, status__in=[Run.Status.QUEUED, Run.Status.RUNNING]
        ).exists():
            return
        time.sleep(0.1)
    raise SystemExit(f"runs still unfinished after {timeout}s")


def figures(created: dict[str, float]) -> dict:
    from runs.models import Run, RunEvent

    first_block, terminal, ends = [], [], []
    published = {}
    for run_id, at in (
        RunEvent.objects.filter(run_id__in=list(created), type="answer.published")
        .order_by("seq")
        .values_list("run_id", "at")
    ):
        published.setdefault(run_id, at)
    for run_id, status, completed in Run.objects.filter(pk__in=list(created)).values_list(
        "pk", "status", "completed_at"
    ):
        if status != Run.Status.COMPLETED:
            raise SystemExit(f"{run_id} ended {status}")
        terminal.append(completed.timestamp() - created[run_id])
        ends.append(completed.timestamp())
        first_block.append(published[run_id].timestamp() - created[run_id])
    span = max(ends) - min(created.values())
    return {"first_block": first_block, "terminal": terminal, "runs_per_s": len(created) / span}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--wait", type=float, default=2.0, help="seconds per model turn")
    parser.add_argument("--concurrency", default="1,16", help="worker concurrencies to compare")
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
    )
    os.environ.update(common)
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    app, owner = make_world(args.wait)

    from tests.realtime.processes import free_port, process_env, start_daphne
    from tests.reliability.support import Worker

    env = process_env(**common, **({"REDIS_URL": redis_url} if redis_url else {}))
    port = free_port()
    server = start_daphne(port, env)
    print(
        f"{args.runs} runs at once via REST, scripted model waiting {args.wait:.1f} s × 2 "
        f"turns, one worker; daphne on :{port}, {os.cpu_count()} CPUs"
    )
    try:
        floor = None
        for concurrency in [int(c) for c in args.concurrency.split(",")]:
            worker = Worker(
                {**env, "SPARKTIDE_DB_POOL_SIZE": str(concurrency * 2 + 4)},
                args=("--concurrency", str(concurrency)),
            )
            try:
                # A first run warms the worker up (process start, imports, pool).
                wait_terminal([create_run(port, app.slug, owner.raw_token)[0]])
                if floor is None:
                    run_id, sent = create_run(port, app.slug, owner.raw_token)
                    wait_terminal([run_id])
                    floor = figures({run_id: sent})["terminal"][0]
                    print(f"floor: one run alone {floor:.2f} s")
                with ThreadPoolExecutor(min(args.runs, 32)) as pool:
                    made = list(
                        pool.map(
                            lambda _: create_run(port, app.slug, owner.raw_token), range(args.runs)
                        )
                    )
                created = dict(made)
                wait_terminal(list(created))
                f = figures(created)
            finally:
                worker.stop()
            fb, term = f["first_block"], f["terminal"]
            print(
                f"concurrency {concurrency:>3}: first block p50 {percentile(fb, 50):6.2f} s "
                f"p95 {percentile(fb, 95):6.2f} s | terminal p50 {percentile(term, 50):6.2f} s "
                f"p95 {percentile(term, 95):6.2f} s | {f['runs_per_s']:5.2f} runs/s | "
                f"terminal p50 / floor {percentile(term, 50) / floor:5.1f}×"
            )
    finally:
        server.stop()
        from django.db import connections

        connections.close_all()
        if not args.keep_db:
            _recreate_database(admin_url, drop_only=True)


if __name__ == "__main__":
    main()
