"""REMOTE knowledge: one signed HTTP call to a version's endpoint.

Used by retrieval (the run's search) and by the citation preview (re-fetch).
The contract for the people who build such endpoints is docs/remote-knowledge.md;
this module is its reference implementation on our side:

- the endpoint's host must be on ``SPARKTIDE_REMOTE_ALLOWED_HOSTS`` (SSRF), checked
  before any connection is opened; only http and https;
- the body carries the query and a context the server built (never client input),
  signed with HMAC-SHA256 over ``timestamp + "." + body`` with the version's secret;
- one attempt, no retry, redirects never followed, one *total* deadline for the
  whole exchange (a server that trickles bytes still times out);
- the answer is validated strictly; anything off is a ``RemoteBadResponse`` that
  names what was wrong. ``uri`` fields are data: never visited.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import math
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeGuard

import httpx
from django.conf import settings

from foundation.errors import ErrorCode, SparkTideError
from foundation.text_boundary import is_storable
from knowledge.context import TrustedContext
from knowledge.text import MAX_CHUNK_UTF16, normalize_snippet, snippet_digest, utf16_len

if TYPE_CHECKING:
    from knowledge.models import KnowledgeVersion

SIGNATURE_HEADER = "X-SparkTide-Signature"
TIMESTAMP_HEADER = "X-SparkTide-Timestamp"
USER_AGENT = "SparkTide-RemoteKnowledge/1"
ALLOWED_SCHEMES = frozenset({"http", "https"})

# Large enough for any honest answer (topK items of at most 16,384 UTF-16 units,
# even fully \u-escaped), small enough that a broken source cannot exhaust memory.
MAX_RESPONSE_BYTES = 8 * 1024 * 1024
# Limits on the item fields we store in citation references and show in previews.
MAX_ID_LENGTH = 256
MAX_VERSION_LENGTH = 128
MAX_TITLE_LENGTH = 500
MAX_URI_LENGTH = 2048


class RemoteKnowledgeError(SparkTideError):
    """A REMOTE source could not give a usable answer. Subclasses fix the code.

    The detail names the endpoint and the low-level cause: it is for the log,
    never for a caller or the model (they get the code's own detail)."""

    code_for_class: ErrorCode = ErrorCode.KNOWLEDGE_SOURCE_ERROR

    def __init__(self, detail: str) -> None:
        super().__init__(self.code_for_class, detail)


class RemoteTimeout(RemoteKnowledgeError):
    code_for_class = ErrorCode.CITATION_PREVIEW_TIMED_OUT


class RemoteUnavailable(RemoteKnowledgeError):
    code_for_class = ErrorCode.KNOWLEDGE_SOURCE_UNAVAILABLE


class RemoteBadResponse(RemoteKnowledgeError):
    code_for_class = ErrorCode.KNOWLEDGE_SOURCE_ERROR


@dataclass(frozen=True)
class RemoteItem:
    id: str
    version: str  # as the source reported it; may be empty
    title: str
    content: str
    page: int | None
    locator: dict[str, Any] | None
    uri: str | None

    @property
    def digest(self) -> str:
        return snippet_digest(self.content)

    @property
    def source_version(self) -> str:
        """The version citations bind to: a source without one uses the snippet digest."""
        return self.version or self.digest


@dataclass(frozen=True)
class RefusedItem:
    """An item left out at the storage boundary: ``items[index].field`` holds
    text the database cannot store (NUL, a lone surrogate)."""

    index: int
    field: str


class RemoteItems(list["RemoteItem"]):
    """The usable items of one answer, in the source's order; ``refused`` names
    the items left out at the storage boundary (each one a tool error of its
    own for the model; the rest of the answer is used)."""

    def __init__(
        self, items: Iterable[RemoteItem] = (), refused: Iterable[RefusedItem] = ()
    ) -> None:
        super().__init__(items)
        self.refused: tuple[RefusedItem, ...] = tuple(refused)


class _Unstorable(Exception):
    def __init__(self, field: str) -> None:
        self.field = field


def call_remote(
    version: KnowledgeVersion,
    *,
    query: str,
    top_k: int,
    context: TrustedContext,
    timeout: float | None = None,
) -> list[RemoteItem]:
    """Ask a REMOTE version's endpoint for at most ``top_k`` items. One attempt.

    The deadline is min(version.timeout_seconds, SPARKTIDE_REMOTE_TIMEOUT_CAP,
    ``timeout``) for the whole exchange. Raises RemoteTimeout, RemoteUnavailable
    or RemoteBadResponse.
    """
    request = _build_request(version, query=query, top_k=top_k, context=context, timeout=timeout)
    coroutine = _exchange(request)
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    # Called synchronously from a thread that runs an event loop: give the call a
    # loop of its own rather than fail (the caller blocks either way).
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


def sign(secret: str, timestamp: str, body: bytes) -> str:
    """The signature header value: HMAC-SHA256 over ``timestamp + "." + body``."""
    mac = hmac.new(secret.encode(), timestamp.encode() + b"." + body, hashlib.sha256)
    return f"sha256={mac.hexdigest()}"


def endpoint_url(endpoint: str, *, label: str) -> httpx.URL:
    """Parse an endpoint and check it against the allow-list; no connection is made.

    The returned URL object is the one the request is sent to, so the host we
    checked is the host we connect to (no second parser to disagree with).
    """
    try:
        url = httpx.URL(endpoint)
    except (httpx.InvalidURL, TypeError) as exc:
        raise RemoteUnavailable(f"{label}: the endpoint is not a valid URL ({exc}).")
    if url.scheme not in ALLOWED_SCHEMES:
        raise RemoteUnavailable(
            f"{label}: the endpoint scheme {url.scheme!r} is not allowed (http or https only)."
        )
    if not url.host:
        raise RemoteUnavailable(f"{label}: the endpoint has no host.")
    host = f"[{url.host}]" if ":" in url.host else url.host
    port = url.port or (443 if url.scheme == "https" else 80)
    allowed = {entry.strip().lower() for entry in settings.SPARKTIDE_REMOTE_ALLOWED_HOSTS}
    if not allowed & {url.host, host, f"{host}:{port}"}:
        raise RemoteUnavailable(
            f"{label}: the endpoint host {host}:{port} is not on SPARKTIDE_REMOTE_ALLOWED_HOSTS."
        )
    return url


@dataclass(frozen=True)
class _Request:
    label: str
    url: httpx.URL
    body: bytes
    headers: dict[str, str]
    top_k: int
    deadline: float  # seconds for the whole exchange


def _build_request(
    version: KnowledgeVersion,
    *,
    query: str,
    top_k: int,
    context: TrustedContext,
    timeout: float | None,
) -> _Request:
    label = version.label
    url = endpoint_url(version.endpoint, label=label)
    if not version.secret:
        raise RemoteUnavailable(f"{label}: the version has no signing secret.")
    budgets = [version.timeout_seconds, settings.SPARKTIDE_REMOTE_TIMEOUT_CAP]
    if timeout is not None:
        budgets.append(timeout)
    deadline = min(budgets)
    if not deadline > 0:
        raise RemoteTimeout(f"{label}: no time left to ask the remote source.")
    payload = {
        "query": query,
        "topK": top_k,
        "knowledgeId": version.knowledge.key,
        "knowledgeVersion": version.version,
        "context": {
            "tenant": context.tenant,
            "app": context.app,
            "user": context.user,
            "businessSessionId": context.business_session_id,
        },
    }
    body = json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode()
    timestamp = str(int(time.time()))
    headers = {
        "Content-Type": "application/json; charset=utf-8",
        "Accept": "application/json",
        "User-Agent": USER_AGENT,
        TIMESTAMP_HEADER: timestamp,
        SIGNATURE_HEADER: sign(version.secret, timestamp, body),
    }
    return _Request(label, url, body, headers, top_k, deadline)


async def _exchange(request: _Request) -> list[RemoteItem]:
    label = request.label
    try:
        # asyncio.timeout bounds connect + send + every read together; httpx's own
        # timeouts are per operation and would let a trickling server run forever.
        async with asyncio.timeout(request.deadline):
            status, raw = await _post(request)
    except (TimeoutError, httpx.TimeoutException):
        raise RemoteTimeout(
            f"{label}: the remote source did not answer within {request.deadline:g} s."
        )
    except httpx.ConnectError as exc:
        raise RemoteUnavailable(f"{label}: the remote source cannot be reached ({exc}).")
    except httpx.NetworkError as exc:
        raise RemoteUnavailable(f"{label}: the connection to the remote source failed ({exc}).")
    except httpx.HTTPError as exc:
        raise RemoteBadResponse(f"{label}: the remote source broke the protocol ({exc}).")
    if 300 <= status < 400:
        raise RemoteBadResponse(
            f"{label}: the remote source answered a redirect (HTTP {status}); "
            "redirects are never followed."
        )
    if not 200 <= status < 300:
        raise RemoteBadResponse(f"{label}: the remote source answered HTTP {status}.")
    return parse_items(raw, top_k=request.top_k, label=label)


async def _post(request: _Request) -> tuple[int, bytes]:
    timeout = httpx.Timeout(request.deadline)
    # trust_env=False: no proxy or netrc from the environment; we connect to the
    # host the allow-list approved, and nowhere else.
    async with (
        httpx.AsyncClient(timeout=timeout, follow_redirects=False, trust_env=False) as client,
        client.stream(
            "POST", request.url, content=request.body, headers=request.headers
        ) as response,
    ):
        if response.status_code < 200 or response.status_code >= 300:
            # Neither the body of a failure nor a redirect's Location is read:
            # neither is shown to anyone, and a redirect is never followed.
            return response.status_code, b""
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > MAX_RESPONSE_BYTES:
            raise RemoteBadResponse(
                f"{request.label}: the answer is larger than {MAX_RESPONSE_BYTES} bytes."
            )
        chunks: list[bytes] = []
        size = 0
        async for chunk in response.aiter_bytes():
            size += len(chunk)
            if size > MAX_RESPONSE_BYTES:
                raise RemoteBadResponse(
                    f"{request.label}: the answer is larger than {MAX_RESPONSE_BYTES} bytes."
                )
            chunks.append(chunk)
        return response.status_code, b"".join(chunks)


def parse_items(raw: bytes, *, top_k: int, label: str = "remote") -> RemoteItems:
    """Validate an answer body; the first ``top_k`` items in the source's order.

    A malformed body or item refuses the whole answer (RemoteBadResponse). An
    item whose id, title, uri, version or content holds text the database
    cannot store is left out and listed in ``refused`` instead: the source is
    well-formed JSON, only that item cannot become a citation.
    """

    def bad(problem: str) -> RemoteBadResponse:
        return RemoteBadResponse(f"{label}: malformed answer: {problem}.")

    try:
        document = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        raise bad("the body is not JSON")
    if not isinstance(document, dict):
        raise bad("the body is not a JSON object")
    items = document.get("items")
    if not isinstance(items, list):
        raise bad('"items" is missing or not a list')
    parsed: list[RemoteItem] = []
    refused: list[RefusedItem] = []
    seen: dict[str, int] = {}
    # A source may rank more items than asked for; we keep its first top_k, the
    # same cut a preview re-fetch makes, so both see the same set.
    for index, entry in enumerate(items[: max(top_k, 0)]):
        try:
            item = _parse_item(entry, f"items[{index}]", bad)
        except _Unstorable as exc:
            refused.append(RefusedItem(index=index, field=exc.field))
            continue
        if item.id in seen:
            raise bad(f"items[{index}].id {item.id!r} repeats items[{seen[item.id]}]")
        seen[item.id] = index
        parsed.append(item)
    return RemoteItems(parsed, refused)


def _parse_item(entry: Any, where: str, bad: Callable[[str], Exception]) -> RemoteItem:
    if not isinstance(entry, dict):
        raise bad(f"{where} is not an object")

    def text(name: str, *, required: bool, limit: int) -> str:
        value = entry.get(name)
        if value is None:
            if required:
                raise bad(f"{where}.{name} is missing")
            return ""
        if not isinstance(value, str):
            raise bad(f"{where}.{name} is not a string")
        if not is_storable(value):
            raise _Unstorable(name)
        if utf16_len(value) > limit:
            raise bad(f"{where}.{name} is longer than {limit} characters")
        return value

    item_id = text("id", required=True, limit=MAX_ID_LENGTH)
    if not item_id.strip():
        raise bad(f"{where}.id is empty")
    version = text("version", required=False, limit=MAX_VERSION_LENGTH)
    title = text("title", required=True, limit=MAX_TITLE_LENGTH)
    content = entry.get("content")
    if content is None:
        raise bad(f"{where}.content is missing")
    if not isinstance(content, str):
        raise bad(f"{where}.content is not a string")
    if not is_storable(content):
        raise _Unstorable("content")
    if not normalize_snippet(content):
        raise bad(f"{where}.content is empty")
    if utf16_len(content) > MAX_CHUNK_UTF16:
        raise bad(f"{where}.content is longer than {MAX_CHUNK_UTF16} UTF-16 code units")

    page = entry.get("page")
    if page is not None and (not _is_int(page) or page < 1):
        raise bad(f"{where}.page is not an integer ≥ 1")

    locator = entry.get("locator")
    if locator is not None:
        if not isinstance(locator, dict):
            raise bad(f"{where}.locator is not an object")
        start, end = locator.get("start"), locator.get("end")
        if not (_is_int(start) and _is_int(end) and 0 <= start <= end):
            raise bad(f"{where}.locator needs integers 0 ≤ start ≤ end")
        locator = {"start": start, "end": end}

    uri = entry.get("uri")
    if uri is not None:
        uri = text("uri", required=False, limit=MAX_URI_LENGTH) or None

    return RemoteItem(
        id=item_id,
        version=version,
        title=title,
        content=content,
        page=page,
        locator=locator,
        uri=uri,
    )


def _is_int(value: Any) -> TypeGuard[int]:
    # JSON true/false arrive as bool, a subclass of int; 3.0 is not a page number.
    return isinstance(value, int) and not isinstance(value, bool) and math.isfinite(value)
