"""Wake-ups: the channel-layer messages that tell a run's consumers to re-read the log, or
its live text stream's row.

Registered with the event log (``runs.events.register_waker``) when the app is
ready. Best effort by design: the log is the truth and consumers poll.

A wake-up never pays for its own setup. Inside the ASGI server (the in-process
worker) it is handed to the server's loop, which owns the in-memory layer's
queues. Anywhere else (``run_worker`` processes, management commands) one
daemon thread per process runs an event loop that keeps the layer — and so its
Redis connections — for the life of the process; a wake-up is submitted to it
without waiting (no event loop and no connection per event).

Stream wake-ups are not one message per delta. Every daphne process receives all its
messages through ONE Redis key, popped one round trip at a time, and channels-redis drops a
group message silently once that key holds ``capacity`` (100) of them: one message per
delta (20 a second per streaming run) filled it at 30 runs at once, and deltas and the
log's wake-ups with them were late by a second or lost (docs/performance.md, "The text
stream"). So a process gathers the runs whose stream moved and sends them as ONE
``run.streams`` message to the ``streams`` group, which every daphne process with a socket
joins: the first at once, then at most one every ``STREAM_WAKE_SECONDS``, whatever the
number of runs. A socket reads the text it has not sent from the row (the row is the
truth), so merging wake-ups loses nothing.

A process that ends does not drop what it announced: the wake-ups still on their way when
it exits (a worker stopped right after its run's last commit, a one-off ``execute_run``) are
sent first, for at most ``EXIT_FLUSH_SECONDS`` (``atexit``; the daemon thread would
otherwise die with them).
"""

import asyncio
import atexit
import contextlib
import logging
import threading
import time
from concurrent.futures import Future
from typing import Any, cast

from asgiref.sync import async_to_sync
from channels.layers import BaseChannelLayer, InMemoryChannelLayer, get_channel_layer

from delivery.protocol import ASGIApp, Receive, Scope, Send

logger = logging.getLogger(__name__)

# The ASGI server's event loop, remembered on its first request: the in-memory
# channel layer's queues belong to it, so wake-ups from the in-process worker's
# thread are handed to that loop instead of being sent from a foreign one.
server_loop: asyncio.AbstractEventLoop | None = None

_sender_loop: asyncio.AbstractEventLoop | None = None
_sender_lock = threading.Lock()

# The group every daphne process with a socket joins for the stream wake-ups (not a run's
# group: run ids start with "run_"), and how often a process sends one at most.
STREAM_GROUP = "streams"
STREAM_WAKE_SECONDS = 0.02
# How long a process that exits waits for its wake-ups still being sent.
EXIT_FLUSH_SECONDS = 5.0

# Wake-ups submitted to the sending loop and not yet sent.
_in_flight: set[Future[Any]] = set()
_in_flight_lock = threading.Lock()


class RememberServerLoop:
    """ASGI wrapper recording the server's loop (in-process worker only)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        global server_loop
        server_loop = asyncio.get_running_loop()
        return await self.app(scope, receive, send)


def run_group(run_id: str) -> str:
    return f"run.{run_id}"


def _sender() -> asyncio.AbstractEventLoop:
    """This process's wake-up loop, started on first use."""
    global _sender_loop
    with _sender_lock:
        if _sender_loop is None or _sender_loop.is_closed():
            loop = asyncio.new_event_loop()
            threading.Thread(target=loop.run_forever, name="sparktide-wakeups", daemon=True).start()
            _sender_loop = loop
        return _sender_loop


def _submitted(future: Future[Any]) -> None:
    with _in_flight_lock:
        _in_flight.add(future)
    future.add_done_callback(_sent)


def _sent(future: Future[Any]) -> None:
    with _in_flight_lock:
        _in_flight.discard(future)
    if not future.cancelled() and future.exception() is not None:
        logger.warning("a wake-up was lost: %s", future.exception())


@atexit.register
def flush_at_exit(timeout: float = EXIT_FLUSH_SECONDS) -> None:
    """Wait, at most ``timeout`` seconds in all, for the wake-ups still being sent (a
    failure is logged by ``_sent``; one still unsent then is left to the sockets' poll)."""
    deadline = time.monotonic() + timeout
    with _in_flight_lock:
        pending = list(_in_flight)
    for future in pending:
        with contextlib.suppress(Exception):
            future.result(max(0.0, deadline - time.monotonic()))


def wake_run(run_id: str, seq: int) -> None:
    _group_send(run_id, {"type": "run.wakeup", "seq": seq})


def send_stream(run_id: str, data: dict[str, Any]) -> None:
    """The run's live text moved (runs/streams.py): its sockets are woken to read the row,
    through this process's next ``run.streams`` message (the delta itself is not sent)."""
    _stream_wakes.add(run_id)


class StreamWakes:
    """The runs whose stream moved since this process last said so, sent as one message.

    The first change is sent at once; while a message was sent less than
    ``STREAM_WAKE_SECONDS`` ago, changes gather for the next one. Called from any thread
    (the runs' threads); the send runs on the loop that sends wake-ups."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.pending: set[str] = set()
        self.scheduled = False
        self.last_sent = 0.0

    def add(self, run_id: str) -> None:
        layer = get_channel_layer()
        if layer is None:
            return
        loop = server_loop
        if isinstance(layer, InMemoryChannelLayer) and (loop is None or loop.is_closed()):
            # One process, no server loop (tests, commands): send on the caller's terms.
            async_to_sync(layer.group_send)(STREAM_GROUP, _streams_message([run_id]))
            return
        with self.lock:
            self.pending.add(run_id)
            if self.scheduled:
                return
            self.scheduled = True
        if not isinstance(layer, InMemoryChannelLayer):
            loop = _sender()
        future = asyncio.run_coroutine_threadsafe(
            self._flush(layer), cast(asyncio.AbstractEventLoop, loop)
        )
        if isinstance(layer, InMemoryChannelLayer):
            # Nobody outside this process listens: nothing to send before it exits.
            future.add_done_callback(_sent)
        else:
            _submitted(future)

    async def _flush(self, layer: BaseChannelLayer) -> None:
        wait = self.last_sent + STREAM_WAKE_SECONDS - time.monotonic()
        if wait > 0:
            await asyncio.sleep(wait)
        with self.lock:
            runs, self.pending, self.scheduled = self.pending, set(), False
            self.last_sent = time.monotonic()
        if runs:
            await layer.group_send(STREAM_GROUP, _streams_message(sorted(runs)))


def _streams_message(runs: list[str]) -> dict[str, Any]:
    return {"type": "run.streams", "runs": runs}


_stream_wakes = StreamWakes()


def _group_send(run_id: str, message: dict[str, Any]) -> None:
    layer = get_channel_layer()
    if layer is None:
        return
    loop = server_loop
    if loop is not None and isinstance(layer, InMemoryChannelLayer) and not loop.is_closed():
        asyncio.run_coroutine_threadsafe(layer.group_send(run_group(run_id), message), loop)
        return
    if isinstance(layer, InMemoryChannelLayer):
        # One process, no server loop (tests, commands): nobody else can be listening
        # on another loop, so send on the caller's terms.
        async_to_sync(layer.group_send)(run_group(run_id), message)
        return
    _submitted(
        asyncio.run_coroutine_threadsafe(layer.group_send(run_group(run_id), message), _sender())
    )
