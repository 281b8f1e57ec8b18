"""Recovery of runs whose worker died.

Publication's store is the truth. For a run whose worker stopped saying it is
alive, recovery, under the run's lock:

* keeps every committed block (readable through the reader, under the owner's
  current authorization) and notes in the journal each commit the journal never
  recorded, with the receipt ``unknown`` — never rewritten as a rejection;
* notes each tool call left without a receipt as ``unknown``;
* takes the run over: its ``execution_epoch`` moves on, so every later write of
  the lost worker (a paused process resuming) is refused (runs/lifecycle.py);
* settles previews whose commit never happened: they were shown, never saved,
  and are never promoted to committed (Publication's ``settle_lost_previews``:
  REJECTED, WORKER_LOST);
* re-executes nothing (no model call, no tool, no publication);
* ends the run with its own terminal state: PARTIAL if a block was committed,
  else FAILED, reason WORKER_LOST.

Holding the run's lock makes the settlement exact: a Publication commit takes
the same lock first, so none is in flight while recovery runs, and none can land
after it (a commit into an ended run is refused with RUN_ENDED).

Every live worker calls ``sweep`` periodically (runtime/workers.py): it
recovers stale RUNNING runs, settles their task rows, and re-enqueues QUEUED
runs whose task was lost (docs/reliability.md). Several workers may sweep at
once: each run is taken under its row lock with SKIP LOCKED and re-checked, so
it is recovered (or re-enqueued) once.
"""

import logging
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Q, QuerySet
from django.tasks import TaskResultStatus
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from publication.models import PublicationAttempt
from publication.pipeline import settle_lost_previews
from publication.reader import committed_block_count
from runs.lifecycle import finish_run, take_over
from runs.models import AgentCall, DeliveryLog, JournalEntry, Run
from runs.reasons import RunReason

logger = logging.getLogger(__name__)

DEFAULT_STALE_AFTER = timedelta(seconds=90)
WORKER_LOST = RunReason.WORKER_LOST
UNKNOWN = "unknown"


@dataclass(frozen=True)
class Recovered:
    run_id: str
    status: str
    committed_blocks: int
    unjournaled_commits: int
    unanswered_tool_calls: int = 0
    settled_previews: int = 0


def stale_runs(
    stale_after: timedelta = DEFAULT_STALE_AFTER, now: datetime | None = None
) -> QuerySet[Run]:
    """RUNNING runs whose worker has not said it is alive for ``stale_after``."""
    cutoff = (now or timezone.now()) - stale_after
    return Run.objects.filter(status=Run.Status.RUNNING).filter(
        Q(heartbeat_at__lt=cutoff) | Q(heartbeat_at__isnull=True, started_at__lt=cutoff)
    )


def _journal_unjournaled_commits(run: Run) -> int:
    journaled = set()
    for data in JournalEntry.objects.filter(
        run=run, kind=JournalEntry.Kind.NOTE, tool="publication"
    ).values_list("data", flat=True):
        receipt = data.get("receipt") if isinstance(data, dict) else None
        if isinstance(receipt, dict):
            journaled.add(receipt.get("candidate_id"))
    missing = [
        a
        for a in PublicationAttempt.objects.filter(
            run=run, outcome=PublicationAttempt.Outcome.COMMITTED
        ).order_by("id")
        if a.candidate_id not in journaled
    ]
    JournalEntry.objects.bulk_create(
        JournalEntry(
            run=run,
            agent_call_id=a.agent_call_id,
            kind=JournalEntry.Kind.NOTE,
            tool="recovery",
            data={
                "candidate_id": a.candidate_id,
                "receipt": UNKNOWN,
                "store": {
                    "outcome": a.outcome,
                    "publicationId": a.block_id,
                    "revision": a.revision,
                },
            },
        )
        for a in missing
    )
    return len(missing)


def _journal_unanswered_tool_calls(run: Run) -> int:
    """A tool call the journal never saw answered: its receipt is unknown, and the
    tool is not run again (its effect, if any, is in its own store)."""
    calls = list(
        JournalEntry.objects.filter(run=run, kind=JournalEntry.Kind.TOOL_CALL).order_by("id")
    )
    answered = set(
        JournalEntry.objects.filter(run=run, kind=JournalEntry.Kind.TOOL_RECEIPT).values_list(
            "data__toolCallId", flat=True
        )
    )
    unanswered = [c for c in calls if c.data.get("toolCallId") not in answered]
    JournalEntry.objects.bulk_create(
        JournalEntry(
            run=run,
            agent_call_id=c.agent_call_id,
            kind=JournalEntry.Kind.TOOL_RECEIPT,
            tool=c.tool,
            step=c.step,
            data={"toolCallId": c.data.get("toolCallId"), "receipt": UNKNOWN, "recovered": True},
        )
        for c in unanswered
    )
    return len(unanswered)


