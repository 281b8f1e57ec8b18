"""The socket that reads a run's log for a wake-up writes what it read to the run's other
sockets waiting for that read, in one turn (RunTail.write_to_waiting): each still
gets exactly the events after its own cursor, in order, once."""

import asyncio

import pytest
from channels.db import database_sync_to_async
from channels.layers import get_channel_layer

from delivery import fanout
from delivery.sender import RunSender
from delivery.wakeups import run_group
from runs.events import append_event
from tests.realtime.helpers import read_until_close, socket, ticket_for
from tests.realtime.test_socket_wire import RecordingSocket, unframe

pytestmark = pytest.mark.django_db(transaction=True)


def seqs(fast: RecordingSocket) -> list[int]:
    return [unframe(raw)["seq"] for raw in fast.written]


async def open_sockets(run, alice, monkeypatch, fasts, *, after=0):
    """One socket per fake daphne socket in ``fasts``, in that order: each socket is open
    and has taken its fake (after its accept and a database call) before the next opens,
    so that the i-th socket is the i-th fake's whatever the scheduling."""
    handed = iter(fasts)
    taken = []

    def hand(send):
        taken.append(next(handed))
        return taken[-1]

    monkeypatch.setattr("delivery.consumers.direct_socket", hand)
    comms = []
    for _ in fasts:
        comm = socket(run, after=after, ticket=await ticket_for(run, alice))
        assert (await comm.connect(timeout=5))[0]
        comms.append(comm)
        for _ in range(500):
            if len(taken) == len(comms):
                break
            await asyncio.sleep(0.01)
        assert len(taken) == len(comms)
    return comms


async def test_one_read_is_written_to_every_socket_waiting_for_it(
    make_run, alice, monkeypatch, settings
):
    """Six sockets woken by one wake-up: one read of the log, five of them written by the
    socket that read it, and each has seq 1…3 exactly once, in order."""
    reads, shared, calls = [], [], []
    real_read, real_shared = fanout.read_frames, RunSender.take_shared

    def counting_read(run, **kwargs):
        frames = real_read(run, **kwargs)
        calls.append(kwargs["after"])
        if frames:
            reads.append([seq for seq, _, _ in frames])
        return frames

    def counting_shared(self, frames, wires, *, read_started):
        wrote = real_shared(self, frames, wires, read_started=read_started)
        shared.append(wrote)
        return wrote

    settings.SPARKTIDE_WS_POLL_SECONDS = 60  # only the wake-up reads
    monkeypatch.setattr(fanout, "read_frames", counting_read)
    monkeypatch.setattr(RunSender, "take_shared", counting_shared)
    monkeypatch.setattr("runs.events.notify_run", lambda run_id, seq: None)
    run = await database_sync_to_async(make_run)({"text": "x"}, execute=False)
    fasts = [RecordingSocket() for _ in range(6)]
    comms = await open_sockets(run, alice, monkeypatch, fasts)
    while len(calls) < len(fasts):  # each socket's first read, of nothing yet
        await asyncio.sleep(0.01)
    for i in range(3):
        event = await database_sync_to_async(append_event)(run, "agent.note", {"i": i})
    await get_channel_layer().group_send(
        run_group(run.pk), {"type": "run.wakeup", "seq": event.seq}
    )
    for _ in range(200):
        if all(len(fast.written) == 3 for fast in fasts):
            break
        await asyncio.sleep(0.01)
    assert [seqs(fast) for fast in fasts] == [[1, 2, 3]] * 6
    assert reads == [[1, 2, 3]]
    assert shared == [True] * 5
    for comm in comms:
        await comm.disconnect()


async def test_a_socket_the_fast_path_refuses_is_sent_the_shared_read_once_by_itself(
    make_run, alice, monkeypatch
):
    """A waiting socket whose daphne socket would not take the bytes now is left to its own
    sender: it gets every event exactly once through the plain send, the others on the fast
    path, and the run's end is sent and recorded by each socket."""
    from runs.lifecycle import finish_run
    from runs.models import DeliveryLog, Run

    monkeypatch.setattr("runs.events.notify_run", lambda run_id, seq: None)
    run = await database_sync_to_async(make_run)({"text": "x"}, execute=False)
    fasts = [RecordingSocket(), RecordingSocket(open_=False), RecordingSocket()]
    comms = await open_sockets(run, alice, monkeypatch, fasts)
    for i in range(2):
        await database_sync_to_async(append_event)(run, "agent.note", {"i": i})
    await database_sync_to_async(finish_run)(run, Run.Status.COMPLETED, "")
    end = await database_sync_to_async(lambda: run.events.order_by("-seq").first().seq)()
    await get_channel_layer().group_send(run_group(run.pk), {"type": "run.wakeup", "seq": end})
    results = [await read_until_close(comm) for comm in comms]
    for comm in comms:
        await comm.disconnect()
    assert [code for _, code in results] == [1000, 1000, 1000]
    everything = list(range(1, end + 1))
    assert seqs(fasts[0]) == everything and seqs(fasts[2]) == everything
    assert results[0][0] == [] and results[2][0] == []
    assert [frame["seq"] for frame in results[1][0]] == everything
    sent = await database_sync_to_async(
        lambda: sorted(DeliveryLog.objects.filter(run=run).values_list("last_sent_seq", flat=True))
    )()
    assert sent == [end] * 3
