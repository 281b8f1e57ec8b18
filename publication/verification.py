"""Verification of the published answer's citations when the root agent finishes."""

from typing import Any

from citations.evidence import evidence_call_ids
from citations.markers import cited_ids
from citations.models import MAX_CITATIONS_PER_RUN, CitationReference
from foundation.errors import ErrorCode, SparkTideError
from publication.models import BlockRevision
from publication.text import body_texts
from runs.models import AgentCall, Run

VERIFIED = "VERIFIED"
UNVERIFIED = "UNVERIFIED"


def answer_cited_ids(run: Run) -> list[str]:
    """Distinct cited IDs of the run's committed answer, in reading order."""
    cited: dict[str, None] = {}  # an ordered set: first appearance wins
    revisions = (
        BlockRevision.objects.filter(block__run=run)
        .select_related("block")
        .order_by("block__delivery_ordinal")
    )
    for revision in revisions:
        if revision.revision != revision.block.current_revision:
            continue
        # Text by text: a marker never spans two texts of a body.
        for text in body_texts(revision.content):
            cited.update(dict.fromkeys(cited_ids(text)))
    return list(cited)


def verify_answer(run: Run, root_call: AgentCall) -> dict[str, Any]:
    """``citation.verified`` data: every distinct ID with VERIFIED or UNVERIFIED.

    VERIFIED only if the ID was issued to the root call's evidence view (its own
    retrievals and its authorized sub-calls'). It proves where the ID came from,
    nothing about the reasoning. More than 256 distinct IDs is a failure of this
    verification, not a silent cut.
    """
    ids = answer_cited_ids(run)
    if len(ids) > MAX_CITATIONS_PER_RUN:
        raise SparkTideError(
            ErrorCode.CITATION_LIMIT_EXCEEDED,
            f"The answer cites {len(ids)} distinct IDs; at most {MAX_CITATIONS_PER_RUN} can be verified.",
        )
    view = set(evidence_call_ids(root_call))
    issued = set(
        CitationReference.objects.filter(run=run, agent_call_id__in=view, pk__in=ids).values_list(
            "pk", flat=True
        )
    )
    return {
        "agentCallId": root_call.public_id,
        "references": [{"id": i, "status": VERIFIED if i in issued else UNVERIFIED} for i in ids],
    }
