"""What the sockets of one process share: one subscription to a run's wake-ups
(RunWakeups), one read of a run's log per wake-up (RunTail), one writer of what
was sent while events flow (SentRecorder) and one group commit of what sockets
that end were sent and that they closed (DeliveryWriter)."""

import asyncio
import contextlib
import logging
import time
import weakref
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol, cast

from channels.db import DatabaseSyncToAsync, database_sync_to_async
from channels.layers import BaseChannelLayer
from redis.exceptions import TimeoutError as RedisTimeoutError

from delivery import fanout
from delivery.fanout import Frame
from delivery.wakeups import STREAM_GROUP, run_group
from delivery.wire import Wire, frame_text
from runs.events import TERMINAL_EVENT_TYPES

logger = logging.getLogger(__name__)

# How often DeliveryLog.last_sent_seq is written while events flow (for all
# sockets of the process in one statement); always when a connection ends.
SENT_RECORD_SECONDS = 1.0
# How long a wake-driven read of a run is kept for this process's other sockets
# (each takes it only if the read began after its wake-up reached the process:
# RunTail). It also bounds how late a socket can be sent a shared read.
SHARED_READ_SECONDS = 0.5
MAX_SHARED_EVENTS = 1000


def db_call[**P, R](func: Callable[P, R]) -> Callable[P, Awaitable[R]]:
    # Not thread-sensitive: every call is self-contained (no transaction spans
    # two calls), so hundreds of connections need not queue behind one thread.
    return cast(Callable[P, Awaitable[R]], database_sync_to_async(func, thread_sensitive=False))


class SharedReader(Protocol):
    """A sender a run's shared read may write to while it waits (delivery/sender.py)."""

    wake: asyncio.Event

    def take_shared(
        self, frames: list[Frame], wires: list[Wire], *, read_started: float
    ) -> bool: ...


class StreamWatcher(Protocol):
    """A sender a shared read of live text hands its run's new text to (delivery/sender.py)."""

    stream_sent: dict[str, int]
    stream_closed: set[str]
    stream_snapshot: bool

    def take_stream(self, found: fanout.StreamRead) -> None: ...

    def stream_wake(self) -> None: ...


