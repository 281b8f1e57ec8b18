"""Replay then live, in seq order, at most once, without gaps — whatever the wake-ups do."""

import asyncio

import pytest
from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from django.db import connection
from django.test.utils import CaptureQueriesContext

from delivery.wakeups import STREAM_GROUP, run_group
from runs.events import append_event
from runs.models import Run
from tests.realtime.helpers import (
    open_and_read,
    public_events,
    read_events,
    read_until_close,
    socket,
    ticket_for,
    without_kind,
)

pytestmark = pytest.mark.django_db(transaction=True)

SLOW_RUN = (
    {"search": "营收", "topK": 2},
    {"text": "第一段"},
    {"sleep": 1.0},
    {"answerPart": "营收增长 12% [[cite:{{c1}}]]"},
    {"sleep": 1.0},
    {"text": "结论"},
)


def execute_in_background(run_id: str) -> asyncio.Task:
    from runtime.engine import execute_run

    return asyncio.create_task(database_sync_to_async(execute_run, thread_sensitive=False)(run_id))


@database_sync_to_async
def status_of(run) -> str:
    return Run.objects.values_list("status", flat=True).get(pk=run.pk)


@database_sync_to_async
def last_seq(run) -> int:
    return Run.objects.values_list("last_seq", flat=True).get(pk=run.pk)


