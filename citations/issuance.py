"""Issuing platform citation IDs and numeric handles for retrieved items."""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

from django.db import transaction

from citations.models import MAX_CITATIONS_PER_RUN, CitationReference, NumericHandle
from foundation.errors import ErrorCode
from knowledge.models import Fact
from knowledge.retrieval import RetrievedItem
from runs.events import append_event
from runs.lifecycle import lock_for_execution
from runs.models import AgentCall, Run


@dataclass(frozen=True)
class Issued:
    references: list[CitationReference]
    handles: list[NumericHandle]
    refused: int  # items beyond the run's 256-citation limit

    def handles_by_citation(self) -> dict[str, list[NumericHandle]]:
        """This search's citation ID → the handles of the facts its chunk states."""
        grouped: dict[str, list[NumericHandle]] = {}
        for handle in self.handles:
            grouped.setdefault(handle.retrieved_with, []).append(handle)
        return grouped


def issue_citations(
    *, run: Run, agent_call: AgentCall, items: Sequence[RetrievedItem], query: str, top_k: int
) -> Issued:
    """Turn retrieved items into CitationReferences (and handles for their facts).

    At most 256 per run: items past the limit are refused with a
    ``citation.limit_exceeded`` event, never silently dropped.

    A write of the run's execution: under the kernel's fence (``lock_for_execution``
    with the epoch ``run`` was claimed under), so an execution that lost the run, or a
    run that ended, gets ``RunFenced`` / ``RunEnded`` and nothing is issued.
    """
    with transaction.atomic():
        locked = lock_for_execution(run.pk, run.execution_epoch, ("citation_count",))
        run.last_seq = locked["last_seq"]
        count = locked["citation_count"]
        room = max(0, MAX_CITATIONS_PER_RUN - count)
        accepted, refused = list(items[:room]), len(items) - min(room, len(items))
        references = [
            CitationReference(
                run=run,
                agent_call=agent_call,
                version=item.version,
                document=item.document,
                chunk=item.chunk,
                ordinal=count + i,
                title=item.title,
                source_ref=item.source_ref,
                remote_item_id=item.remote_item_id,
                remote_item_version=item.remote_item_version,
                digest=item.digest,
                query=query,
                top_k=top_k,
            )
            for i, item in enumerate(accepted, start=1)
        ]
        CitationReference.objects.bulk_create(references)
        Run.objects.filter(pk=run.pk).update(citation_count=count + len(references))
        handles = _issue_handles(run, agent_call, references)
        for reference in references:
            append_event(run, "citation.created", reference.public(), locked=True)
        if refused:
            append_event(
                run,
                "citation.limit_exceeded",
                {
                    "agentCallId": agent_call.public_id,
                    "code": ErrorCode.CITATION_LIMIT_EXCEEDED,
                    "refused": refused,
                    "limit": MAX_CITATIONS_PER_RUN,
                },
                locked=True,
            )
    return Issued(references=references, handles=handles, refused=refused)


def _issue_handles(
    run: Run, agent_call: AgentCall, references: list[CitationReference]
) -> list[NumericHandle]:
    """Handles for the facts the retrieved chunks state, each bound to its chunk's citation.

    A fact is bound to the chunk that states it (``Fact.chunk``, set at ingestion):
    retrieving another chunk of the same document issues no handle for it, and a
    handle's citation is always the excerpt in which its value is written. A fact
    without a chunk (stored before anchoring, stated nowhere) is never handed out.
    """
    by_chunk = {r.chunk_id: r for r in references if r.chunk_id}
    if not by_chunk:
        return []
    facts = list(
        Fact.objects.filter(chunk_id__in=by_chunk)
        .select_related("document")
        .order_by("document_id", "key")
    )
    # The call is the run's own, so its handles are the run's: no ``run`` filter.
    existing = {
        h.fact_id: h
        for h in NumericHandle.objects.filter(agent_call=agent_call, fact__in=facts).select_related(
            "fact"
        )
    }
    next_ordinal = NumericHandle.objects.filter(run=run).count() + 1
    handles, new = [], []
    for fact in facts:
        handle = existing.get(fact.pk)
        reference = by_chunk[cast(int, fact.chunk_id)]  # the query took only facts of these chunks
        if handle is None:
            handle = NumericHandle(
                run=run,
                agent_call=agent_call,
                version=reference.version,
                fact=fact,
                citation=reference,
                ordinal=next_ordinal,
            )
            next_ordinal += 1
            new.append(handle)
        # A handle issued by an earlier search of this call keeps its first citation
        # (the same chunk, the same text); this search reports it beside its own excerpt.
        handle.retrieved_with = reference.pk
        handles.append(handle)
    NumericHandle.objects.bulk_create(new)
    return handles
