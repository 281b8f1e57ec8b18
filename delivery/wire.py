"""The fast path of an event frame to a socket served by daphne: framed once, written
straight to the socket's transport.

Through the ASGI interface every frame of every socket passes channels' send (the
session middleware), daphne's ``handle_reply`` and autobahn's ``sendMessage`` →
``sendFrame`` → ``sendData`` (which formats its debug arguments even with debug
logging off) before Twisted's ``write``: 2–6 ms a socket an event on the loaded
machine, the cost that bounded fan-out (docs/performance.md). A text frame that
daphne would send unfragmented, uncompressed and unmasked is the same bytes
whoever frames it (autobahn's ``PreparedMessage``, the broadcast helper its
``sendPreparedMessage`` sends), so a run's frame is framed once and written to
each open socket's transport.

Only when daphne is the server, the socket is open and daphne still holds it, no
compression was negotiated, nothing is queued ahead in autobahn's send queue and
the frame is within the size daphne allows unfragmented; anything else — and every
socket of channels' test communicator — takes the plain ASGI send, which stays the
fallback. What is sent, and when, is decided by the consumer as before: this only
changes how the bytes of a frame reach the socket.
"""

from __future__ import annotations

import functools
import logging
from typing import Any

logger = logging.getLogger(__name__)

try:  # the ASGI server of production; absent, every socket takes the plain send
    from autobahn.websocket.protocol import PreparedMessage, WebSocketProtocol
    from channels.sessions import InstanceSessionWrapper
    from daphne.server import Server
    from twisted.internet.tcp import Server as TCPServerTransport
except ImportError:  # pragma: no cover - daphne and autobahn are dependencies
    Server = None  # type: ignore[assignment,misc]


# One frame on the wire: (payload length, the framed bytes).
Wire = tuple[int, bytes]


def frame_text(text: str) -> Wire:
    """A text message as one unmasked, unfragmented, uncompressed server frame."""
    payload = text.encode("utf-8")
    return len(payload), PreparedMessage(payload, False, False, True).payloadHybi


class DirectSocket:
    """Writes framed messages to one daphne socket's transport while that is safe."""

    __slots__ = ("server", "protocol")

    def __init__(self, server: Any, protocol: Any) -> None:
        self.server = server
        self.protocol = protocol

    def writable(self, payload_len: int) -> bool:
        """Would daphne and autobahn send a message of this size as one plain frame now?"""
        protocol = self.protocol
        held = self.server.connections.get(protocol)
        return (
            held is not None
            and not held.get("disconnected")
            and protocol.state == WebSocketProtocol.STATE_OPEN
            and protocol.send_state == WebSocketProtocol.SEND_STATE_GROUND
            and protocol._perMessageCompress is None
            and not protocol.send_queue
            and not protocol.maskServerFrames
            and not protocol.logFrames
            and not protocol.logOctets
            and not (0 < protocol.autoFragmentSize < payload_len)
            and not (0 < protocol.maxMessagePayloadSize < payload_len)
            and protocol.transport is not None
        )

    def write(self, wires: list[Wire]) -> bool:
        """Write these frames in order, or nothing (False: the caller sends them itself)."""
        if not wires or not self.writable(max(length for length, _ in wires)):
            return False
        protocol = self.protocol
        data = wires[0][1] if len(wires) == 1 else b"".join(raw for _, raw in wires)
        write_now(protocol.transport, data)
        # The counters autobahn's own send path keeps.
        stats = protocol.trafficStats
        payload = sum(length for length, _ in wires)
        stats.outgoingWebSocketMessages += len(wires)
        stats.outgoingWebSocketFrames += len(wires)
        stats.outgoingOctetsAppLevel += payload
        stats.outgoingOctetsWebSocketLevel += payload
        stats.outgoingOctetsWireLevel += len(data)
        return True


def write_now(transport: Any, data: bytes) -> None:
    """``transport.write(data)``, sent at once when nothing is buffered ahead of it.

    Twisted buffers every write until the reactor's next turn, registering and
    unregistering the socket for writability around it: two ``epoll_ctl`` calls, a
    loop turn and a ``send`` per socket per event. With nothing buffered, the
    bytes go to the kernel now, in the same order; whatever it does not take (a
    full socket buffer, an error) is left to Twisted's own write, which buffers it
    behind nothing and handles the error as it always does.
    """
    if (
        type(transport) is TCPServerTransport
        and transport.connected
        and not transport.disconnecting
        and not transport._writeDisconnected
        and not transport.dataBuffer
        and not transport._tempDataBuffer
    ):
        try:
            sent = transport.socket.send(data)
        except BlockingIOError:
            sent = 0
        except OSError:
            sent = 0  # Twisted's write meets the error again and closes as usual
        if sent >= len(data):
            return
        data = data[sent:]
    transport.write(data)


def direct_socket(send: Any) -> DirectSocket | None:
    """The daphne socket behind a consumer's ASGI ``send``, or None (another server,
    a test communicator, or a wrapper that does more than pass a frame on)."""
    if Server is None:
        return None
    for _ in range(4):
        if isinstance(send, functools.partial):
            if getattr(send.func, "__func__", None) is Server.handle_reply and len(send.args) == 1:
                server, protocol = getattr(send.func, "__self__", None), send.args[0]
                if server is not None and isinstance(protocol, WebSocketProtocol):
                    return DirectSocket(server, protocol)
            return None
        # channels' session middleware passes websocket.send on untouched (it saves
        # sessions on accept and HTTP responses only).
        owner = getattr(send, "__self__", None)
        if isinstance(owner, InstanceSessionWrapper) and getattr(send, "__func__", None) is (
            InstanceSessionWrapper.send
        ):
            send = owner.real_send
            continue
        return None
    return None