async def wait_for_seq_beyond(run, seq: int, timeout: float = 10.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while await last_seq(run) <= seq:
        assert asyncio.get_running_loop().time() < deadline, "the run made no progress"
        await asyncio.sleep(0.05)


async def test_a_finished_run_is_replayed_in_full_then_closed_normally(make_run, alice):
    """Connecting after a run ended replays every event from the log, hydrated, then closes 1000."""
    run = await database_sync_to_async(make_run)(
        {"search": "营收"}, {"answerPart": "增长 [[cite:{{c1}}]]"}
    )
    comm = socket(run, after=0, ticket=await ticket_for(run, alice))
    frames, code = await open_and_read(comm)
    assert code == 1000
    assert all(frame["kind"] == "event" for frame in frames)
    assert without_kind(frames) == await public_events(run)
    assert frames[-1]["type"] == "run.completed"


async def test_replay_then_live_survives_a_reconnect_in_the_middle_of_a_run(make_run, alice):
    """Events before and after a reconnect form 1..N exactly once, in order, equal to the log."""
    run = await database_sync_to_async(make_run)(*SLOW_RUN, execute=False)
    first = socket(run, after=0, ticket=await ticket_for(run, alice))
    assert (await first.connect(timeout=5))[0]
    worker = execute_in_background(run.pk)
    try:
        received = []
        while not any(f["type"] == "answer.published" for f in received):
            received += await read_events(first, 1)
        await first.disconnect()
        assert await status_of(run) == Run.Status.RUNNING  # the run is asleep mid-way
        cursor = received[-1]["seq"]
        await wait_for_seq_beyond(run, cursor)  # so the second socket has something to replay

        second = socket(run, after=cursor, ticket=await ticket_for(run, alice))
        rest, code = await open_and_read(second)
    finally:
        await asyncio.wait_for(worker, 30)

    assert code == 1000
    seqs = [f["seq"] for f in received + rest]
    assert seqs == list(range(1, await last_seq(run) + 1))
    assert without_kind(received + rest) == await public_events(run)
    assert rest[-1]["type"] == "run.completed"


async def test_lost_wake_ups_cost_latency_never_an_event(make_run, alice, monkeypatch, settings):
    """With every wake-up dropped, polling still delivers the whole run in order."""
    dropped = []
    monkeypatch.setattr("runs.events.notify_run", lambda run_id, seq: dropped.append(seq))
    settings.SPARKTIDE_WS_POLL_SECONDS = 0.1
    run = await database_sync_to_async(make_run)(
        {"search": "营收"},
        {"sleep": 0.3},
        {"text": "一"},
        {"sleep": 0.3},
        {"text": "二"},
        execute=False,
    )
    comm = socket(run, after=0, ticket=await ticket_for(run, alice))
    assert (await comm.connect(timeout=5))[0]
    worker = execute_in_background(run.pk)
    try:
        frames, code = await read_until_close(comm, timeout=10)
    finally:
        await comm.disconnect()
        await asyncio.wait_for(worker, 30)
    assert code == 1000
    assert [f["seq"] for f in frames] == list(range(1, await last_seq(run) + 1))
    assert dropped == [f["seq"] for f in frames]  # every one of them was lost


async def test_overlapping_wake_ups_never_send_an_event_twice(make_run, alice, settings):
    """A storm of extra and duplicate wake-ups while events commit: each seq once, in order."""
    settings.SPARKTIDE_WS_PAGE_SIZE = 3
    run = await database_sync_to_async(make_run)({"text": "x"}, execute=False)
    comm = socket(run, after=0, ticket=await ticket_for(run, alice))
    assert (await comm.connect(timeout=5))[0]
    layer = get_channel_layer()

    def append_many():
        for i in range(40):
            append_event(run, "agent.note", {"i": i})
        from runs.lifecycle import finish_run

        finish_run(run, Run.Status.COMPLETED, "")

    async def storm():
        for seq in range(1, 200):
            await layer.group_send(run_group(run.pk), {"type": "run.wakeup", "seq": seq % 45})

    try:
        await asyncio.gather(database_sync_to_async(append_many, thread_sensitive=False)(), storm())
        frames, code = await read_until_close(comm, timeout=10)
    finally:
        await comm.disconnect()
    assert code == 1000
    assert [f["seq"] for f in frames] == list(range(1, 42))


async def test_a_cursor_at_or_past_the_end_closes_normally_without_frames(make_run, alice):
    """A client that already has the terminal event gets nothing more: close 1000 at once."""
    run = await database_sync_to_async(make_run)({"text": "hi"})
    end = await last_seq(run)
    for after in (end, end + 10):
        frames, code = await open_and_read(
            socket(run, after=after, ticket=await ticket_for(run, alice))
        )
        assert (frames, code) == ([], 1000)


async def test_a_cursor_replays_only_what_comes_after_it(make_run, alice):
    """after=N replays N+1… and nothing at or below N."""
    run = await database_sync_to_async(make_run)({"search": "营收"}, {"text": "hi"})
    frames, code = await open_and_read(socket(run, after=4, ticket=await ticket_for(run, alice)))
    assert code == 1000
    assert [f["seq"] for f in frames] == list(range(5, await last_seq(run) + 1))


async def test_a_revoked_source_is_withheld_on_replay(make_run, alice, knowledge):
    """After the cited document's ACL is revoked, replay shows the block protected, without content."""
    from guardian.shortcuts import remove_perm

    run = await database_sync_to_async(make_run)(
        {"search": "内部投研纪要 营收", "topK": 5},
        {"answerPart": "上调 [[cite:{{c1}}]] [[cite:{{c2}}]]"},
    )

    async def published():
        frames, _ = await open_and_read(socket(run, after=0, ticket=await ticket_for(run, alice)))
        return next(f for f in frames if f["type"] == "answer.published")["data"]

    before = await published()
    assert before["state"] == "visible" and before["content"]["text"].startswith("上调")
    await database_sync_to_async(remove_perm)(
        "knowledge.read_document", alice, knowledge.private_doc
    )
    after = await published()
    assert after["state"] == "protected"
    assert "content" not in after


async def test_a_revoked_knowledge_version_is_withheld_on_replay(make_run, alice, knowledge):
    """After the cited knowledge version is revoked, replay shows the block protected, without content."""
    from knowledge.models import KnowledgeVersion

    run = await database_sync_to_async(make_run)(
        {"search": "营收"}, {"answerPart": "增长 [[cite:{{c1}}]]"}
    )
    await database_sync_to_async(KnowledgeVersion.objects.filter(pk=knowledge.pk).update)(
        status=KnowledgeVersion.Status.REVOKED
    )
    frames, _ = await open_and_read(socket(run, after=0, ticket=await ticket_for(run, alice)))
    block = next(f for f in frames if f["type"] == "answer.published")["data"]
    assert block["state"] == "protected"
    assert "content" not in block


def test_a_replay_page_costs_the_same_queries_for_one_block_or_five(make_run):
    """Reading and hydrating a page does not grow with the number of answer events (no N+1)."""
    from delivery.fanout import read_frames

    small = make_run({"search": "营收"}, {"answerPart": "一 [[cite:{{c1}}]]"}, key="small")
    large = make_run(
        {"search": "营收"},
        *({"answerPart": f"{i} [[cite:{{{{c1}}}}]]"} for i in range(5)),
        key="large",
    )
    counts = []
    for run in (small, large):
        with CaptureQueriesContext(connection) as queries:
            read_frames(run, after=0, limit=500)
        counts.append(len(queries))
    assert counts[0] == counts[1]


async def test_a_failing_channel_layer_costs_wake_ups_not_the_connection(
    make_run, alice, settings, monkeypatch
):
    """Subscribing and receiving wake-ups both fail at first: the socket stays open and delivers."""
    settings.SPARKTIDE_WS_POLL_SECONDS = 0.1
    layer = get_channel_layer()
    failures = {"group_add": 2, "receive": 3}

    def flaky(name):
        real = getattr(layer, name)

        async def call(*args, **kwargs):
            if failures[name] > 0:
                failures[name] -= 1
                raise ConnectionError(f"{name} refused")
            return await real(*args, **kwargs)

        return call

    monkeypatch.setattr(layer, "group_add", flaky("group_add"))
    monkeypatch.setattr(layer, "receive", flaky("receive"))
    monkeypatch.setattr("delivery.consumers.RESUBSCRIBE_SECONDS", 0.05)
    monkeypatch.setattr("delivery.sender.RESUBSCRIBE_SECONDS", 0.05)
    run = await database_sync_to_async(make_run)({"text": "x"}, execute=False)
    comm = socket(run, after=0, ticket=await ticket_for(run, alice))
    assert (await comm.connect(timeout=5))[0]
    for i in range(3):
        await database_sync_to_async(append_event)(run, "agent.note", {"i": i})
        (frame,) = await read_events(comm, 1)
        assert frame["seq"] == i + 1
    # The run's one listener in this process retries its receive on its own clock.
    deadline = asyncio.get_running_loop().time() + 5
    while failures != {"group_add": 0, "receive": 0}:
        assert asyncio.get_running_loop().time() < deadline, failures
        await asyncio.sleep(0.05)
    await database_sync_to_async(append_event)(run, "agent.note", {"i": 3})
    (frame,) = await read_events(comm, 1)
    assert frame["seq"] == 4  # still open, still delivering
    await comm.disconnect()


async def test_a_shared_read_never_serves_a_source_revoked_before_the_wake_up(
    make_run, alice, knowledge, settings, monkeypatch
):
    """Two sockets of one run share reads; a wake-up after a revocation is not served the old body.

    A is woken, reads (and shares) the whole log while the document is readable;
    the ACL is then revoked; B, moved by a later wake-up, must not be served A's
    read however long shared reads are kept.
    """
    from guardian.shortcuts import remove_perm

    from delivery.consumers import RunEventsConsumer
    from runtime.engine import execute_run

    settings.SPARKTIDE_WS_POLL_SECONDS = 60  # only the wake-ups below move the sockets
    monkeypatch.setattr("delivery.shared.SHARED_READ_SECONDS", 60.0)
    monkeypatch.setattr("runs.events.notify_run", lambda run_id, seq: None)
    consumers = []
    connect = RunEventsConsumer.connect

    async def remember(self):
        consumers.append(self)
        await connect(self)

    monkeypatch.setattr(RunEventsConsumer, "connect", remember)
    run = await database_sync_to_async(make_run)(
        {"search": "内部投研纪要 营收", "topK": 5},
        {"answerPart": "上调 [[cite:{{c1}}]] [[cite:{{c2}}]]"},
        execute=False,
    )
    a = socket(run, after=0, ticket=await ticket_for(run, alice))
    b = socket(run, after=0, ticket=await ticket_for(run, alice))
    assert (await a.connect(timeout=5))[0] and (await b.connect(timeout=5))[0]
    await database_sync_to_async(execute_run, thread_sensitive=False)(run.pk)
    last = await last_seq(run)

    def answer(frames):
        return next(f for f in frames if f["type"] == "answer.published")["data"]

    await consumers[0].run_wakeup({"type": "run.wakeup", "seq": last - 1})
    frames_a, _ = await read_until_close(a)
    assert answer(frames_a)["state"] == "visible"
    await database_sync_to_async(remove_perm)(
        "knowledge.read_document", alice, knowledge.private_doc
    )
    await consumers[1].run_wakeup({"type": "run.wakeup", "seq": last})
    frames_b, _ = await read_until_close(b)
    assert [f["seq"] for f in frames_b] == list(range(1, last + 1))
    assert answer(frames_b)["state"] == "protected"
    assert "content" not in answer(frames_b)


async def test_sockets_woken_together_share_one_read_of_the_log(
    make_run, alice, settings, monkeypatch
):
    """Eight sockets woken by one wake-up: the log is read for them a few times, not eight."""
    from delivery import fanout

    settings.SPARKTIDE_WS_POLL_SECONDS = 60
    monkeypatch.setattr("runs.events.notify_run", lambda run_id, seq: None)
    reads = []
    real_read = fanout.read_frames

    def counting_read(run, *, after, limit, **gate):
        reads.append(after)
        return real_read(run, after=after, limit=limit, **gate)

    monkeypatch.setattr(fanout, "read_frames", counting_read)
    run = await database_sync_to_async(make_run)({"text": "x"}, execute=False)
    comms = [socket(run, after=0, ticket=await ticket_for(run, alice)) for _ in range(8)]
    for comm in comms:
        assert (await comm.connect(timeout=5))[0]
    # Each socket's first read (of an empty log) runs after its connect returns: let all eight
    # finish before the event, so the reads counted below are the wake-up's only.
    deadline = asyncio.get_running_loop().time() + 5
    while len(reads) < len(comms):
        assert asyncio.get_running_loop().time() < deadline, reads
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.1)
    reads.clear()
    event = await database_sync_to_async(append_event)(run, "agent.note", {"i": 1})
    await get_channel_layer().group_send(
        run_group(run.pk), {"type": "run.wakeup", "seq": event.seq}
    )
    for comm in comms:
        (frame,) = await read_events(comm, 1)
        assert frame["seq"] == event.seq
    assert 1 <= len(reads) <= 2, reads
    for comm in comms:
        await comm.disconnect()


