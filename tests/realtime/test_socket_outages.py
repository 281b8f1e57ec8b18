"""A database error under a socket's read closes it with a code the clients resume on."""

import asyncio

import pytest
from channels.db import database_sync_to_async

from delivery.protocol import CLOSE_DATABASE_UNAVAILABLE
from tests.realtime.helpers import (
    public_events,
    read_events,
    read_until_close,
    socket,
    ticket_for,
    without_kind,
)
from tests.realtime.test_socket_delivery import execute_in_background, last_seq

pytestmark = pytest.mark.django_db(transaction=True)

RUN = (
    {"search": "营收", "topK": 2},
    {"text": "第一段"},
    {"sleep": 0.6},
    {"text": "第二段"},
    {"sleep": 0.6},
    {"text": "结论"},
)


async def test_a_read_that_hits_a_database_error_closes_4503_and_the_client_resumes(
    make_run, alice, settings
):
    """The socket says DATABASE_UNAVAILABLE and closes 4503 (never stays open and silent);
    a new socket from the last seq received completes the run with nothing lost or repeated."""
    settings.SPARKTIDE_WS_POLL_SECONDS = 0.1
    run = await database_sync_to_async(make_run)(*RUN, execute=False)
    first = socket(run, after=0, ticket=await ticket_for(run, alice))
    assert (await first.connect(timeout=5))[0]
    worker = execute_in_background(run.pk)
    try:
        received = await read_events(first, 2)
        settings.SPARKTIDE_FAULT = "during_event_read"
        frames, code = await read_until_close(first, timeout=10)
        await first.disconnect()
        settings.SPARKTIDE_FAULT = ""
        received += [f for f in frames if f["kind"] == "event"]
        errors = [f for f in frames if f["kind"] == "error"]
        assert code == CLOSE_DATABASE_UNAVAILABLE
        assert [e["code"] for e in errors] == ["DATABASE_UNAVAILABLE"]

        second = socket(run, after=received[-1]["seq"], ticket=await ticket_for(run, alice))
        assert (await second.connect(timeout=5))[0]
        rest, code = await read_until_close(second, timeout=15)
        await second.disconnect()
    finally:
        settings.SPARKTIDE_FAULT = ""
        await asyncio.wait_for(worker, 30)
    assert code == 1000
    seqs = [f["seq"] for f in received + rest]
    assert seqs == list(range(1, await last_seq(run) + 1))
    assert without_kind(received + rest) == await public_events(run)


async def test_a_socket_whose_first_read_fails_is_closed_4503_not_left_open(
    make_run, alice, settings
):
    """Replay of a finished run with the database failing under it: error frame and 4503."""
    run = await database_sync_to_async(make_run)({"text": "一"})
    settings.SPARKTIDE_FAULT = "during_event_read"
    comm = socket(run, after=0, ticket=await ticket_for(run, alice))
    assert (await comm.connect(timeout=5))[0]
    frames, code = await read_until_close(comm, timeout=10)
    await comm.disconnect()
    assert code == CLOSE_DATABASE_UNAVAILABLE
    assert frames == [
        {"kind": "error", "code": "DATABASE_UNAVAILABLE", "detail": frames[0]["detail"]}
    ]
