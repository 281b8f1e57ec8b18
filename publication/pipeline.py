"""Publication: one owner turns every answer candidate into a durable,
revisioned, source-bound block — or refuses exactly the part that must be refused.

``publish_candidate`` runs the eight steps of DESIGN.md "Publication" in order:
intake → source proof → degrade → prepare → revision rules → optional preview →
commit → deliver. "Shown", "saved" and "the run succeeded" are different facts:
only a COMMITTED (or UNCHANGED) receipt says saved, and only after the database
confirmed the transaction that wrote the revision.

Two deliberate refinements of the order (docs/publication.md):

* The *mechanical* cleanup (control characters, line endings) runs at intake,
  before the source proof, so the markers that are proven are byte for byte the
  markers that are stored: a control character inside a marker must not turn an
  unknown ID into an unproven real one after the proof.
* Numeric values are decided in "degrade" and rendered in "prepare", together
  with the display bound, so a cut never falls inside a rendered value.
"""

import logging
from typing import Any

from django.db import (
    DatabaseError,
    IntegrityError,
    InterfaceError,
    OperationalError,
    connection,
    transaction,
)
from django.utils import timezone

from citations.evidence import SourceAccess
from foundation import observability
from foundation.faults import maybe_fault
from publication.candidate import Candidate
from publication.models import AnswerBlock, BlockRevision, PublicationAttempt
from publication.preparation import (
    degrade_candidate,
    intake_candidate,
    prepare_candidate,
    prove_sources,
)
from publication.receipts import (
    Effect,
    Outcome,
    Reason,
    Receipt,
    Written,
    body_digest,
    committed_receipt,
    refusal_data,
    unchanged_receipt,
)
from publication.revisions import find_duplicate, quota_refusal, revision_target
from publication.store import (
    fill_attempt,
    forget_stored,
    lock_run,
    save_attempt,
    take_revision_quota,
    write_new_block,
    write_with_the_orm,
)
from publication.text import (
    MAX_DISPLAY_CHARS,
    TRUNCATION_NOTE,
    VALUE_UNAVAILABLE,
    clean_text,
)
from runs.events import RunEnded, RunFenced, append_event_seq
from runs.models import AgentCall, Run

logger = logging.getLogger(__name__)

__all__ = [
    "MAX_DISPLAY_CHARS",
    "TRUNCATION_NOTE",
    "VALUE_UNAVAILABLE",
    "Effect",
    "Outcome",
    "Reason",
    "Receipt",
    "body_digest",
    "CommitCut",
    "clean_text",
    "publish_candidate",
    "resume_commit",
    "settle_lost_previews",
]


# --- the eight steps, in order --------------------------------------------------


def publish_candidate(
    *,
    run: Run,
    agent_call: AgentCall,
    entry: str,
    body: str | dict[str, Any],
    replaces: str | None = None,
    preview: bool = True,
    resumable: bool = False,
) -> Receipt:
    """Publish one candidate (entry "A": assistant text, "B": send_answer_part).

    ``resumable``: a commit whose connection is lost (PostgreSQL) is not recorded as
    failed; ``CommitCut`` is raised for the caller to finish it with ``resume_commit``
    once the database answers (the run engine's retry, runtime/durable.py)."""
    receipt = _publish(run, agent_call, entry, body, replaces, preview, resumable)
    return _observed(receipt, run)


def _observed(receipt: Receipt, run: Run) -> Receipt:
    observability.publication_outcome(
        run_id=run.pk,
        candidate_id=receipt.candidate_id,
        outcome=str(receipt.outcome),
        reason=receipt.reason or "",
    )
    return receipt


def _publish(
    run: Run,
    agent_call: AgentCall,
    entry: str,
    body: str | dict[str, Any],
    replaces: str | None,
    preview: bool,
    resumable: bool,
) -> Receipt:
    access = SourceAccess(run)
    candidate = intake_candidate(run, agent_call, entry, body, replaces)
    if not any(t.strip() for t in candidate.texts()):
        return _reject(candidate, Reason.EMPTY_CANDIDATE, target=_target_if_any(candidate))

    markers = candidate.markers()
    prove_sources(candidate, access, list(markers.cited_ids), list(markers.block_ids))
    if not candidate.rejection:
        degrade_candidate(candidate, access)
        prepare_candidate(candidate, access)
    if candidate.rejection:
        return _reject(candidate, *candidate.rejection, target=_target_if_any(candidate))

    digest = body_digest(candidate.content)
    candidate.attempt.body_digest = digest
    target = None
    if candidate.replaces:
        target = revision_target(run, candidate.replaces)
        if target is None:
            # A failed modification: never silently a new block, never a deletion.
            return _reject(candidate, Reason.REPLACES_TARGET_INVALID)

    if preview:
        # Before anything is shown: a duplicate is never previewed (for a new block
        # on PostgreSQL the preview's own first statement checks it). Without a
        # preview the commit's own check under the run's lock is the only one.
        if target is not None or connection.vendor != "postgresql":
            duplicate = find_duplicate(candidate, target, digest)
            if duplicate is not None:
                return _unchanged(candidate, duplicate)
        refused = _preview(candidate, target)
        if refused is not None:
            return refused
    return _commit(candidate, target, digest, resumable=resumable)


