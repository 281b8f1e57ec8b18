"""The run event log: append under the run's lock, wake subscribers after commit.

The database log is the truth. Whoever delivers events registers a waker
(``register_waker``; delivery does it when the app is ready), called after the
transaction commits; a lost wake-up costs latency, never an event. The log
never imports its readers: the arrow points from delivery down to the log.
"""

import logging
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any, cast

from django.db import connection, transaction
from django.db.models import F, Field, QuerySet
from django.utils import timezone

from foundation.compiled import instances_once, placeholder_text, server_binding_cursor
from runs.models import Run, RunEvent

logger = logging.getLogger(__name__)

Waker = Callable[[str, int], None]
_wakers: list[Waker] = []

TERMINAL_EVENT_TYPES = frozenset({"run.completed", "run.partial", "run.failed", "run.cancelled"})


class RunEnded(Exception):
    """The run was ended elsewhere (recovered as WORKER_LOST, cancelled while queued)."""


class RunFenced(RunEnded):
    """The execution that tried to write lost the run: another one took it over
    (recovery, a hand-back) and moved its ``execution_epoch`` on. Nothing was written."""

    def __init__(self, run_id: str, epoch: int, current: int, status: str) -> None:
        super().__init__(
            f"{run_id}: execution epoch {epoch} is over (now {current}, {status}); nothing written"
        )
        self.run_id, self.epoch, self.current, self.status = run_id, epoch, current, status


def refusal(run_id: str, epoch: int | None, what: str) -> RunEnded:
    """Why a write of ``run_id``'s execution under ``epoch`` was refused: the run was
    taken over (``RunFenced``) or has ended (``RunEnded``). Read after the refusal."""
    status, current = Run.objects.values_list("status", "execution_epoch").get(pk=run_id)
    if epoch is not None and current != epoch:
        return RunFenced(run_id, epoch, current, status)
    return RunEnded(f"{run_id} already ended ({status}); {what} not written")


def register_waker(waker: Waker) -> None:
    """Have ``waker(run_id, seq)`` called after each committed append (idempotent)."""
    if waker not in _wakers:
        _wakers.append(waker)


def notify_run(run_id: str, seq: int) -> None:
    """Wake the run's readers; best effort by design."""
    for waker in _wakers:
        try:
            waker(run_id, seq)
        except Exception:  # the log is the truth; a consumer polls and catches up
            logger.warning("wake-up for %s lost", run_id, exc_info=True)


# What the engine reads of a run it claims, with the row (runs/lifecycle.py claim_run).
ENGINE_RELATED = ("tenant", "app", "owner", "agent_version__agent")


def _locked_run(*, run_id: str, related: bool) -> QuerySet[Run]:
    runs = (
        Run.objects.select_for_update(of=("self",)) if related else Run.objects.select_for_update()
    )
    if related:
        runs = runs.select_related(*ENGINE_RELATED)
    return runs.filter(pk=run_id).order_by()[:1]


def _lock_run(run_id: str, *, related: bool) -> Run | None:
    """The run's row, locked FOR UPDATE in the caller's transaction (None: no such run).
    Compiled once per process (foundation/compiled.py), re-bound on every call."""
    found = instances_once(
        ("lock_run", related),
        _locked_run,
        {"run_id": placeholder_text("run"), "related": related},
        {"run_id": run_id},
        fixed=("related",),
    )
    return found[0] if found else None


def lock_run_to_claim(run_id: str) -> Run | None:
    """The run locked with what the engine needs of it (ENGINE_RELATED) in the same
    statement, only the run's row locked; None when there is no such run."""
    return _lock_run(run_id, related=True)


def lock_run(run_id: str) -> Run:
    """The run locked (``Run.DoesNotExist`` when there is no such run), as ``get`` does."""
    run = _lock_run(run_id, related=False)
    if run is None:
        raise Run.DoesNotExist(f"no run {run_id}")
    return run


# The condition each ``along`` statement of an append carries: it writes only if the
# event is appended (the run not ended, the writer's epoch current).
IF_APPENDED = "EXISTS (SELECT 1 FROM advanced)"