async def test_the_sockets_of_a_run_in_one_process_hold_one_subscription(
    make_run, alice, monkeypatch
):
    """Eight sockets of one run join the run's group once, all woken by one message, and the
    subscription is given up when the last one closes."""
    layer = get_channel_layer()
    calls = []
    for name in ("group_add", "group_discard"):
        real = getattr(layer, name)

        def counting(group, channel, _name=name, _real=real):
            calls.append((_name, group))
            return _real(group, channel)

        monkeypatch.setattr(layer, name, counting)
    monkeypatch.setattr("runs.events.notify_run", lambda run_id, seq: None)
    run = await database_sync_to_async(make_run)({"text": "x"}, execute=False)
    comms = [socket(run, after=0, ticket=await ticket_for(run, alice)) for _ in range(8)]
    for comm in comms:
        assert (await comm.connect(timeout=5))[0]
    # One subscription to the run's wake-ups and one to the stream wake-ups of all runs.
    joined = [("group_add", run_group(run.pk)), ("group_add", STREAM_GROUP)]
    assert calls == joined
    event = await database_sync_to_async(append_event)(run, "agent.note", {"i": 1})
    await layer.group_send(run_group(run.pk), {"type": "run.wakeup", "seq": event.seq})
    for comm in comms:
        (frame,) = await read_events(comm, 1)
        assert frame["seq"] == event.seq
    for comm in comms[:-1]:
        await comm.disconnect()
    assert calls == joined
    await comms[-1].disconnect()
    left = [("group_discard", run_group(run.pk)), ("group_discard", STREAM_GROUP)]
    assert calls == joined + left


