"""One socket's delivery of a run: the single sender, its cursor, its ack window and the
live text stream it shows (docs/events.md).

The consumer (delivery/consumers.py) is the edge: it authorizes the socket, subscribes it,
accepts it and hands each client frame and wake-up here. A ``RunSender`` owns everything
after that: one task sends; wake-ups from the channel layer and the poll timer only nudge
it. That single sender is what makes "each event at most once, in seq order, without gaps"
hold however wake-ups overlap. The run's shared reads (``RunTail``) may move a waiting
sender's cursor, only through ``take_shared`` while that sender is suspended on the tail's
lock, so there is still one writer of each cursor.
"""

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from django.db import InterfaceError, OperationalError

from delivery import fanout
from delivery.fanout import DeliveryConfig, Frame
from delivery.protocol import (
    CLOSE_INTERNAL_ERROR,
    CLOSE_NORMAL,
    CLOSE_TOO_SLOW,
    close_code,
    error_frame,
)
from delivery.shared import RunTail, db_call, delivery_writer, sent_recorder
from delivery.wire import DirectSocket, Wire, frame_text
from foundation.errors import ErrorCode, SparkTideError
from runs.events import TERMINAL_EVENT_TYPES
from runs.models import Run

logger = logging.getLogger(__name__)

# After the terminal event, how long an acking client may take to acknowledge it.
FINAL_ACK_GRACE_SECONDS = 2.0
# A socket whose subscription failed polls at least this often until it succeeds.
RESUBSCRIBE_SECONDS = 1.0
# The database went away under a read (a restart, a failover, a cut session): the
# socket is closed 4503 so the client reconnects and resumes from its cursor.
CONNECTION_ERRORS = (OperationalError, InterfaceError)


