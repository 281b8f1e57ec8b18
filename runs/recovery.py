"""Recovery of runs whose worker died.

Publication's store is the truth: committed blocks stay and are readable, the
journal's receipt for a publication it never recorded stays ``unknown`` (it is
not rewritten as a rejection), and no side effect is re-executed. The run ends
with its own terminal state: PARTIAL if a block was committed, else FAILED.
"""

from dataclasses import dataclass
from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from publication.models import AnswerBlock, PublicationAttempt
from runs.engine import finish_run
from runs.models import JournalEntry, Run

DEFAULT_STALE_AFTER = timedelta(seconds=90)
WORKER_LOST = "WORKER_LOST"


@dataclass(frozen=True)
class Recovered:
    run_id: str
    status: str
    committed_blocks: int
    unjournaled_commits: int


def stale_runs(stale_after: timedelta = DEFAULT_STALE_AFTER, now=None):
    """RUNNING runs whose worker has not said it is alive for ``stale_after``."""
    cutoff = (now or timezone.now()) - stale_after
    return Run.objects.filter(status=Run.Status.RUNNING, heartbeat_at__lt=cutoff)


def recover_run(run: Run) -> Recovered | None:
    with transaction.atomic():
        locked = Run.objects.select_for_update(skip_locked=True).filter(pk=run.pk, status=Run.Status.RUNNING).first()
        if locked is None:
            return None
        journaled = {
            entry.data.get("receipt", {}).get("candidate_id")
            for entry in JournalEntry.objects.filter(run=run, kind=JournalEntry.Kind.NOTE, tool="publication")
        }
        committed = PublicationAttempt.objects.filter(run=run, outcome=PublicationAttempt.Outcome.COMMITTED)
        unjournaled = [a for a in committed if a.candidate_id not in journaled]
        for attempt in unjournaled:
            JournalEntry.objects.create(
                run=run,
                kind=JournalEntry.Kind.NOTE,
                tool="recovery",
                data={
                    "candidate_id": attempt.candidate_id,
                    "receipt": "unknown",
                    "store": {"publicationId": attempt.block_id, "revision": attempt.revision},
                },
            )
        # Previews whose commit never happened stay PREVIEWED: they were shown,
        # never saved, and are not retried.
    blocks = AnswerBlock.objects.filter(run=run).count()
    status = finish_run(run, Run.Status.PARTIAL if blocks else Run.Status.FAILED, WORKER_LOST)
    return Recovered(run_id=run.pk, status=status, committed_blocks=blocks, unjournaled_commits=len(unjournaled))


def recover_runs(stale_after: timedelta = DEFAULT_STALE_AFTER) -> list[Recovered]:
    results = []
    for run in stale_runs(stale_after):
        recovered = recover_run(run)
        if recovered is not None:
            results.append(recovered)
    return results
