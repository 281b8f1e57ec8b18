"""The asynchronous client: the same API as ``Client``, every call awaitable and cancellable.

Cancelling the task that awaits a call (``task.cancel()``, ``asyncio.timeout``) abandons its
request at once and raises ``CancelledError``; nothing is retried afterwards."""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import AsyncIterator
from datetime import datetime
from typing import Any

import httpx
from websockets.asyncio.client import connect as ws_connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake

from sparktide_client import _core
from sparktide_client.errors import ApiError, InvalidCitationIdError, NetworkError
from sparktide_client.ids import is_citation_id

DEFAULT_TIMEOUT = 10.0
_UNSET: Any = object()


class AsyncClient:
    """SparkTide's REST API and event stream for one app, with one business user's token.

    Every call is made once: there is no automatic retry, no cache and no fallback. Results are
    plain data (dicts, lists, strings) exactly as the API returns them; ``content`` of a preview is
    untrusted text. Errors are ``SparkTideError`` subclasses carrying ``code``, ``status`` and the
    problem body. ``timeout`` (seconds) bounds each call; every method also takes its own.
    """

    def __init__(
        self,
        base_url: str,
        app: str,
        token: _core.Token,
        *,
        timeout: float | None = DEFAULT_TIMEOUT,
        http_client: httpx.AsyncClient | None = None,
    ) -> None:
        _core.segment(app, "app")
        self.base_url = base_url.rstrip("/")
        self.app = app
        self._token = token
        self._timeout = timeout
        self._owns_http = http_client is None
        self._http = http_client or httpx.AsyncClient(
            timeout=timeout,
            follow_redirects=False,
            transport=httpx.AsyncHTTPTransport(retries=0),
        )

    # --- lifecycle -------------------------------------------------------------------

    async def aclose(self) -> None:
        if self._owns_http:
            await self._http.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc_info) -> None:
        await self.aclose()

    # --- runs ------------------------------------------------------------------------

    async def create_run(
        self, agent: str, input: str, *, session_id: str | None = None, timeout=_UNSET
    ) -> dict:
        body = _core.run_body(agent, input, session_id)
        return await self._request(
            "POST", _core.app_path(self.app, "runs"), json=body, timeout=timeout
        )

    async def get_run(self, run_id: str, *, timeout=_UNSET) -> dict:
        return await self._request("GET", self._run_path(run_id), timeout=timeout)

    async def list_runs(
        self,
        *,
        status: str | None = None,
        session_id: str | None = None,
        created_after: datetime | str | None = None,
        created_before: datetime | str | None = None,
        limit: int | None = None,
        cursor: str | None = None,
        timeout=_UNSET,
    ) -> dict:
        """One page ``{runs, nextCursor}`` of the caller's own runs, newest first."""
        query = _core.runs_query(
            status=status,
            session_id=session_id,
            created_after=created_after,
            created_before=created_before,
            limit=limit,
            cursor=cursor,
        )
        path = _core.app_path(self.app, "runs")
        return await self._request("GET", path, params=query, timeout=timeout)

    async def iter_runs(self, **filters) -> AsyncIterator[dict]:
        """Every run ``list_runs`` would list, page after page (same filters)."""
        cursor = filters.pop("cursor", None)
        while True:
            page = await self.list_runs(cursor=cursor, **filters)
            for run in page["runs"]:
                yield run
            cursor = page["nextCursor"]
            if cursor is None:
                return

    async def answer(self, run_id: str, *, timeout=_UNSET) -> dict:
        """``{blocks}``: the committed answer as the reader shows it to this caller now."""
        return await self._request("GET", self._run_path(run_id, "answer"), timeout=timeout)

    async def cancel(self, run_id: str, *, timeout=_UNSET) -> None:
        """Ask the server to cancel (202). A finished run is ConflictError RUN_ALREADY_FINISHED."""
        await self._request("POST", self._run_path(run_id, "cancel"), timeout=timeout)

    async def send_feedback(
        self,
        run_id: str,
        rating: str,
        *,
        note: str | None = None,
        block: str | None = None,
        timeout=_UNSET,
    ) -> dict:
        """The owner's 👍/👎 (``rating`` "up" or "down") with an optional note (≤ 2000
        characters) on the run, or on its answer block ``block``; replaces the feedback
        given before on the same target. Returns ``{rating, note, block, createdAt,
        updatedAt}``; bad input is ``BadRequestError`` INVALID_REQUEST naming the field."""
        body = _core.feedback_body(rating, note, block)
        return await self._request(
            "PUT", self._run_path(run_id, "feedback"), json=body, timeout=timeout
        )

    async def list_feedback(self, run_id: str, *, timeout=_UNSET) -> list[dict]:
        """The feedback given on the run (run-level and per block), oldest first."""
        page = await self._request("GET", self._run_path(run_id, "feedback"), timeout=timeout)
        return list(page["feedback"])

    async def create_event_ticket(self, run_id: str, *, timeout=_UNSET) -> dict:
        return await self._request(
            "POST", self._run_path(run_id, "events", "ticket"), timeout=timeout
        )

    async def preview_citation(self, run_id: str, citation_id: str, *, timeout=_UNSET) -> dict:
        """The re-authorized source excerpt of one citation, fetched anew on every call.

        A ``citation_id`` that is not a well-formed ``cite_`` ID (a URI, a Markdown link, …)
        raises ``InvalidCitationIdError`` (code CITATION_NOT_AVAILABLE, status 0) before any
        request exists. Never retried.
        """
        if not is_citation_id(citation_id):
            raise InvalidCitationIdError()
        path = self._run_path(run_id, "citations", (citation_id, "citation_id"), "preview")
        return await self._request(
            "GET", path, timeout=timeout, headers={"Cache-Control": "no-store"}
        )

    # --- events ----------------------------------------------------------------------

    async def events_page(
        self, run_id: str, *, after: int = 0, limit: int | None = None, timeout=_UNSET
    ) -> dict:
        """One REST page ``{events, nextAfter, terminal}``."""
        params = {"after": str(after)} | ({"limit": str(limit)} if limit is not None else {})
        path = self._run_path(run_id, "events")
        return await self._request("GET", path, params=params, timeout=timeout)

    def events(
        self,
        run_id: str,
        *,
        after: int = 0,
        limit: int | None = None,
        follow: bool = True,
        poll_interval: float = 1.0,
        timeout=_UNSET,
    ) -> AsyncEventPager:
        """Iterate the run's events over REST from ``after``, page by page.

        With ``follow`` (the default) it waits for new events (one request every
        ``poll_interval`` seconds while caught up) until the run's terminal event; without,
        it stops when caught up. ``pager.after`` is the seq of the last event yielded: pass it
        as ``after`` to resume later without a gap or a repeat.
        """
        return AsyncEventPager(self, run_id, after, limit, follow, poll_interval, timeout)

    async def stream(
        self,
        run_id: str,
        *,
        after: int = 0,
        ack: bool = True,
        max_reconnects: int = 5,
        open_timeout: float | None = _UNSET,
    ) -> AsyncIterator[dict]:
        """Follow the run's events live over the WebSocket (docs/events.md).

        Each connection gets a fresh single-use ticket. After an abnormal close it reconnects
        from the last seq it delivered (at once after 4408 or a refused ticket, else with
        backoff, at most ``max_reconnects`` times in a row without a new event), so the caller
        gets every event once, in order. Ends after the terminal event; 4403/4404/4410 and
        other 4xxx closes raise ``StreamError``. Closing the iterator closes the socket; it
        never cancels the run.
        """
        policy = _core.StreamPolicy(after, max_reconnects)
        open_timeout = self._timeout if open_timeout is _UNSET else open_timeout
        while True:
            try:
                ticket = (await self.create_event_ticket(run_id))["ticket"]
            except ApiError as error:
                if error.status in (400, 401, 403, 404, 410):
                    raise
                await asyncio.sleep(policy.reconnect_delay())
                continue
            except NetworkError:
                await asyncio.sleep(policy.reconnect_delay())
                continue
            url = _core.socket_url(
                self.base_url, self.app, run_id, after=policy.last_seq, ticket=ticket
            )
            code = None
            try:
                async with ws_connect(url, open_timeout=open_timeout, max_size=2**24) as socket:
                    try:
                        async for message in socket:
                            event = policy.on_message(message)
                            if event is None:
                                continue
                            if ack:
                                with contextlib.suppress(ConnectionClosed):
                                    # closing already: the close decides what comes next
                                    await socket.send(_core.ack_frame(event["seq"]))
                            yield event
                    except ConnectionClosed as closed:
                        code = closed.rcvd.code if closed.rcvd else None
                    else:
                        code = socket.close_code
            except (OSError, InvalidHandshake, TimeoutError, asyncio.TimeoutError):
                # asyncio.TimeoutError is TimeoutError from 3.11 on; an open timeout raises it
                await asyncio.sleep(policy.reconnect_delay())
                continue
            delay = policy.after_close(code)
            if delay is None:
                return
            await asyncio.sleep(delay)

    # --- internals -------------------------------------------------------------------

    def _run_path(self, run_id: str, *rest) -> str:
        return _core.app_path(self.app, "runs", (run_id, "run_id"), *rest)

    async def _request(
        self, method: str, path: str, *, timeout=_UNSET, headers=None, **kwargs
    ) -> Any:
        all_headers = _core.bearer_headers(self._token) | (headers or {})
        timeout = self._timeout if timeout is _UNSET else timeout
        try:
            response = await self._http.request(
                method, self.base_url + path, headers=all_headers, timeout=timeout, **kwargs
            )
        except httpx.TransportError as error:
            raise _core.transport_error(error) from error
        return _core.result(response)


class AsyncEventPager:
    """Iterator over a run's REST event pages; ``after`` is its resumable cursor."""

    def __init__(self, client, run_id, after, limit, follow, poll_interval, timeout) -> None:
        if not isinstance(after, int) or after < 0:
            raise ValueError("after must be a non-negative integer")
        self._client = client
        self._run_id = run_id
        self._limit = limit
        self._follow = follow
        self._poll_interval = poll_interval
        self._timeout = timeout
        self._buffer: deque[dict] = deque()
        self._next_after = after
        self.after = after
        self.terminal = False

    def __aiter__(self) -> AsyncEventPager:
        return self

    async def __anext__(self) -> dict:
        while not self._buffer:
            if self.terminal:
                raise StopAsyncIteration
            page = await self._client.events_page(
                self._run_id, after=self._next_after, limit=self._limit, timeout=self._timeout
            )
            self._buffer.extend(page["events"])
            self._next_after = page["nextAfter"]
            self.terminal = bool(page["terminal"])
            if not page["events"] and not self.terminal:
                if not self._follow:
                    raise StopAsyncIteration
                await asyncio.sleep(self._poll_interval)
        event = self._buffer.popleft()
        self.after = event["seq"]
        return event