class RunSender:
    """What one socket was sent of one run, and the task that sends the rest.

    ``send`` and ``close`` are the socket's (text frames, close codes); ``subscribe``
    retries the socket's subscription to wake-ups when it failed (None: there is no
    channel layer, the sender polls).
    """

    def __init__(
        self,
        *,
        run: Run,
        staff: bool,
        client_id: str,
        after: int,
        send: Callable[[str], Awaitable[None]],
        close: Callable[[int], Awaitable[None]],
        subscribe: Callable[[], Awaitable[bool]] | None,
    ) -> None:
        self.run, self.run_id, self.staff, self.client_id = run, run.pk, staff, client_id
        self._send, self._close, self._subscribe = send, close, subscribe
        # Every read re-checks the gate this socket was opened through.
        self.config: DeliveryConfig = fanout.delivery_config()
        # Cursors: what the client had, what was sent, and the highest seq a
        # wake-up announced.
        self.after = self.sent = self.wanted = after
        self.acked: dict[str, int] = {}
        self.pending_acks: dict[str, int] = {}
        self.stalled_since: float | None = None
        self.wake = asyncio.Event()
        self.woken_at = time.monotonic()
        self.subscribed = False
        # The live text stream (docs/events.md, "The text stream"): how far this socket
        # sent each stream, the streams the log has closed, whether to read the row (a
        # snapshot at connect; the text after what was sent on a stream wake-up), and the
        # log's head at connect: a stream closed after it was watched live here.
        self.stream_sent: dict[str, int] = {}
        self.stream_closed: set[str] = set()
        self.stream_snapshot = True
        self.stream_pending = False
        # What the process's shared read of live text handed this socket to send
        # (StreamReads, via take_stream), or the refusal of the gate that read passed.
        self.stream_ready: list[dict[str, Any]] = []
        self.stream_refused: SparkTideError | None = None
        # ASGI sends of this socket under way (a stream frame is written straight to the
        # socket only when there is none: _write_stream_now).
        self.sending = 0
        self.live_from = run.last_seq
        # Set once the socket is accepted and its delivery row written (start).
        self.log_id: str | None = None
        self.tail: RunTail | None = None
        self.direct: DirectSocket | None = None
        self.ack_task: asyncio.Task[None] | None = None

    def start(self, *, log_id: str, tail: RunTail, direct: DirectSocket | None) -> None:
        self.log_id, self.tail, self.direct = log_id, tail, direct

    # -- the single sender --------------------------------------------------------

    async def deliver(self) -> None:
        """Send until the run's terminal event (then close 1000), a refusal of the gate,
        a client too slow to ack, or a fault (each closed with its code)."""
        try:
            while True:
                self.wake.clear()
                # The stream first: text read before the log's close event of its stream
                # is sent before that event (and the rest up to the close with it).
                await self._send_stream()
                if await self._drain():
                    await self._await_final_acks()
                    await self._close(CLOSE_NORMAL)
                    return
                if self._too_slow():
                    await self._record_sent()
                    await self._refuse_slow()
                    return
                await self._wait()
                if not self.subscribed and self._subscribe is not None:
                    self.subscribed = await self._subscribe()
        except asyncio.CancelledError:
            raise
        except SparkTideError as error:
            # The history gate refused a read (permission or membership gone, app
            # not active, past retention): nothing of that read is sent.
            await self._record_sent()
            await self._refuse(error)
        except CONNECTION_ERRORS as exc:
            # What was sent is recorded when the socket closes (finish); the client
            # resumes from the last seq it has, so nothing is lost or sent twice.
            logger.warning(
                "delivery of %s to %s: database unavailable: %s", self.run_id, self.log_id, exc
            )
            await self._refuse(SparkTideError(ErrorCode.DATABASE_UNAVAILABLE))
        except Exception:
            logger.exception("delivery of %s to %s failed", self.run_id, self.log_id)
            internal = SparkTideError(ErrorCode.INTERNAL_ERROR)
            await self._send_asgi(error_frame(internal.code, internal.detail))
            await self._close(CLOSE_INTERNAL_ERROR)

    async def _refuse(self, error: SparkTideError) -> None:
        await self._send_asgi(error_frame(error.code, error.detail))
        await self._close(close_code(error))

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
                room = self.room()
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
                    ahead = asyncio.create_task(self._read_log(ahead_limit, after=last_seq))
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
                sent_recorder().note(self._log_id(), self.sent)
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
            await self._send_asgi(text)

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
        # One sender reads for all of this run's senders woken with it, and writes
        # what it read to those waiting here (RunTail.write_to_waiting).
        tail.waiting.add(self)
        try:
            await tail.lock.acquire()
        finally:
            tail.waiting.discard(self)
        try:
            if self.sent != want["after"]:
                # The sender that held the lock wrote this socket's frames; a wake-up
                # that came since has set self.wake, so deliver drains again at once.
                return []
            frames = tail.cached(**want)
            if frames is None:
                started, after = time.monotonic(), self.sent
                frames = await self._read_log(limit, after=after)
                tail.store(frames, read_started=started)
                tail.write_to_waiting(frames, after=after, read_started=started)
        finally:
            tail.lock.release()
        return frames

    def take_shared(self, frames: list[Frame], wires: list[Wire], *, read_started: float) -> bool:
        """Take frames of a run's shared read while this sender waits for the tail's lock
        (its own sender is suspended there, so this is still the one writer of the
        cursor): only if its cursor is exactly where they begin, it was woken before the
        read began (the gate this read re-checked decides what it is sent), its ack
        window has room for all of them and its daphne socket takes the bytes now (the
        write is synchronous). False, and nothing written, otherwise."""
        if (
            self.sent != frames[0][0] - 1
            or self.woken_at > read_started
            or self.room() < len(frames)
            or self.direct is None
            or not self.direct.write(wires)
        ):
            return False
        self._note_closed_streams(frames)
        self.sent = frames[-1][0]
        sent_recorder().note(self._log_id(), self.sent)
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

    def take_stream(self, found: fanout.StreamRead) -> None:
        """The process's shared read of live text (delivery/shared.py ``StreamReads``) for
        this socket's run, read through this socket's gate after the wake-up reached the
        process: the new text to send, or the gate's refusal. A socket whose snapshot is
        still to be read takes nothing (the snapshot reads it all).

        The text is written to the daphne socket now when nothing is being sent on it
        (``_write_stream_now``): the sender may be waiting for a read of the log, and the
        text would wait with it. Otherwise — and the refusal always — the sender sends it
        before anything else it reads."""
        if self.log_id is None or self.stream_snapshot:
            return
        if isinstance(found, SparkTideError):
            self.stream_refused = found
        elif not found or (not self.stream_ready and self._write_stream_now(found)):
            return
        else:
            self.stream_ready.extend(found)
        self.wake.set()

    def _write_stream_now(self, items: list[dict[str, Any]]) -> bool:
        """Write these stream frames straight to the daphne socket, in this turn of the loop,
        or nothing (False). Only while no ASGI send of this socket is under way, so frames
        never overtake each other; what is written is decided as for every stream frame
        (``_stream_updates``): a stream the log closed for this socket gets nothing."""
        if self.direct is None or self.sending:
            return False
        updates = self._stream_updates(items)
        if not updates:
            return True
        if not self.direct.write([frame_text(fanout.stream_frame(d)) for _, _, d in updates]):
            return False
        for stream, end, _ in updates:
            self.stream_sent[stream] = end
        return True

    async def _send_asgi(self, text: str) -> None:
        self.sending += 1
        try:
            await self._send(text)
        finally:
            self.sending -= 1

    async def _send_stream(self) -> None:
        """Send the stream text this socket does not have yet, read from the row (the row is
        the truth; a wake-up only says it moved): at connect the whole text so far as a
        snapshot, after a wake-up the text after what was sent. Wake-ups that come while a
        read is under way are one more read, not one each. Every read passes the gate
        (``fanout.stream_text``); a refusal raises, and nothing of the stream is sent. What
        the process's shared read handed it (``take_stream``) is sent first, without a read."""
        if self.stream_refused is not None:
            raise self.stream_refused
        if self.stream_ready:
            ready, self.stream_ready = self.stream_ready, []
            await self._send_stream_data(ready)
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
        for item in items:
            # Decided at its turn: a frame written straight to the socket meanwhile counts.
            for stream, end, data in self._stream_updates([item]):
                self.stream_sent[stream] = end
                await self._send_asgi(fanout.stream_frame(data))

    def _stream_updates(self, items: list[dict[str, Any]]) -> list[tuple[str, int, dict[str, Any]]]:
        """(stream, its end once sent, the data to send) of each item that extends what this
        socket sent of its stream — cut to the part it has not — in order; nothing of a
        stream the log closed, nothing sent already, never past a gap (the row is read
        again). Changes nothing."""
        sent = dict(self.stream_sent)
        updates = []
        for data in items:
            stream, offset, delta = data.get("streamId"), data.get("offset"), data.get("delta")
            if not isinstance(stream, str) or not isinstance(offset, int):
                continue
            if not isinstance(delta, str) or stream in self.stream_closed:
                continue
            have = sent.get(stream, 0)
            end = offset + len(delta)
            if end <= have or offset > have:
                continue  # sent already, or not next (never a gap: the row is read again)
            if offset < have:
                data = {**data, "offset": have, "delta": delta[have - offset :]}
                data.pop("snapshot", None)
            sent[stream] = end
            updates.append((stream, end, data))
        return updates

    def _note_closed_streams(self, frames: list[Frame]) -> None:
        """The log's ``answer.stream`` close events among frames being sent: nothing more
        of those streams is sent on this socket."""
        for _, type_, text in frames:
            if type_ == fanout.STREAM_EVENT:
                stream = json.loads(text).get("data", {}).get("streamId")
                if isinstance(stream, str):
                    self.stream_closed.add(stream)
                    self.stream_sent.pop(stream, None)

    # -- the ack window -----------------------------------------------------------

    def room(self) -> int:
        """How many more events may be sent now (flow control for acking clients).

        A client that never acks is not flow-controlled; one that does may be
        at most ``ack_window`` events behind what it was sent.
        """
        if not self.acked:
            return self.config.page_size
        # Acks of events sent before this connection (≤ after) do not move the window.
        return max(self.after, *self.acked.values()) + self.config.ack_window - self.sent

    def ack(self, seq: int, kind: str) -> None:
        """The client acknowledged ``seq`` (``kind``: received or rendered)."""
        if seq > self.sent or seq <= self.acked.get(kind, 0):
            return  # not sent on this connection yet, or nothing new
        was_blocked = self.room() <= 0
        self.acked[kind] = seq
        if was_blocked and self.room() > 0:
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

    def _too_slow(self) -> bool:
        return (
            self.stalled_since is not None
            and time.monotonic() - self.stalled_since >= self.config.slow_client_seconds
        )

    async def _refuse_slow(self) -> None:
        await self._send_asgi(
            error_frame(
                fanout.CLIENT_TOO_SLOW,
                f"No acknowledgement for {self.config.slow_client_seconds:g} s while "
                f"{self.config.ack_window} events behind; reconnect with after=<last seq>.",
            )
        )
        await self._close(CLOSE_TOO_SLOW)

    # -- wake-ups, waiting, the record --------------------------------------------

    def wake_up(self, message: dict[str, Any]) -> None:
        """A wake-up reached this socket: note how far the log is announced, nudge the sender."""
        seq = message.get("seq")
        if isinstance(seq, int) and seq > self.wanted:
            self.wanted = seq
            self.woken_at = self.tail.wake_time(seq) if self.tail else time.monotonic()
        if not isinstance(seq, int) or seq > self.sent:
            self.wake.set()

    async def _wait(self) -> None:
        timeout = self.config.poll_seconds
        if not self.subscribed and self._subscribe is not None:
            timeout = min(timeout, RESUBSCRIBE_SECONDS)
        if self.stalled_since is not None:
            left = self.stalled_since + self.config.slow_client_seconds - time.monotonic()
            timeout = min(timeout, left)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.wake.wait(), max(0.0, timeout))

    def _log_id(self) -> str:
        if self.log_id is None:
            raise RuntimeError("the sender sends only once started")
        return self.log_id

    async def _record_sent(self) -> None:
        sent_recorder().forget(self._log_id())
        await delivery_writer().write(self._log_id(), self.sent)

    async def finish(self) -> None:
        """The socket closed: its acks and how far it was sent recorded, with its close."""
        if self.log_id is None:
            return
        if self.ack_task is not None:
            await asyncio.gather(self.ack_task, return_exceptions=True)
        sent_recorder().forget(self.log_id)
        try:
            await self._flush_acks()
            await delivery_writer().write(self.log_id, self.sent, closed=True)
        except CONNECTION_ERRORS as exc:
            # Evidence, not delivery: a row left open is closed by the sweep of
            # open deliveries (fanout.close_abandoned_deliveries).
            logger.warning("could not record the close of %s: %s", self.log_id, exc)
