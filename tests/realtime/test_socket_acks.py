"""What was sent and what the client says it got are recorded apart; slow clients are bounded."""

import asyncio

import pytest
from channels.db import database_sync_to_async

from runs.events import append_event
from runs.models import DeliveryAck, DeliveryLog
from tests.realtime.helpers import read_events, read_until_close, socket, ticket_for

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def open_run(make_run):
    """A run still going, with ten events in its log."""
    run = make_run({"text": "x"}, execute=False)
    for i in range(10):
        append_event(run, "agent.note", {"i": i})
    return run


@database_sync_to_async
def deliveries() -> list[DeliveryLog]:
    return list(DeliveryLog.objects.order_by("opened_at"))


@database_sync_to_async
def acks() -> list[tuple]:
    return list(DeliveryAck.objects.order_by("kind", "seq").values_list("kind", "seq", "client_id"))


async def test_acks_are_recorded_per_connection_apart_from_what_was_sent(open_run, alice):
    """received/rendered acks become DeliveryAck rows; DeliveryLog.last_sent_seq tracks the sends."""
    comm = socket(open_run, after=0, client="tab-1", ticket=await ticket_for(open_run, alice))
    assert (await comm.connect(timeout=5))[0]
    await read_events(comm, 10)
    await comm.send_json_to({"ack": 4, "kind": "received"})
    await comm.send_json_to({"ack": 10, "kind": "received"})
    await comm.send_json_to({"ack": 2, "kind": "rendered"})
    await comm.send_json_to({"ack": 3, "kind": "received"})  # behind what it already acked
    await asyncio.sleep(0.3)
    await comm.disconnect()

    (log,) = await deliveries()
    assert (log.last_sent_seq, log.client_id, log.user_id) == (10, "tab-1", alice.pk)
    assert log.closed_at is not None
    recorded = await acks()
    assert ("rendered", 2, "tab-1") in recorded and ("received", 10, "tab-1") in recorded
    assert ("received", 3, "tab-1") not in recorded
    assert {kind for kind, _, _ in recorded} == {"received", "rendered"}
    assert all(seq <= 10 for _, seq, _ in recorded)
    connections = await database_sync_to_async(
        lambda: set(DeliveryAck.objects.values_list("connection_id", flat=True))
    )()
    assert connections == {log.connection_id}


async def test_what_was_sent_is_recorded_while_the_socket_is_open(open_run, alice):
    """DeliveryLog.last_sent_seq catches up with the sends within seconds, before any close."""
    comm = socket(open_run, after=0, ticket=await ticket_for(open_run, alice))
    assert (await comm.connect(timeout=5))[0]
    await read_events(comm, 10)
    for _ in range(50):
        (log,) = await deliveries()
        if log.last_sent_seq == 10:
            break
        await asyncio.sleep(0.1)
    await comm.disconnect()
    assert log.last_sent_seq == 10
    assert log.closed_at is None  # it was recorded while open


async def test_an_ack_of_an_event_never_sent_is_not_recorded(open_run, alice):
    """Acks beyond what this connection sent are the client's mistake, not evidence."""
    comm = socket(open_run, after=5, ticket=await ticket_for(open_run, alice))
    assert (await comm.connect(timeout=5))[0]
    await read_events(comm, 5)
    await comm.send_json_to({"ack": 11, "kind": "received"})
    await comm.send_json_to({"ack": 10, "kind": "rendered"})
    await asyncio.sleep(0.3)
    await comm.disconnect()
    assert await acks() == [("rendered", 10, "")]


async def test_invalid_client_frames_are_ignored_and_the_stream_goes_on(open_run, alice):
    """Garbage, binary frames and malformed acks neither crash the socket nor get recorded."""
    comm = socket(open_run, after=0, ticket=await ticket_for(open_run, alice))
    assert (await comm.connect(timeout=5))[0]
    await read_events(comm, 10)
    for text in (
        "not json",
        "[1,2]",
        '{"ack": "3"}',
        '{"ack": 3, "kind": "seen"}',
        '{"ack": -1}',
        '{"ack": true}',
        '{"ack": 2.5}',
        "{}",
        "null",
    ):
        await comm.send_to(text_data=text)
    await comm.send_to(bytes_data=b"\x00\x01")
    await database_sync_to_async(append_event)(open_run, "agent.note", {"i": 10})
    (frame,) = await read_events(comm, 1)
    assert frame["seq"] == 11
    await comm.disconnect()
    assert await acks() == []