def lock_run_columns(run_id: str, columns: Sequence[str]) -> dict[str, Any] | None:
    """The run's row locked FOR UPDATE in the caller's transaction, and these plain
    columns of it as stored (None: no such run). A fixed statement per set of columns,
    bound on the server (no ORM compilation on a hot path: Publication's commit)."""
    q = connection.ops.quote_name
    lock = " FOR UPDATE" if connection.features.has_select_for_update else ""  # not SQLite
    with server_binding_cursor() as cursor:
        cursor.execute(
            f"SELECT {', '.join(q(c) for c in columns)} FROM"  # noqa: S608
            f" {q(Run._meta.db_table)} WHERE {q('id')} = %s{lock}",
            [run_id],
        )
        found = cursor.fetchone()
    return None if found is None else dict(zip(columns, found, strict=True))


def append_event(
    run: Run,
    type: str,
    data: dict[str, Any] | None = None,
    *,
    locked: bool = False,
    update: dict[str, Any] | None = None,
    along: Sequence[tuple[str, list[Any]]] = (),
    epoch: int | None = None,
) -> RunEvent:
    """Append one event with the run's next seq.

    ``locked=True`` means the caller already holds ``select_for_update`` on the
    run row inside its transaction (Publication's commit does, for its counters).
    ``update`` sets more fields of the run row in the same statement (a status
    change and its event: runs/lifecycle.py); only under the caller's lock.
    ``along`` (PostgreSQL only) are other writes of the same moment, (SQL, params)
    each, run by the same statement as data-modifying WITHs, each conditional on
    ``IF_APPENDED``: they happen only if the event is appended.
    ``epoch`` is the execution epoch of the writer (the engine's, taken at claim): the
    append is refused with ``RunFenced`` once the run was taken over.

    Nothing is ever appended after a run's terminal event: every append, under the
    caller's lock or not, is refused on an ended run (``RunEnded``).

    On PostgreSQL an append is one statement (docs/performance.md): the run's
    counter is advanced by ``UPDATE … RETURNING`` — which takes the row lock and
    refuses an ended run (or a lost epoch) in the same step — and the event is
    inserted from what it returned. One statement is atomic on its own, so no
    savepoint and, outside a transaction, no BEGIN/COMMIT either.
    """
    (event_id, seq, data, at), event = _append(
        run, type, data, locked=locked, update=update, along=along, epoch=epoch
    )
    if event is None:
        event = RunEvent(id=event_id, run=run, seq=seq, type=type, data=data, at=at)
    return event


def append_event_seq(
    run: Run,
    type: str,
    data: dict[str, Any] | None = None,
    *,
    locked: bool = False,
    update: dict[str, Any] | None = None,
    epoch: int | None = None,
) -> int:
    """``append_event`` for a caller that needs only the seq its event took (Publication's
    commit): the same append, without a ``RunEvent`` instance on PostgreSQL."""
    (_, seq, _, _), _ = _append(
        run, type, data, locked=locked, update=update, along=(), epoch=epoch
    )
    return seq


def log_page(run_id: str, *, after: int, limit: int) -> QuerySet[RunEvent]:
    """The run's events after ``after``, in order, at most ``limit``: seqs after+1 … after+limit.

    The log has no holes — every append advances the run's counter by one in the
    transaction that inserts its event — so a page is a range of seqs, and it is
    written as one. As ``seq > after … LIMIT`` alone, the statement's cost hung on
    what the planner believed: for a run the table's statistics did not yet count,
    PostgreSQL took a bitmap scan of *every* later event and sorted it for the top
    ``limit``, so each page of a 10,000-event replay read the rest of the run
    (docs/performance.md, "Delivery": "a page is a range of seqs"). Bounded on both
    sides, any plan reads at most ``limit`` rows.
    """
    return log_range(run_id, after=after, last=after + limit, limit=limit)


def log_range(run_id: str, *, after: int, last: int, limit: int) -> QuerySet[RunEvent]:
    """``log_page`` with its last seq given apart (``last`` = ``after + limit``), for a
    caller that compiles the page once with a placeholder for each bound
    (``delivery.fanout.read_frames``)."""
    return RunEvent.objects.filter(run_id=run_id, seq__gt=after, seq__lte=last).order_by("seq")[
        :limit
    ]


