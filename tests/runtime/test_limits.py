"""The 256 limits: citations issued per run, and distinct IDs verified per answer."""

import pytest

from citations.models import CitationReference
from runs.models import Run
from tests import factories

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def many_pages(tenant, app):
    version = factories.make_knowledge(tenant, "many", version="1")
    factories.add_document(
        version, [f"第{i}页：营收数据。" for i in range(1, 21)], key="pages", title="营收分页"
    )
    factories.publish(version)
    factories.lease(app, version)
    return version


def test_the_257th_citation_of_a_run_is_refused_with_an_event(app, alice, many_pages):
    from runtime.engine import execute_run
    from runtime.services import start_run

    steps = [{"search": "营收", "topK": 20} for _ in range(13)] + [{"text": "done"}]
    factories.make_agent(
        app.tenant, "greedy", model=factories.scripted(*steps), knowledge=[many_pages], pin_to=[app]
    )
    run = start_run(user=alice, app=app, agent_key="greedy", input="营收")
    execute_run(run.pk)
    run.refresh_from_db()
    assert CitationReference.objects.filter(run=run).count() == 256
    assert run.citation_count == 256
    refused = run.events.get(type="citation.limit_exceeded").data
    assert refused == {
        "agentCallId": refused["agentCallId"],
        "code": "CITATION_LIMIT_EXCEEDED",
        "refused": 4,
        "limit": 256,
    }
    assert run.events.filter(type="citation.created").count() == 256
    assert run.status == Run.Status.COMPLETED  # the run goes on; nothing was silently dropped


def test_an_answer_citing_more_than_256_distinct_ids_fails_verification(make_run):
    markers = " ".join(f"[[cite:cite_{i:024d}]]" for i in range(257))
    run = make_run({"answerPart": markers})
    assert (run.status, run.reason) == (Run.Status.PARTIAL, "CITATION_LIMIT_EXCEEDED")
    assert not run.events.filter(type="citation.verified").exists()


def test_an_answer_citing_exactly_256_distinct_ids_is_verified(make_run):
    markers = " ".join(f"[[cite:cite_{i:024d}]]" for i in range(256))
    run = make_run({"answerPart": markers})
    assert run.status == Run.Status.COMPLETED
    assert len(run.events.get(type="citation.verified").data["references"]) == 256
