"""The run events WebSocket: ``ws/v1/apps/{app}/runs/{runId}/events?after=SEQ``.

The edge: it parses the query and the client's frames, calls one access function,
subscribes the socket to the run's wake-ups and hands the rest to the socket's
``RunSender`` (delivery/sender.py), which sends what the log holds after the cursor.
The contract (frames, close codes, acks) is in docs/events.md.
"""

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from channels.consumer import get_handler_name
from channels.generic.websocket import AsyncWebsocketConsumer
from django.contrib.auth.models import User

from delivery import fanout
from delivery.protocol import CLOSE_NORMAL, close_code, error_frame, parse_ack, parse_query
from delivery.sender import CONNECTION_ERRORS, RESUBSCRIBE_SECONDS, RunSender
from delivery.shared import (
    RunWakeups,
    acquire_tail,
    db_call,
    release_tail,
    run_wakeups,
    stream_wakeups,
)
from delivery.wire import direct_socket
from foundation import observability
from foundation.errors import ErrorCode, SparkTideError, not_found

logger = logging.getLogger(__name__)


async def _receive_nothing() -> dict[str, Any]:
    await asyncio.get_running_loop().create_future()  # never set
    raise AssertionError("unreachable")


class RunEventsConsumer(AsyncWebsocketConsumer):
    run_id: str
    staff: bool = False
    sender: RunSender | None = None
    wakeups: RunWakeups | None = None
    streams: RunWakeups | None = None
    task: asyncio.Task[None] | None = None
    accepted: bool = False

    @property
    def channel_receive(self) -> Callable[[], Awaitable[dict[str, Any]]]:
        return self._channel_receive

    @channel_receive.setter
    def channel_receive(self, receive: Callable[[], Awaitable[dict[str, Any]]]) -> None:
        # Channels gives every consumer a channel of its own to receive on. This
        # socket's wake-ups come through its run's one subscription in this
        # process (RunWakeups, which calls its sender's wake_up), so its own channel
        # is never in a group and nothing is ever received on it: wait forever
        # instead of holding a receive of the layer open per socket.
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
        # Every read re-checks the gate this socket was opened through.
        self.staff = query.ticket is None
        sender = self.sender = RunSender(
            run=run,
            staff=self.staff,
            client_id=query.client_id,
            after=query.after,
            send=self._send_text,
            close=self.close,
            subscribe=self._subscribe if self.channel_layer is not None else None,
        )
        # Subscribe before accepting and before the first read: an event
        # committed after that read wakes us, one committed before it is in it.
        sender.subscribed = await self._subscribe()
        await self.accept()
        log = await db_call(fanout.open_delivery)(
            run=run, user=user, client_id=query.client_id, after=query.after
        )
        sender.start(
            log_id=log.connection_id,
            tail=acquire_tail((self.run_id, self.staff), sender),
            direct=direct_socket(self.base_send),
        )
        observability.websocket_opened()
        ended = await db_call(fanout.terminal_seq)(run)
        if ended is not None and ended <= query.after:
            await self.close(CLOSE_NORMAL)  # the client already has the whole run
            return
        self.task = asyncio.create_task(sender.deliver())

    def _session_user(self) -> User | None:
        user = self.scope.get("user")
        return user if user is not None and user.is_authenticated else None

    async def _send_text(self, text: str) -> None:
        await self.send(text_data=text)

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
        """Join this process's subscriptions to the run's wake-ups and to the streams'."""
        if self.channel_layer is None or self.sender is None:
            return False
        if self.wakeups is None:
            self.wakeups, self.streams = run_wakeups(self.run_id), stream_wakeups()
        joined = await self.wakeups.join(
            self.sender, self.channel_layer, retry_seconds=RESUBSCRIBE_SECONDS
        )
        return (
            joined
            and self.streams is not None
            and await self.streams.join(
                self.sender, self.channel_layer, retry_seconds=RESUBSCRIBE_SECONDS
            )
        )

    async def run_wakeup(self, message: dict[str, Any]) -> None:
        if self.sender is not None:
            self.sender.wake_up(message)

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        if self.sender is None or self.sender.log_id is None:
            return
        ack = parse_ack(text_data)
        if ack is None:
            return  # not a frame of this protocol: ignored, the stream goes on
        self.sender.ack(*ack)

    async def disconnect(self, code: int) -> None:
        if self.task is not None and self.task is not asyncio.current_task():
            self.task.cancel()
            await asyncio.gather(self.task, return_exceptions=True)
        sender = self.sender
        if sender is not None and self.wakeups is not None:
            await self.wakeups.leave(sender, self.channel_layer)
        if sender is not None and self.streams is not None:
            await self.streams.leave(sender, self.channel_layer)
        if sender is None or sender.log_id is None:
            return
        observability.websocket_closed()
        release_tail((self.run_id, self.staff), sender)
        await sender.finish()


class NotFoundConsumer(AsyncWebsocketConsumer):
    """Any other WebSocket path: the same 4404 a missing run gets."""

    async def connect(self) -> None:
        error = not_found()
        await self.accept()
        await self.send(text_data=error_frame(error.code, error.detail))
        await self.close(close_code(error))