def _append(
    run: Run,
    type: str,
    data: dict[str, Any] | None,
    *,
    locked: bool,
    update: dict[str, Any] | None,
    along: Sequence[tuple[str, list[Any]]],
    epoch: int | None = None,
) -> tuple[tuple[int, int, dict[str, Any], datetime], RunEvent | None]:
    """The append itself: ((event id, seq, data, at), the event where the ORM made it)."""
    data = data or {}
    at = timezone.now()
    update = update or {}
    if update and not locked:
        raise ValueError("append_event(update=...) changes the run row: only under its lock")
    if along and connection.vendor != "postgresql":
        raise ValueError("append_event(along=...) is PostgreSQL's")
    if connection.vendor == "postgresql":
        row = _append_in_one_statement(run, type, data, at, update=update, along=along, epoch=epoch)
        if row is None:
            raise refusal(run.pk, epoch, type)
        event_id, seq = row
        run.last_seq = seq
        event = None
    else:
        event = _append_with_the_orm(run, type, data, at, locked=locked, update=update, epoch=epoch)
        event_id, seq = event.pk, event.seq
    run_id = run.pk
    transaction.on_commit(lambda: notify_run(run_id, seq))
    return (event_id, seq, data, at), event


def _append_in_one_statement(
    run: Run,
    type: str,
    data: dict[str, Any],
    at: datetime,
    *,
    update: dict[str, Any],
    along: Sequence[tuple[str, list[Any]]] = (),
    epoch: int | None = None,
) -> tuple[int, int] | None:
    """(event id, seq), or None when the run has ended or ``epoch`` is over."""
    run_table, event_table = Run._meta.db_table, RunEvent._meta.db_table
    guard = " AND status <> ALL(%s)" + ("" if epoch is None else " AND execution_epoch = %s")
    params: list[Any] = []
    also = ""
    for name, value in update.items():
        field = cast("Field[Any, Any]", Run._meta.get_field(name))
        also += f", {connection.ops.quote_name(str(field.column))} = %s"
        params.append(field.get_db_prep_save(value, connection))
    params += [run.pk, list(Run.TERMINAL)] + ([] if epoch is None else [epoch])
    after = ""
    for number, (sql, values) in enumerate(along):
        after += f", along{number} AS ({sql})"
        params += values
    payload = RunEvent._meta.get_field("data").get_db_prep_value(data, connection)
    params += [run.pk, type, payload, at]
    # Bound on the server: a text per shape of append (``along``, ``update``, the epoch),
    # prepared once per connection (foundation/compiled.py).
    with server_binding_cursor() as cursor:
        cursor.execute(
            f"WITH advanced AS (UPDATE {run_table} SET last_seq = last_seq + 1{also}"  # noqa: S608
            f" WHERE id = %s{guard} RETURNING last_seq){after}"
            f" INSERT INTO {event_table} (run_id, seq, type, data, at)"
            " SELECT %s, advanced.last_seq, %s, %s, %s FROM advanced RETURNING id, seq",
            params,
        )
        row: tuple[int, int] | None = cursor.fetchone()
        return row


def _append_with_the_orm(
    run: Run,
    type: str,
    data: dict[str, Any],
    at: datetime,
    *,
    locked: bool,
    update: dict[str, Any],
    epoch: int | None = None,
) -> RunEvent:
    """SQLite (development, the demo): lock, check, advance, insert."""
    # Under the caller's lock we are already inside its transaction: no savepoint needed.
    # The counter is advanced and read in the database, never from ``run`` in memory,
    # which a caller holding the lock may have loaded before another writer appended.
    with transaction.atomic(savepoint=not locked):
        status, current = (
            Run.objects.select_for_update().values_list("status", "execution_epoch").get(pk=run.pk)
        )
        if status in Run.TERMINAL or (epoch is not None and current != epoch):
            # Nothing follows a run's terminal event; its writer was ended elsewhere.
            raise refusal(run.pk, epoch, type)
        Run.objects.filter(pk=run.pk).update(last_seq=F("last_seq") + 1, **update)
        run.last_seq = Run.objects.values_list("last_seq", flat=True).get(pk=run.pk)
        return RunEvent.objects.create(run=run, seq=run.last_seq, type=type, data=data, at=at)
