"""What the sync and async clients share: paths, query parameters, response parsing,
and the event stream's resume policy. No I/O here."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from datetime import datetime
from typing import Any, Optional, Union
from urllib.parse import quote, urlencode, urlsplit, urlunsplit

import httpx

from sparktide_client.errors import (
    ClientErrorCode,
    InvalidResponseError,
    NetworkError,
    RequestTimeoutError,
    SparkTideError,
    StreamError,
    api_error,
)

TERMINAL_EVENT_TYPES = frozenset({"run.completed", "run.partial", "run.failed", "run.cancelled"})
ACCEPT = "application/json, application/problem+json"
# A run-time alias: spelled with Union so that Python 3.9 can evaluate it.
Token = Union[str, Callable[[], Optional[str]], None]


def segment(value: object, what: str) -> str:
    """One path segment, fully percent-encoded: an ID is data, never a path."""
    if not isinstance(value, str) or value == "":
        raise ValueError(f"{what} must be a non-empty string")
    encoded = quote(value, safe="")
    return encoded.replace(".", "%2E") if encoded in (".", "..") else encoded


def app_path(app: str, *parts: tuple[object, str] | str) -> str:
    pieces = ["v1", "apps", segment(app, "app")]
    for part in parts:
        pieces.append(part if isinstance(part, str) else segment(*part))
    return "/" + "/".join(pieces)


def bearer_headers(token: Token) -> dict[str, str]:
    raw = token() if callable(token) else token
    headers = {"Accept": ACCEPT}
    if raw:
        headers["Authorization"] = f"Bearer {raw}"
    return headers


def run_body(agent: str, input: str, session_id: str | None) -> dict:
    body: dict[str, Any] = {"agent": agent, "input": input}
    if session_id is not None:
        body["sessionId"] = session_id
    return body


def feedback_body(rating: str, note: str | None, block: str | None) -> dict:
    """``{rating, note?, block?}``: ``rating`` "up" or "down"; the server checks it, the
    note's length (≤ 2000) and that ``block`` is an answer block of the run."""
    body: dict[str, Any] = {"rating": rating}
    if note is not None:
        body["note"] = note
    if block is not None:
        body["block"] = block
    return body


def runs_query(
    *,
    status: str | None,
    session_id: str | None,
    created_after: datetime | str | None,
    created_before: datetime | str | None,
    limit: int | None,
    cursor: str | None,
) -> dict[str, str]:
    def stamp(value: datetime | str) -> str:
        if isinstance(value, datetime):
            if value.tzinfo is None:
                raise ValueError("created_after/created_before must be timezone-aware")
            return value.isoformat()
        return value

    query: dict[str, str] = {}
    if status is not None:
        query["status"] = status
    if session_id is not None:
        query["sessionId"] = session_id
    if created_after is not None:
        query["createdAfter"] = stamp(created_after)
    if created_before is not None:
        query["createdBefore"] = stamp(created_before)
    if limit is not None:
        query["limit"] = str(limit)
    if cursor is not None:
        query["cursor"] = cursor
    return query


def transport_error(error: httpx.TransportError) -> SparkTideError:
    if isinstance(error, httpx.TimeoutException):
        return RequestTimeoutError(ClientErrorCode.TIMEOUT, 0, str(error) or "timed out")
    return NetworkError(ClientErrorCode.NETWORK_ERROR, 0, str(error) or type(error).__name__)


def result(response: httpx.Response) -> Any:
    """The JSON of a success, None for an empty one (202), else the typed error."""
    if response.is_success:
        if not response.content:
            return None
        try:
            return response.json()
        except ValueError:
            raise InvalidResponseError(
                ClientErrorCode.INVALID_RESPONSE, response.status_code, "The body is not JSON."
            ) from None
    try:
        problem = response.json()
    except ValueError:
        problem = None
    raise api_error(response.status_code, problem, response.reason_phrase)


def socket_url(base_url: str, app: str, run_id: str, *, after: int, ticket: str) -> str:
    parts = urlsplit(base_url)
    scheme = {"http": "ws", "https": "wss", "ws": "ws", "wss": "wss"}.get(parts.scheme)
    if scheme is None:
        raise ValueError(f"unsupported base URL scheme {parts.scheme!r}")
    path = parts.path.rstrip("/") + "/ws" + app_path(app, "runs", (run_id, "run_id"), "events")
    return urlunsplit(
        (scheme, parts.netloc, path, urlencode({"after": after, "ticket": ticket}), "")
    )


