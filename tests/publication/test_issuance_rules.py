"""The 256-citation limit as issue_citations applies it to one search: the items that fit
are issued, the rest refused with a ``citation.limit_exceeded`` event on the same run
(tests/runtime/test_limits.py drives the same limit through a whole run)."""

import pytest

from citations.issuance import issue_citations
from citations.models import MAX_CITATIONS_PER_RUN, CitationReference
from knowledge.retrieval import RetrievedItem
from runs.models import Run
from tests.publication.conftest import refs

pytestmark = pytest.mark.django_db


def _items(references):
    """The retrieved items these references were issued for."""
    return [
        RetrievedItem(
            version=r.version,
            document=r.document,
            chunk=r.chunk,
            title=r.title,
            content=r.chunk.text if r.chunk else r.title,
            source_ref=r.source_ref,
            digest=r.digest,
            score=1.0,
        )
        for r in references
    ]


def test_a_search_past_the_limit_issues_what_fits_and_refuses_the_rest_with_an_event(live_run):
    run = live_run()
    public, memo = refs(run)
    items = _items((public + memo)[:3])
    assert len(items) == 3
    Run.objects.filter(pk=run.pk).update(citation_count=MAX_CITATIONS_PER_RUN - 1)
    root = run.agent_calls.get(depth=0)
    before = CitationReference.objects.filter(run=run).count()

    issued = issue_citations(run=run, agent_call=root, items=items, query="营收", top_k=3)

    assert (len(issued.references), issued.refused) == (1, 2)
    assert issued.references[0].ordinal == MAX_CITATIONS_PER_RUN
    assert CitationReference.objects.filter(run=run).count() == before + 1
    event = run.events.get(type="citation.limit_exceeded")
    assert event.data == {
        "agentCallId": root.public_id,
        "code": "CITATION_LIMIT_EXCEEDED",
        "refused": 2,
        "limit": MAX_CITATIONS_PER_RUN,
    }
    assert event.seq == run.events.order_by("-seq").values_list("seq", flat=True)[0]
    run.refresh_from_db()
    assert (run.citation_count, run.last_seq) == (MAX_CITATIONS_PER_RUN, event.seq)