async def test_a_client_that_stops_acking_is_closed_4408_at_its_window(make_run, alice, settings):
    """Acked 1 with a window of 3: seqs 2–4 are sent, nothing more; after the grace period, 4408."""
    settings.SPARKTIDE_WS_ACK_WINDOW = 3
    settings.SPARKTIDE_WS_SLOW_CLIENT_SECONDS = 0.3
    run = await database_sync_to_async(make_run)({"text": "x"}, execute=False)
    await database_sync_to_async(append_event)(run, "agent.note", {"i": 0})
    comm = socket(run, after=0, ticket=await ticket_for(run, alice))
    assert (await comm.connect(timeout=5))[0]
    first = await comm.receive_json_from(5)
    await comm.send_json_to({"ack": first["seq"], "kind": "received"})
    await asyncio.sleep(0.1)
    for i in range(1, 10):
        await database_sync_to_async(append_event)(run, "agent.note", {"i": i})
    frames, code = await read_until_close(comm, timeout=5)
    await comm.disconnect()
    assert [f["seq"] for f in frames if f["kind"] == "event"] == [2, 3, 4]
    assert frames[-1] == {
        "kind": "error",
        "code": "CLIENT_TOO_SLOW",
        "detail": frames[-1]["detail"],
    }
    assert code == 4408
    (log,) = await deliveries()
    assert log.last_sent_seq == 4  # a resumed client asks from its own cursor


async def test_a_client_that_keeps_acking_gets_everything_through_a_small_window(
    open_run, alice, settings
):
    """Flow control pauses, never drops: acking each event, all of them arrive in order."""
    settings.SPARKTIDE_WS_ACK_WINDOW = 2
    settings.SPARKTIDE_WS_SLOW_CLIENT_SECONDS = 2
    comm = socket(open_run, after=0, ticket=await ticket_for(open_run, alice))
    assert (await comm.connect(timeout=5))[0]
    seqs = []
    while len(seqs) < 10:
        frame = await comm.receive_json_from(5)
        seqs.append(frame["seq"])
        await comm.send_json_to({"ack": frame["seq"], "kind": "received"})
    await comm.disconnect()
    assert seqs == list(range(1, 11))


async def test_a_client_that_never_acks_is_not_flow_controlled(open_run, alice, settings):
    """Acks are optional: a client that sends none gets the whole log regardless of the window."""
    settings.SPARKTIDE_WS_ACK_WINDOW = 2
    settings.SPARKTIDE_WS_SLOW_CLIENT_SECONDS = 0.1
    comm = socket(open_run, after=0, ticket=await ticket_for(open_run, alice))
    assert (await comm.connect(timeout=5))[0]
    assert [f["seq"] for f in await read_events(comm, 10)] == list(range(1, 11))
    assert await comm.receive_nothing(0.3)
    await comm.disconnect()


async def test_a_client_at_its_window_with_nothing_more_to_send_is_not_slow(
    open_run, alice, settings
):
    """Being a window behind only counts when there is more to send."""
    settings.SPARKTIDE_WS_ACK_WINDOW = 9
    settings.SPARKTIDE_WS_SLOW_CLIENT_SECONDS = 0.1
    settings.SPARKTIDE_WS_POLL_SECONDS = 0.05
    comm = socket(open_run, after=0, ticket=await ticket_for(open_run, alice))
    assert (await comm.connect(timeout=5))[0]
    await comm.receive_json_from(5)
    await comm.send_json_to({"ack": 1, "kind": "received"})
    await read_events(comm, 9)
    assert await comm.receive_nothing(0.5)
    await comm.disconnect()


async def test_an_acking_client_may_acknowledge_the_terminal_event_before_the_close(
    open_run, alice
):
    """The terminal event is rendered after it is sent: a client that acks gets a
    moment to say so, so the evidence reaches the last event."""
    comm = socket(open_run, after=0, ticket=await ticket_for(open_run, alice))
    assert (await comm.connect(timeout=5))[0]
    await read_events(comm, 10)
    await comm.send_json_to({"ack": 10, "kind": "rendered"})
    await database_sync_to_async(append_event)(open_run, "run.completed", {"status": "COMPLETED"})
    (terminal,) = await read_events(comm, 1)
    await asyncio.sleep(0.3)  # rendering takes a moment
    await comm.send_json_to({"ack": terminal["seq"], "kind": "rendered"})
    assert (await comm.receive_output(timeout=5))["type"] == "websocket.close"
    await comm.wait()
    assert ("rendered", 11, "") in await acks()


async def test_an_acking_client_replays_a_log_longer_than_its_window_without_waiting_for_a_poll(
    make_run, alice, settings
):
    """Pages read ahead while the window is partly used are shorter than a page: that is not
    the end of the log, the replay goes on at once (no poll, no wake-up needed)."""
    settings.SPARKTIDE_WS_POLL_SECONDS = 60
    settings.SPARKTIDE_WS_PAGE_SIZE = 5
    settings.SPARKTIDE_WS_ACK_WINDOW = 8

    def long_run():
        run = make_run({"text": "x"}, execute=False)
        for i in range(60):
            append_event(run, "agent.note", {"i": i})
        return run

    run = await database_sync_to_async(long_run)()
    comm = socket(run, after=0, ticket=await ticket_for(run, alice))
    assert (await comm.connect(timeout=5))[0]
    seqs = []
    while len(seqs) < 60:
        (frame,) = await read_events(comm, 1, timeout=10)  # far below the 60 s poll
        seqs.append(frame["seq"])
        await comm.send_json_to({"ack": frame["seq"], "kind": "received"})
    await comm.disconnect()
    assert seqs == list(range(1, 61))
