"""The run lifecycle: claim a queued run, finish a run, ask it to stop.

Every status change of a run happens here, under the run's row lock, with the
matching event appended in the same transaction: a run's terminal event is
written once, by whoever takes the lock first.
"""

import os
import socket
from typing import Any

from django.db import transaction
from django.db.models import F, QuerySet
from django.utils import timezone

from foundation import observability
from foundation.errors import ErrorCode, SparkTideError
from foundation.faults import maybe_fault
from runs.events import (
    RunEnded,
    RunFenced,
    append_event,
    fence_params,
    fence_refusal,
    fence_statement,
    lock_run_row,
    lock_run_to_claim,
)
from runs.models import AgentCall, Run
from runs.reasons import RunReason

__all__ = [
    "RunEnded",
    "RunFenced",
    "claim_run",
    "claim_run_with_root",
    "fence_params",
    "fence_statement",
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
    """The fence of every write of a run's execution: ``lock_run_row`` (runs/events.py, the
    one home of the run's row lock) under ``epoch`` — the one its executing worker took at
    claim. Returns ``columns`` of the locked row (with ``status``, ``execution_epoch`` and
    ``last_seq``).

    Raises ``RunFenced`` when another execution took the run over (recovery, a
    hand-back moved the epoch on), ``RunEnded`` when the run ended under this epoch —
    unless ``ended_ok``: then the ended run's row is returned for the caller to refuse
    its write itself (Publication's ``RUN_ENDED`` receipt). The one-statement writers
    carry the same fence as SQL (``fence_statement``, ``fence_params``).
    """
    # The lock alone first, then the fence's rule: a worker frozen here holds the lock
    # (make chaos, "frozen_holding_run_lock") whatever the rule would answer.
    row = lock_run_row(run_id, columns, ended_ok=True)
    maybe_fault("frozen_holding_run_lock")
    refused = fence_refusal(run_id, epoch, row["status"], row["execution_epoch"], ended_ok=ended_ok)
    if refused is not None:
        raise refused
    return row


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
        locked = lock_run_row(run.pk, ("started_at",), epoch=epoch, ended_ok=True)
        if locked["status"] in Run.TERMINAL or (
            only_from is not None and locked["status"] != only_from
        ):
            return str(locked["status"])
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
    started = locked["started_at"]
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
