"""Delivery of a run's events to one WebSocket connection (docs/events.md).

Who may watch a run, what a connection reads, what the server sent and what
the client says it received are decided here; ``delivery/consumers.py`` is the thin
edge that parses frames, and ``delivery/sender.py`` the one sender that calls these functions.

The event log in the database is the truth. A connection reads it from its
own cursor, so a wake-up lost by the channel layer costs latency, never an
event; "sent" (DeliveryLog) and "acknowledged" (DeliveryAck) are recorded
separately because the server having sent an event proves only that it sent it.
"""

import json
import secrets
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.contrib.contenttypes.models import ContentType
from django.db import connection
from django.db.models import QuerySet, TextField
from django.db.models.expressions import RawSQL
from django.db.models.functions import Cast
from django.utils import timezone
from django.utils.translation import gettext as _
from orjson import OPT_NON_STR_KEYS, Fragment, dumps

from delivery.tickets import redeem_ticket
from foundation.compiled import (
    PLACEHOLDER_POSITIVE_INT,
    instances_once,
    placeholder_text,
    prepared_once,
    server_binding_cursor,
)
from foundation.errors import ErrorCode, SparkTideError, not_found
from foundation.faults import maybe_fault
from publication.reader import HYDRATED_EVENT_TYPES, RunReader
from runs.access import (
    access_run_history,
    require_run_history,
    run_for_history_read,
    runs_for_history_read,
)
from runs.events import TERMINAL_EVENT_TYPES, log_range
from runs.models import DeliveryAck, DeliveryLog, Run, RunEvent
from runs.retention import require_within_retention
from runs.streams import (
    STREAM_EVENT,
    closed_stream_text,
    live_text_of,
    sent_offsets,
    stream_text_after,
    with_live_text,
)
from tenancy.models import App

# Error code of the 4408 close (WebSocket only, no HTTP counterpart).
CLIENT_TOO_SLOW = ErrorCode.CLIENT_TOO_SLOW
MAX_TICKET_CHARS = 200


@dataclass(frozen=True)
class DeliveryConfig:
    """Per-connection tuning, read when a connection opens (never at import)."""

    # How often a connection re-reads the log without a wake-up.
    poll_seconds: float
    # Events read, hydrated and sent per database round trip.
    page_size: int
    # A client that acknowledges may have at most this many sent-but-unacked
    # events; beyond it the server stops sending until an ack arrives.
    ack_window: int
    # How long a client may stay at its window without acking before 4408.
    slow_client_seconds: float


def delivery_config() -> DeliveryConfig:
    return DeliveryConfig(
        poll_seconds=settings.SPARKTIDE_WS_POLL_SECONDS,
        page_size=settings.SPARKTIDE_WS_PAGE_SIZE,
        ack_window=settings.SPARKTIDE_WS_ACK_WINDOW,
        slow_client_seconds=settings.SPARKTIDE_WS_SLOW_CLIENT_SECONDS,
    )


# -- access ------------------------------------------------------------------------


def ticket_invalid() -> SparkTideError:
    return SparkTideError(ErrorCode.TICKET_INVALID)


def access_run_for_watcher(
    *, app_slug: str, run_id: str, ticket: str | None, session_user: User | None
) -> tuple[Run, User]:
    """The run and the user watching it, or a SparkTideError (401, 403, 404, 410).

    A ticket, when given, is the only credential considered: it is spent here
    and its user must pass ``access_run_history`` now — the run's owner, the app
    ACTIVE, within retention, still a member holding ``view_run_history`` (the
    gate of every history read). Without one,
    an active console admin's session may watch any run. Everything that is
    not the owner or an admin gets the 404 a missing run gets.
    """
    run: Run | None
    if ticket is not None:
        user = redeem_ticket(ticket, run_id=run_id) if 0 < len(ticket) <= MAX_TICKET_CHARS else None
        if user is None or not user.is_active:
            raise ticket_invalid()
        run = access_run_history(user, app_slug, run_id)
    elif session_user is not None and session_user.is_active and session_user.is_staff:
        user = session_user
        run = (
            Run.objects.select_related("app", "tenant", "owner")
            .filter(pk=run_id, app__slug=app_slug)
            .first()
        )
        if run is None:
            raise not_found()
        require_within_retention(run)
    else:
        raise SparkTideError(
            ErrorCode.AUTHENTICATION_REQUIRED,
            _("需要票据（POST …/events/ticket）或控制台管理员会话。"),
        )
    return run, user


