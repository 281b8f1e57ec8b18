"""Benchmark: what re-authorizing every citation preview costs, through a real ASGI server.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/sparktide .venv/bin/python bench/preview.py \
        [--requests 3000] [--concurrency 16] [--warmup 200] [--rounds 12] [--keep-db]

It (re)creates the PostgreSQL database ``sparktide_bench`` on the server of DATABASE_URL,
migrates it, builds a tenant / app / owner / MANAGED knowledge version and a REAL scripted
run (engine, retrieval, citation issuance, publication), starts one daphne process on a
free loopback port and drives it with concurrent async clients (httpx). It prints
requests/s and p50/p99 latency for:

  (a) preview   GET /v1/apps/business/runs/{run}/citations/{cite}/preview — every check of
                the chain plus the chunk re-read and digest comparison;
  (b) floor     GET /v1/apps/business/runs/{run} — an authenticated DRF view reading one run
                (the owner check) on the same stack: what any authenticated read costs here;
  (c) snapshot  GET /bench/snapshot/{cite} — "what peers do": the bearer token is checked,
                then the stored reference and its excerpt are served as they are, with no
                re-authorization and no re-fetch. This view exists only in the bench's server
                process (added to the URL list at start-up), never in the product.

and the ratios preview/floor and preview/snapshot. It stops everything it started (the
daphne process group) and drops the bench database unless --keep-db.

When daphne imports this file as ``bench.preview:application`` nothing runs at import: the
module-level ``__getattr__`` builds the ASGI application on first access.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parent.parent
BENCH_DB = "sparktide_bench" + os.environ.get("BENCH_DB_SUFFIX", "")  # parallel benches
BENCH_SECRET_KEY = "sparktide-bench-secret-key-not-for-production-0123456789"
TOKEN = "st_bench_alice_token_0123456789abcdef"
SNAPSHOT_PREFIX = "bench/snapshot/"

_application = None


# --- inside the server process (daphne) ---------------------------------------------


def __getattr__(name: str):
    if name == "application":
        global _application
        if _application is None:
            _application = _build_asgi_application()
        return _application
    raise AttributeError(name)


def _build_asgi_application():
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "sparktide.settings")
    django.setup()

    from django.urls import path
    from rest_framework.response import Response
    from rest_framework.views import APIView

    import sparktide.asgi
    import sparktide.urls
    from citations.models import CitationReference

    class SnapshotView(APIView):
        """Bench only: serve the stored reference and excerpt, token checked, nothing else."""

        def get(self, request, citation_id):
            reference = (
                CitationReference.objects.select_related("version__knowledge", "document", "chunk")
                .filter(pk=citation_id)
                .first()
            )
            if reference is None:
                return Response(status=404)
            body = reference.public()
            body["content"] = reference.chunk.text if reference.chunk_id else ""
            return Response(body)

    sparktide.urls.urlpatterns.insert(
        0, path(SNAPSHOT_PREFIX + "<str:citation_id>", SnapshotView.as_view())
    )
    return sparktide.asgi.application


# --- the driver -----------------------------------------------------------------------


def bench_database_url(url: str) -> tuple[str, str]:
    """(URL of the bench database, URL of the maintenance database) on the same server."""
    parts = urlsplit(url)
    if parts.scheme not in {"postgres", "postgresql", "pgsql"}:
        sys.exit("bench/preview.py needs DATABASE_URL pointing at PostgreSQL.")
    bench = urlunsplit(parts._replace(path=f"/{BENCH_DB}"))
    maintenance = urlunsplit(parts._replace(path="/postgres"))
    return bench, maintenance


def recreate_database(maintenance_url: str, *, drop_only: bool = False) -> None:
    import psycopg

    with psycopg.connect(maintenance_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{BENCH_DB}" WITH (FORCE)')
        if not drop_only:
            conn.execute(f'CREATE DATABASE "{BENCH_DB}"')


def build_fixture() -> dict:
    """Tenant, owner with a token, app, MANAGED knowledge and one real scripted run."""
    from django.core.management import call_command
    from django.db import connections

    call_command("migrate", verbosity=0)

    from citations.models import CitationReference
    from runtime.engine import execute_run
    from runtime.services import start_run
    from tests import factories

    tenant = factories.make_tenant("acme", "Acme 资产管理")
    alice = factories.make_user(tenant, "alice", token=TOKEN)
    app = factories.make_app(tenant, "business", members=[alice])
    version = factories.make_knowledge(tenant, "fund-reports", version="2026-10")
    factories.add_document(
        version,
        [
            "北辰医药2026年三季度营收增长12%，主要来自创新药销售。\n\n公司研发投入同比增加。",
            "第二页：毛利率保持稳定，现金流充裕。管理层预计四季度延续增长。",
        ],
        key="report-a",
        title="北辰医药 2026 年三季度报告",
        source_version="v3",
    )
    factories.publish(version)
    factories.lease(app, version)
    factories.make_agent(
        tenant,
        "researcher",
        model=factories.scripted(
            {"search": "营收增长", "topK": 2}, {"answerPart": "营收增长 12% [[cite:{{c1}}]]"}
        ),
        knowledge=[version],
        pin_to=[app],
    )
    run = start_run(user=alice, app=app, agent_key="researcher", input="北辰医药营收如何？")
    execute_run(run.pk)
    run.refresh_from_db()
    verified = run.events.get(type="citation.verified").data["references"]
    citation = next(r["id"] for r in verified if r["status"] == "VERIFIED")
    assert CitationReference.objects.get(pk=citation).digest
    connections.close_all()
    return {"run": run.pk, "status": run.status, "citation": citation}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_server(env: dict, port: int, log) -> subprocess.Popen:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "daphne",
            "-b",
            "127.0.0.1",
            "-p",
            str(port),
            "-v",
            "0",
            "bench.preview:application",
        ],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # its own process group: stopped as a whole
    )


def stop_server(process: subprocess.Popen) -> None:
    if process.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=10)


async def wait_ready(base: str, url: str, process: subprocess.Popen, timeout: float = 60) -> None:
    import httpx

    deadline = time.monotonic() + timeout
    async with httpx.AsyncClient(base_url=base, headers=_auth()) as client:
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise RuntimeError(f"daphne exited with {process.returncode}")
            with contextlib.suppress(httpx.TransportError):
                if (await client.get(url)).status_code == 200:
                    return
            await asyncio.sleep(0.2)
    raise RuntimeError("daphne did not become ready")


def _auth() -> dict:
    return {"Authorization": f"Bearer {TOKEN}"}


async def drive(
    base: str, urls: dict[str, str], *, requests: int, concurrency: int, warmup: int, rounds: int
) -> dict:
    """``requests`` GETs of each URL by ``concurrency`` clients; latencies in ms.

    The endpoints take turns in ``rounds`` rounds (a, b, c, b, c, a, c, a, b, …) so
    that background load on the machine drifts over all of them alike instead of
    biasing whichever ran last; each endpoint's requests/s is kept per round, so the
    report gives the spread of the per-round ratios, not only the overall one.
    """
    import httpx

    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(
        base_url=base, headers=_auth(), limits=limits, timeout=30
    ) as client:

        async def worker(url: str, count: int, latencies: list, failures: list) -> None:
            for _ in range(count):
                started = time.perf_counter()
                response = await client.get(url)
                latencies.append((time.perf_counter() - started) * 1000)
                if response.status_code != 200:
                    failures.append(response.status_code)

        def split(total: int) -> list[int]:
            return [total // concurrency + (i < total % concurrency) for i in range(concurrency)]

        async def burst(url: str, total: int, latencies: list, failures: list) -> float:
            started = time.perf_counter()
            await asyncio.gather(*(worker(url, n, latencies, failures) for n in split(total)))
            return time.perf_counter() - started

        for url in urls.values():
            await burst(url, warmup, [], [])
        samples = {
            name: {"latencies": [], "failures": [], "elapsed": 0.0, "rounds": []} for name in urls
        }
        per_round = [requests // rounds + (i < requests % rounds) for i in range(rounds)]
        names = list(urls)
        for turn, count in enumerate(per_round):
            # Each round starts with the next endpoint: none always runs first or last.
            for name in names[turn % len(names) :] + names[: turn % len(names)]:
                url, sample = urls[name], samples[name]
                elapsed = await burst(url, count, sample["latencies"], sample["failures"])
                sample["elapsed"] += elapsed
                sample["rounds"].append(count / elapsed)  # this round's requests/s
    results = {}
    for name, sample in samples.items():
        latencies = sorted(sample["latencies"])
        results[name] = {
            "rps": len(latencies) / sample["elapsed"],
            "p50": statistics.median(latencies),
            "p99": latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))],
            "failures": len(sample["failures"]),
            "rounds": sample["rounds"],
        }
    return results


def round_ratios(results: dict, of: str, to: str) -> list[float]:
    """Throughput ratio ``of``/``to`` in each round: the endpoints ran back to back in
    it, so each ratio saw about the same background load."""
    return [a / b for a, b in zip(results[of]["rounds"], results[to]["rounds"], strict=True)]


def spread(ratios: list[float]) -> str:
    """Median and range of per-round ratios, and how many rounds reached each goal."""
    quartiles = statistics.quantiles(ratios, n=4) if len(ratios) > 1 else ratios * 3
    return (
        f"median {statistics.median(ratios):.2f}x, quartiles {quartiles[0]:.2f}–"
        f"{quartiles[2]:.2f}x, min {min(ratios):.2f}x, max {max(ratios):.2f}x "
        f"over {len(ratios)} rounds"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=3000)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--warmup", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=12, help="turns the endpoints take")
    parser.add_argument("--keep-db", action="store_true")
    args = parser.parse_args()
    if not 1 <= args.concurrency <= 256 or not 1 <= args.requests <= 100_000:
        sys.exit("--concurrency must be 1..256 and --requests 1..100000")
    if not 1 <= args.rounds <= args.requests:
        sys.exit("--rounds must be 1..requests")

    database_url = os.environ.get("DATABASE_URL", "")
    bench_url, maintenance_url = bench_database_url(database_url)
    recreate_database(maintenance_url)

    env = {
        **os.environ,
        "DATABASE_URL": bench_url,
        "SECRET_KEY": BENCH_SECRET_KEY,
        "DEBUG": "0",
        "SECURE_SSL_REDIRECT": "0",  # the bench speaks plain HTTP on 127.0.0.1
        "SECURE_HSTS_SECONDS": "0",
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        "DJANGO_SETTINGS_MODULE": "sparktide.settings",
        "LOG_LEVEL": "WARNING",
        "PYTHONPATH": str(ROOT),
    }
    env.pop("REDIS_URL", None)
    # LOG_LEVEL: the driver's own httpx request logs would cost the clients time.
    os.environ.update({k: env[k] for k in ("DATABASE_URL", "SECRET_KEY", "DEBUG", "LOG_LEVEL")})
    os.environ["DJANGO_SETTINGS_MODULE"] = "sparktide.settings"
    # Run as a script, sys.path[0] is bench/: put the repository first instead, so
    # nothing in bench/ can shadow a project package.
    sys.path[0] = str(ROOT)
    import django

    django.setup()
    process = None
    try:
        fixture = build_fixture()
        port = free_port()
        base = f"http://127.0.0.1:{port}"
        urls = {
            "preview": f"/v1/apps/business/runs/{fixture['run']}/citations/"
            f"{fixture['citation']}/preview",
            "floor": f"/v1/apps/business/runs/{fixture['run']}",
            "snapshot": f"/{SNAPSHOT_PREFIX}{fixture['citation']}",
        }
        with tempfile.NamedTemporaryFile("w+", prefix="bench-daphne-", suffix=".log") as log:
            process = start_server(env, port, log)
            try:
                asyncio.run(wait_ready(base, urls["preview"], process))
                results = asyncio.run(
                    drive(
                        base,
                        urls,
                        requests=args.requests,
                        concurrency=args.concurrency,
                        warmup=args.warmup,
                        rounds=args.rounds,
                    )
                )
            except Exception:
                log.seek(0)
                sys.stderr.write(log.read()[-4000:])
                raise
            finally:
                stop_server(process)
        report(fixture, results, args, os.cpu_count())
    finally:
        if process is not None:
            stop_server(process)
        from django.db import connections

        connections.close_all()
        if not args.keep_db:
            recreate_database(maintenance_url, drop_only=True)


def report(fixture: dict, results: dict, args, cpus: int | None) -> None:
    print(
        f"run {fixture['run']} ({fixture['status']}), citation {fixture['citation']}; "
        f"1 daphne process on loopback, {args.concurrency} concurrent clients, "
        f"{args.requests} requests each in {args.rounds} interleaved rounds after "
        f"{args.warmup} warm-up; {cpus} CPUs"
    )
    print(f"{'endpoint':<10} {'req/s':>9} {'p50 ms':>9} {'p99 ms':>9} {'non-200':>8}")
    for name, r in results.items():
        print(f"{name:<10} {r['rps']:>9.1f} {r['p50']:>9.2f} {r['p99']:>9.2f} {r['failures']:>8}")
    preview, floor, snapshot = results["preview"], results["floor"], results["snapshot"]
    print(
        f"preview/floor:    throughput {preview['rps'] / floor['rps']:.2f}x, "
        f"p50 latency {preview['p50'] / floor['p50']:.2f}x"
    )
    print(
        f"preview/snapshot: throughput {preview['rps'] / snapshot['rps']:.2f}x, "
        f"p50 latency {preview['p50'] / snapshot['p50']:.2f}x"
    )
    # The spread across rounds says whether a difference of a few hundredths is noise.
    for of, to, goal in (("preview", "floor", 0.85), ("preview", "snapshot", 0.8)):
        ratios = round_ratios(results, of, to)
        met = sum(r >= goal for r in ratios)
        print(f"{of}/{to} per round: {spread(ratios)}; ≥ {goal}x in {met} of them")


if __name__ == "__main__":
    main()