def recover_run(run: Run) -> Recovered | None:
    with transaction.atomic():
        locked = (
            Run.objects.select_for_update(skip_locked=True)
            .filter(pk=run.pk, status=Run.Status.RUNNING)
            .first()
        )
        if locked is None:
            return None  # finished meanwhile, or its worker (or a recovery) holds it
        # The run is recovery's now: whatever its lost worker tries next is refused.
        take_over(Run.objects.filter(pk=run.pk))
        run.last_seq = locked.last_seq
        unjournaled = _journal_unjournaled_commits(run)
        unanswered = _journal_unanswered_tool_calls(run)
        settled = settle_lost_previews(run, WORKER_LOST)
        # Calls the dead worker left open end with it (their results never flowed back).
        AgentCall.objects.filter(run=run, status=AgentCall.Status.RUNNING).update(
            status=AgentCall.Status.FAILED, completed_at=timezone.now()
        )
        blocks = committed_block_count(run)
        status = finish_run(run, Run.Status.PARTIAL if blocks else Run.Status.FAILED, WORKER_LOST)
    return Recovered(
        run_id=run.pk,
        status=status,
        committed_blocks=blocks,
        unjournaled_commits=unjournaled,
        unanswered_tool_calls=unanswered,
        settled_previews=settled,
    )


def recover_runs(stale_after: timedelta = DEFAULT_STALE_AFTER) -> list[Recovered]:
    results = []
    for run in stale_runs(stale_after):
        recovered = recover_run(run)
        if recovered is not None:
            results.append(recovered)
    return results


# -- the periodic sweep ----------------------------------------------------------

RUN_TASK_PATH = "runtime.tasks.execute_run_task"
# Written into heartbeat_at by a worker handing back runs it cannot finish, so
# the next sweep of any worker recovers them without waiting for the bound.
HANDED_BACK = datetime(2000, 1, 1, tzinfo=UTC)
LIVE_TASK = (TaskResultStatus.READY, TaskResultStatus.RUNNING)


@dataclass
class Sweep:
    recovered: list[Recovered] = field(default_factory=list)
    requeued: list[str] = field(default_factory=list)
    settled_tasks: int = 0
    abandoned_deliveries: int = 0


def run_tasks(run_id: str) -> QuerySet[DBTaskResult[Any, Any]]:
    """The django_tasks_db rows of one run's execute_run_task."""
    return DBTaskResult.objects.filter(task_path=RUN_TASK_PATH, args_kwargs__args__0=run_id)


def settle_run_tasks(run_id: str) -> int:
    """A task row left RUNNING by a dead worker is ended as failed (its run ended
    without it), so the task queue tells the same story as the run."""
    return (
        run_tasks(run_id)
        .filter(status=TaskResultStatus.RUNNING)
        .update(
            status=TaskResultStatus.FAILED,
            finished_at=timezone.now(),
            exception_class_path="runtime.recovery.WorkerLost",
            traceback="",
        )
    )


def _settle_finished_run_tasks(stale_after: timedelta) -> int:
    """Task rows still RUNNING long after their run ended (a worker killed
    between ending the run and recording its task)."""
    cutoff = timezone.now() - stale_after
    settled = 0
    running = DBTaskResult.objects.filter(
        task_path=RUN_TASK_PATH, status=TaskResultStatus.RUNNING, started_at__lt=cutoff
    ).values_list("args_kwargs", flat=True)
    run_ids = [a["args"][0] for a in running if a.get("args")]
    ended = Run.objects.filter(pk__in=run_ids).exclude(
        status__in=[Run.Status.QUEUED, Run.Status.RUNNING]
    )
    for run_id in ended.values_list("pk", flat=True):
        settled += settle_run_tasks(run_id)
    return settled


