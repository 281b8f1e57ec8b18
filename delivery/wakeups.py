"""Wake-ups: the channel-layer message that tells a run's consumers to re-read the log.

Registered with the event log (``runs.events.register_waker``) when the app is
ready. Best effort by design: the log is the truth and consumers poll.

A wake-up never pays for its own setup. Inside the ASGI server (the in-process
worker) it is handed to the server's loop, which owns the in-memory layer's
queues. Anywhere else (``run_worker`` processes, management commands) one
daemon thread per process runs an event loop that keeps the layer — and so its
Redis connections — for the life of the process; a wake-up is submitted to it
without waiting (no event loop and no connection per event).
"""

import asyncio
import logging
import threading

from asgiref.sync import async_to_sync
from channels.layers import InMemoryChannelLayer, get_channel_layer

logger = logging.getLogger(__name__)

# The ASGI server's event loop, remembered on its first request: the in-memory
# channel layer's queues belong to it, so wake-ups from the in-process worker's
# thread are handed to that loop instead of being sent from a foreign one.
server_loop: asyncio.AbstractEventLoop | None = None

_sender_loop: asyncio.AbstractEventLoop | None = None
_sender_lock = threading.Lock()


class RememberServerLoop:
    """ASGI wrapper recording the server's loop (in-process worker only)."""

    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, scope, receive, send):
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


def _log_failure(future) -> None:
    if not future.cancelled() and future.exception() is not None:
        logger.warning("a wake-up was lost: %s", future.exception())


def wake_run(run_id: str, seq: int) -> None:
    _group_send(run_id, {"type": "run.wakeup", "seq": seq})


def send_stream(run_id: str, data: dict) -> None:
    """A delta of the run's live text (runs/streams.py): to the run's group, never the log."""
    _group_send(run_id, {"type": "run.stream", "data": data})


def _group_send(run_id: str, message: dict) -> None:
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
    future = asyncio.run_coroutine_threadsafe(
        layer.group_send(run_group(run_id), message), _sender()
    )
    future.add_done_callback(_log_failure)
