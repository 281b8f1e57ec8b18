"""The text stream of a live model turn: one row per agent call, announced through the channel layer.

What a model turn says reaches clients while it is generated, before Publication decides
anything about it (docs/events.md, "The text stream"). It is not a save and not the event
log: the turn's text so far is kept in ONE row per agent call (``AnswerStream``), extended
at the coalescing interval, and each committed extension is announced to whoever registered
(``register_stream_sender``: delivery, which only wakes the run's sockets — a socket reads
what it has not sent from the row, so no announcement has to arrive, or arrive in order).
When the turn ends the row is closed by the statement that appends the turn's
``answer.stream`` close event, whose ``offset`` is the turn's final length; the row keeps the
turn's text until the agent call's next turn starts it again, so a socket still behind at
the close sends the rest of what it showed (``closed_stream_text``) before the close. The
log has one event per streamed turn; what a replay shows afterwards is the published blocks.

Every write is fenced by the execution epoch of the worker that writes
(``runs.lifecycle.lock_for_execution`` / ``fence_statement``, in the write's own statement or
transaction): nothing is written or sent after the run's end, nor by an execution whose run was
taken over (a worker paused past the stale bound, whose run was recovered or handed back and
perhaps claimed again, still RUNNING under the new epoch).
Offsets and lengths count Unicode code points. Text arrives here already cleaned and bounded
(runtime/streaming.py); this module only stores and announces it.
"""

import json
import logging
from collections.abc import Callable
from typing import Any, cast

from django.db import connection, transaction
from django.db.models import (
    Case,
    F,
    FilteredRelation,
    Func,
    IntegerField,
    Q,
    QuerySet,
    Value,
    When,
)
from django.db.models.functions import Concat, Substr
from django.utils import timezone

from runs.events import IF_APPENDED, NOT_ENDED, UNDER_EPOCH, RunEnded, append_event
from runs.lifecycle import fence_params, fence_statement, lock_for_execution
from runs.models import AgentCall, AnswerStream, Run

logger = logging.getLogger(__name__)

STREAM_EVENT = "answer.stream"

# (run id, the delta's public data) → the run's readers told there is more; best effort.
StreamSender = Callable[[str, dict[str, Any]], None]
_senders: list[StreamSender] = []


def register_stream_sender(sender: StreamSender) -> None:
    """Have ``sender(run_id, data)`` called after each committed extension (idempotent).
    The row is the truth: a sender may announce only that the run's stream moved."""
    if sender not in _senders:
        _senders.append(sender)


def _send(run_id: str, data: dict[str, Any]) -> None:
    for sender in _senders:
        try:
            sender(run_id, data)
        except Exception:  # the row is the truth; a reader resynchronises from it
            logger.warning("stream delta for %s lost", run_id, exc_info=True)


def _public(call_pk: int, step: int) -> dict[str, Any]:
    """The stream's identity in every ``answer.stream`` data: the agent call, the turn's
    stream id and its step."""
    return {"agentCallId": f"call_{call_pk}", "streamId": f"stm_{call_pk}_{step}", "step": step}


def extend_stream(
    run: Run, call: AgentCall, step: int, *, offset: int, delta: str, truncated: bool = False
) -> bool:
    """Append ``delta`` at ``offset`` to the call's live stream and announce it; False when
    the run ended or was taken over from this execution (``run.execution_epoch``): nothing
    written, nothing sent, the caller stops streaming (its next write meets the fence).

    The first extension of a turn (offset 0) starts the row again for that step, under the
    run's lock taken by ``lock_for_execution``; later ones are one UPDATE that also checks
    the offset (a delta is never stored twice) and, on PostgreSQL, carries the fence as a
    CTE locking the run's row under the epoch (``fence_statement``).
    """
    size = len(delta)
    now = timezone.now()
    epoch = run.execution_epoch
    if offset == 0:
        with transaction.atomic():
            try:
                lock_for_execution(run.pk, epoch)
            except RunEnded:  # RunFenced too
                return False
            AnswerStream.objects.update_or_create(
                agent_call=call,
                defaults={
                    "run": run,
                    "step": step,
                    "state": AnswerStream.State.LIVE,
                    "text": delta,
                    "length": size,
                    "truncated": truncated,
                    "updated_at": now,
                },
            )
    elif connection.vendor == "postgresql":
        q = connection.ops.quote_name
        with connection.cursor() as cursor:
            cursor.execute(
                f"WITH fence AS ({fence_statement()})"  # noqa: S608
                f" UPDATE {q(AnswerStream._meta.db_table)}"
                " SET text = text || %s, length = length + %s, truncated = %s, updated_at = %s"
                " WHERE agent_call_id = %s AND step = %s AND state = %s AND length = %s"
                " AND EXISTS (SELECT 1 FROM fence)",
                [
                    *fence_params(run.pk, epoch),
                    delta,
                    size,
                    truncated,
                    now,
                    call.pk,
                    step,
                    AnswerStream.State.LIVE,
                    offset,
                ],
            )
            if cursor.rowcount != 1:
                return False
    else:
        updated = AnswerStream.objects.filter(
            agent_call=call,
            step=step,
            state=AnswerStream.State.LIVE,
            length=offset,
            run__status=Run.Status.RUNNING,
            run__execution_epoch=epoch,
        ).update(
            text=Concat(F("text"), Value(delta)),
            length=F("length") + size,
            truncated=truncated,
            updated_at=now,
        )
        if updated != 1:
            return False
    data = {**_public(call.pk, step), "state": "streaming", "offset": offset, "delta": delta}
    if truncated:
        data["truncated"] = True
    run_id = run.pk
    transaction.on_commit(lambda: _send(run_id, data))
    return True


