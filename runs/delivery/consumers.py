"""The run events WebSocket: ``ws/v1/apps/{app}/runs/{runId}/events?after=SEQ``.

A thin edge over runs/delivery/fanout.py: it parses the query and the client's
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
import weakref
from dataclasses import dataclass
from typing import Any, cast
from urllib.parse import parse_qs, urlsplit

from channels.consumer import get_handler_name
from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer
from django.conf import settings
from django.http.request import split_domain_port, validate_host
from redis.exceptions import TimeoutError as RedisTimeoutError

from runs.delivery import fanout
from runs.delivery.wakeups import run_group
from runs.events import TERMINAL_EVENT_TYPES
from sparktide import observability
from sparktide.errors import ErrorCode, SparkTideError, not_found

logger = logging.getLogger(__name__)

CLOSE_NORMAL = 1000
CLOSE_INTERNAL_ERROR = 1011
CLOSE_ORIGIN_REFUSED = 4403
CLOSE_TOO_SLOW = 4408
MAX_SEQ = 2**31 - 1
MAX_CLIENT_ID_CHARS = 100
# How often DeliveryLog.last_sent_seq is written while events flow (for all
# sockets of the process in one statement); always when a connection ends.
SENT_RECORD_SECONDS = 1.0
# How long a wake-driven read of a run is kept for this process's other sockets
# (each takes it only if the read began after its wake-up reached the process:
# RunTail). It also bounds how late a socket can be sent a shared read.
SHARED_READ_SECONDS = 0.5
MAX_SHARED_EVENTS = 1000
# After the terminal event, how long an acking client may take to acknowledge it.
FINAL_ACK_GRACE_SECONDS = 2.0
# A socket whose subscription failed polls at least this often until it succeeds.
RESUBSCRIBE_SECONDS = 1.0
ACK_KINDS = frozenset({"received", "rendered"})


def _db(func):
    # Not thread-sensitive: every call is self-contained (no transaction spans
    # two calls), so hundreds of connections need not queue behind one thread.
    return database_sync_to_async(func, thread_sensitive=False)


def close_code(error: SparkTideError) -> int:
    """401 → 4401, 404 → 4404, 410 → 4410, 400 → 4400 (docs/events.md)."""
    return 4000 + error.status if 400 <= error.status <= 499 else CLOSE_INTERNAL_ERROR


# -- origin ------------------------------------------------------------------------


def _header(scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key == name:
            return value.decode("latin1")
    return None


def origin_allowed(origin: str | None, host: str | None) -> bool:
    """May a page of ``origin`` open this socket (cross-site WebSocket hijacking)?

    Browsers always send Origin on a WebSocket handshake, so a handshake
    without one is not a page of another site and cannot ride on the console's
    cookie; it is let through to authenticate like any other client. A page's
    origin passes when it is this site (same host as the request, itself an
    allowed host), a host in ALLOWED_HOSTS, or listed in CORS_ALLOWED_ORIGINS (SDK
    pages on other origins) or CSRF_TRUSTED_ORIGINS (the console behind a proxy).
    A wildcard ALLOWED_HOSTS entry never admits other sites' pages.
    """
    if origin is None:
        return True
    parts = urlsplit(origin.strip().lower())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return False  # includes the opaque "null" origin of sandboxed frames and files
    listed = [*settings.CSRF_TRUSTED_ORIGINS, *settings.CORS_ALLOWED_ORIGINS]
    if f"{parts.scheme}://{parts.netloc}" in {o.lower() for o in listed}:
        return True
    allowed = list(settings.ALLOWED_HOSTS)
    if settings.DEBUG and not allowed:
        allowed = [".localhost", "127.0.0.1", "[::1]"]
    origin_domain, _ = split_domain_port(parts.netloc)  # keeps [::1] bracketed
    if validate_host(origin_domain, [h for h in allowed if h != "*"]):
        return True
    if host is None:
        return False
    domain, _ = split_domain_port(host.lower())
    return parts.netloc == host.lower() and bool(domain) and validate_host(domain, allowed)


class OriginGuard:
    """ASGI middleware refusing cross-site pages before any session or database work.

    The handshake is accepted and at once closed with 4403 and no frame, so a
    browser client can tell "refused" from a network failure and stop
    retrying, while the refused page receives no data at all.
    """

    def __init__(self, application) -> None:
        self.application = application

    async def __call__(self, scope, receive, send):
        if scope["type"] == "websocket" and not origin_allowed(
            _header(scope, b"origin"), _header(scope, b"host")
        ):
            message = await receive()
            if message["type"] == "websocket.connect":
                await send({"type": "websocket.accept"})
                await send({"type": "websocket.close", "code": CLOSE_ORIGIN_REFUSED})
            return None
        return await self.application(scope, receive, send)


# -- query ---------------------------------------------------------------------------


@dataclass(frozen=True)
class EventsQuery:
    after: int
    ticket: str | None
    client_id: str


def _bad_query(detail: str) -> SparkTideError:
    return SparkTideError(ErrorCode.INVALID_REQUEST, detail)


def parse_query(raw: bytes) -> EventsQuery:
    try:
        params = parse_qs(raw.decode("utf-8"), keep_blank_values=True, strict_parsing=False)
    except UnicodeDecodeError:
        raise _bad_query("The query string is not UTF-8.")

    def single(name: str) -> str | None:
        values = params.get(name)
        if values is None:
            return None
        if len(values) != 1:
            raise _bad_query(f"{name} must be given once.")
        return values[0]

    after_raw = single("after")
    if after_raw is None:
        after = 0
    elif after_raw.isascii() and after_raw.isdigit() and int(after_raw) <= MAX_SEQ:
        after = int(after_raw)
    else:
        raise _bad_query("after must be a non-negative integer (the last seq you have).")
    client_id = single("client") or ""
    if len(client_id) > MAX_CLIENT_ID_CHARS or not client_id.isprintable():
        raise _bad_query(f"client must be at most {MAX_CLIENT_ID_CHARS} printable characters.")
    return EventsQuery(after=after, ticket=single("ticket"), client_id=client_id)


def parse_ack(text: str | None) -> tuple[int, str] | None:
    """``{"ack": SEQ, "kind": "received"|"rendered"}`` → (seq, kind); anything else → None."""
    if not text or len(text) > 1000:
        return None
    try:
        frame = json.loads(text)
    except ValueError:
        return None
    if not isinstance(frame, dict):
        return None
    seq, kind = frame.get("ack"), frame.get("kind", "received")
    if type(seq) is not int or not 0 < seq <= MAX_SEQ or kind not in ACK_KINDS:
        return None
    return seq, kind


# -- shared reads ---------------------------------------------------------------------


# One event as sent: (seq, type, the frame's JSON text).
Frame = tuple[int, str, str]


def _frames(events: list[dict]) -> list[Frame]:
    return [
        (event["seq"], event["type"], json.dumps({"kind": "event", **event})) for event in events
    ]


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


# Per event loop (one in a daphne process; one per test in the test suite).
_tails: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_recorders: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def acquire_tail(run_id: str) -> RunTail:
    tails = _tails.setdefault(asyncio.get_running_loop(), {})
    tail = tails.setdefault(run_id, RunTail())
    tail.sockets += 1
    return tail


def release_tail(run_id: str) -> None:
    tails = _tails.get(asyncio.get_running_loop(), {})
    tail = tails.get(run_id)
    if tail is not None:
        tail.sockets -= 1
        if tail.sockets <= 0:
            del tails[run_id]


class SentRecorder:
    """Writes DeliveryLog.last_sent_seq for all of this process's sockets at once.

    A socket notes each send here; every ``SENT_RECORD_SECONDS`` one statement
    records them all, instead of one write per socket per event. A socket
    writes its own final value when it ends (terminal event, 4408, close).
    """

    def __init__(self) -> None:
        self.pending: dict[str, int] = {}
        self.task: asyncio.Task | None = None

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
                await _db(fanout.record_sent_many)(sent)
            except Exception:  # evidence of sending is best effort; delivery goes on
                logger.warning("could not record what was sent", exc_info=True)


def sent_recorder() -> SentRecorder:
    return _recorders.setdefault(asyncio.get_running_loop(), SentRecorder())


# -- consumers -----------------------------------------------------------------------


def error_frame(code: str, detail: str) -> str:
    return json.dumps({"kind": "error", "code": str(code), "detail": detail}, ensure_ascii=False)


class RunEventsConsumer(AsyncWebsocketConsumer):
    run_id: str
    log_id: str | None = None
    tail: RunTail | None = None
    task: asyncio.Task | None = None
    ack_task: asyncio.Task | None = None

    @property
    def channel_receive(self):
        return self._channel_receive

    @channel_receive.setter
    def channel_receive(self, receive) -> None:
        # Channels sets this to the layer's receive and lets any error of it end
        # the connection. A Redis read timeout under load would then cost the
        # client a reconnect; it only costs wake-ups, which polling covers.
        async def resilient_receive():
            while True:
                try:
                    return await receive()
                except asyncio.CancelledError:
                    raise
                except (TimeoutError, RedisTimeoutError):
                    # An idle socket's read timing out is expected: listen again.
                    logger.debug("wake-ups for %s: read timed out", self.scope["path"])
                except Exception as exc:
                    logger.warning("wake-ups for %s interrupted: %r", self.scope["path"], exc)
                    await asyncio.sleep(RESUBSCRIBE_SECONDS)

        self._channel_receive = resilient_receive

    async def dispatch(self, message) -> None:
        # Channels closes stale connections before every handler with a hop
        # through its one thread-sensitive thread. These handlers hold no
        # connection there (database work runs in _db threads, which close
        # their own), and with hundreds of subscribers that hop per wake-up
        # would serialise the fan-out. websocket_disconnect still closes.
        handler = getattr(self, get_handler_name(message), None)
        if handler is None:
            raise ValueError(f"No handler for message type {message['type']}")
        await handler(message)

    async def connect(self) -> None:
        kwargs = self.scope["url_route"]["kwargs"]
        self.run_id = kwargs["run_id"]
        try:
            query = parse_query(self.scope.get("query_string", b""))
            run, user = await _db(fanout.access_run_for_watcher)(
                app_slug=kwargs["app"],
                run_id=self.run_id,
                ticket=query.ticket,
                session_user=self._session_user(),
            )
        except SparkTideError as error:
            await self.refuse(error.code, error.detail, close_code(error))
            return
        self.run, self.client_id = run, query.client_id
        self.config = fanout.delivery_config()
        # Cursors: what the client had, what was sent, and the highest seq a
        # wake-up announced.
        self.after = self.sent = self.wanted = query.after
        self.acked: dict[str, int] = {}
        self.pending_acks: dict[str, int] = {}
        self.stalled_since: float | None = None
        self.wake = asyncio.Event()
        self.woken_at = time.monotonic()
        # Subscribe before accepting and before the first read: an event
        # committed after that read wakes us, one committed before it is in it.
        self.subscribed = await self._subscribe()
        await self.accept()
        log = await _db(fanout.open_delivery)(
            run=run, user=user, client_id=query.client_id, after=query.after
        )
        self.log_id = log.connection_id
        observability.websocket_opened()
        self.tail = acquire_tail(self.run_id)
        ended = await _db(fanout.terminal_seq)(run)
        if ended is not None and ended <= query.after:
            await self.close(CLOSE_NORMAL)  # the client already has the whole run
            return
        self.task = asyncio.create_task(self._deliver())

    def _session_user(self):
        user = self.scope.get("user")
        return user if user is not None and user.is_authenticated else None

    async def refuse(self, code: str, detail: str, close: int) -> None:
        await self.accept()
        await self.send(text_data=error_frame(code, detail))
        await self.close(close)

    async def _subscribe(self) -> bool:
        if self.channel_layer is None:
            return False
        try:
            await self.channel_layer.group_add(run_group(self.run_id), self.channel_name)
        except Exception:  # wake-ups are an optimisation: poll, and try again
            logger.warning("could not subscribe to %s; polling", self.run_id, exc_info=True)
            return False
        return True

    # -- the single sender --------------------------------------------------------

    async def _deliver(self) -> None:
        try:
            while True:
                self.wake.clear()
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
        except Exception:
            logger.exception("delivery of %s to %s failed", self.run_id, self.log_id)
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
        """Send everything after the cursor the window allows; True once the run has ended."""
        while True:
            room = self._room()
            if room <= 0:
                # At its window: the client is behind only if there is more to send.
                if self.stalled_since is None and await _db(fanout.has_events_after)(
                    self.run_id, after=self.sent
                ):
                    self.stalled_since = time.monotonic()
                return False
            limit = min(room, self.config.page_size)
            frames = await self._read(limit)
            if not frames:
                return False
            for seq, type_, text in frames:
                if seq != self.sent + 1:
                    # The log has no holes (seq is assigned under the run's row
                    # lock and committed with it); never send past one.
                    logger.error("gap in %s after seq %s", self.run_id, self.sent)
                    return False
                # The cursor moves before the send so an ack racing the send
                # is not taken for an ack of an unsent event.
                self.sent = seq
                await self.send(text_data=text)
                if type_ in TERMINAL_EVENT_TYPES:
                    await self._record_sent()
                    return True
            sent_recorder().note(cast(str, self.log_id), self.sent)  # set by connect
            if len(frames) < limit:
                return False

    async def _read(self, limit: int) -> list[Frame]:
        """The next frames after the cursor: (seq, type, text)."""
        if self.tail is None or self.wanted <= self.sent:
            return _frames(await _db(fanout.read_events)(self.run, after=self.sent, limit=limit))
        want: dict[str, Any] = {
            "after": self.sent,
            "limit": limit,
            "want": self.wanted,
            "since": self.woken_at,
        }
        frames = self.tail.cached(**want)
        if frames is None:
            # One socket reads for all of this run's sockets woken with it.
            async with self.tail.lock:
                frames = self.tail.cached(**want)
                if frames is None:
                    started = time.monotonic()
                    read = await _db(fanout.read_events)(self.run, after=self.sent, limit=limit)
                    frames = _frames(read)
                    self.tail.store(frames, read_started=started)
        return frames

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
        await _db(fanout.record_sent)(connection_id=self.log_id, seq=self.sent)

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

    async def run_wakeup(self, message) -> None:
        seq = message.get("seq")
        if isinstance(seq, int) and seq > self.wanted:
            self.wanted = seq
            self.woken_at = self.tail.wake_time(seq) if self.tail else time.monotonic()
        if not isinstance(seq, int) or seq > self.sent:
            self.wake.set()

    async def receive(self, text_data=None, bytes_data=None) -> None:
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
        while self.pending_acks:
            acks, self.pending_acks = self.pending_acks, {}
            await _db(fanout.record_acks)(
                run_id=self.run_id,
                connection_id=self.log_id,
                client_id=self.client_id,
                acks=acks,
            )

    async def disconnect(self, code) -> None:
        if self.task is not None and self.task is not asyncio.current_task():
            self.task.cancel()
            await asyncio.gather(self.task, return_exceptions=True)
        if self.log_id is None:
            return
        observability.websocket_closed()
        if self.tail is not None:
            release_tail(self.run_id)
        if self.subscribed:
            try:
                await self.channel_layer.group_discard(run_group(self.run_id), self.channel_name)
            except Exception:  # the membership expires with the group (channels_redis)
                logger.warning("could not unsubscribe from %s", self.run_id, exc_info=True)
        if self.ack_task is not None:
            await asyncio.gather(self.ack_task, return_exceptions=True)
        await self._flush_acks()
        sent_recorder().forget(self.log_id)
        await _db(fanout.close_delivery)(connection_id=self.log_id, last_sent_seq=self.sent)


class NotFoundConsumer(AsyncWebsocketConsumer):
    """Any other WebSocket path: the same 4404 a missing run gets."""

    async def connect(self) -> None:
        error = not_found()
        await self.accept()
        await self.send(text_data=error_frame(error.code, error.detail))
        await self.close(close_code(error))
