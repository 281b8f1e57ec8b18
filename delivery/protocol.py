"""The run events WebSocket's wire protocol: the query, the client's ack frames,
error frames and close codes (docs/events.md). Pure functions, no I/O."""

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs

from foundation.errors import ErrorCode, SparkTideError

# The ASGI callables, as the servers under the delivery layer call them.
Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

CLOSE_NORMAL = 1000
CLOSE_ORIGIN_REFUSED = 4403
CLOSE_TOO_SLOW = 4408
# A fault of the server, not of the client: reconnect with backoff and resume
# from the cursor (docs/events.md). 1011 would say the same, but the WebSocket
# library under daphne refuses to send any code outside 1000 and 3000–4999 — a
# socket told to close with 1011 stayed open and silent — so the server sends
# 4000 + the HTTP status instead, like every other close.
CLOSE_INTERNAL_ERROR = 4500
CLOSE_DATABASE_UNAVAILABLE = 4503
MAX_SEQ = 2**31 - 1
MAX_CLIENT_ID_CHARS = 100
ACK_KINDS = frozenset({"received", "rendered"})


def close_code(error: SparkTideError) -> int:
    """4000 + the HTTP status: 401 → 4401, 404 → 4404, 410 → 4410, 503 → 4503 (docs/events.md)."""
    return 4000 + error.status if 400 <= error.status <= 599 else CLOSE_INTERNAL_ERROR


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


def error_frame(code: str, detail: str) -> str:
    return json.dumps({"kind": "error", "code": str(code), "detail": detail}, ensure_ascii=False)