# One stream's extension in a batch (``extend_streams``): the run and the epoch of the execution
# writing, the agent call, the step, the offset it extends at (0 starts the row again), the text.
StreamWrite = tuple[str, int, int, int, int, str, bool]
# What became of each (by agent call): written and announced, to be tried again (the run's row
# was locked by another writer: not waited for), or stopped (the run ended or was taken over).
WRITTEN, AGAIN, STOPPED = "written", "again", "stopped"


def extend_streams(cursor: Any, writes: list[StreamWrite]) -> dict[int, str]:
    """``extend_stream`` for many runs at once, in ONE statement on ``cursor`` (PostgreSQL, a
    connection of the caller's own, autocommit): a worker process writes every stream it has
    text for per coalescing interval, not one statement per run (docs/performance.md, "The
    text stream"). Each write is fenced as ``extend_stream``'s is — the run's row locked under
    the writer's epoch (``NOT_ENDED``, ``UNDER_EPOCH``) — but a row another transaction holds
    is skipped, not waited for (SKIP LOCKED: one run's long lock never delays the others'
    text), and that write is tried again. A start (offset 0) starts the row again for its
    step; an extension must find the row LIVE at its offset. Each written extension is
    announced as ``extend_stream`` announces it."""
    if not writes:
        return {}
    q = connection.ops.quote_name
    streams, runs = q(AnswerStream._meta.db_table), q(Run._meta.db_table)
    live, now = str(AnswerStream.State.LIVE), timezone.now()
    ended = [str(status) for status in Run.TERMINAL]
    columns = list(zip(*writes, strict=True))
    cursor.execute(
        "WITH v AS (SELECT * FROM unnest(%s::varchar[], %s::bigint[], %s::bigint[],"  # noqa: S608
        " %s::integer[], %s::integer[], %s::text[], %s::boolean[])"
        " AS v(run_id, epoch, call_id, step, start, delta, truncated)),"
        f" fence AS (SELECT r.id FROM {runs} r JOIN v ON v.run_id = r.id"
        f" WHERE r.{NOT_ENDED} AND r.{UNDER_EPOCH.replace('%s', 'v.epoch')}"
        " FOR UPDATE OF r SKIP LOCKED),"
        f" started AS (INSERT INTO {streams} AS s"
        " (agent_call_id, run_id, step, state, text, length, truncated, updated_at)"
        " SELECT v.call_id, v.run_id, v.step, %s, v.delta, char_length(v.delta), v.truncated, %s"
        " FROM v WHERE v.start = 0 AND v.run_id IN (SELECT id FROM fence)"
        " ON CONFLICT (agent_call_id) DO UPDATE SET run_id = EXCLUDED.run_id,"
        " step = EXCLUDED.step, state = EXCLUDED.state, text = EXCLUDED.text,"
        " length = EXCLUDED.length, truncated = EXCLUDED.truncated,"
        " updated_at = EXCLUDED.updated_at RETURNING s.agent_call_id),"
        f" extended AS (UPDATE {streams} s SET text = s.text || v.delta,"
        " length = s.length + char_length(v.delta), truncated = v.truncated, updated_at = %s"
        " FROM v WHERE v.start > 0 AND v.run_id IN (SELECT id FROM fence)"
        " AND s.agent_call_id = v.call_id AND s.step = v.step AND s.state = %s"
        " AND s.length = v.start RETURNING s.agent_call_id),"
        f" alive AS (SELECT r.id FROM {runs} r JOIN v ON v.run_id = r.id"
        f" WHERE r.{NOT_ENDED} AND r.{UNDER_EPOCH.replace('%s', 'v.epoch')})"
        " SELECT v.call_id,"
        " v.call_id IN (SELECT agent_call_id FROM started"
        " UNION ALL SELECT agent_call_id FROM extended),"
        " v.run_id IN (SELECT id FROM fence), v.run_id IN (SELECT id FROM alive) FROM v",
        [
            *[list(c) for c in columns],
            ended,
            live,
            now,
            now,
            live,
            ended,
        ],
    )
    outcome: dict[int, str] = {}
    for call_pk, written, locked, alive in cursor.fetchall():
        if written:
            outcome[call_pk] = WRITTEN
        elif alive and not locked:
            outcome[call_pk] = AGAIN  # another transaction held the run's row
        else:
            outcome[call_pk] = STOPPED
    for run_id, _, call_pk, step, start, delta, truncated in writes:
        if outcome.get(call_pk) == WRITTEN:
            data = {**_public(call_pk, step), "state": "streaming", "offset": start, "delta": delta}
            if truncated:
                data["truncated"] = True
            _send(run_id, data)
    return outcome