class RunTail:
    """The newest events of one run as read by this process, shared by its sockets.

    A wake-up reaches every socket of the run at once; without sharing, each
    would read and hydrate the same new events: one read per run per wake-up
    per process serves them all, each socket still taking exactly the events
    after its own cursor. Entries come only from database reads, each stamped
    with the moment its read *began*, and a socket takes an entry only if that
    read began after the wake-up that moved the socket first reached this
    process: nothing a socket is sent was read before it was woken, so a
    revocation committed before a wake-up is honoured by every socket it reaches — sharing changes how often
    the log is read, never what a socket may be sent. The frame text is
    encoded once per event, not once per socket.
    """

    def __init__(self) -> None:
        # seq → (monotonic start of the read that produced it, (seq, type, frame text))
        self.frames: dict[int, tuple[float, Frame]] = {}
        # seq → when its wake-up first reached this process (any socket of the run)
        self.woken: dict[int, float] = {}
        self.lock = asyncio.Lock()
        self.sockets = 0
        # The senders waiting for ``lock`` (RunSender._read): the sender that reads for
        # the run writes the shared frames to them too (write_to_waiting).
        self.waiting: set[SharedReader] = set()
        # seq → the shared frame's bytes on the wire (delivery/wire.py), framed
        # once for every socket the shared read serves.
        self.wires: dict[int, Wire] = {}
        # The senders of the sockets sharing this tail (started, not yet ended): a shared
        # read of live text (StreamReads) hands them their run's new text.
        self.senders: set[StreamWatcher] = set()

    def wake_time(self, seq: int) -> float:
        """When the wake-up for ``seq`` first reached this process.

        Every socket a wake-up reaches counts from its first arrival, so one
        read that began after it serves them all — one read per run per wake-up
        per process — and still none is sent what was read before the wake-up.
        """
        now = time.monotonic()
        first = self.woken.setdefault(seq, now)
        if len(self.woken) > MAX_SHARED_EVENTS:
            oldest = now - SHARED_READ_SECONDS
            self.woken = {k: at for k, at in self.woken.items() if at >= oldest}
        return first

    def cached(self, *, after: int, limit: int, want: int, since: float) -> list[Frame] | None:
        """Frames after ``after`` read since ``since``, if they reach ``want`` (or fill ``limit``)."""
        frames: list[Frame] = []
        while len(frames) < limit:
            hit = self.frames.get(after + len(frames) + 1)
            if hit is None or hit[0] < since:
                break
            frames.append(hit[1])
        if frames and (len(frames) == limit or after + len(frames) >= want):
            return frames
        return None

    def wire(self, frame: Frame) -> Wire:
        """``frame`` on the wire: framed once if it is this tail's shared frame."""
        held = self.frames.get(frame[0])
        if held is None or held[1] is not frame:
            return frame_text(frame[2])  # a socket's own read: nobody else sends it
        wire = self.wires.get(frame[0])
        if wire is None:
            wire = self.wires[frame[0]] = frame_text(frame[2])
        return wire

    def write_to_waiting(self, frames: list[Frame], *, after: int, read_started: float) -> None:
        """Write a shared read to the run's senders waiting for it, in this one turn.

        Without it each waiting sender took the lock in turn, found the read and sent it
        itself: one loop turn per socket per event, so the last of 500 was sent long after
        the first and shared reads aged out (docs/performance.md, "Delivery"). Each
        waiting sender decides whether it takes them (``take_shared``); the terminal
        event and a stream's close are never written here (each socket sends its own end
        and records it), and a sender given only part of the read is woken for the rest.
        """
        batch: list[Frame] = []
        for frame in frames:
            if (
                frame[0] != after + len(batch) + 1
                or frame[1] in TERMINAL_EVENT_TYPES
                or frame[1] == fanout.STREAM_EVENT  # each socket finishes its own stream
            ):
                break
            batch.append(frame)
        if not batch or not self.waiting:
            return
        wires = [self.wire(frame) for frame in batch]
        for other in list(self.waiting):
            if other.take_shared(batch, wires, read_started=read_started) and len(batch) < len(
                frames
            ):
                other.wake.set()  # the rest of the read is its own to send

    def store(self, frames: list[Frame], *, read_started: float) -> None:
        for frame in frames:
            self.frames[frame[0]] = (read_started, frame)
        oldest = time.monotonic() - SHARED_READ_SECONDS
        stale = [seq for seq, (at, _) in self.frames.items() if at < oldest]
        for seq in stale:
            del self.frames[seq]
        overflow = len(self.frames) - MAX_SHARED_EVENTS
        for seq in sorted(self.frames)[: max(0, overflow)]:
            del self.frames[seq]
        for frame in frames:
            self.wires.pop(frame[0], None)  # framed again from the frame now held
        if len(self.wires) > len(self.frames):
            self.wires = {seq: w for seq, w in self.wires.items() if seq in self.frames}


# Per event loop (one in a daphne process; one per test in the test suite).
_tails: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict["TailKey", RunTail]] = (
    weakref.WeakKeyDictionary()
)
_recorders: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, "SentRecorder"] = (
    weakref.WeakKeyDictionary()
)


# A tail is shared by the sockets of one run that pass the same gate on every
# read (fanout.read_frames): the owner's (a ticket) or a console admin's.
TailKey = tuple[str, bool]


def acquire_tail(key: TailKey, sender: StreamWatcher | None = None) -> RunTail:
    tails = _tails.setdefault(asyncio.get_running_loop(), {})
    tail = tails.setdefault(key, RunTail())
    tail.sockets += 1
    if sender is not None:
        tail.senders.add(sender)
    return tail


def release_tail(key: TailKey, sender: StreamWatcher | None = None) -> None:
    tails = _tails.get(asyncio.get_running_loop(), {})
    tail = tails.get(key)
    if tail is not None:
        tail.senders.discard(sender)  # type: ignore[arg-type]
        tail.sockets -= 1
        if tail.sockets <= 0:
            del tails[key]


