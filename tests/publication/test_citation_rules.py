"""The handles issue_citations hands out when a chunk is retrieved again: by the same
agent call (the handle it already has, still bound to its first citation) and by
another call of the run (a handle of its own, numbered after the run's others)."""

import pytest

from citations.issuance import issue_citations
from citations.models import NumericHandle
from runs.models import AgentCall
from tests.publication.conftest import refs
from tests.publication.test_issuance_rules import _items

pytestmark = pytest.mark.django_db


def _search_again(run, call, references):
    return issue_citations(
        run=run, agent_call=call, items=_items(references), query="营收", top_k=5
    )


def test_a_second_search_of_the_same_call_reuses_its_handles_with_their_first_citation(live_run):
    run = live_run()
    root = run.agent_calls.get(depth=0)
    first = list(NumericHandle.objects.filter(agent_call=root).order_by("ordinal"))
    assert first, "the report's chunk on 营收 states a fact"
    public, memo = refs(run)

    issued = _search_again(run, root, public + memo)

    assert [(h.pk, h.ordinal, h.citation_id) for h in issued.handles] == [
        (h.pk, h.ordinal, h.citation_id) for h in first
    ]
    assert NumericHandle.objects.filter(run=run).count() == len(first)
    # Reported beside this search's excerpt of the same chunk.
    by_chunk = {r.chunk_id: r.pk for r in issued.references}
    assert [h.retrieved_with for h in issued.handles] == [
        by_chunk[h.fact.chunk_id] for h in issued.handles
    ]


def test_another_call_of_the_run_gets_handles_of_its_own_numbered_after_the_runs(live_run):
    run = live_run()
    root = run.agent_calls.get(depth=0)
    before = list(NumericHandle.objects.filter(run=run).order_by("ordinal"))
    assert before
    sub_call = AgentCall.objects.create(
        run=run, parent=root, depth=1, agent_version=root.agent_version, task="再查营收"
    )
    public, memo = refs(run)

    issued = _search_again(run, sub_call, public + memo)

    assert len(issued.handles) == len(before)
    assert {h.agent_call_id for h in issued.handles} == {sub_call.pk}
    assert [h.ordinal for h in issued.handles] == [
        len(before) + i for i in range(1, len(before) + 1)
    ]
    assert {h.citation_id for h in issued.handles} <= {r.pk for r in issued.references}
