"""A minimal RFC 6455 WebSocket client on asyncio streams.

Channels' communicator cannot cross processes and the ``websockets`` package is
not a dependency, so the two-process test and bench/delivery.py talk to a real
daphne through this: text frames, close codes, ping/pong, fragmentation.
"""

import asyncio
import base64
import hashlib
import json
import os
import struct

_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
TEXT, BINARY, CLOSE, PING, PONG, CONTINUATION = 0x1, 0x2, 0x8, 0x9, 0xA, 0x0


class HandshakeRefused(Exception):
    pass


class Closed(Exception):
    def __init__(self, code: int | None, reason: str = "") -> None:
        super().__init__(f"closed with {code} {reason}".strip())
        self.code = code
        self.reason = reason


def _mask(payload: bytes, key: bytes) -> bytes:
    if not payload:
        return payload
    n = len(payload)
    repeated = (key * (n // 4 + 1))[:n]
    return (int.from_bytes(payload, "big") ^ int.from_bytes(repeated, "big")).to_bytes(n, "big")


def _frame(opcode: int, payload: bytes) -> bytes:
    n = len(payload)
    if n < 126:
        head = struct.pack("!BB", 0x80 | opcode, 0x80 | n)
    elif n < 65536:
        head = struct.pack("!BBH", 0x80 | opcode, 0x80 | 126, n)
    else:
        head = struct.pack("!BBQ", 0x80 | opcode, 0x80 | 127, n)
    key = os.urandom(4)
    return head + key + _mask(payload, key)


class WSClient:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.close_code: int | None = None

    @classmethod
    async def connect(
        cls,
        host: str,
        port: int,
        path: str,
        *,
        origin: str | None = None,
        headers: tuple[tuple[str, str], ...] = (),
        timeout: float = 10.0,
    ) -> "WSClient":
        reader, writer = await asyncio.wait_for(
            asyncio.open_connection(host, port, limit=2**24), timeout
        )
        key = base64.b64encode(os.urandom(16)).decode()
        lines = [
            f"GET {path} HTTP/1.1",
            f"Host: {host}:{port}",
            "Upgrade: websocket",
            "Connection: Upgrade",
            f"Sec-WebSocket-Key: {key}",
            "Sec-WebSocket-Version: 13",
        ]
        if origin is not None:
            lines.append(f"Origin: {origin}")
        lines += [f"{name}: {value}" for name, value in headers]
        writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin1"))
        await writer.drain()
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout)
        except (asyncio.IncompleteReadError, ConnectionError) as exc:
            writer.close()
            raise HandshakeRefused(str(exc))
        status, *header_lines = head.decode("latin1").split("\r\n")
        if status.split(" ")[1:2] != ["101"]:
            writer.close()
            raise HandshakeRefused(status)
        received = {
            name.strip().lower(): value.strip()
            for name, _, value in (line.partition(":") for line in header_lines if line)
        }
        expected = base64.b64encode(hashlib.sha1((key + _GUID).encode()).digest()).decode()
        if received.get("sec-websocket-accept") != expected:
            writer.close()
            raise HandshakeRefused("bad Sec-WebSocket-Accept")
        return cls(reader, writer)

    async def _read_frame(self) -> tuple[bool, int, bytes]:
        first, second = await self.reader.readexactly(2)
        length = second & 0x7F
        if length == 126:
            (length,) = struct.unpack("!H", await self.reader.readexactly(2))
        elif length == 127:
            (length,) = struct.unpack("!Q", await self.reader.readexactly(8))
        key = await self.reader.readexactly(4) if second & 0x80 else None
        payload = await self.reader.readexactly(length)
        if key:
            payload = _mask(payload, key)
        return bool(first & 0x80), first & 0x0F, payload

    async def recv(self, timeout: float = 10.0) -> str:
        """The next text message; raises Closed when the server closes."""
        return await asyncio.wait_for(self._recv(), timeout)

    async def _recv(self) -> str:
        if self.close_code is not None:
            raise Closed(self.close_code)
        parts: list[bytes] = []
        while True:
            try:
                fin, opcode, payload = await self._read_frame()
            except (asyncio.IncompleteReadError, ConnectionError):
                self.close_code = 1006
                raise Closed(1006, "connection lost")
            if opcode == CLOSE:
                code = struct.unpack("!H", payload[:2])[0] if len(payload) >= 2 else 1005
                self.close_code = code
                await self._send_frame(CLOSE, payload[:2])
                self.writer.close()
                raise Closed(code, payload[2:].decode("utf-8", "replace"))
            if opcode == PING:
                await self._send_frame(PONG, payload)
                continue
            if opcode == PONG:
                continue
            parts.append(payload)
            if fin:
                return b"".join(parts).decode("utf-8")

    async def recv_json(self, timeout: float = 10.0):
        return json.loads(await self.recv(timeout))

    async def _send_frame(self, opcode: int, payload: bytes) -> None:
        try:
            self.writer.write(_frame(opcode, payload))
            await self.writer.drain()
        except ConnectionError:
            pass

    async def send_text(self, text: str) -> None:
        await self._send_frame(TEXT, text.encode("utf-8"))

    async def send_json(self, data) -> None:
        await self.send_text(json.dumps(data))

    async def close(self, code: int = 1000, timeout: float = 2.0) -> None:
        """Close politely, waiting briefly for the server's close frame."""
        if self.close_code is None:
            await self._send_frame(CLOSE, struct.pack("!H", code))
            try:
                while True:
                    await self.recv(timeout)
            except (Closed, TimeoutError):
                pass
        self.writer.close()

    def abort(self) -> None:
        self.writer.close()