def close_stream(run: Run, call: AgentCall, step: int, *, length: int, reason: str) -> None:
    """End the turn's stream: the row closed, and its ``answer.stream`` close event (``offset``:
    the turn's length) appended, in one statement on PostgreSQL. The row keeps the turn's text
    (never shown again as live: ``live_streams`` reads LIVE rows of a RUNNING run) so that a
    socket behind sends what it has not up to the close (``closed_stream_text``). A run
    already ended gets neither (its terminal event ends every stream for a client), nor
    does an execution that lost its run: the append carries ``run.execution_epoch``, and
    the row is closed only by the statement (or transaction) that appended the event."""
    data = {**_public(call.pk, step), "state": "closed", "offset": length, "reason": reason}
    table = AnswerStream._meta.db_table
    close = (
        f"UPDATE {table} SET state = %s, updated_at = %s"  # noqa: S608
        f" WHERE agent_call_id = %s AND step = %s AND {IF_APPENDED}",
        [AnswerStream.State.CLOSED, timezone.now(), call.pk, step],
    )
    try:
        if connection.vendor == "postgresql":
            append_event(run, STREAM_EVENT, data, along=[close], epoch=run.execution_epoch)
        else:
            with transaction.atomic():
                AnswerStream.objects.filter(agent_call=call, step=step).update(
                    state=AnswerStream.State.CLOSED, updated_at=timezone.now()
                )
                append_event(run, STREAM_EVENT, data, epoch=run.execution_epoch)
    except RunEnded:  # RunFenced too: nothing written; the execution's next write stops it
        pass


def live_streams(run_id: str) -> list[dict[str, Any]]:
    """The run's live stream text now, as ``answer.stream`` data with ``offset`` 0 and the
    whole text as ``delta`` (``snapshot: true``); none once the run has ended. One query."""
    return [{**data, "snapshot": True} for data in stream_text_after(run_id, {})]


def stream_text_after(run_id: str, sent: dict[str, int]) -> list[dict[str, Any]]:
    """The run's live stream text a reader has not got: per LIVE row of a RUNNING run, the
    text after ``sent[streamId]`` (0 for a stream it has nothing of) as ``answer.stream``
    data at that offset; a stream with nothing new is left out. One query, which reads only
    the new text of each row."""
    start = Case(
        *[
            When(agent_call_id=call_pk, step=step, then=Value(offset + 1))
            for stream, offset in sent.items()
            if (ids := _stream_ids(stream)) is not None
            for call_pk, step in [ids]
        ],
        default=Value(1),
        output_field=IntegerField(),
    )
    rows = (
        AnswerStream.objects.filter(
            run_id=run_id, state=AnswerStream.State.LIVE, run__status=Run.Status.RUNNING
        )
        .annotate(start=start, rest=Substr("text", start))
        .order_by("agent_call_id")
        .values_list("agent_call_id", "step", "start", "rest", "truncated")
    )
    return [_new_text(*row) for row in rows if row[3]]


def _new_text(call_pk: int, step: int, begin: int, rest: str, truncated: bool) -> dict[str, Any]:
    """A row's text from code point ``begin`` (1-based) as ``answer.stream`` data."""
    data = {**_public(call_pk, step), "state": "streaming", "offset": begin - 1, "delta": rest}
    if truncated:
        data["truncated"] = True
    return data