class StreamReads:
    """One read of live text per stream wake-up per process, shared by all its sockets.

    Each ``run.streams`` message names the runs whose text moved. A socket used to read
    its run's row itself on each (the gate, then the row: two statements per socket per
    wake-up), so at 100 runs at once daphne's pool of connections was the queue and the
    text came with the close (docs/performance.md, "The text stream"). Here the runs
    named that have sockets in this process are gathered and read in ONE statement
    (``fanout.read_live_streams``: the gate of each run and each gate its sockets were
    opened through, on the same fresh read, and every live row's text after the offset
    all its sockets have); each socket is handed its run's text, or the refusal, and its
    own sender sends it (``take_stream``). Wake-ups that come during a read gather for
    the next, so a process reads as often as the database answers, never once per
    socket. The read begins after the wake-up reached this process, as a socket's own
    read did, so a revocation committed before a wake-up is honoured by every socket it
    reaches. A read that fails leaves each socket to read alone (as before), which
    reports the fault its own way.
    """

    def __init__(self) -> None:
        self.pending: set[str] = set()
        self.task: asyncio.Task[None] | None = None
        self.reads = 0  # statements run: counted for the tests and the bench

    def wake(self, run_ids: list[str]) -> None:
        tails = _tails.get(asyncio.get_running_loop(), {})
        named = {r for r in run_ids if (r, False) in tails or (r, True) in tails}
        if not named:
            return
        self.pending |= named
        if self.task is None or self.task.done():
            self.task = asyncio.create_task(self._read_pending())

    async def _read_pending(self) -> None:
        while self.pending:
            runs, self.pending = self.pending, set()
            tails = _tails.get(asyncio.get_running_loop(), {})
            held = {
                (run_id, staff): tail
                for run_id in runs
                for staff in (False, True)
                if (tail := tails.get((run_id, staff))) is not None and tail.senders
            }
            watchers: dict[str, set[bool]] = {}
            for run_id, staff in held:
                watchers.setdefault(run_id, set()).add(staff)
            try:
                self.reads += 1
                found = await _read_live_streams(watchers, _sent(held.values()))
            except Exception as exc:
                logger.warning("shared read of live text failed, sockets read alone: %r", exc)
                found = {}
            for key, tail in held.items():
                result = found.get(key)
                for sender in list(tail.senders):
                    if result is None:
                        sender.stream_wake()
                    else:
                        sender.take_stream(result)


# The shared reads run in a thread of their own, not queued behind the database calls of
# every socket of the process (the default executor's few threads): at 100 runs starting at
# once, a read waited seconds there for the sockets' reads of the log.
def _read_shared(watchers: dict[str, set[bool]], sent: dict[str, int]) -> Any:
    return fanout.read_live_streams(watchers, sent)


_read_live_streams = DatabaseSyncToAsync(
    _read_shared,
    thread_sensitive=False,
    executor=ThreadPoolExecutor(max_workers=1, thread_name_prefix="sparktide-stream-reads"),
)


def _sent(tails: Any) -> dict[str, int]:
    """Per stream, the offset every socket showing it has (the least): each sender takes
    from the shared text only what it has not sent. A stream a socket has nothing of is
    read from 0 (left out)."""
    senders = [s for tail in tails for s in tail.senders if not s.stream_snapshot]
    streams = {stream for s in senders for stream in s.stream_sent}
    sent: dict[str, int] = {}
    for stream in streams:
        have = [s.stream_sent.get(stream, 0) for s in senders if stream not in s.stream_closed]
        if have and min(have) > 0:
            sent[stream] = min(have)
    return sent


_stream_reads: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, StreamReads] = (
    weakref.WeakKeyDictionary()
)


def stream_reads() -> StreamReads:
    """This process's (this event loop's) shared reads of live text."""
    return _stream_reads.setdefault(asyncio.get_running_loop(), StreamReads())


class Wakeable(Protocol):
    def wake_up(self, message: dict[str, Any]) -> None: ...

    def stream_wake(self) -> None: ...