def _target_if_any(candidate: Candidate) -> AnswerBlock | None:
    return revision_target(candidate.run, candidate.replaces) if candidate.replaces else None


def _reject(
    candidate: Candidate,
    reason: Reason,
    detail: str = "",
    *,
    target: AnswerBlock | None = None,
    locked: bool = False,
    event: bool = True,
) -> Receipt:
    """Refuse this candidate's effect only; the committed body of ``target`` stays."""
    attempt = fill_attempt(candidate, Outcome.REJECTED, reason=reason, block=target)
    with transaction.atomic():
        save_attempt(attempt)
        if event:
            data = refusal_data(
                attempt.candidate_id, reason, candidate.effect, target.pk if target else None
            )
            if detail and reason in (
                Reason.SOURCE_NOT_AUTHORIZED,
                Reason.DEPENDENCY_NOT_AUTHORIZED,
            ):
                # The refused ID is the run's own marker text: safe to name.
                data["source"] = detail
            append_event_seq(
                candidate.run,
                "answer.rejected",
                data,
                locked=locked,
                epoch=None if locked else candidate.run.execution_epoch,
            )
    return Receipt(
        outcome=Outcome.REJECTED,
        candidate_id=attempt.candidate_id,
        publication_id=target.pk if target else None,
        source_hint=candidate.source_hint,
        truncated=candidate.truncated,
        reason=str(reason),
        effect=str(candidate.effect),
    )


def _unchanged(candidate: Candidate, revision: BlockRevision, *, locked: bool = False) -> Receipt:
    """The original receipt is reused: no new revision, event or quota. Its attempt is
    recorded under the run's fence (``locked``: the caller holds it already)."""
    attempt = fill_attempt(
        candidate,
        Outcome.UNCHANGED,
        block=revision.block,
        revision=revision.revision,
        body_digest=revision.body_digest,
    )
    with transaction.atomic():
        if not locked:
            lock_run(candidate)
        save_attempt(attempt)
    return unchanged_receipt(attempt.candidate_id, candidate.effect, revision)


# --- 6. optional preview ---------------------------------------------------------


def _preview(candidate: Candidate, target: AnswerBlock | None) -> Receipt | None:
    """Show the prepared candidate before the write. Not a save.

    A visible modification consumes quota even if its save then fails, so for a
    revision the quota is taken in this transaction, committed before the write.
    """
    if target is None:
        return _preview_new_block(candidate)
    with transaction.atomic():
        row = lock_run(candidate)
        if row["status"] in Run.TERMINAL:
            return _reject(candidate, Reason.RUN_ENDED, target=target, locked=True, event=False)
        quota = False
        if target is not None:
            refusal = quota_refusal(row, target)
            if refusal:
                return _reject(candidate, refusal, target=target, locked=True)
            take_revision_quota(candidate.run)
            quota = True
        save_attempt(fill_attempt(candidate, Outcome.PREVIEWED, block=target, quota_consumed=quota))
        data = {
            "candidateId": candidate.attempt.candidate_id,
            "revision": (target.current_revision + 1) if target else 1,
        }
        if target is not None:
            data["publicationId"] = target.pk
            data["deliveryOrdinal"] = target.delivery_ordinal
        append_event_seq(candidate.run, "answer.preview", data, locked=True)
    return None


def _preview_new_block(candidate: Candidate) -> Receipt | None:
    """A new block takes no quota: one short transaction of two statements.

    On PostgreSQL the attempt comes first, inserted as PREVIEWED unless the run
    already holds a current revision of this call with the same body digest — the
    duplicate check before anything is shown, in the same statement. Only then is
    ``answer.preview`` appended, whose statement locks the run and refuses an
    ended one (the attempt's row is then rolled back with it). Should a revision
    with this digest exist, the full duplicate check (bindings, dependencies,
    hint) decides: an exact duplicate is never previewed, any other candidate is.
    """
    attempt = fill_attempt(candidate, Outcome.PREVIEWED, block=None)
    try:
        with transaction.atomic():
            if connection.vendor == "postgresql" and not save_attempt(
                attempt, unless_same_digest=candidate
            ):
                duplicate = find_duplicate(candidate, None, attempt.body_digest)
                if duplicate is not None:
                    return _unchanged(candidate, duplicate)
                save_attempt(attempt)
            append_event_seq(
                candidate.run,
                "answer.preview",
                {"candidateId": attempt.candidate_id, "revision": 1},
                epoch=candidate.run.execution_epoch,
            )
            if connection.vendor != "postgresql":
                save_attempt(attempt)
    except RunFenced:
        raise  # the execution lost the run: nothing of it is recorded
    except RunEnded:
        forget_stored(attempt)  # rolled back with the refused append
        return _reject(candidate, Reason.RUN_ENDED, event=False)
    return None


