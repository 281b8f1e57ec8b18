"""Profile of the hot paths: every SQL statement of one call with its time, then a cProfile.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/sparktide .venv/bin/python bench/hotpaths.py \
        [--path publication|preview|append|all] [--calls 100] [--keep-db]

It (re)creates ``sparktide_bench_profile`` (suffix ``BENCH_DB_SUFFIX``), builds the same
fixture as bench/publication.py (a real scripted run holding 20 citations) and prints, for

  publication   publish_candidate at 0, 3 and 20 citations, with and without the preview;
  preview       the preview view through Django's test client (bearer token, DRF, every check);
  append        append_event outside any transaction (its own lock) and under a held lock;
  rest          a client's REST part of one run: POST run, then POST its event ticket;

and the wake-up that follows each committed append (``notify_run``, on the channel layer
of the environment: set REDIS_URL for Redis), the statement log of one warm call (milliseconds per statement, transaction control
included) and the functions with the most own time over ``--calls`` calls. This is the
"where does the time go" record of docs/performance.md; timings are never asserted.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import io
import os
import pstats
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[0] = str(ROOT)

from bench import publication as pub  # noqa: E402

pub.BENCH_DB = "sparktide_bench_profile" + os.environ.get("BENCH_DB_SUFFIX", "")
TOKEN = "st_bench_profile_token_0123456789abcdef"


@contextlib.contextmanager
def statement_log():
    """Every statement Django sends on the default connection, with its wall time."""
    from django.db import connection

    log: list[tuple[float, str]] = []

    def timed(execute, sql, params, many, context):
        started = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            log.append(((time.perf_counter() - started) * 1000, sql))

    with connection.execute_wrapper(timed):
        yield log


def print_log(title: str, log: list[tuple[float, str]], total_ms: float) -> None:
    sql_ms = sum(ms for ms, _ in log)
    print(f"\n== {title}: {len(log)} statements, {sql_ms:.2f} ms in SQL of {total_ms:.2f} ms")
    for ms, sql in log:
        text = " ".join(sql.split())
        print(f"  {ms:7.2f} ms  {text[:150]}")


def print_profile(title: str, profile: cProfile.Profile, calls: int) -> None:
    out = io.StringIO()
    stats = pstats.Stats(profile, stream=out)
    stats.sort_stats("tottime").print_stats(12)
    if os.environ.get("BENCH_PROFILE_DIR"):  # keep the raw profile for pstats
        name = "".join(c if c.isalnum() else "_" for c in title)
        stats.dump_stats(os.path.join(os.environ["BENCH_PROFILE_DIR"], f"{name}.prof"))
    print(f"\n-- {title}: top own time over {calls} calls")
    lines = out.getvalue().splitlines()
    start = next(i for i, line in enumerate(lines) if "ncalls" in line)
    for line in lines[start : start + 13]:
        print("  " + line[:160])


def measure(title: str, call, calls: int) -> None:
    for _ in range(5):
        call()
    with statement_log() as log:
        started = time.perf_counter()
        call()
        total = (time.perf_counter() - started) * 1000
    print_log(title, log, total)
    profile = cProfile.Profile()
    started = time.perf_counter()
    profile.enable()
    for _ in range(calls):
        call()
    profile.disable()
    per_call = (time.perf_counter() - started) * 1000 / calls
    print(f"  {per_call:.2f} ms per call under the profiler")
    print_profile(title, profile, calls)


def profile_publication(run, call, cites, calls: int) -> None:
    from publication.pipeline import publish_candidate

    counter = iter(range(10**9))
    for n in pub.CITATION_COUNTS:
        for preview in (True, False):

            def once(n=n, preview=preview):
                receipt = publish_candidate(
                    run=run,
                    agent_call=call,
                    entry="B",
                    body=pub._body(next(counter), cites, n),
                    preview=preview,
                )
                assert receipt.outcome == "COMMITTED", receipt

            label = "with preview" if preview else "no preview"
            measure(f"publish_candidate, {n} citations, {label}", once, calls)


def profile_preview(run, calls: int) -> None:
    from django.test import Client

    from tenancy.models import ApiToken

    ApiToken.issue(run.owner, raw=TOKEN)
    cite = run.citations.order_by("ordinal").first()
    url = f"/v1/apps/{run.app.slug}/runs/{run.pk}/citations/{cite.pk}/preview"
    floor_url = f"/v1/apps/{run.app.slug}/runs/{run.pk}"
    client = Client(headers={"Authorization": f"Bearer {TOKEN}"})

    def get(path):
        def once():
            response = client.get(path)
            assert response.status_code == 200, (response.status_code, response.content[:300])

        return once

    measure("preview (MANAGED), test client", get(url), calls)
    measure("floor: GET run, test client", get(floor_url), calls)


def profile_append(run, calls: int) -> None:
    from django.db import transaction

    from runs.events import append_event
    from runs.models import Run

    measure("append_event, own lock", lambda: append_event(run, "bench.tick", {"n": 1}), calls)

    def under_lock():
        with transaction.atomic():
            run.last_seq = (
                Run.objects.select_for_update().values_list("last_seq", flat=True).get(pk=run.pk)
            )
            append_event(run, "bench.tick", {"n": 1}, locked=True)

    measure("append_event, under the caller's lock (lock included)", under_lock, calls)

    from django.conf import settings

    from runs.events import notify_run

    layer = settings.CHANNEL_LAYERS["default"]["BACKEND"].rsplit(".", 1)[-1]
    measure(
        f"notify_run alone (the wake-up after commit, {layer})",
        lambda: notify_run(run.pk, 1),
        calls,
    )


def profile_rest(run, calls: int) -> None:
    """What daphne's REST side spends on each run of bench/load.py, without the worker."""
    import json

    from django.test import Client

    from tenancy.models import ApiToken

    ApiToken.issue(run.owner, raw=TOKEN)
    client = Client(headers={"Authorization": f"Bearer {TOKEN}"})
    runs_url = f"/v1/apps/{run.app.slug}/runs"
    body = json.dumps({"agent": "researcher", "input": "营收？"})

    def create():
        response = client.post(runs_url, body, content_type="application/json", secure=True)
        assert response.status_code == 201, (response.status_code, response.content[:300])
        return response.json()["id"]

    def ticket(run_id):
        response = client.post(f"{runs_url}/{run_id}/events/ticket", secure=True)
        assert response.status_code == 201, (response.status_code, response.content[:300])

    measure("POST run, test client", create, calls)
    run_id = create()
    measure("POST events/ticket, test client", lambda: ticket(run_id), calls)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--path", choices=["publication", "preview", "append", "rest", "all"], default="all"
    )
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--keep-db", action="store_true")
    args = parser.parse_args()
    os.environ.setdefault("ALLOWED_HOSTS", "testserver")
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    admin_url, bench_url = pub._urls()
    pub._recreate(admin_url)
    try:
        pub._setup_django(bench_url)
        run, call, cites = pub._build_run()
        if args.path in ("publication", "all"):
            profile_publication(run, call, cites, args.calls)
        if args.path in ("preview", "all"):
            profile_preview(run, args.calls)
        if args.path in ("append", "all"):
            profile_append(run, args.calls)
        if args.path in ("rest", "all"):
            profile_rest(run, args.calls)
        from django.db import connections

        connections.close_all()
    finally:
        if not args.keep_db:
            pub._drop(admin_url)


if __name__ == "__main__":
    main()
