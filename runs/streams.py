"""The text stream of a live model turn: one row per agent call, deltas through the channel layer.

What a model turn says reaches clients while it is generated, before Publication decides
anything about it (docs/events.md, "The text stream"). It is not a save and not the event
log: the deltas go to the run's channel-layer group only (``register_stream_sender``,
registered by delivery), and the turn's text so far is kept in ONE row per agent call
(``AnswerStream``), extended at the coalescing interval, so a client that connects mid-turn
is sent that text with its offset at once, then the deltas after it. When the turn ends the
row is closed and emptied by the statement that appends the turn's ``answer.stream`` close
event: the log has one event per streamed turn, and what a replay shows afterwards is the
published blocks.

Every write is fenced on the run still RUNNING: nothing is written or sent after its end.
Offsets and lengths count Unicode code points. Text arrives here already cleaned and bounded
(runtime/streaming.py); this module only stores and announces it.
"""

import logging
from collections.abc import Callable
from typing import Any

from django.db import connection, transaction
from django.db.models import F, Value
from django.db.models.functions import Concat
from django.utils import timezone

from runs.events import RunEnded, append_event
from runs.models import AgentCall, AnswerStream, Run

logger = logging.getLogger(__name__)

STREAM_EVENT = "answer.stream"

# (run id, the delta's public data) → sent to the run's readers; best effort.
StreamSender = Callable[[str, dict[str, Any]], None]
_senders: list[StreamSender] = []


def register_stream_sender(sender: StreamSender) -> None:
    """Have ``sender(run_id, data)`` called after each committed extension (idempotent)."""
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
    the run is no longer RUNNING (nothing written, nothing sent: the caller stops streaming).

    The first extension of a turn (offset 0) starts the row again for that step; later ones
    are one UPDATE that also checks the offset, so a delta is never stored twice.
    """
    size = len(delta)
    now = timezone.now()
    if offset == 0:
        with transaction.atomic():
            alive = (
                Run.objects.select_for_update()
                .filter(pk=run.pk, status=Run.Status.RUNNING)
                .values_list("pk", flat=True)
                .first()
            )
            if alive is None:
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
    else:
        updated = AnswerStream.objects.filter(
            agent_call=call,
            step=step,
            state=AnswerStream.State.LIVE,
            length=offset,
            run__status=Run.Status.RUNNING,
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


def close_stream(run: Run, call: AgentCall, step: int, *, length: int, reason: str) -> None:
    """End the turn's stream: the row closed and emptied, and its ``answer.stream`` close
    event appended, in one statement on PostgreSQL. A run already ended gets neither (its
    terminal event ends every stream for a client)."""
    data = {**_public(call.pk, step), "state": "closed", "offset": length, "reason": reason}
    table = AnswerStream._meta.db_table
    close = (
        f"UPDATE {table} SET state = %s, text = '', updated_at = %s"  # noqa: S608
        " WHERE agent_call_id = %s AND step = %s",
        [AnswerStream.State.CLOSED, timezone.now(), call.pk, step],
    )
    try:
        if connection.vendor == "postgresql":
            append_event(run, STREAM_EVENT, data, along=[close])
        else:
            with transaction.atomic():
                AnswerStream.objects.filter(agent_call=call, step=step).update(
                    state=AnswerStream.State.CLOSED, text="", updated_at=timezone.now()
                )
                append_event(run, STREAM_EVENT, data)
    except RunEnded:
        pass


def live_streams(run_id: str) -> list[dict[str, Any]]:
    """The run's live stream text now, as ``answer.stream`` data with ``offset`` 0 and the
    whole text as ``delta`` (``snapshot: true``); none once the run has ended. One query."""
    rows = (
        AnswerStream.objects.filter(
            run_id=run_id, state=AnswerStream.State.LIVE, run__status=Run.Status.RUNNING
        )
        .order_by("agent_call_id")
        .values_list("agent_call_id", "step", "text", "truncated")
    )
    snapshots = []
    for call_pk, step, text, truncated in rows:
        data = {
            **_public(call_pk, step),
            "state": "streaming",
            "offset": 0,
            "delta": text,
            "snapshot": True,
        }
        if truncated:
            data["truncated"] = True
        snapshots.append(data)
    return snapshots
