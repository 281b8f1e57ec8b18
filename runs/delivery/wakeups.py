"""Wake-ups: the channel-layer message that tells a run's consumers to re-read the log.

Registered with the event log (``runs.events.register_waker``) when the app is
ready. Best effort by design: the log is the truth and consumers poll.
"""

import asyncio
import logging

from asgiref.sync import async_to_sync
from channels.layers import InMemoryChannelLayer, get_channel_layer

logger = logging.getLogger(__name__)

# The ASGI server's event loop, remembered on its first request: the in-memory
# channel layer's queues belong to it, so wake-ups from the in-process worker's
# thread are handed to that loop instead of being sent from a foreign one.
server_loop: asyncio.AbstractEventLoop | None = None


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


def wake_run(run_id: str, seq: int) -> None:
    layer = get_channel_layer()
    if layer is None:
        return
    message = {"type": "run.wakeup", "seq": seq}
    loop = server_loop
    if loop is not None and isinstance(layer, InMemoryChannelLayer) and not loop.is_closed():
        asyncio.run_coroutine_threadsafe(layer.group_send(run_group(run_id), message), loop)
        return
    async_to_sync(layer.group_send)(run_group(run_id), message)