# --- 7. commit -------------------------------------------------------------------


def _commit(
    candidate: Candidate, target: AnswerBlock | None, digest: str, *, resumable: bool = False
) -> Receipt:
    """One transaction: run and block locked, revision, bindings, dependencies,
    the delivery event (outbox) and the run's counters. The receipt exists only
    once the database confirmed it."""
    attempt = candidate.attempt
    reserved = attempt.quota_consumed  # by a visible preview, in its own transaction
    commit_sent = False
    try:
        with transaction.atomic():
            row = lock_run(candidate)
            if row["status"] in Run.TERMINAL:
                # Recovery (or a cancel) ended the run: no commit may land after it.
                return _reject(candidate, Reason.RUN_ENDED, target=target, locked=True, event=False)
            now = timezone.now()
            written: Written | None = None
            if target is None and connection.vendor == "postgresql":
                written = write_new_block(candidate, row, digest, now)
            if written is None:
                # Again under the lock: two identical candidates racing never make two blocks.
                duplicate = find_duplicate(candidate, target, digest)
                if duplicate is not None:
                    return _unchanged(candidate, duplicate, locked=True)
                if target is not None and not attempt.quota_consumed:
                    refusal = quota_refusal(row, target)
                    if refusal:
                        return _reject(candidate, refusal, target=target, locked=True)
                written = write_with_the_orm(candidate, target, row, digest, now)
            # The outbox: written in this transaction, delivered after it (8.).
            append_event_seq(
                candidate.run,
                "answer.published",
                {
                    "publicationId": written.block_id,
                    "candidateId": attempt.candidate_id,
                    "revision": written.revision,
                    "deliveryOrdinal": written.delivery_ordinal,
                    "outcome": Outcome.COMMITTED,
                },
                locked=True,
            )
            maybe_fault("during_publication_commit")
            # Everything is written; what follows is the COMMIT itself, whose
            # failure leaves the outcome unknown.
            commit_sent = True
    except DatabaseError as exc:
        # Whatever this transaction took is not taken unless it committed.
        attempt.quota_consumed = reserved
        if resumable and _connection_lost(exc):
            raise CommitCut(candidate, target, digest, exc) from exc
        return _save_failed(candidate, target, commit_sent=commit_sent, error=exc)
    return committed_receipt(candidate.attempt.candidate_id, candidate.effect, written)


class CommitCut(OperationalError):
    """A commit whose connection was lost: rolled back, or, its COMMIT sent, perhaps
    landed. Nothing of it is recorded (no failure, no event); ``resume_commit`` tells
    which and finishes it."""

    def __init__(
        self, candidate: Candidate, target: AnswerBlock | None, digest: str, error: Exception
    ) -> None:
        super().__init__(str(error))
        self.candidate, self.target, self.digest = candidate, target, digest


def _connection_lost(error: Exception) -> bool:
    """The transaction ended with its connection (or a timeout ended it): rolled back
    unless its COMMIT landed. SQLite's OperationalError is a lock: not this."""
    return connection.vendor == "postgresql" and isinstance(
        error, (OperationalError, InterfaceError)
    )


def resume_commit(cut: CommitCut) -> Receipt:
    """Finish a cut commit once the database answers: its revision read back (the COMMIT
    landed: that is the receipt), else the same candidate committed again, under the
    run's lock and the fence as the first time (its duplicate check included). Never a
    second block, never a lost one; ``CommitCut`` again if the connection is lost again."""
    candidate = cut.candidate
    attempt = candidate.attempt
    revision = (
        BlockRevision.objects.select_related("block")
        .filter(attempt__candidate_id=attempt.candidate_id)
        .first()
    )
    if revision is not None:
        receipt = committed_receipt(attempt.candidate_id, candidate.effect, Written.of(revision))
        return _observed(receipt, candidate.run)
    if PublicationAttempt.objects.filter(candidate_id=attempt.candidate_id).exists():
        attempt.__dict__.pop("_stored", None)  # its row is the preview's: every column again
    else:
        forget_stored(attempt)  # its insert was rolled back
    receipt = _commit(candidate, cut.target, cut.digest, resumable=True)
    return _observed(receipt, candidate.run)