def requeue_orphan(run_id: str, stale_after: timedelta) -> bool:
    """Re-enqueue a QUEUED run that has no live task (its enqueue was lost after
    the commit, or the worker holding its task died before claiming the run).

    Safe to repeat: execute_run claims only a QUEUED run, so a run enqueued twice
    still executes once. Under the run's lock, re-checked, so two sweeping
    workers enqueue it once.
    """
    from runtime.tasks import execute_run_task

    cutoff = timezone.now() - stale_after
    with transaction.atomic():
        run = (
            Run.objects.select_for_update(skip_locked=True)
            .filter(pk=run_id, status=Run.Status.QUEUED)
            .first()
        )
        if run is None:
            return False
        tasks = run_tasks(run_id)
        if tasks.filter(status=TaskResultStatus.READY).exists():
            return False
        if tasks.filter(status=TaskResultStatus.RUNNING, started_at__gte=cutoff).exists():
            return False  # a worker took the task a moment ago and is claiming the run
        settle_run_tasks(run_id)
        execute_run_task.enqueue(run_id)
    return True


def orphaned_queued_runs(stale_after: timedelta) -> list[str]:
    """QUEUED runs older than ``stale_after`` with no task that will run them."""
    cutoff = timezone.now() - stale_after
    candidates = list(
        Run.objects.filter(status=Run.Status.QUEUED, created_at__lt=cutoff).values_list(
            "pk", flat=True
        )[:500]
    )
    if not candidates:
        return []
    live = set()
    for args in DBTaskResult.objects.filter(
        task_path=RUN_TASK_PATH, status__in=LIVE_TASK
    ).values_list("args_kwargs", flat=True):
        if args.get("args"):
            live.add(args["args"][0])
    stuck = {
        a["args"][0]
        for a in DBTaskResult.objects.filter(
            task_path=RUN_TASK_PATH, status=TaskResultStatus.RUNNING, started_at__lt=cutoff
        ).values_list("args_kwargs", flat=True)
        if a.get("args")
    }
    return [pk for pk in candidates if pk not in live or pk in stuck]


def sweep(stale_after: timedelta) -> Sweep:
    """One pass of the periodic recovery every live worker runs."""
    result = Sweep()
    for run in stale_runs(stale_after):
        recovered = recover_run(run)
        if recovered is not None:
            result.settled_tasks += settle_run_tasks(run.pk)
            result.recovered.append(recovered)
    for run_id in orphaned_queued_runs(stale_after):
        if requeue_orphan(run_id, stale_after):
            result.requeued.append(run_id)
    result.settled_tasks += _settle_finished_run_tasks(stale_after)
    result.abandoned_deliveries = close_abandoned_deliveries()
    return result


def abandoned_after() -> timedelta:
    """How long after its run ended a connection's DeliveryLog row may stay open: a live
    server closes every socket of an ended run once it has sent the terminal event and
    the client acknowledged it or the slow-client bound passed
    (``SPARKTIDE_WS_SLOW_CLIENT_SECONDS``), and records the close at its next flush.
    Twice that bound and a minute more, and no server holds it: its process died."""
    return timedelta(seconds=2 * settings.SPARKTIDE_WS_SLOW_CLIENT_SECONDS + 60)


def close_abandoned_deliveries(now: datetime | None = None) -> int:
    """Close the DeliveryLog rows of a killed server (SIGKILL, OOM, a lost machine: its
    sockets never recorded their end): rows still open whose run ended longer ago than
    ``abandoned_after``. Marked ``abandoned``, closed at the moment they were found; how
    far each was sent stays as its server last recorded it. One UPDATE."""
    now = now or timezone.now()
    return DeliveryLog.objects.filter(
        closed_at__isnull=True, run__completed_at__lt=now - abandoned_after()
    ).update(closed_at=now, abandoned=True)


def hand_back(worker_id: str) -> int:
    """A stopping worker gives up the runs it still holds: the next sweep of any
    worker recovers them at once instead of after the stale bound."""
    return take_over(
        Run.objects.filter(status=Run.Status.RUNNING, worker_id=worker_id),
        heartbeat_at=HANDED_BACK,
    )


def settle_interrupted_run(run_id: str) -> Recovered | None:
    """A run whose execution died of a database error in this worker (its
    connection was cut mid-run): recovered at once, as a lost worker's would be."""
    run = Run.objects.filter(pk=run_id, status=Run.Status.RUNNING).first()
    if run is None:
        return None
    return recover_run(run)
