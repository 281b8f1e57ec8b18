"""The run events WebSocket: ``ws/v1/apps/{app}/runs/{runId}/events?after=SEQ``.

A thin edge over delivery/fanout.py: it parses the query and the client's
frames, calls one access function, and streams what the log holds after the
cursor. The contract (frames, close codes, acks) is in docs/events.md.

One task per connection sends; wake-ups from the channel layer and the poll
timer only nudge it. That single sender is what makes "each event at most
once, in seq order, without gaps" hold however wake-ups overlap.
"""

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any, cast

from channels.consumer import get_handler_name
from channels.generic.websocket import AsyncWebsocketConsumer
from django.contrib.auth.models import User
from django.db import InterfaceError, OperationalError

from delivery import fanout
from delivery.fanout import Frame
from delivery.protocol import (
    CLOSE_INTERNAL_ERROR,
    CLOSE_NORMAL,
    CLOSE_TOO_SLOW,
    close_code,
    error_frame,
    parse_ack,
    parse_query,
)
from delivery.shared import (
    RunTail,
    RunWakeups,
    acquire_tail,
    db_call,
    delivery_writer,
    release_tail,
    run_wakeups,
    sent_recorder,
    stream_wakeups,
)
from delivery.wire import DirectSocket, Wire, direct_socket, frame_text
from foundation import observability
from foundation.errors import ErrorCode, SparkTideError, not_found
from runs.events import TERMINAL_EVENT_TYPES

logger = logging.getLogger(__name__)

# After the terminal event, how long an acking client may take to acknowledge it.
FINAL_ACK_GRACE_SECONDS = 2.0
# A socket whose subscription failed polls at least this often until it succeeds.
RESUBSCRIBE_SECONDS = 1.0
# The database went away under a read (a restart, a failover, a cut session): the
# socket is closed 4503 so the client reconnects and resumes from its cursor.
CONNECTION_ERRORS = (OperationalError, InterfaceError)


async def _receive_nothing() -> dict[str, Any]:
    await asyncio.get_running_loop().create_future()  # never set
    raise AssertionError("unreachable")