def _save_failed(
    candidate: Candidate, target: AnswerBlock | None, *, commit_sent: bool, error: Exception
) -> Receipt:
    """The write failed.

    Before the COMMIT was sent the transaction is known to be rolled back: a
    clean failure (REJECTED, SAVE_FAILED). If the COMMIT itself failed (say, the
    connection was cut), the database may or may not have committed: read it
    back on a fresh connection. Found → it is saved, and only then COMMITTED.
    Not found or unreachable → SAVE_UNKNOWN, never reported as saved.
    """
    attempt = candidate.attempt
    logger.warning(
        "publication commit of %s for run %s failed (commit sent: %s): %s",
        attempt.candidate_id,
        candidate.run.pk,
        commit_sent,
        error,
    )
    known_failure = not commit_sent or isinstance(error, IntegrityError)
    if not known_failure:
        try:
            revision = (
                BlockRevision.objects.select_related("block")
                .filter(attempt__candidate_id=attempt.candidate_id)
                .first()
            )
        except DatabaseError:
            revision = None
        if revision is not None:
            return committed_receipt(attempt.candidate_id, candidate.effect, Written.of(revision))
    outcome = Outcome.REJECTED if known_failure else Outcome.SAVE_UNKNOWN
    reason = Reason.SAVE_FAILED if known_failure else Reason.SAVE_OUTCOME_UNKNOWN
    _record_failure(candidate, target, outcome, reason)
    return Receipt(
        outcome=outcome,
        candidate_id=attempt.candidate_id,
        publication_id=target.pk if target else None,
        source_hint=candidate.source_hint,
        truncated=candidate.truncated,
        reason=str(reason),
        effect=str(candidate.effect),
    )


def _record_failure(
    candidate: Candidate, target: AnswerBlock | None, outcome: str, reason: Reason
) -> None:
    """Best effort: the database may be gone. Never overwrites a COMMITTED attempt
    (a commit that landed after all stays the fact)."""
    attempt = candidate.attempt
    fields = {
        "outcome": outcome,
        "reason": reason,
        "effect": candidate.effect,
        "block": target,
        "revision": None,
        "content": candidate.content,
        "source_hint": candidate.source_hint,
        "truncated": candidate.truncated,
        "cited_ids": candidate.cited_ids(),
        "body_digest": attempt.body_digest,
        "quota_consumed": attempt.quota_consumed,
    }
    try:
        with transaction.atomic():
            row = lock_run(candidate)
            updated = (
                PublicationAttempt.objects.filter(candidate_id=attempt.candidate_id)
                .exclude(outcome=Outcome.COMMITTED)
                .update(**fields)
            )
            if not updated:
                if PublicationAttempt.objects.filter(candidate_id=attempt.candidate_id).exists():
                    return  # the commit landed: it stays the fact
                PublicationAttempt.objects.create(
                    candidate_id=attempt.candidate_id,
                    run=candidate.run,
                    agent_call=candidate.agent_call,
                    entry=candidate.entry,
                    replaces=attempt.replaces,
                    **fields,
                )
            if row["status"] not in Run.TERMINAL:
                data = refusal_data(
                    attempt.candidate_id, reason, candidate.effect, target.pk if target else None
                )
                # A failed save is a rejection of this effect; an unknown one is
                # not (it may have landed): its own event, never "published".
                kind = "answer.rejected" if outcome == Outcome.REJECTED else "answer.save_unknown"
                append_event_seq(candidate.run, kind, data, locked=True)
    except DatabaseError:
        logger.warning(
            "could not record the failed attempt %s", attempt.candidate_id, exc_info=True
        )


# --- recovery ----------------------------------------------------------------------


def settle_lost_previews(run: Run, reason: str) -> int:
    """Previews of a lost execution that never reached a commit: shown, never saved,
    never promoted to committed. Each becomes REJECTED for ``reason`` with its
    ``answer.rejected`` event. Under the caller's lock on the run (recovery's), before
    the run's terminal event; how many were settled."""
    pending = list(
        PublicationAttempt.objects.filter(run=run, outcome=Outcome.PREVIEWED).order_by("id")
    )
    for attempt in pending:
        attempt.outcome = Outcome.REJECTED
        attempt.reason = reason
        attempt.save(update_fields=["outcome", "reason"])
        data = refusal_data(attempt.candidate_id, reason, attempt.effect, attempt.block_id)
        append_event_seq(run, "answer.rejected", data, locked=True)
    return len(pending)