async def test_sockets_ending_together_are_each_recorded_sent_and_closed(
    make_run, alice, monkeypatch
):
    """Eight sockets of a run that ends: every DeliveryLog row has the terminal seq and a close
    time when its socket is gone, written together rather than three statements a socket."""
    from delivery import fanout
    from runs.lifecycle import finish_run
    from runs.models import DeliveryLog

    writes = []
    real = fanout.record_deliveries

    def counting(sent, closed=frozenset()):
        writes.append((dict(sent), set(closed)))
        return real(sent, closed)

    monkeypatch.setattr(fanout, "record_deliveries", counting)
    run = await database_sync_to_async(make_run)({"text": "x"}, execute=False)
    comms = [socket(run, after=0, ticket=await ticket_for(run, alice)) for _ in range(8)]
    for comm in comms:
        assert (await comm.connect(timeout=5))[0]
    await database_sync_to_async(append_event)(run, "agent.note", {"i": 1})
    await database_sync_to_async(finish_run)(run, Run.Status.COMPLETED, "")
    end = await last_seq(run)
    for comm in comms:
        frames, code = await read_until_close(comm)
        assert (frames[-1]["seq"], code) == (end, 1000)
        await comm.disconnect()
    logs = await database_sync_to_async(list)(
        DeliveryLog.objects.filter(run=run).values_list("last_sent_seq", "closed_at")
    )
    assert len(logs) == 8
    assert all(seq == end and closed is not None for seq, closed in logs)
    assert sum(len(closed) for _, closed in writes) == 8  # each close written once
    assert len(writes) < 2 * 8  # batched: not a sent record and a close per socket
