"""The revision rules (DESIGN.md "Publication", step 5): which block a candidate may
revise, the quotas, and the exact-duplicate rule. The duplicate rule has two forms, one
home: ``find_duplicate`` (the full rule, in Python over the ORM) and ``same_digest_sql``
(its first condition as SQL, inside the one-statement writes of ``publication.store``,
which call ``find_duplicate`` whenever it matches)."""

from collections.abc import Mapping
from typing import Any

from django.db.models import F

from foundation.compiled import table
from publication.candidate import Candidate, shaped
from publication.models import (
    REVISIONS_PER_BLOCK,
    REVISIONS_PER_RUN,
    AnswerBlock,
    BlockRevision,
    PublicationAttempt,
)
from publication.receipts import Reason
from runs.models import Run


def revision_target(run: Run, replaces: str) -> AnswerBlock | None:
    """``replaces`` must name a publication ID of this very run."""
    if not shaped("pub", replaces):
        return None
    return AnswerBlock.objects.filter(run=run, pk=replaces).first()


def same_proof(revision: BlockRevision, candidate: Candidate) -> bool:
    stored = (
        frozenset((b.cited_id, b.citation_id, b.verified) for b in revision.bindings.all()),
        frozenset(d.depends_on_id for d in revision.dependencies.all()),
        revision.source_hint,
    )
    return stored == candidate.binding_key()


def find_duplicate(
    candidate: Candidate, target: AnswerBlock | None, digest: str
) -> BlockRevision | None:
    """An exact duplicate of a *committed* current revision: identical body,
    bindings, dependencies and hint.

    Authorization was re-checked for this very candidate in step 2, so a revoked
    source makes a byte-identical repeat fail instead of passing as unchanged.
    Whitespace changes alter the digest: they are never duplicates. A legacy
    revision (hint unknown) never matches. Previews are not in this pool: only
    committed revisions are, so a preview can never mask a receipt.
    """
    revisions = BlockRevision.objects.filter(
        body_digest=digest, revision=F("block__current_revision")
    )
    if target is not None:
        revisions = revisions.filter(block=target)
    else:
        revisions = revisions.filter(run=candidate.run, block__agent_call=candidate.agent_call)
    for revision in revisions.select_related("block").prefetch_related("bindings", "dependencies"):
        if same_proof(revision, candidate):
            return revision
    return None


def quota_refusal(locked_run: Mapping[str, Any], block: AnswerBlock) -> Reason | None:
    """Quotas, read under the run's lock: 2 modifications per block, 8 per run.

    The attempt ledger counts every modification that consumed quota, including
    a visible preview whose save failed.
    """
    used_by_block = PublicationAttempt.objects.filter(block=block, quota_consumed=True).count()
    if used_by_block >= REVISIONS_PER_BLOCK:
        return Reason.BLOCK_REVISION_QUOTA_EXCEEDED
    if locked_run["revision_quota_used"] >= REVISIONS_PER_RUN:
        return Reason.RUN_REVISION_QUOTA_EXCEEDED
    return None


def same_digest_sql() -> str:
    """A current revision of this run and call with this body digest exists: the
    candidate may be a duplicate (params: digest, run, agent call).

    The run's revisions of this body come from ``blockrevision_run_digest``, and each
    one's block is read by its key in a scalar subquery, which PostgreSQL never turns
    into a join: no plan can start from the run's blocks and read all of them."""
    return (
        f"SELECT 1 FROM {table(BlockRevision)} r WHERE r.body_digest = %s"  # noqa: S608
        f" AND r.run_id = %s AND r.revision = (SELECT b.current_revision FROM {table(AnswerBlock)} b"
        " WHERE b.id = r.block_id AND b.agent_call_id = %s)"
    )
