"""The run lifecycle: claim a queued run, finish a run, ask it to stop.

Every status change of a run happens here, under the run's row lock, with the
matching event appended in the same transaction: a run's terminal event is
written once, by whoever takes the lock first.
"""

import os
import socket
from typing import Any

from django.db import connection, transaction
from django.db.models import F, QuerySet
from django.utils import timezone

from foundation import observability
from foundation.errors import ErrorCode, SparkTideError
from foundation.faults import maybe_fault
from runs.events import (
    RunEnded,
    RunFenced,
    append_event,
    lock_run,
    lock_run_columns,
    lock_run_to_claim,
)
from runs.models import AgentCall, Run
from runs.reasons import RunReason

__all__ = [
    "RunEnded",
    "RunFenced",
    "claim_run",
    "claim_run_with_root",
    "finish_run",
    "lock_for_execution",
]


def worker_identity() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def claim_run(run_id: str) -> Run | None:
    claimed = _claim(run_id, root=False)
    return claimed[0] if claimed else None


def claim_run_with_root(run_id: str) -> tuple[Run, AgentCall] | None:
    """``claim_run``, and the run's root agent call opened in the claim's transaction
    (under its lock and epoch: no write of the execution happens outside the fence)."""
    claimed = _claim(run_id, root=True)
    if claimed is None or claimed[1] is None:
        return None
    return claimed[0], claimed[1]


def _claim(run_id: str, *, root: bool) -> tuple[Run, AgentCall | None] | None:
    call = None
    with transaction.atomic():
        # The row and what the engine needs of it, read and locked at once (FOR UPDATE
        # OF the run only); the status change and run.started are one statement.
        run = lock_run_to_claim(run_id)
        if run is None or run.status != Run.Status.QUEUED:
            return None
        run.status = Run.Status.RUNNING
        run.started_at = run.heartbeat_at = timezone.now()
        run.worker_id = worker_identity()
        # This execution's epoch: every write it makes for the run is checked against it.
        run.execution_epoch += 1
        claimed = {
            f: getattr(run, f)
            for f in ("status", "started_at", "heartbeat_at", "worker_id", "execution_epoch")
        }
        append_event(run, "run.started", {}, locked=True, update=claimed)
        if root:
            call = AgentCall.objects.create(
                run=run, depth=0, agent_version=run.agent_version, task=run.input
            )
    observability.run_started(run_id=run.pk, **_labels(run))
    return run, call


def lock_for_execution(
    run_id: str, epoch: int, columns: tuple[str, ...] = (), *, ended_ok: bool = False
) -> dict[str, Any]:
    """The fence of every write of a run's execution: lock the run's row (FOR UPDATE, in
    the caller's transaction) and go on only while the run is not ended and still under
    ``epoch`` — the one its executing worker took at claim. Returns ``columns`` of the
    locked row (with ``status``, ``execution_epoch`` and ``last_seq``).

    Raises ``RunFenced`` when another execution took the run over (recovery, a
    hand-back moved the epoch on), ``RunEnded`` when the run ended under this epoch —
    unless ``ended_ok``: then the ended run's row is returned for the caller to refuse
    its write itself (Publication's ``RUN_ENDED`` receipt).
    """
    names = tuple(dict.fromkeys(("status", "execution_epoch", "last_seq", *columns)))
    row = lock_run_columns(run_id, names)
    maybe_fault("frozen_holding_run_lock")
    if row is None:
        raise Run.DoesNotExist(f"no run {run_id}")
    if row["execution_epoch"] != epoch:
        raise RunFenced(run_id, epoch, row["execution_epoch"], row["status"])
    if row["status"] in Run.TERMINAL and not ended_ok:
        raise RunEnded(f"{run_id} already ended ({row['status']}); nothing written")
    return row


def fence_statement() -> str:
    """The fence as SQL, for a writer that is one statement (the runtime's journal): the
    body of a CTE that locks the run's row and yields a row only while the run is not
    ended and still under the epoch. Parameters: ``fence_params``. The same rule as
    ``lock_for_execution``, for the same lock."""
    q = connection.ops.quote_name
    return (
        f"SELECT 1 FROM {q(Run._meta.db_table)} WHERE {q('id')} = %s"  # noqa: S608
        " AND execution_epoch = %s AND status <> ALL(%s) FOR UPDATE"
    )


def fence_params(run_id: str, epoch: int) -> list[Any]:
    return [run_id, epoch, list(Run.TERMINAL)]


def take_over(runs: QuerySet[Run], **fields: Any) -> int:
    """Take these runs from whatever execution holds them (recovery, a hand-back): their
    epoch moves on, so that execution's next write is refused (``RunFenced``)."""
    return runs.update(execution_epoch=F("execution_epoch") + 1, **fields)


def _labels(run: Run) -> dict[str, str]:
    """The app's slug and the agent's key when loaded (no extra query), else their row IDs."""
    app = run.app.slug if Run.app.is_cached(run) else str(run.app_id)
    version = run.agent_version if Run.agent_version.is_cached(run) else None
    if version is not None and type(version).agent.is_cached(version):
        agent = version.agent.key
    else:
        agent = str(run.agent_version_id)
    return {"app": app, "agent": agent}


def finish_run(
    run: Run,
    status: str,
    reason: str,
    detail: str = "",
    *,
    only_from: str | None = None,
    epoch: int | None = None,
) -> str:
    """End the run with ``status`` and its terminal event, unless it already ended.

    ``only_from`` ends it only while it is still in that status, decided under
    the lock: a cancel of a QUEUED run must not end a run a worker claimed in
    between (the worker ends it at its next step instead). ``epoch`` (the executing
    worker's) ends it only under that epoch: ``RunFenced`` once it was taken over.
    """
    with transaction.atomic():
        locked = lock_run(run.pk)
        if epoch is not None and locked.execution_epoch != epoch:
            raise RunFenced(run.pk, epoch, locked.execution_epoch, locked.status)
        if locked.is_terminal or (only_from is not None and locked.status != only_from):
            return locked.status
        ended = {
            "status": status,
            "reason": reason,
            "reason_detail": detail[:2000],
            "completed_at": timezone.now(),
        }
        data = {"status": status}
        if reason:
            data["reason"] = reason
        # The terminal status and its event: one statement under the lock.
        append_event(run, f"run.{status.lower()}", data, locked=True, update=ended)
    run.status = status
    started = locked.started_at
    observability.run_ended(
        run_id=run.pk,
        status=status,
        reason=reason,
        duration=(timezone.now() - started).total_seconds() if started else None,
        **_labels(run),
    )
    return status


def cancel_run(run: Run) -> Run:
    """Ask a run to stop. A queued run ends at once; a running one at its next step."""
    if run.is_terminal:
        raise SparkTideError(ErrorCode.RUN_ALREADY_FINISHED)
    Run.objects.filter(pk=run.pk, cancel_requested_at__isnull=True).update(
        cancel_requested_at=timezone.now()
    )
    finish_run(run, Run.Status.CANCELLED, RunReason.CANCELLED_BY_USER, only_from=Run.Status.QUEUED)
    return run
