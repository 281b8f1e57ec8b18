"""The fault suite: ``make chaos`` runs it at full size (SPARKTIDE_CHAOS=full,
≤ 15 minutes) and prints one line of figures per scenario; ``make test`` runs
the short version of each scenario. Any loss, duplicate, phantom receipt,
stuck run or 5xx fails it."""

import asyncio
import itertools
import logging
import os
import random
import sys
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from datetime import timedelta

import pytest

from foundation.faults import KILL_POINTS
from runs.events import TERMINAL_EVENT_TYPES
from runs.models import Run
from runtime import recovery
from tests.realtime.helpers import public_events, without_kind
from tests.realtime.processes import free_port
from tests.realtime.wsclient import Closed
from tests.reliability.support import (
    Worker,
    all_terminal,
    audit,
    reliability_env,
    resume_stream,
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


# --- 16 threads racing revisions of one block ------------------------------------------

RACERS = 16
REVISION_TRIALS = 1_000 if FULL else 20


def _race_run(first: Run | None, make_run) -> Run:
    """A run the engine ran, reopened for the race's direct publish_candidate calls.

    The first is made with its own agent; the rest start on the same agent (no
    new agent, version or pin per run: a third of the queries) and run an empty
    script — the race needs only the run and its root call."""
    from runtime.engine import execute_run
    from runtime.services import start_run

    if first is None:
        run = make_run(execute=True)
    else:
        agent_key = first.agent_version.agent.key
        run = start_run(user=first.owner, app=first.app, agent_key=agent_key, input="竞态")
        execute_run(run.pk)
    Run.objects.filter(pk=run.pk).update(status=Run.Status.RUNNING, completed_at=None, reason="")
    return Run.objects.select_related("tenant", "app", "owner", "agent_version__agent").get(
        pk=run.pk
    )


@pytest.mark.timeout(900 if FULL else 300)
def test_sixteen_threads_racing_revisions_of_one_block_never_break_its_quota(postgres, make_run):
    """Each trial: a fresh block, then 16 threads (each on its own connection)
    revise it at once. Exactly REVISIONS_PER_BLOCK of them may commit, the rest
    are refused BLOCK_REVISION_QUOTA_EXCEEDED; revision numbers never repeat.
    A run holds REVISIONS_PER_RUN // REVISIONS_PER_BLOCK trials (its own quota).
    Each racer keeps its own connection from trial to trial (closed when it stops)."""
    from django.db import connections

    from publication.models import (
        REVISIONS_PER_BLOCK,
        REVISIONS_PER_RUN,
        BlockRevision,
        PublicationAttempt,
    )
    from publication.pipeline import publish_candidate

    per_run = REVISIONS_PER_RUN // REVISIONS_PER_BLOCK
    start = threading.Barrier(RACERS + 1)
    done = threading.Barrier(RACERS + 1)
    job: dict = {}
    receipts: list = []
    errors: list = []

    def racer(index: int) -> None:
        while True:
            start.wait(timeout=60)
            if job.get("stop"):
                connections.close_all()
                return
            try:
                receipts.append(
                    publish_candidate(
                        run=job["run"],
                        agent_call=job["root"],
                        entry="B",
                        body=f"修订 {job['trial']}-{index}",
                        replaces=job["block"],
                        preview=index % 2 == 0,
                    )
                )
            except Exception as exc:  # counted as a violation below
                errors.append(exc)
            done.wait(timeout=60)

    threads = [threading.Thread(target=racer, args=(i,), daemon=True) for i in range(RACERS)]
    for thread in threads:
        thread.start()
    over_quota = duplicate_numbers = wrong_refusals = committed_total = 0
    run = None
    started = time.monotonic()
    try:
        for trial in range(REVISION_TRIALS):
            if trial % per_run == 0:
                run = _race_run(run, make_run)
                root = run.agent_calls.get(depth=0)
            block = publish_candidate(
                run=run, agent_call=root, entry="B", body=f"原文 {trial}", preview=False
            ).publication_id
            receipts.clear()
            job.update(run=run, root=root, block=block, trial=trial)
            start.wait(timeout=60)
            done.wait(timeout=120)
            committed = [r for r in receipts if r.outcome == PublicationAttempt.Outcome.COMMITTED]
            committed_total += len(committed)
            numbers = list(
                BlockRevision.objects.filter(block_id=block).values_list("revision", flat=True)
            )
            consumed = PublicationAttempt.objects.filter(
                block_id=block, quota_consumed=True
            ).count()
            if len(numbers) > 1 + REVISIONS_PER_BLOCK or consumed > REVISIONS_PER_BLOCK:
                over_quota += 1
            if len(numbers) != len(set(numbers)) or sorted(numbers) != list(
                range(1, len(numbers) + 1)
            ):
                duplicate_numbers += 1
            refused = {r.reason for r in receipts if r.outcome != "COMMITTED"}
            if len(committed) != REVISIONS_PER_BLOCK or refused != {
                "BLOCK_REVISION_QUOTA_EXCEEDED"
            }:
                wrong_refusals += 1
    finally:
        job["stop"] = True
        start.wait(timeout=60)
        for thread in threads:
            thread.join(10)
    elapsed = time.monotonic() - started
    report(
        f"revision-race: {REVISION_TRIALS} trials × {RACERS} threads, "
        f"{committed_total} revisions committed, over quota {over_quota}, "
        f"duplicate revision numbers {duplicate_numbers}, "
        f"other outcomes {wrong_refusals}, errors {len(errors)}, {elapsed:.1f} s"
    )
    assert not errors, errors[:3]
    assert (over_quota, duplicate_numbers, wrong_refusals) == (0, 0, 0)
    assert committed_total == REVISION_TRIALS * REVISIONS_PER_BLOCK


# --- hostile input: schema-generated requests and the hostile manifest corpus ----------

# Short: ~100 generated requests; full: as many as fit in 4 minutes (target 10,000).
HOSTILE_CASES = 10_000 if FULL else 100
HOSTILE_BUDGET = 240.0 if FULL else 60.0


class _Errors(logging.Handler):
    """Every ERROR record or record carrying an exception, from any logger."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.mark.timeout(600 if FULL else 300)
def test_hostile_requests_and_manifests_yield_no_5xx_no_traceback_and_apply_nothing(
    postgres, make_run, alice, tmp_path, settings
):
    """Schemathesis cases (valid and schema-violating) against every operation of
    /v1/schema with the owner's token, half of them on the owner's real app and run;
    then every file of the hostile manifest corpus through apply_manifest. No 5xx,
    no traceback in a response or a log record, and no row changes after a refused
    manifest."""
    import importlib.util
    from io import StringIO

    from tests import factories

    factories.require(
        importlib.util.find_spec("schemathesis") is not None, "needs schemathesis (.[test])"
    )
    import schemathesis
    from django.core.handlers.wsgi import WSGIHandler
    from django.core.management import call_command
    from django.core.management.base import CommandError
    from hypothesis import HealthCheck, Phase, given
    from hypothesis import settings as hypothesis_settings
    from schemathesis import GenerationMode

    from tests.foundations.test_manifest import snapshot
    from tests.foundations.test_manifest_hostile import CORPUS

    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "localhost"]  # the WSGI client's host
    run = make_run({"text": "已有"}, execute=True)
    auth = {"Authorization": f"Bearer {alice.raw_token}"}
    real = {"app": run.app.slug, "run_id": str(run.pk)}
    schema = schemathesis.openapi.from_wsgi("/v1/schema?format=json", WSGIHandler())
    operations = [result.ok() for result in schema.get_all_operations()]
    variants = [
        (operation, mode, pinned)
        for operation in operations
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE)
        for pinned in (False, True)
    ]
    # Short: one round, rounded up (send stops at the count). Full: rounds of 20 per
    # variant until the count or the budget, so generation never runs far past it.
    per_variant = 20 if FULL else -(-HOSTILE_CASES // len(variants))
    errors = _Errors()
    logging.getLogger().addHandler(errors)
    cases = server_errors = tracebacks = 0
    examples: list[str] = []
    started = time.monotonic()

    def send(case) -> None:
        nonlocal cases, server_errors, tracebacks
        if cases >= HOSTILE_CASES or time.monotonic() - started > HOSTILE_BUDGET:
            return
        cases += 1
        response = case.call(headers=auth)
        text = response.content.decode("utf-8", "replace")
        if response.status_code >= 500:
            server_errors += 1
            examples.append(f"{response.status_code} {case.method} {case.formatted_path}")
        if "Traceback" in text:
            tracebacks += 1
            examples.append(f"traceback {case.method} {case.formatted_path}")

    try:
        while cases < HOSTILE_CASES and time.monotonic() - started < HOSTILE_BUDGET:
            before = cases
            for operation, mode, pinned in variants:
                path_parameters = {
                    name: value
                    for name, value in real.items()
                    if pinned and f"{{{name}}}" in operation.path
                }
                strategy = operation.as_strategy(mode, path_parameters=path_parameters or None)
                given(strategy)(
                    hypothesis_settings(
                        max_examples=per_variant,
                        deadline=None,
                        database=None,
                        derandomize=not FULL,
                        phases=[Phase.generate],
                        suppress_health_check=list(HealthCheck),
                    )(lambda case: send(case))  # a fresh function per variant
                )()
            if cases == before or not FULL:
                break
        elapsed = time.monotonic() - started

        refused = applied = 0
        for name, (text, _key_path, _reason) in CORPUS.items():
            path = tmp_path / "hostile.yaml"
            path.write_text(text, encoding="utf-8", errors="surrogatepass")
            rows = snapshot()
            try:
                call_command("apply_manifest", str(path), stdout=StringIO())
            except CommandError as error:
                refused += 1
                if "Traceback" in str(error):
                    tracebacks += 1
                    examples.append(f"traceback in manifest {name}")
            if snapshot() != rows:
                applied += 1
                examples.append(f"applied from manifest {name}")
    finally:
        logging.getLogger().removeHandler(errors)
    logged = [r for r in errors.records if r.exc_info or r.levelno >= logging.ERROR]
    report(
        f"hostile-input: {cases} generated requests over {len(operations)} operations, "
        f"{server_errors} 5xx, {tracebacks} tracebacks in responses, {len(logged)} error "
        f"records logged; {len(CORPUS)} hostile manifests, {refused} refused, "
        f"{applied} applied anything, {elapsed:.1f} s of requests"
    )
    assert (server_errors, tracebacks, applied) == (0, 0, 0), examples[:10]
    assert not logged, [r.getMessage() for r in logged[:5]]
    assert refused == len(CORPUS)
    assert cases >= 100  # the short count; the full run prints how many fit


# --- the event stream: half the wake-ups dropped, clients cut and resuming ---------------

STREAM_EVENTS = 10_000 if FULL else 500
STREAM_CLIENTS = 5 if FULL else 3
# Each client breaks its connection at random points, about this many times over the run.
CUTS_PER_CLIENT = 20 if FULL else 5
SEED = int(os.environ.get("SPARKTIDE_CHAOS_SEED") or random.SystemRandom().randrange(10**6))


def _append_stream(run: Run, count: int) -> None:
    """The worker's append path: claim (run.started), count - 2 agent events through
    runs.events.append_event, then finish_run (run.completed): seq 1..count."""
    from django.db import connections

    from runs.events import append_event
    from runs.lifecycle import claim_run, finish_run

    try:
        claimed = claim_run(run.pk)
        assert claimed is not None, "the run was not QUEUED"
        for i in range(count - 2):
            call = f"call_{i // 2 + 1}"
            if i % 2 == 0:
                data = {"agentCallId": call, "depth": 1, "agent": "chaos", "agentVersion": 1}
                append_event(claimed, "agent.started", data)
            else:
                data = {"agentCallId": call, "depth": 1, "agent": "chaos", "status": "COMPLETED"}
                append_event(claimed, "agent.completed", data)
        finish_run(claimed, Run.Status.COMPLETED, "")
    finally:
        connections.close_all()


async def _follow_with_cuts(run, user, port: int, rng: random.Random, cuts: list) -> list[dict]:
    """Read the stream to its normal close, breaking the connection after a random
    number of events (an abort without a close frame, or a polite 1000) and
    resuming with ``after`` = the last seq received and a fresh ticket, as
    docs/events.md tells a client to."""
    frames: list[dict] = []
    mean_gap = max(2, STREAM_EVENTS // CUTS_PER_CLIENT)
    deadline = time.monotonic() + (600 if FULL else 90)
    while time.monotonic() < deadline:
        client = await resume_stream(run, user, port, frames)
        if client is None:
            await asyncio.sleep(0.2)
            continue
        cut_after = rng.randint(1, 2 * mean_gap)
        received = 0
        try:
            while True:
                frame = await client.recv_json(timeout=60)
                if frame.get("kind") != "event":
                    raise AssertionError(f"unexpected frame {frame}")
                frames.append(without_kind([frame])[0])
                received += 1
                if received >= cut_after and frame["type"] not in TERMINAL_EVENT_TYPES:
                    cuts.append(1)
                    if rng.random() < 0.5:
                        client.abort()  # the network drops: no close frame
                    else:
                        await client.close(1000)
                    break
        except Closed as closed:
            if closed.code == 1000:
                return frames
            raise AssertionError(f"closed {closed.code} {closed.reason}") from None
        finally:
            client.abort()
        await asyncio.sleep(rng.uniform(0, 0.2))  # sometimes fall behind: a replay
    raise AssertionError(f"stream of {run.pk} never closed normally")


@pytest.mark.timeout(900 if FULL else 120)
async def test_events_with_half_the_wakeups_dropped_reach_resuming_clients_once_in_order(
    redis_and_postgres, make_run, alice, settings, monkeypatch
):
    """STREAM_EVENTS events appended through the event log while the wake-up of a
    random half is dropped; STREAM_CLIENTS WebSocket clients on a real daphne break
    their connections at random points and resume after their last seq. Every
    client ends with seq 1..N exactly once each, in order, each frame equal to the
    log's hydrated event."""
    import uuid

    from channels.db import database_sync_to_async

    from delivery.wakeups import wake_run
    from runs import events

    prefix = f"sparktide-chaos-{uuid.uuid4().hex[:12]}"
    settings.CHANNEL_LAYERS = {  # this process's wake-ups reach the server's sockets
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {"hosts": [settings.REDIS_URL], "prefix": prefix},
        }
    }
    rng = random.Random(SEED)
    wakeups = {"sent": 0, "dropped": 0}

    def half_the_wakeups(run_id: str, seq: int) -> None:
        if rng.random() < 0.5:
            wakeups["dropped"] += 1
            return
        wakeups["sent"] += 1
        wake_run(run_id, seq)

    monkeypatch.setattr(events, "_wakers", [half_the_wakeups])

    run = await database_sync_to_async(make_run)({"text": "流"})
    env = reliability_env(SPARKTIDE_CHANNEL_PREFIX=prefix, SPARKTIDE_DB_POOL_SIZE="8")
    port = free_port()
    server = await asyncio.to_thread(start_named_daphne, port, env, "sparktide-chaos-stream")
    cuts: list = []
    started = time.monotonic()
    try:
        followers = [
            asyncio.create_task(
                _follow_with_cuts(run, alice, port, random.Random(SEED + 1 + i), cuts)
            )
            for i in range(STREAM_CLIENTS)
        ]
        await asyncio.sleep(0.2)  # the clients connect before the first event
        await asyncio.to_thread(_append_stream, run, STREAM_EVENTS)
        streams = await asyncio.wait_for(asyncio.gather(*followers), 600 if FULL else 90)
    finally:
        await asyncio.to_thread(server.stop)
    elapsed = time.monotonic() - started

    expected = await public_events(run)
    wanted = list(range(1, STREAM_EVENTS + 1))
    by_seq = {e["seq"]: e for e in expected}
    lost = duplicated = out_of_order = differing = 0
    for frames in streams:
        seqs = [f["seq"] for f in frames]
        lost += len(set(wanted) - set(seqs))
        duplicated += len(seqs) - len(set(seqs))
        out_of_order += sum(1 for a, b in zip(seqs, seqs[1:], strict=False) if b <= a)
        differing += sum(1 for f in frames if by_seq.get(f["seq"]) != f)
    report(
        f"event-stream: {STREAM_EVENTS} events, {STREAM_CLIENTS} clients, "
        f"{wakeups['dropped']} of {wakeups['dropped'] + wakeups['sent']} wake-ups dropped, "
        f"{len(cuts)} disconnects + resumes, lost {lost}, duplicated {duplicated}, "
        f"out of order {out_of_order}, differing from the log {differing}, "
        f"seed {SEED}, {elapsed:.1f} s"
    )
    assert [e["seq"] for e in expected] == wanted
    assert (lost, duplicated, out_of_order, differing) == (0, 0, 0, 0)
    for frames in streams:
        assert [f["seq"] for f in frames] == wanted
    assert len(cuts) >= STREAM_CLIENTS  # every client was cut at least once
    assert wakeups["dropped"] and wakeups["sent"]


