"""Two daphne servers and two task workers on PostgreSQL + Redis: runs streamed
to WebSocket clients on both servers, one worker SIGKILLed mid-run, database
backends of the other worker and of a server terminated. Every run ends in a
definite state, and every client saw exactly the database log — nothing lost,
duplicated or out of order."""

import asyncio
import os
import signal
import time

import pytest
from channels.db import database_sync_to_async

from runs.models import Run
from tests.realtime.helpers import public_events
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
)

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

RUNS = 6
SLOW_RUN = (
    {"search": "营收"},
    {"answerPart": "一 [[cite:{{c1}}]]"},
    {"sleep": 1.5},
    {"answerPart": "二 [[cite:{{c1}}]]"},
    {"sleep": 1.5},
    {"text": "结论"},
)


async def _follow(run, user, port: int) -> list[dict]:
    """Read one run's stream to its normal close; after an abnormal close (the
    server lost its database mid-read) resume after the last seq, as a client does."""
    frames: list[dict] = []
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        client = await resume_stream(run, user, port, frames)
        if client is None:
            await asyncio.sleep(0.5)
            continue
        try:
            while True:
                frame = await client.recv_json(timeout=60)
                if frame.get("kind") == "event":
                    frames.append({k: v for k, v in frame.items() if k != "kind"})
        except Closed as closed:
            if closed.code == 1000:
                return frames
        except (TimeoutError, OSError, asyncio.IncompleteReadError):
            pass
        finally:
            client.abort()
        await asyncio.sleep(0.2)
    raise AssertionError(f"stream of {run.pk} never closed normally")


def _held_by(worker: Worker) -> list[str]:
    return list(
        Run.objects.filter(
            status=Run.Status.RUNNING, worker_id__endswith=f":{worker.popen.pid}"
        ).values_list("pk", flat=True)
    )


async def test_runs_survive_a_killed_worker_and_cut_connections_across_two_servers_and_two_workers(
    redis_and_postgres, make_run, alice
):
    env = reliability_env(SPARKTIDE_WS_POLL_SECONDS="0.5", SPARKTIDE_DB_POOL_SIZE="6")
    ports = [free_port(), free_port()]
    servers = [
        await asyncio.to_thread(start_named_daphne, port, env, f"sparktide-daphne-{i}")
        for i, port in enumerate(ports)
    ]
    workers: list[Worker] = []
    try:
        runs = [await database_sync_to_async(make_run)(*SLOW_RUN) for _ in range(RUNS)]
        # Each run followed by one client on each server, connected before it starts.
        followers = [
            asyncio.create_task(_follow(run, alice, port)) for run in runs for port in ports
        ]
        await asyncio.sleep(0.5)
        workers = [
            Worker(env, name=f"sparktide-worker-{i}", args=("--concurrency", "4")) for i in range(2)
        ]
        victim, survivor = workers

        held = []
        for _ in range(300):
            held = await database_sync_to_async(_held_by)(victim)
            if held:
                break
            await asyncio.sleep(0.05)
        assert held, victim.output()
        os.killpg(victim.popen.pid, signal.SIGKILL)
        await asyncio.sleep(0.5)
        cut = await asyncio.to_thread(terminate_backends, "sparktide-worker-1")
        cut += await asyncio.to_thread(terminate_backends, "sparktide-daphne-0")

        streams = await asyncio.wait_for(asyncio.gather(*followers), 120)
        run_ids = [run.pk for run in runs]
        assert await database_sync_to_async(all_terminal)(run_ids), survivor.output()
        assert survivor.alive(), survivor.output()
    finally:
        for process in [*workers, *servers]:
            await asyncio.to_thread(process.stop)

    figures = await database_sync_to_async(audit)(run_ids)
    assert {k: v for k, v in figures.items() if k != "blocks"} == {
        "stuck": 0,
        "lost": 0,
        "duplicated": 0,
        "phantom": 0,
    }
    for i, run in enumerate(runs):
        expected = await public_events(run)
        assert streams[2 * i] == expected, f"{run.pk} on server 0"
        assert streams[2 * i + 1] == expected, f"{run.pk} on server 1"
    statuses = await database_sync_to_async(
        lambda: dict(Run.objects.filter(pk__in=run_ids).values_list("pk", "reason"))
    )()
    assert {statuses[pk] for pk in held} == {"WORKER_LOST"}
    assert cut >= 1
