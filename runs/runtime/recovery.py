"""Recovery of runs whose worker died.

Publication's store is the truth. For a run whose worker stopped saying it is
alive, recovery, under the run's lock:

* keeps every committed block (readable through the reader, under the owner's
  current authorization) and notes in the journal each commit the journal never
  recorded, with the receipt ``unknown`` — never rewritten as a rejection;
* notes each tool call left without a receipt as ``unknown``;
* settles previews whose commit never happened: they were shown, never saved,
  and are never promoted to committed (REJECTED, WORKER_LOST);
* re-executes nothing (no model call, no tool, no publication);
* ends the run with its own terminal state: PARTIAL if a block was committed,
  else FAILED, reason WORKER_LOST.

Holding the run's lock makes the settlement exact: a Publication commit takes
the same lock first, so none is in flight while recovery runs, and none can land
after it (a commit into an ended run is refused with RUN_ENDED).
"""

from dataclasses import dataclass
from datetime import timedelta

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from publication.models import AnswerBlock, PublicationAttempt
from runs.events import append_event
from runs.lifecycle import finish_run
from runs.models import AgentCall, JournalEntry, Run

DEFAULT_STALE_AFTER = timedelta(seconds=90)
WORKER_LOST = "WORKER_LOST"
UNKNOWN = "unknown"


@dataclass(frozen=True)
class Recovered:
    run_id: str
    status: str
    committed_blocks: int
    unjournaled_commits: int
    unanswered_tool_calls: int = 0
    settled_previews: int = 0


def stale_runs(stale_after: timedelta = DEFAULT_STALE_AFTER, now=None):
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


def _settle_previews(run: Run) -> int:
    """Previews of the dead worker that never reached a commit: shown, never saved."""
    pending = list(
        PublicationAttempt.objects.filter(
            run=run, outcome=PublicationAttempt.Outcome.PREVIEWED
        ).order_by("id")
    )
    for attempt in pending:
        attempt.outcome = PublicationAttempt.Outcome.REJECTED
        attempt.reason = WORKER_LOST
        attempt.save(update_fields=["outcome", "reason"])
        data = {
            "candidateId": attempt.candidate_id,
            "code": WORKER_LOST,
            "effect": attempt.effect,
        }
        if attempt.block_id:
            data["publicationId"] = attempt.block_id
        append_event(run, "answer.rejected", data, locked=True)
    return len(pending)


def recover_run(run: Run) -> Recovered | None:
    with transaction.atomic():
        locked = (
            Run.objects.select_for_update(skip_locked=True)
            .filter(pk=run.pk, status=Run.Status.RUNNING)
            .first()
        )
        if locked is None:
            return None  # finished meanwhile, or its worker (or a recovery) holds it
        run.last_seq = locked.last_seq
        unjournaled = _journal_unjournaled_commits(run)
        unanswered = _journal_unanswered_tool_calls(run)
        settled = _settle_previews(run)
        # Calls the dead worker left open end with it (their results never flowed back).
        AgentCall.objects.filter(run=run, status=AgentCall.Status.RUNNING).update(
            status=AgentCall.Status.FAILED, completed_at=timezone.now()
        )
        blocks = AnswerBlock.objects.filter(run=run).count()
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
