"""Scale-out: a run executed by a worker process reaches a socket served by a daphne process."""

import asyncio
import time
import uuid

import pytest
from channels.db import database_sync_to_async
from channels_redis.core import RedisChannelLayer
from django.conf import settings
from django.db import connection

from delivery.wakeups import run_group
from tests import factories
from tests.realtime.helpers import events_path, public_events, ticket_for
from tests.realtime.processes import (
    PYTHON,
    Process,
    database_url,
    free_port,
    process_env,
    start_daphne,
    start_worker,
)
from tests.realtime.wsclient import Closed, WSClient

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

POLL_SECONDS = 120  # longer than the test may take: every live event must come from Redis


@pytest.fixture
def processes_env():
    factories.require(
        bool(settings.REDIS_URL) and connection.vendor == "postgresql",
        "needs REDIS_URL and PostgreSQL",
    )
    return process_env(
        DATABASE_URL=database_url(connection.settings_dict),
        REDIS_URL=settings.REDIS_URL,
        SPARKTIDE_CHANNEL_PREFIX=f"sparktide-2p-{uuid.uuid4().hex[:12]}",
        SPARKTIDE_WS_POLL_SECONDS=str(POLL_SECONDS),
        SPARKTIDE_DB_POOL_SIZE="4",
    )


@pytest.fixture
def daphne(processes_env, transactional_db):
    port = free_port()
    server = start_daphne(port, processes_env)
    yield port
    server.stop()  # before the test database is flushed


async def test_a_worker_processes_events_reach_a_socket_of_another_process_over_redis(
    make_run, alice, daphne, processes_env
):
    """The client connects before the run starts; every event arrives live via Redis wake-ups."""
    run = await database_sync_to_async(make_run)(
        {"search": "营收"},
        {"sleep": 0.3},
        {"answerPart": "增长 [[cite:{{c1}}]]"},
        {"sleep": 0.3},
        {"text": "结论"},
        execute=False,
    )
    path = events_path(run.app.slug, run.pk, after=0, ticket=await ticket_for(run, alice))
    client = await WSClient.connect("127.0.0.1", daphne, path, origin=f"http://127.0.0.1:{daphne}")
    started = time.monotonic()
    worker = start_worker(run.pk, processes_env)
    frames, code = [], None
    try:
        while True:
            frames.append(await client.recv_json(timeout=30))
    except Closed as closed:
        code = closed.code
    finally:
        client.abort()
        exit_code = await asyncio.to_thread(worker.wait, 60)
        output = worker.output()
        worker.stop()
    elapsed = time.monotonic() - started

    assert exit_code == 0, output
    assert code == 1000
    assert elapsed < POLL_SECONDS
    assert [f["kind"] for f in frames] == ["event"] * len(frames)
    expected = await public_events(run)
    assert [{k: v for k, v in f.items() if k != "kind"} for f in frames] == expected
    assert expected[-1]["type"] == "run.completed"


async def test_a_cross_site_page_gets_4403_and_no_data_from_a_real_server(make_run, alice, daphne):
    """Over a real daphne, another site's page is accepted then closed 4403 with no frame."""
    run = await database_sync_to_async(make_run)({"text": "hi"})
    path = events_path(run.app.slug, run.pk, after=0, ticket=await ticket_for(run, alice))
    client = await WSClient.connect("127.0.0.1", daphne, path, origin="https://evil.example")
    with pytest.raises(Closed) as closed:
        await client.recv(timeout=10)
    client.abort()
    assert closed.value.code == 4403


async def test_a_process_that_ends_right_after_a_commit_still_sends_its_last_wake_up(
    processes_env,
):
    """Wake-ups leave on a background loop; a worker that exits right after its run's last
    commit (a one-off execute_run, a worker stopped after its run) sends them first."""
    layer = RedisChannelLayer(
        hosts=[settings.REDIS_URL], prefix=processes_env["SPARKTIDE_CHANNEL_PREFIX"]
    )
    channel = await layer.new_channel()
    await layer.group_add(run_group("run_exiting"), channel)
    code = (
        "import django; django.setup(); "
        "from delivery.wakeups import wake_run; wake_run('run_exiting', 7)"
    )
    sender = Process([PYTHON, "-c", code], processes_env)
    try:
        assert await asyncio.to_thread(sender.wait, 60) == 0, sender.output()
        message = await asyncio.wait_for(layer.receive(channel), 10)
    finally:
        sender.stop()
        await layer.group_discard(run_group("run_exiting"), channel)
    assert message == {"type": "run.wakeup", "seq": 7}