class RunWakeups:
    """One subscription to a run's wake-ups per process, shared by all its sockets.

    Every socket of a run used to join the run's channel-layer group itself, so
    one wake-up became one message per socket: with Redis, a list of hundreds of
    channel names in the message and, in this process, one buffered message, one
    woken receive and a few tasks per socket before any of them could read. Here
    one channel of the process is in the group and one task receives: a wake-up
    is one message, handed to every socket of the run by a plain call (each only
    records the seq and sets its event; its own sender task reads and sends).
    Wake-ups stay best effort: a failed subscription is retried by the sockets
    (they poll meanwhile); after a failing receive (Redis restarted or the
    connection killed) the channel joins the group again before it listens, so
    wake-ups come back within about a second instead of never.

    The stream wake-ups come through one more subscription of the process, to the
    ``streams`` group (``stream_wakeups``; every socket joins it too): each
    ``run.streams`` message names the runs whose text moved, and this process reads their
    new text once for all their sockets here (``StreamReads``).
    """

    def __init__(self, run_id: str, group: str | None = None) -> None:
        self.run_id = run_id
        self.group = group or run_group(run_id)
        self.sockets: set[Wakeable] = set()
        self.channel: str | None = None
        self.listener: asyncio.Task[None] | None = None
        self.lock = asyncio.Lock()
        self.joined_at = 0.0

    async def join(
        self, socket: Wakeable, layer: BaseChannelLayer, *, retry_seconds: float
    ) -> bool:
        """Add ``socket``; True once this process is subscribed to the run's group."""
        self.sockets.add(socket)
        if self.channel is not None:
            if time.monotonic() - self.joined_at > GROUP_REFRESH_SECONDS:
                # A membership expires (channels-redis: a day); the streams group's lasts
                # as long as the process has sockets, so it is renewed as they come.
                self.joined_at = time.monotonic()
                with contextlib.suppress(Exception):
                    await layer.group_add(self.group, self.channel)
            return True
        async with self.lock:
            if self.channel is None:
                channel = await layer.new_channel()
                try:
                    await layer.group_add(self.group, channel)
                except Exception:  # wake-ups are an optimisation: the sockets poll and retry
                    logger.warning("could not subscribe to %s; polling", self.group, exc_info=True)
                    return False
                self.channel, self.joined_at = channel, time.monotonic()
                self.listener = asyncio.create_task(self._listen(layer, channel, retry_seconds))
        return True

    async def _listen(self, layer: BaseChannelLayer, channel: str, retry_seconds: float) -> None:
        rejoin = False
        while True:
            if rejoin:
                # The receive failed: Redis may have restarted, and with it the group
                # forgot this channel. Join again before listening (group_add is
                # idempotent), and wake every socket once: what was announced while
                # the subscription was down is read now, not at the next poll.
                try:
                    await layer.group_add(self.group, channel)
                except asyncio.CancelledError:
                    raise
                except Exception as exc:
                    logger.warning("wake-ups for %s: rejoin failed: %r", self.run_id, exc)
                    await asyncio.sleep(retry_seconds)
                    continue
                rejoin = False
                logger.info("wake-ups for %s: subscribed again", self.run_id)
                for socket in list(self.sockets):
                    socket.wake_up({"type": "run.wakeup"})
                    socket.stream_wake()
            try:
                message = await layer.receive(channel)
            except asyncio.CancelledError:
                raise
            except (TimeoutError, RedisTimeoutError):
                # An idle run's read timing out is expected: listen again.
                logger.debug("wake-ups for %s: read timed out", self.run_id)
                continue
            except Exception as exc:
                logger.warning("wake-ups for %s interrupted: %r", self.run_id, exc)
                await asyncio.sleep(min(retry_seconds, 0.5))
                rejoin = True
                continue
            if message.get("type") == "run.wakeup":
                for socket in list(self.sockets):
                    socket.wake_up(message)
            elif message.get("type") == "run.streams" and isinstance(message.get("runs"), list):
                stream_reads().wake([r for r in message["runs"] if isinstance(r, str)])
            elif message.get("type") == "run.stream":  # one delta, as a process sent it before
                for socket in list(self.sockets):
                    socket.stream_wake()

    async def leave(self, socket: Wakeable, layer: BaseChannelLayer) -> None:
        self.sockets.discard(socket)
        if self.sockets:
            return
        hubs = _stream_hubs if self.group == STREAM_GROUP else _wakeups
        registry = hubs.get(asyncio.get_running_loop(), {})
        if registry.get(self.run_id) is self:
            del registry[self.run_id]
        if self.listener is not None:
            self.listener.cancel()
            await asyncio.gather(self.listener, return_exceptions=True)
        if self.channel is not None:
            try:
                await layer.group_discard(self.group, self.channel)
            except Exception:  # the membership expires with the group (channels_redis)
                logger.warning("could not unsubscribe from %s", self.group, exc_info=True)