# The names ``with_live_text`` gives the joined row's columns on each run it reads.
_LIVE = "live_stream"
_LIVE_COLUMNS = ("live_call", "live_step", "live_start", "live_rest", "live_truncated")


class _StartAfter(Func):
    """1 + the offset a stream was read up to: ``sent`` (a JSON object streamId → offset,
    one bound parameter whatever the number of streams) looked up by the joined row's
    ``stm_<call>_<step>``; 1 for a stream not in it."""

    output_field = IntegerField()

    def __init__(self, sent: str) -> None:
        super().__init__(Value(sent), F(f"{_LIVE}__agent_call_id"), F(f"{_LIVE}__step"))

    def as_sql(self, compiler: Any, connection: Any, **extra: Any) -> tuple[str, list[Any]]:  # type: ignore[override]
        parts, params = [], []
        for expression in self.get_source_expressions():
            sql, more = compiler.compile(expression)
            parts.append(sql)
            params.extend(more)
        sent, call, step = parts
        if connection.vendor == "postgresql":
            key = f"('stm_' || {call} || '_' || {step})"
            return f"(COALESCE((({sent})::jsonb ->> {key})::integer, 0) + 1)", params
        key = f"('$.\"stm_' || {call} || '_' || {step} || '\"')"
        return f"(COALESCE(json_extract({sent}, {key}), 0) + 1)", params


def with_live_text(runs: QuerySet[Run], sent: str) -> QuerySet[Run]:
    """``runs`` joined to their LIVE stream rows, each row's text after ``sent[streamId]``
    (``sent``: a JSON object, ``sent_offsets``; 0 for a stream not in it) in the same statement: one run instance per row (one with
    nothing joined for a run with no live row), read with ``live_text_of``. Whatever the
    number of runs and streams, one statement of one shape."""
    return (
        runs.alias(
            **{
                _LIVE: FilteredRelation(
                    "answer_streams",
                    condition=Q(answer_streams__state=AnswerStream.State.LIVE),
                )
            }
        )
        .annotate(live_start=_StartAfter(sent))
        .annotate(
            live_call=F(f"{_LIVE}__agent_call_id"),
            live_step=F(f"{_LIVE}__step"),
            live_rest=Substr(f"{_LIVE}__text", cast(Any, F("live_start"))),
            live_truncated=F(f"{_LIVE}__truncated"),
        )
        .order_by("pk", f"{_LIVE}__agent_call_id")
    )


def sent_offsets(sent: dict[str, int]) -> str:
    """``with_live_text``'s ``sent``: one parameter, whatever the number of streams."""
    return json.dumps(sent)


def live_text_of(run: Run) -> dict[str, Any] | None:
    """The new text of the live row joined to ``run`` by ``with_live_text`` (as
    ``stream_text_after`` gives it); None without one, with nothing new, or once the run
    is no longer RUNNING."""
    call, step, start, rest, truncated = (getattr(run, name) for name in _LIVE_COLUMNS)
    if call is None or not rest or run.status != Run.Status.RUNNING:
        return None
    return _new_text(call, step, start, rest, bool(truncated))


def closed_stream_text(run_id: str, close: dict[str, Any], *, start: int) -> dict[str, Any] | None:
    """The text of the turn that ``close`` (an ``answer.stream`` close event's data) ended,
    from ``start`` up to its close ``offset``, as the delta a reader that had ``start`` of it
    sends before the close; None when there is none or the row holds another turn now (the
    agent call's next turn started it again). Whatever the run's status: it may have ended
    since. One query."""
    ids = _stream_ids(close.get("streamId"))
    end = close.get("offset")
    if ids is None or not isinstance(end, int) or not 0 <= start < end:
        return None
    call_pk, step = ids
    row = (
        AnswerStream.objects.filter(
            run_id=run_id, agent_call_id=call_pk, step=step, length__gte=end
        )
        .annotate(rest=Substr("text", start + 1, end - start))
        .values_list("rest", "truncated")
        .first()
    )
    if row is None or len(row[0]) != end - start:
        return None
    data = {**_public(call_pk, step), "state": "streaming", "offset": start, "delta": row[0]}
    if row[1]:
        data["truncated"] = True
    return data


def _stream_ids(stream: object) -> tuple[int, int] | None:
    """(agent call pk, step) of a ``streamId`` (``stm_<call>_<step>``); None if it is not one."""
    if not isinstance(stream, str) or not stream.startswith("stm_"):
        return None
    call, _, step = stream[4:].partition("_")
    if not (call.isdigit() and step.isdigit()):
        return None
    return int(call), int(step)