def terminal_seq(run: Run) -> int | None:
    """The seq of the run's terminal event, if it has ended."""
    return (
        RunEvent.objects.filter(run=run, type__in=TERMINAL_EVENT_TYPES)
        .order_by("seq")
        .values_list("seq", flat=True)
        .first()
    )


# -- reading -------------------------------------------------------------------------


# One event as sent: (seq, type, the frame's JSON text).
Frame = tuple[int, str, str]


def read_frames(run: Run, *, after: int, limit: int, staff: bool = False) -> list[Frame]:
    """Public events with seq > ``after``, in order, hydrated through the reader and
    encoded as the frames a socket sends.

    Before a page is returned, the watcher's gate is checked again on a freshly
    read run (owner, app), however long the connection has been open: for the
    owner (a ticket) ``require_run_history`` — the app ACTIVE, retention, the
    owner's current membership and ``view_run_history`` — and for a console
    admin (``staff``) retention. A refusal raises its SparkTideError (the socket
    sends it and closes 4403 / 4410) and no event of the page is returned. A
    fresh reader per page: the owner's *current* authorization decides every
    body. A read that finds nothing returns nothing and checks nothing, so an
    idle poll costs one query; a page costs the events and the run (for the owner
    with the permission read in the same query), plus the reader's queries for
    answer events.

    Only the events the reader fills in are parsed. Every other event is public as
    stored, so its stored JSON text goes into the frame as it is (orjson's
    ``Fragment``), never parsed and encoded again; the frame is encoded here, in
    the database thread, not on the event loop (docs/performance.md, "Delivery": "the
    stored JSON as it is").
    """
    maybe_fault("during_event_read")
    rows = _page_rows(run.pk, after=after, limit=limit)
    if not rows:
        return []
    run = _gate(run, staff=staff)
    events = RunReader(run).hydrate_rows(
        (seq, type_, json.loads(raw) if type_ in HYDRATED_EVENT_TYPES else Fragment(raw), at)
        for seq, type_, raw, at in rows
    )
    return [
        (
            event["seq"],
            event["type"],
            dumps({"kind": "event", **event}, option=OPT_NON_STR_KEYS).decode(),
        )
        for event in events
    ]


def _gate(run: Run, *, staff: bool) -> Run:
    """The run read afresh and the watcher's gate passed (raises its SparkTideError)."""
    if staff:
        run = Run.objects.select_related("app", "tenant", "owner").get(pk=run.pk)
    else:
        run = run_for_history_read(run.pk)
    _pass_gate(run, staff=staff)
    return run


def _pass_gate(run: Run, *, staff: bool) -> None:
    """The watcher's gate on a run just read (``runs_for_history_read``'s columns): for the
    owner ``require_run_history``, for a console admin retention. Raises its SparkTideError."""
    if staff:
        require_within_retention(run)
    else:
        require_run_history(run)


# The values the shared read is compiled with (foundation/compiled.py): the run ids are
# one array parameter, the offsets one JSON parameter, whatever their number.
_LIVE_PLACEHOLDERS: dict[str, Any] = {
    "run_ids": [placeholder_text("run")],
    "sent": placeholder_text("sent"),
}


def _live_streams(*, run_ids: list[str], sent: str) -> QuerySet[Run]:
    """The runs ``read_live_streams`` reads (PostgreSQL: the ids as one array)."""
    runs = runs_for_history_read().filter(pk__in=RawSQL("SELECT unnest(%s::varchar[])", [run_ids]))
    return with_live_text(runs, sent)


# What the shared read of live text gives the sockets of one run that pass one gate:
# the new text of each live stream, or the gate's refusal (nothing of the read).
StreamRead = list[dict[str, Any]] | SparkTideError