_wakeups: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, RunWakeups]] = (
    weakref.WeakKeyDictionary()
)
_stream_hubs: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, RunWakeups]] = (
    weakref.WeakKeyDictionary()
)
# How often a long-lived subscription (the streams group's) is renewed.
GROUP_REFRESH_SECONDS = 3600.0


def stream_wakeups() -> RunWakeups:
    """This process's (this event loop's) subscription to the stream wake-ups of all runs."""
    registry = _stream_hubs.setdefault(asyncio.get_running_loop(), {})
    hub = registry.get(STREAM_GROUP)
    if hub is None:
        hub = registry[STREAM_GROUP] = RunWakeups(STREAM_GROUP, STREAM_GROUP)
    return hub


def run_wakeups(run_id: str) -> RunWakeups:
    """This process's (this event loop's) subscription to ``run_id``'s wake-ups."""
    registry = _wakeups.setdefault(asyncio.get_running_loop(), {})
    hub = registry.get(run_id)
    if hub is None:
        hub = registry[run_id] = RunWakeups(run_id)
    return hub


class SentRecorder:
    """Writes DeliveryLog.last_sent_seq for all of this process's sockets at once.

    A socket notes each send here; every ``SENT_RECORD_SECONDS`` one statement
    records them all, instead of one write per socket per event. A socket
    writes its own final value when it ends (terminal event, 4408, close).
    """

    def __init__(self) -> None:
        self.pending: dict[str, int] = {}
        self.task: asyncio.Task[None] | None = None

    def note(self, connection_id: str, seq: int) -> None:
        self.pending[connection_id] = seq
        if self.task is None or self.task.done():
            self.task = asyncio.create_task(self._flush_periodically())

    def forget(self, connection_id: str) -> None:
        self.pending.pop(connection_id, None)

    async def _flush_periodically(self) -> None:
        while self.pending:
            await asyncio.sleep(SENT_RECORD_SECONDS)
            sent, self.pending = self.pending, {}
            try:
                await db_call(fanout.record_deliveries)(sent)
            except Exception:  # evidence of sending is best effort; delivery goes on
                logger.warning("could not record what was sent", exc_info=True)


def sent_recorder() -> SentRecorder:
    return _recorders.setdefault(asyncio.get_running_loop(), SentRecorder())


class DeliveryWriter:
    """Group commit of the records a socket must have written before it goes on:
    how far it was sent at its end (terminal event, 4408, a refused read) and its
    close.

    Each writer waits until its record is in the database, as it did with a
    statement of its own; the writes of every socket that arrives while one
    statement runs go into the next one. When a run ends, its hundreds of sockets
    write in a few statements instead of three autocommitted statements each,
    every one waiting for its own WAL flush.
    """

    def __init__(self) -> None:
        self.sent: dict[str, int] = {}
        self.closed: set[str] = set()
        self.done: asyncio.Future[None] | None = None
        self.task: asyncio.Task[None] | None = None

    async def write(self, connection_id: str, seq: int, *, closed: bool = False) -> None:
        self.sent[connection_id] = max(seq, self.sent.get(connection_id, 0))
        if closed:
            self.closed.add(connection_id)
        if self.done is None:
            self.done = asyncio.get_running_loop().create_future()
        done = self.done
        if self.task is None or self.task.done():
            self.task = asyncio.create_task(self._flush())
        await asyncio.shield(done)

    async def _flush(self) -> None:
        while self.done is not None:
            await asyncio.sleep(0)  # the sockets ending in this turn of the loop join in
            sent, closed, done = self.sent, frozenset(self.closed), self.done
            self.sent, self.closed, self.done = {}, set(), None
            try:
                await db_call(fanout.record_deliveries)(sent, closed)
            except Exception as exc:
                done.set_exception(exc)
            else:
                done.set_result(None)


_writers: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, DeliveryWriter] = (
    weakref.WeakKeyDictionary()
)


def delivery_writer() -> DeliveryWriter:
    return _writers.setdefault(asyncio.get_running_loop(), DeliveryWriter())
