"""The run event log: append under the run's lock, wake subscribers after commit.

The database log is the truth. Whoever delivers events registers a waker
(``register_waker``; delivery does it when the app is ready), called after the
transaction commits; a lost wake-up costs latency, never an event. The log
never imports its readers: the arrow points from delivery down to the log.
"""

import logging
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any, cast

from django.db import connection, transaction
from django.db.models import DateTimeField, F, Field, QuerySet
from django.utils import timezone
from django.utils.dateparse import parse_datetime

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


def fence_refusal(
    run_id: str,
    epoch: int | None,
    status: str,
    current: int,
    *,
    what: str = "nothing written",
    ended_ok: bool = False,
) -> RunEnded | None:
    """The fence's rule, decided on the run's ``status`` and ``current`` epoch as read: a
    write under ``epoch`` (None: no execution's, e.g. a cancel) is refused with
    ``RunFenced`` once another execution took the run over, with ``RunEnded`` once the run
    has ended (unless ``ended_ok``); None: it may be written."""
    if epoch is not None and current != epoch:
        return RunFenced(run_id, epoch, current, status)
    if status in Run.TERMINAL and not ended_ok:
        return RunEnded(f"{run_id} already ended ({status}); {what}")
    return None


def refusal(run_id: str, epoch: int | None, what: str) -> RunEnded:
    """Why a write of ``run_id``'s execution under ``epoch`` was refused: the run was
    taken over (``RunFenced``) or has ended (``RunEnded``). Read after the refusal (a
    one-statement write whose fence found no row)."""
    status, current = Run.objects.values_list("status", "execution_epoch").get(pk=run_id)
    written = f"{what} not written"
    found = fence_refusal(run_id, epoch, status, current, what=written)
    return found or RunEnded(f"{run_id} already ended ({status}); {written}")


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


def _locked_run(*, run_id: str) -> QuerySet[Run]:
    runs = Run.objects.select_for_update(of=("self",)).select_related(*ENGINE_RELATED)
    return runs.filter(pk=run_id).order_by()[:1]


def lock_run_to_claim(run_id: str) -> Run | None:
    """The claim's form of ``lock_run_row``: the run locked (FOR UPDATE OF the run only)
    with what the engine needs of it (ENGINE_RELATED) in the same statement; None when
    there is no such run. Compiled once per process (foundation/compiled.py), re-bound on
    every call. The claim decides on the row itself (runs/lifecycle.py)."""
    found = instances_once(
        "lock_run_to_claim",
        _locked_run,
        {"run_id": placeholder_text("run")},
        {"run_id": run_id},
    )
    return found[0] if found else None


# The condition each ``along`` statement of an append carries: it writes only if the
# event is appended (the run not ended, the writer's epoch current).
IF_APPENDED = "EXISTS (SELECT 1 FROM advanced)"

# The fence as SQL conditions on the run's row: not ended (``Run.TERMINAL``), and still
# under the writer's epoch. Parameters: ``list(Run.TERMINAL)``, the epoch.
NOT_ENDED = "status <> ALL(%s)"
UNDER_EPOCH = "execution_epoch = %s"


def _row_lock(select: str, *, fenced: bool = False) -> str:
    """The one text of a lock on a run's row: ``select`` of the row ``WHERE id = %s``,
    FOR UPDATE (not on SQLite, which has no row locks); ``fenced`` also asks the fence's
    conditions (parameters after the id: ``list(Run.TERMINAL)``, the epoch)."""
    q = connection.ops.quote_name
    fence = f" AND {NOT_ENDED} AND {UNDER_EPOCH}" if fenced else ""
    lock = " FOR UPDATE" if connection.features.has_select_for_update else ""
    return f"SELECT {select} FROM {q(Run._meta.db_table)} WHERE {q('id')} = %s{fence}{lock}"  # noqa: S608


def lock_run_row(
    run_id: str,
    columns: Sequence[str] = (),
    *,
    epoch: int | None = None,
    ended_ok: bool = False,
    what: str = "nothing written",
) -> dict[str, Any]:
    """Lock the run's row (FOR UPDATE, in the caller's transaction): the one home of the
    run's row lock and of the fence it carries (``fence_refusal``). Returns ``columns`` of
    the locked row as the ORM reads them, with ``status``, ``execution_epoch`` and
    ``last_seq``; ``Run.DoesNotExist`` when there is no such run.

    Raises ``RunFenced`` when ``epoch`` is given and another execution took the run over,
    ``RunEnded`` when the run has ended — unless ``ended_ok``: then the ended run's row is
    returned for the caller to decide (finishing a run, Publication's ``RUN_ENDED``).
    One fixed statement per set of columns, bound on the server (no ORM compilation on a
    hot path: Publication's commit)."""
    names = tuple(dict.fromkeys(("status", "execution_epoch", "last_seq", *columns)))
    q = connection.ops.quote_name
    with server_binding_cursor() as cursor:
        cursor.execute(_row_lock(", ".join(q(c) for c in names)), [run_id])
        found = cursor.fetchone()
    if found is None:
        raise Run.DoesNotExist(f"no run {run_id}")
    row = {name: _as_read(name, value) for name, value in zip(names, found, strict=True)}
    refused = fence_refusal(
        run_id, epoch, row["status"], row["execution_epoch"], what=what, ended_ok=ended_ok
    )
    if refused is not None:
        raise refused
    return row


def _as_read(name: str, value: Any) -> Any:
    """A column as the ORM would read it: SQLite hands a datetime back naive, or as text."""
    if value is None or not isinstance(Run._meta.get_field(name), DateTimeField):
        return value
    read = parse_datetime(value) if isinstance(value, str) else value
    if isinstance(read, datetime) and timezone.is_naive(read):
        read = timezone.make_aware(read, UTC)
    return read


def fence_statement() -> str:
    """``lock_run_row``'s fence as SQL, for a writer that is one statement (the runtime's
    journal): the body of a CTE that locks the run's row and yields a row only while the
    run is not ended and still under the epoch. Parameters: ``fence_params``."""
    return _row_lock("1", fenced=True)


def fence_params(run_id: str, epoch: int) -> list[Any]:
    return [run_id, list(Run.TERMINAL), epoch]


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
    guard = f" AND {NOT_ENDED}" + ("" if epoch is None else f" AND {UNDER_EPOCH}")
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
        # Nothing follows a run's terminal event; its writer was ended elsewhere.
        lock_run_row(run.pk, epoch=epoch, what=f"{type} not written")
        Run.objects.filter(pk=run.pk).update(last_seq=F("last_seq") + 1, **update)
        run.last_seq = Run.objects.values_list("last_seq", flat=True).get(pk=run.pk)
        return RunEvent.objects.create(run=run, seq=run.last_seq, type=type, data=data, at=at)