def read_live_streams(
    watchers: dict[str, set[bool]], sent: dict[str, int]
) -> dict[tuple[str, bool], StreamRead]:
    """One read of live text for every socket of this process a stream wake-up reaches.

    ``watchers``: run id → the gates its sockets here were opened through (``staff``:
    a console admin's, else the owner's); ``sent``: streamId → the offset every such
    socket of the stream has (each takes what it has not sent). ONE statement, whatever
    the number of runs and sockets: the runs read as every gate re-check reads them
    (``runs_for_history_read``), each joined to its live rows' new text
    (``runs.streams.with_live_text``). Then each (run, gate) passes ``_pass_gate`` on
    that fresh read, exactly as a socket's own read does, and gets the text or its
    refusal. A run the statement does not find is left out (its sockets read alone)."""
    if not watchers:
        return {}
    run_ids, offsets = list(watchers), sent_offsets(sent)
    if connection.vendor == "postgresql":
        # Compiled once per process and prepared once per connection (foundation/compiled.py):
        # built and compiled per wake-up, the ORM cost 15–40 ms and planning 13 ms, for a
        # statement that runs in 3.
        rows = instances_once(
            ("read_live_streams", ContentType.objects.get_for_model(App).pk),
            _live_streams,
            _LIVE_PLACEHOLDERS,
            {"run_ids": run_ids, "sent": offsets},
            prepare=True,
        )
    else:
        rows = list(with_live_text(runs_for_history_read().filter(pk__in=run_ids), offsets))
    found: dict[tuple[str, bool], StreamRead] = {}
    first: dict[str, Run] = {}
    text: dict[str, list[dict[str, Any]]] = {}
    for run in rows:
        first.setdefault(run.pk, run)
        data = live_text_of(run)
        if data is not None:
            text.setdefault(run.pk, []).append(data)
    for run_id, gates in watchers.items():
        read = first.get(run_id)
        if read is None:
            continue
        for staff in sorted(gates):
            try:
                _pass_gate(read, staff=staff)
            except SparkTideError as error:
                found[run_id, staff] = error
            else:
                found[run_id, staff] = text.get(run_id, [])
    return found


def stream_text(run: Run, *, sent: dict[str, int], staff: bool = False) -> list[dict[str, Any]]:
    """The run's live stream text a socket has not sent (``runs.streams.stream_text_after``:
    after ``sent[streamId]``) after the watcher's gate, re-checked as for a page of the log:
    nothing of a refused read is returned. Two queries."""
    _gate(run, staff=staff)
    return stream_text_after(run.pk, sent)


def stream_rest_at_close(
    run: Run, close: dict[str, Any], *, start: int, staff: bool = False
) -> dict[str, Any] | None:
    """The text of the turn that ``close`` ended that a socket which sent ``start`` of it has
    not sent, up to the close offset (``runs.streams.closed_stream_text``), after the
    watcher's gate. Two queries."""
    _gate(run, staff=staff)
    return closed_stream_text(run.pk, close, start=start)


def stream_frame(data: dict[str, Any]) -> str:
    """A stream frame: ``{"kind": "stream", "type": "answer.stream", "data": …}`` (no seq:
    the stream is not the log)."""
    return dumps({"kind": "stream", "type": STREAM_EVENT, "data": data}).decode()


def _page_rows(run_id: str, *, after: int, limit: int) -> list[Any]:
    """(seq, type, stored JSON text, at) of the log's page (``runs.events.log_page``),
    through its statement compiled once per page size and prepared once per
    connection: a live socket reads a page of one event on every wake-up, and
    building and compiling the QuerySet cost more than running it (docs/performance.md,
    "Delivery")."""
    compiled = prepared_once(
        ("read_frames", limit), _page, {**_PAGE_PLACEHOLDERS, "limit": limit}, fixed=("limit",)
    )
    if compiled is None:
        return list(_page(run_id=run_id, after=after, last=after + limit, limit=limit))
    return compiled.values({"run_id": run_id, "after": after, "last": after + limit})