def backoff(attempt: int) -> float:
    """250 ms doubling per consecutive failure, capped at 5 s, half of it jittered."""
    ceiling = min(5.0, 0.25 * 2 ** max(0, attempt))
    return ceiling / 2 + random.random() * ceiling / 2  # noqa: S311 - jitter, not a secret


def stream_frame(message: str | bytes) -> dict | None:
    """A ``kind: "stream"`` frame (the live text of a model turn, docs/events.md) as
    ``{"kind": "stream", "type", "data"}``; None for any other frame. Cheap for event frames."""
    if isinstance(message, bytes) or '"kind":"stream"' not in message[:40]:
        return None
    try:
        frame = json.loads(message)
    except ValueError:
        return None
    if not isinstance(frame, dict) or not isinstance(frame.get("data"), dict):
        return None
    return {"kind": "stream", "type": frame.get("type"), "data": frame["data"]}


class StreamPolicy:
    """The resume rules of docs/events.md, shared by both clients.

    The cursor (``last_seq``) only moves forward, so frames at or below it — replays after a
    reconnect — are dropped: each event is delivered once, in order. After a close the policy
    says whether to stop, reconnect at once, reconnect after a backoff, or give up (raise).
    """

    def __init__(self, after: int, max_reconnects: int) -> None:
        if not isinstance(after, int) or after < 0:
            raise ValueError("after must be a non-negative integer")
        self.last_seq = after
        self.terminal = False
        self.max_reconnects = max_reconnects
        self.attempts = 0
        self.ticket_renewed = False
        self.error_frame: dict | None = None

    def on_message(self, message: str | bytes) -> dict | None:
        """The event a frame carries if it is new; None for anything else."""
        try:
            frame = json.loads(message)
        except (TypeError, ValueError):
            return None
        if not isinstance(frame, dict):
            return None
        if frame.get("kind") == "error":
            self.error_frame = frame
            return None
        seq = frame.get("seq")
        if frame.get("kind") != "event" or not isinstance(seq, int) or seq <= self.last_seq:
            return None
        self.last_seq = seq
        self.attempts = 0
        self.ticket_renewed = False
        if frame.get("type") in TERMINAL_EVENT_TYPES:
            self.terminal = True
        return {k: frame.get(k) for k in ("seq", "type", "at")} | {"data": frame.get("data") or {}}

    def after_close(self, code: int | None) -> float | None:
        """None: the stream is over. A number: reconnect after that many seconds.
        Raises StreamError when the close means giving up."""
        frame, self.error_frame = self.error_frame, None
        code = 1006 if code is None else code
        if self.terminal or code == 1000:
            return None

        def give_up(default: str) -> StreamError:
            detail = (frame or {}).get("detail") or f"The event stream was closed ({code})."
            return StreamError((frame or {}).get("code") or default, code, str(detail), frame)

        if code == 4401:
            if self.ticket_renewed:
                raise give_up("AUTHENTICATION_REQUIRED")
            self.ticket_renewed = True
            return 0.0
        if code == 4403:
            raise give_up(ClientErrorCode.ORIGIN_NOT_ALLOWED)
        if code == 4408:
            return 0.0  # too slow: the log still has everything after the cursor
        if 4500 <= code <= 4599:
            # A fault of the server (4503 DATABASE_UNAVAILABLE, 4500 INTERNAL_ERROR): the log
            # still has everything after the cursor; back off like after a dropped network.
            return self.reconnect_delay()
        if 4000 <= code <= 4999:
            raise give_up(ClientErrorCode.STREAM_UNAVAILABLE)
        return self.reconnect_delay()

    def reconnect_delay(self) -> float:
        """After a network failure or an abnormal close: back off, or give up."""
        if self.attempts >= self.max_reconnects:
            raise StreamError(
                ClientErrorCode.STREAM_UNAVAILABLE,
                0,
                f"Gave up after {self.attempts} reconnects without a new event.",
            )
        delay = backoff(self.attempts)
        self.attempts += 1
        return delay


def ack_frame(seq: int) -> str:
    return json.dumps({"ack": seq, "kind": "received"})