# --- a storm of cuts: every session of a server terminated again and again -------------

STORM_CUTS = 10 if FULL else 5
STORM_GAP = 0.3  # seconds between two cuts: the pool is reconnecting when the next lands
STORM_POLLERS = 4
AFTER_STORM_SECONDS = 10.0 if FULL else 5.0


def _poll(url: str, token: str) -> int:
    """The status of one GET, 0 when no HTTP answer came at all."""
    try:
        return _get(url, token)
    except (OSError, urllib.error.URLError):
        return 0


@pytest.mark.timeout(300)
def test_a_storm_of_cuts_under_rest_polls_fails_only_requests_in_flight_and_heals(
    postgres, make_run, alice
):
    """STORM_POLLERS threads poll a run's REST resources on a real daphne while
    every database session of that server (reconnections included) is terminated
    STORM_CUTS times, STORM_GAP apart. A cut may fail at most the requests holding
    a connection at that moment; every request started after the last cut
    succeeds, on the same process (no restart)."""
    run = make_run({"text": "风暴"}, execute=True)
    name = "sparktide-chaos-storm"
    port = free_port()
    server = start_named_daphne(port, reliability_env(SPARKTIDE_DB_POOL_SIZE="4"), name)
    base = f"http://127.0.0.1:{port}/v1/apps/{run.app.slug}/runs/{run.pk}"
    urls = [base, f"{base}/events?after=0"]
    results: list[tuple[float, float, int]] = []  # (started, ended, status)
    stop = threading.Event()

    def poller(index: int) -> None:
        for i in itertools.count(index):
            if stop.is_set():
                return
            started = time.monotonic()
            code = _poll(urls[i % len(urls)], alice.raw_token)
            results.append((started, time.monotonic(), code))

    threads = [
        threading.Thread(target=poller, args=(i,), daemon=True) for i in range(STORM_POLLERS)
    ]
    for thread in threads:
        thread.start()
    cut = 0
    try:
        wait_for(
            lambda: sum(1 for r in results if r[2] == 200) >= 20, timeout=30, what="polls before"
        )
        storm_started = time.monotonic()
        for i in range(STORM_CUTS):
            if i:
                time.sleep(STORM_GAP)
            cut += terminate_backends(name)
        last_cut = time.monotonic()
        time.sleep(AFTER_STORM_SECONDS)
        alive = server.popen.poll() is None
    finally:
        stop.set()
        for thread in threads:
            thread.join(15)
        output = server.output()
        server.stop()

    before = [r for r in results if r[1] < storm_started]
    during = [r for r in results if r[1] >= storm_started and r[0] <= last_cut]
    after = [r for r in results if r[0] > last_cut]
    failed_before = sum(1 for r in before if r[2] != 200)
    failed_during = sum(1 for r in during if r[2] != 200)
    failed_after = sum(1 for r in after if r[2] != 200)
    # Seconds until all good: from the last cut to the end of the last failed request
    # ending after it, else to the first good answer (a request that waited on the
    # pool's reconnection ends late but well).
    ended_after = [r for r in results if r[1] > last_cut]
    bad = [r[1] for r in ended_after if r[2] != 200]
    good = [r[1] for r in ended_after if r[2] == 200]
    healed = (max(bad) if bad else min(good, default=float("inf"))) - last_cut
    slowest = max((r[1] - r[0] for r in ended_after), default=0.0)
    codes = Counter(r[2] for r in during if r[2] != 200)
    report(
        f"storm-of-cuts: {STORM_CUTS} cuts of every session of a server "
        f"{STORM_GAP} s apart, {cut} sessions terminated, {STORM_POLLERS} pollers; "
        f"{failed_during} of {len(during)} requests failed during it {dict(codes)}, "
        f"5xx after the fault {failed_after}/{len(after)}, "
        f"{healed:.1f} s until all good, slowest request ending after it {slowest:.1f} s, "
        f"restarts 0"
    )
    assert alive, output
    assert failed_before == 0
    assert failed_after == 0, output
    assert len(after) >= STORM_POLLERS  # every poller was answered after the storm
    # A cut fails at most the requests holding a connection at that moment.
    assert failed_during <= STORM_CUTS * STORM_POLLERS
    # ... and each as a retryable 503 DATABASE_UNAVAILABLE, never a 500 (or no answer).
    assert set(codes) <= {503}, codes
    assert cut >= STORM_CUTS