class RunEventsConsumer(AsyncWebsocketConsumer):
    run_id: str
    log_id: str | None = None
    tail: RunTail | None = None
    wakeups: RunWakeups | None = None
    streams: RunWakeups | None = None
    task: asyncio.Task[None] | None = None
    ack_task: asyncio.Task[None] | None = None
    direct: DirectSocket | None = None
    accepted: bool = False

    @property
    def channel_receive(self) -> Callable[[], Awaitable[dict[str, Any]]]:
        return self._channel_receive

    @channel_receive.setter
    def channel_receive(self, receive: Callable[[], Awaitable[dict[str, Any]]]) -> None:
        # Channels gives every consumer a channel of its own to receive on. This
        # socket's wake-ups come through its run's one subscription in this
        # process (RunWakeups, which calls wake_up), so its own channel is never
        # in a group and nothing is ever received on it: wait forever instead of
        # holding a receive of the layer open per socket.
        self._channel_receive = _receive_nothing

    async def dispatch(self, message: dict[str, Any]) -> None:
        # Channels closes stale connections before every handler with a hop
        # through its one thread-sensitive thread. These handlers hold no
        # connection there (database work runs in db_call threads, which close
        # their own), and with hundreds of subscribers that hop per wake-up
        # would serialise the fan-out. websocket_disconnect still closes.
        handler = getattr(self, get_handler_name(message), None)
        if handler is None:
            raise ValueError(f"No handler for message type {message['type']}")
        await handler(message)

    async def connect(self) -> None:
        try:
            await self._open()
        except CONNECTION_ERRORS as exc:
            # Never an open socket that says nothing: the client reconnects later.
            logger.warning("socket of %s refused, database unavailable: %s", self.run_id, exc)
            await self.refuse_unavailable()

    async def _open(self) -> None:
        kwargs = self.scope["url_route"]["kwargs"]
        self.run_id = kwargs["run_id"]
        try:
            query = parse_query(self.scope.get("query_string", b""))
            run, user = await db_call(fanout.access_run_for_watcher)(
                app_slug=kwargs["app"],
                run_id=self.run_id,
                ticket=query.ticket,
                session_user=self._session_user(),
            )
        except SparkTideError as error:
            await self.refuse(error.code, error.detail, close_code(error))
            return
        self.run, self.client_id = run, query.client_id
        # Every read re-checks the gate this socket was opened through.
        self.staff = query.ticket is None
        self.config = fanout.delivery_config()
        # Cursors: what the client had, what was sent, and the highest seq a
        # wake-up announced.
        self.after = self.sent = self.wanted = query.after
        self.acked: dict[str, int] = {}
        self.pending_acks: dict[str, int] = {}
        self.stalled_since: float | None = None
        self.wake = asyncio.Event()
        self.woken_at = time.monotonic()
        # The live text stream (docs/events.md, "The text stream"): how far this socket
        # sent each stream, the streams the log has closed, whether to read the row (a
        # snapshot at connect; the text after what was sent on a stream wake-up), and the
        # log's head at connect: a stream closed after it was watched live here.
        self.stream_sent: dict[str, int] = {}
        self.stream_closed: set[str] = set()
        self.stream_snapshot = True
        self.stream_pending = False
        self.live_from = run.last_seq
        # Subscribe before accepting and before the first read: an event
        # committed after that read wakes us, one committed before it is in it.
        self.subscribed = await self._subscribe()
        await self.accept()
        log = await db_call(fanout.open_delivery)(
            run=run, user=user, client_id=query.client_id, after=query.after
        )
        self.log_id = log.connection_id
        observability.websocket_opened()
        self.tail = acquire_tail((self.run_id, self.staff))
        self.direct = direct_socket(self.base_send)
        ended = await db_call(fanout.terminal_seq)(run)
        if ended is not None and ended <= query.after:
            await self.close(CLOSE_NORMAL)  # the client already has the whole run
            return
        self.task = asyncio.create_task(self._deliver())

    def _session_user(self) -> User | None:
        user = self.scope.get("user")
        return user if user is not None and user.is_authenticated else None

    async def refuse(self, code: str, detail: str, close: int) -> None:
        await self.accept()
        await self.send(text_data=error_frame(code, detail))
        await self.close(close)

    async def refuse_unavailable(self) -> None:
        """DATABASE_UNAVAILABLE and close 4503, whether or not the socket was accepted."""
        error = SparkTideError(ErrorCode.DATABASE_UNAVAILABLE)
        if not self.accepted:
            await self.accept()
        await self.send(text_data=error_frame(error.code, error.detail))
        await self.close(close_code(error))

    async def accept(
        self, subprotocol: str | None = None, headers: list[tuple[bytes, bytes]] | None = None
    ) -> None:
        self.accepted = True
        await super().accept(subprotocol, headers)

    async def _subscribe(self) -> bool:
        if self.channel_layer is None:
            return False
        if self.wakeups is None:
            self.wakeups, self.streams = run_wakeups(self.run_id), stream_wakeups()
        joined = await self.wakeups.join(
            self, self.channel_layer, retry_seconds=RESUBSCRIBE_SECONDS
        )
        streams = cast(RunWakeups, self.streams)
        return joined and await streams.join(
            self, self.channel_layer, retry_seconds=RESUBSCRIBE_SECONDS
        )

    # -- the single sender --------------------------------------------------------

    async def _deliver(self) -> None:
        try:
            while True:
                self.wake.clear()
                # The stream first: text read before the log's close event of its stream
                # is sent before that event (and the rest up to the close with it).
                await self._send_stream()
                if await self._drain():
                    await self._await_final_acks()
                    await self.close(CLOSE_NORMAL)
                    return
                if self._too_slow():
                    await self._record_sent()
                    await self.refuse_slow()
                    return
                await self._wait()
                if not self.subscribed and self.channel_layer is not None:
                    self.subscribed = await self._subscribe()
        except asyncio.CancelledError:
            raise
        except SparkTideError as error:
            # The history gate refused a read (permission or membership gone, app
            # not active, past retention): nothing of that read is sent.
            await self._record_sent()
            await self.send(text_data=error_frame(error.code, error.detail))
            await self.close(close_code(error))
        except CONNECTION_ERRORS as exc:
            # What was sent is recorded when the socket closes (disconnect); the
            # client resumes from the last seq it has, so nothing is lost or sent twice.
            logger.warning(
                "delivery of %s to %s: database unavailable: %s", self.run_id, self.log_id, exc
            )
            await self.refuse_unavailable()
        except Exception:
            logger.exception("delivery of %s to %s failed", self.run_id, self.log_id)
            internal = SparkTideError(ErrorCode.INTERNAL_ERROR)
            await self.send(text_data=error_frame(internal.code, internal.detail))
            await self.close(CLOSE_INTERNAL_ERROR)

    async def _await_final_acks(self) -> None:
        """A client renders the terminal event after it is sent; one that acks gets a
        moment to say so before the normal close, so the evidence is complete."""
        if not self.acked:
            return  # a client that never acks is not waited for
        kind = "rendered" if "rendered" in self.acked else "received"
        deadline = asyncio.get_running_loop().time() + FINAL_ACK_GRACE_SECONDS
        while self.acked.get(kind, 0) < self.sent and asyncio.get_running_loop().time() < deadline:
            await asyncio.sleep(0.05)

    async def _drain(self) -> bool:
        """Send everything after the cursor the window allows; True once the run has ended.

        While a full page is being sent, the next page is already being read
        (replay of a long run: the database and the socket work at once). Each
        page is still one read that re-checks this socket's gate.
        """
        ahead: asyncio.Task[Any] | None = None
        ahead_since, ahead_limit = 0.0, 0
        try:
            while True:
                room = self._room()
                if room <= 0:
                    # At its window: the client is behind only if there is more to send.
                    if self.stalled_since is None and await db_call(fanout.has_events_after)(
                        self.run_id, after=self.sent
                    ):
                        self.stalled_since = time.monotonic()
                    return False
                limit = min(room, self.config.page_size)
                frames: list[Frame] | None = None
                # The log ends here if a read returned fewer than it asked for.
                asked = limit
                if ahead is not None:
                    frames, ahead = await ahead, None
                    asked = ahead_limit
                    if len(frames) > limit:
                        frames, asked = frames[:limit], limit
                    if (frames and frames[0][0] != self.sent + 1) or self.woken_at > ahead_since:
                        # Read for another cursor, or begun before a wake-up that came
                        # since (as with shared reads, nothing read before a wake-up
                        # is sent for it): read again.
                        frames = None
                if frames is None:
                    frames, asked = await self._read(limit), limit
                if not frames:
                    return False
                last_seq, last_type, _ = frames[-1]
                if (
                    len(frames) == asked
                    and last_type not in TERMINAL_EVENT_TYPES
                    and self.wanted <= last_seq  # the next read is this socket's own
                    and room - limit > 0
                ):
                    ahead_since = time.monotonic()
                    ahead_limit = min(room - limit, self.config.page_size)
                    ahead = asyncio.create_task(self._read_own(ahead_limit, after=last_seq))
                batch: list[Frame] = []
                gap = ended = False
                for frame in frames:
                    if frame[0] != self.sent + len(batch) + 1:
                        # The log has no holes (seq is assigned under the run's row
                        # lock and committed with it); never send past one.
                        gap = True
                        break
                    batch.append(frame)
                    if frame[1] in TERMINAL_EVENT_TYPES:
                        ended = True
                        break
                if batch:
                    await self._send_frames(batch)
                if gap:
                    logger.error("gap in %s after seq %s", self.run_id, self.sent)
                    return False
                if ended:
                    await self._record_sent()
                    return True
                sent_recorder().note(cast(str, self.log_id), self.sent)  # set by connect
                if len(frames) < asked:
                    return False
        finally:
            if ahead is not None:
                ahead.cancel()
                await asyncio.gather(ahead, return_exceptions=True)

    async def _send_frames(self, frames: list[Frame]) -> None:
        """Send these frames, consecutive after the cursor, in order.

        Through daphne each frame is framed once per process (a run's shared read
        is framed once for all its sockets) and written straight to the socket's
        transport (delivery/wire.py); otherwise — another server, the test
        communicator, a socket daphne would not send as one plain frame — each goes
        through the ASGI send. Either way the cursor moves before the bytes go out,
        so an ack racing the send is not taken for an ack of an unsent event.
        """
        await self._finish_streams(frames)
        self._note_closed_streams(frames)
        if self.direct is not None:
            tail = self.tail
            wires = [tail.wire(f) if tail is not None else frame_text(f[2]) for f in frames]
            if self.direct.write(wires):
                self.sent = frames[-1][0]
                return
        for seq, _, text in frames:
            self.sent = seq
            await self.send(text_data=text)

    async def _read_own(self, limit: int, *, after: int) -> list[Frame]:
        return await self._read_log(limit, after=after)

    async def _read(self, limit: int) -> list[Frame]:
        """The next frames after the cursor: (seq, type, text)."""
        if self.tail is None or self.wanted <= self.sent:
            return await self._read_log(limit, after=self.sent)
        want: dict[str, Any] = {
            "after": self.sent,
            "limit": limit,
            "want": self.wanted,
            "since": self.woken_at,
        }
        tail = self.tail
        frames = tail.cached(**want)
        if frames is not None:
            return frames
        # One socket reads for all of this run's sockets woken with it, and writes
        # what it read to those waiting here (_write_to_waiting).
        tail.waiting.add(self)
        try:
            await tail.lock.acquire()
        finally:
            tail.waiting.discard(self)
        try:
            if self.sent != want["after"]:
                # The socket that held the lock wrote this socket's frames; a wake-up
                # that came since has set self.wake, so _deliver drains again at once.
                return []
            frames = tail.cached(**want)
            if frames is None:
                started, after = time.monotonic(), self.sent
                frames = await self._read_log(limit, after=after)
                tail.store(frames, read_started=started)
                self._write_to_waiting(frames, after=after, read_started=started)
        finally:
            tail.lock.release()
        return frames

    def _write_to_waiting(self, frames: list[Frame], *, after: int, read_started: float) -> None:
        """Write a shared read to the run's sockets waiting for it, in this one turn.

        Without it each waiting socket took the lock in turn, found the read and
        sent it itself: one loop turn per socket per event, so the last of 500 was
        sent long after the first and shared reads aged out (docs/performance.md,
        "Delivery"). A waiting socket's sender is suspended at the lock until this
        one releases it, so moving its cursor here keeps one sender per cursor. Only
        a socket whose cursor is exactly where the read began, woken before the read
        began (the shared-read rule of RunTail: the gate this read re-checked decides
        what it is sent), with room in its ack window and a daphne socket that takes
        the bytes now (the write is synchronous); every other socket, and the
        terminal event (each socket sends its own end and records it), go on as
        before.
        """
        tail = cast(RunTail, self.tail)
        batch: list[Frame] = []
        for frame in frames:
            if (
                frame[0] != after + len(batch) + 1
                or frame[1] in TERMINAL_EVENT_TYPES
                or frame[1] == fanout.STREAM_EVENT  # each socket finishes its own stream
            ):
                break
            batch.append(frame)
        if not batch or not tail.waiting:
            return
        wires = [tail.wire(frame) for frame in batch]
        for other in list(tail.waiting):
            if (
                other.sent == after
                and other.woken_at <= read_started
                and other._room() >= len(batch)
                and other._write_shared(batch, wires)
                and len(batch) < len(frames)
            ):
                other.wake.set()  # the rest of the read is its own to send

    def _write_shared(self, frames: list[Frame], wires: list[Wire]) -> bool:
        """Write frames of a shared read on the fast path; False if it would not take them."""
        if self.direct is None or not self.direct.write(wires):
            return False
        self._note_closed_streams(frames)
        self.sent = frames[-1][0]
        sent_recorder().note(cast(str, self.log_id), self.sent)  # set by connect
        return True

    async def _read_log(self, limit: int, *, after: int) -> list[Frame]:
        """One read of the log, which re-checks this socket's gate (raises SparkTideError)."""
        return await db_call(fanout.read_frames)(
            self.run, after=after, limit=limit, staff=self.staff
        )

    # -- the text stream ----------------------------------------------------------

    def stream_wake(self) -> None:
        """The run's live text moved: read the row for what this socket has not sent."""
        if self.log_id is None:
            return
        self.stream_pending = True
        self.wake.set()

    async def _send_stream(self) -> None:
        """Send the stream text this socket does not have yet, read from the row (the row is
        the truth; a wake-up only says it moved): at connect the whole text so far as a
        snapshot, after a wake-up the text after what was sent. Wake-ups that come while a
        read is under way are one more read, not one each. Every read passes the gate
        (``fanout.stream_text``); a refusal raises, and nothing of the stream is sent."""
        if not (self.stream_snapshot or self.stream_pending):
            return
        snapshot, self.stream_snapshot, self.stream_pending = self.stream_snapshot, False, False
        sent = {} if snapshot else dict(self.stream_sent)
        found = await db_call(fanout.stream_text)(self.run, sent=sent, staff=self.staff)
        if snapshot:
            found = [{**data, "snapshot": True} for data in found]
        await self._send_stream_data(found)

    async def _finish_streams(self, frames: list[Frame]) -> None:
        """Before the log's close event of a stream is sent, the rest of that stream's text
        up to the close offset, read from the row through the gate: a socket that was
        showing the stream (it sent some of it, or the stream closed after this socket
        connected) shows all of it before the close, however late its wake-ups were. A
        replay of a stream closed before the socket connected sends only the close."""
        for seq, type_, text in frames:
            if type_ != fanout.STREAM_EVENT:
                continue
            close = json.loads(text).get("data", {})
            stream, end = close.get("streamId"), close.get("offset")
            if not isinstance(stream, str) or not isinstance(end, int):
                continue
            if stream in self.stream_closed:
                continue
            if stream not in self.stream_sent and seq <= self.live_from:
                continue
            have = self.stream_sent.get(stream, 0)
            if have >= end:
                continue
            rest = await db_call(fanout.stream_rest_at_close)(
                self.run, close, start=have, staff=self.staff
            )
            if rest is not None:
                await self._send_stream_data([rest])

    async def _send_stream_data(self, items: list[dict[str, Any]]) -> None:
        for data in items:
            stream, offset, delta = data.get("streamId"), data.get("offset"), data.get("delta")
            if not isinstance(stream, str) or not isinstance(offset, int):
                continue
            if not isinstance(delta, str) or stream in self.stream_closed:
                continue
            have = self.stream_sent.get(stream, 0)
            end = offset + len(delta)
            if end <= have or offset > have:
                continue  # sent already, or not next (never a gap: the row is read again)
            if offset < have:
                data = {**data, "offset": have, "delta": delta[have - offset :]}
                data.pop("snapshot", None)
            self.stream_sent[stream] = end
            await self.send(text_data=fanout.stream_frame(data))

    def _note_closed_streams(self, frames: list[Frame]) -> None:
        """The log's ``answer.stream`` close events among frames being sent: nothing more
        of those streams is sent on this socket."""
        for _, type_, text in frames:
            if type_ == fanout.STREAM_EVENT:
                stream = json.loads(text).get("data", {}).get("streamId")
                if isinstance(stream, str):
                    self.stream_closed.add(stream)
                    self.stream_sent.pop(stream, None)

    def _room(self) -> int:
        """How many more events may be sent now (flow control for acking clients).

        A client that never acks is not flow-controlled; one that does may be
        at most ``ack_window`` events behind what it was sent.
        """
        if not self.acked:
            return self.config.page_size
        # Acks of events sent before this connection (≤ after) do not move the window.
        return max(self.after, *self.acked.values()) + self.config.ack_window - self.sent

    def _too_slow(self) -> bool:
        return (
            self.stalled_since is not None
            and time.monotonic() - self.stalled_since >= self.config.slow_client_seconds
        )

    async def _record_sent(self) -> None:
        sent_recorder().forget(cast(str, self.log_id))  # set by connect
        await delivery_writer().write(cast(str, self.log_id), self.sent)

    async def _wait(self) -> None:
        timeout = self.config.poll_seconds
        if not self.subscribed and self.channel_layer is not None:
            timeout = min(timeout, RESUBSCRIBE_SECONDS)
        if self.stalled_since is not None:
            left = self.stalled_since + self.config.slow_client_seconds - time.monotonic()
            timeout = min(timeout, left)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.wake.wait(), max(0.0, timeout))

    async def refuse_slow(self) -> None:
        await self.send(
            text_data=error_frame(
                fanout.CLIENT_TOO_SLOW,
                f"No acknowledgement for {self.config.slow_client_seconds:g} s while "
                f"{self.config.ack_window} events behind; reconnect with after=<last seq>.",
            )
        )
        await self.close(CLOSE_TOO_SLOW)

    # -- wake-ups and client frames -----------------------------------------------

    async def run_wakeup(self, message: dict[str, Any]) -> None:
        self.wake_up(message)

    def wake_up(self, message: dict[str, Any]) -> None:
        """A wake-up reached this socket: note how far the log is announced, nudge the sender."""
        seq = message.get("seq")
        if isinstance(seq, int) and seq > self.wanted:
            self.wanted = seq
            self.woken_at = self.tail.wake_time(seq) if self.tail else time.monotonic()
        if not isinstance(seq, int) or seq > self.sent:
            self.wake.set()

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        if self.log_id is None:
            return
        ack = parse_ack(text_data)
        if ack is None:
            return  # not a frame of this protocol: ignored, the stream goes on
        seq, kind = ack
        if seq > self.sent or seq <= self.acked.get(kind, 0):
            return  # not sent on this connection yet, or nothing new
        was_blocked = self._room() <= 0
        self.acked[kind] = seq
        if was_blocked and self._room() > 0:
            self.stalled_since = None
            self.wake.set()
        self.pending_acks[kind] = seq
        if self.ack_task is None or self.ack_task.done():
            self.ack_task = asyncio.create_task(self._flush_acks())

    async def _flush_acks(self) -> None:
        if self.log_id is None:
            return
        while self.pending_acks:
            acks, self.pending_acks = self.pending_acks, {}
            await db_call(fanout.record_acks)(
                run_id=self.run_id,
                connection_id=self.log_id,
                client_id=self.client_id,
                acks=acks,
            )

    async def disconnect(self, code: int) -> None:
        if self.task is not None and self.task is not asyncio.current_task():
            self.task.cancel()
            await asyncio.gather(self.task, return_exceptions=True)
        if self.wakeups is not None:
            await self.wakeups.leave(self, self.channel_layer)
        if self.streams is not None:
            await self.streams.leave(self, self.channel_layer)
        if self.log_id is None:
            return
        observability.websocket_closed()
        if self.tail is not None:
            release_tail((self.run_id, self.staff))
        if self.ack_task is not None:
            await asyncio.gather(self.ack_task, return_exceptions=True)
        sent_recorder().forget(cast(str, self.log_id))  # set by connect
        try:
            await self._flush_acks()
            await delivery_writer().write(cast(str, self.log_id), self.sent, closed=True)
        except CONNECTION_ERRORS as exc:
            # Evidence, not delivery: a row left open is closed by the sweep of
            # open deliveries (fanout.close_abandoned_deliveries).
            logger.warning("could not record the close of %s: %s", self.log_id, exc)


class NotFoundConsumer(AsyncWebsocketConsumer):
    """Any other WebSocket path: the same 4404 a missing run gets."""

    async def connect(self) -> None:
        error = not_found()
        await self.accept()
        await self.send(text_data=error_frame(error.code, error.detail))
        await self.close(close_code(error))
