"""What publication/verification.py reads as the answer's cited IDs (the current revision
of every block, in delivery order, in one query) and how many it verifies. Found as mutants of ``answer_cited_ids``
that survived every other test (docs/reliability.md "## Mutation")."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from citations.models import MAX_CITATIONS_PER_RUN
from foundation.errors import ErrorCode, SparkTideError
from publication.models import AnswerBlock, BlockRevision, Origin
from publication.verification import answer_cited_ids, verify_answer
from tests import factories

pytestmark = pytest.mark.django_db


@pytest.fixture
def run(app, alice):
    return factories.scripted_run(app, alice, [{"text": "好"}])


def _block(run, ordinal: int, *texts: str) -> AnswerBlock:
    """A block whose revisions carry ``texts`` in order, the last one current."""
    block = AnswerBlock.objects.create(
        run=run,
        agent_call=run.agent_calls.get(depth=0),
        delivery_ordinal=ordinal,
        origin=Origin.ANSWER_PART,
        current_revision=len(texts),
    )
    for number, text in enumerate(texts, start=1):
        BlockRevision.objects.create(
            block=block,
            run=run,
            revision=number,
            content={"type": "text", "text": text},
            body_digest=f"{ordinal}-{number}",
        )
    return block


def test_a_superseded_revision_is_skipped_and_the_blocks_after_it_are_still_read(run):
    _block(run, 10, "旧 [[cite:cite_old]]", "新 [[cite:cite_a]]")
    _block(run, 11, "另 [[cite:cite_b]] 与 [[cite:cite_a]]")
    assert answer_cited_ids(run) == ["cite_a", "cite_b"]


def test_the_answers_cited_ids_are_read_in_one_query_whatever_the_number_of_blocks(run):
    for ordinal in range(10, 14):
        _block(run, ordinal, f"[[cite:cite_{ordinal}]]", f"[[cite:cite_{ordinal}_now]]")
    with CaptureQueriesContext(connection) as queries:
        cited = answer_cited_ids(run)
    assert cited == [f"cite_{ordinal}_now" for ordinal in range(10, 14)]
    assert len(queries) == 1


def _citing(run, count: int) -> None:
    _block(run, 10, " ".join(f"[[cite:cite_{n}]]" for n in range(count)))


def test_an_answer_citing_the_limit_of_distinct_ids_is_verified_id_by_id(run):
    _citing(run, MAX_CITATIONS_PER_RUN)
    verified = verify_answer(run, run.agent_calls.get(depth=0))
    assert [r["id"] for r in verified["references"]] == [
        f"cite_{n}" for n in range(MAX_CITATIONS_PER_RUN)
    ]
    assert {r["status"] for r in verified["references"]} == {"UNVERIFIED"}  # none issued


def test_an_answer_citing_one_id_past_the_limit_fails_its_verification_naming_both(run):
    _citing(run, MAX_CITATIONS_PER_RUN + 1)
    with pytest.raises(SparkTideError) as refused:
        verify_answer(run, run.agent_calls.get(depth=0))
    assert refused.value.code == ErrorCode.CITATION_LIMIT_EXCEEDED
    assert refused.value.detail == (
        f"The answer cites {MAX_CITATIONS_PER_RUN + 1} distinct IDs; "
        f"at most {MAX_CITATIONS_PER_RUN} can be verified."
    )


def test_the_verification_names_the_call_whose_evidence_view_it_read(run):
    root = run.agent_calls.get(depth=0)
    _citing(run, 1)
    assert verify_answer(run, root) == {
        "agentCallId": root.public_id,
        "references": [{"id": "cite_0", "status": "UNVERIFIED"}],
    }