_PAGE_PLACEHOLDERS = {
    "run_id": placeholder_text("run_id"),
    "after": PLACEHOLDER_POSITIVE_INT,
    "last": PLACEHOLDER_POSITIVE_INT + 1,  # above "after": an empty range compiles to nothing
}


def _page(*, run_id: str, after: int, last: int, limit: int) -> QuerySet[RunEvent, Any]:
    return log_range(run_id, after=after, last=last, limit=limit).values_list(
        "seq", "type", Cast("data", TextField()), "at"
    )


# -- recording -----------------------------------------------------------------------


def open_delivery(*, run: Run, user: User, client_id: str, after: int) -> DeliveryLog:
    return DeliveryLog.objects.create(
        run=run,
        connection_id="conn_" + secrets.token_hex(16),
        client_id=client_id,
        user=user,
        last_sent_seq=after,
    )


def record_deliveries(sent: dict[str, int], closed: frozenset[str] = frozenset()) -> None:
    """How far each connection was sent (never moves backwards) and, for those in
    ``closed``, that it has ended (the first close time is kept): one statement
    per 500 connections, however many sockets write at once.

    The statement is written out directly: built through the ORM, its CASE of 500
    ``When`` clauses cost tens of milliseconds of Python per flush in a database
    thread, holding the GIL the event loop needs to send (docs/performance.md,
    "Delivery"). Each connection's values are a row joined on its id: written as
    ``CASE connection_id WHEN …`` of 500 branches, the server compared every row
    with every branch, 11 ms a flush of 500 sockets, right after each event; joined
    to three arrays bound on the server it is 4–5 ms (seventh round). One UPDATE for
    both vendors; only where its rows come from differs (SQLite has no arrays: a
    ``VALUES`` list, whose columns both name ``column1``…).
    """
    table = connection.ops.quote_name(DeliveryLog._meta.db_table)
    now = connection.ops.adapt_datetimefield_value(timezone.now())
    items = list(sent.items())
    postgresql = connection.vendor == "postgresql"
    greatest = "GREATEST" if postgresql else "MAX"
    with server_binding_cursor() as cursor:
        for start in range(0, len(items), 500):
            chunk = items[start : start + 500]
            ids = [cid for cid, _ in chunk]
            seqs = [int(seq) for _, seq in chunk]
            closing = [cid in closed for cid in ids]
            if postgresql:
                rows = "unnest(%s::varchar[], %s::integer[], %s::boolean[]) AS v(cid, seq, closing)"
                params: list[Any] = [now, ids, seqs, closing]
            else:
                listed = ", ".join(["(%s, %s, %s)"] * len(chunk))
                rows = (
                    "(SELECT column1 AS cid, column2 AS seq, column3 AS closing"  # noqa: S608
                    f" FROM (VALUES {listed}) AS listed) AS v"
                )
                params = [now]
                for row in zip(ids, seqs, closing, strict=True):
                    params += row
            # Only the quoted table name and placeholders are formatted in.
            cursor.execute(
                f"UPDATE {table} SET last_sent_seq = {greatest}(last_sent_seq, v.seq),"  # noqa: S608
                " closed_at = CASE WHEN v.closing AND closed_at IS NULL THEN %s"
                f" ELSE closed_at END FROM {rows} WHERE {table}.connection_id = v.cid",
                params,
            )


def record_acks(*, run_id: str, connection_id: str, client_id: str, acks: dict[str, int]) -> None:
    """Record the client's cumulative acknowledgements, one row per (kind, seq).

    Acks are cumulative (``{"ack": 7}`` covers 1…7), so when a client acks
    faster than they are written only the highest per kind is recorded.
    """
    DeliveryAck.objects.bulk_create(
        [
            DeliveryAck(
                run_id=run_id, connection_id=connection_id, client_id=client_id, seq=seq, kind=kind
            )
            for kind, seq in acks.items()
        ],
        ignore_conflicts=True,
    )


def has_events_after(run_id: str, *, after: int) -> bool:
    return RunEvent.objects.filter(run_id=run_id, seq__gt=after).exists()
