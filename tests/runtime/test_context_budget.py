"""A search under the agent version's context budget (``contextTokens``): excerpts go to the
model whole and best first; what does not fit is left out before issuance, and the tool
result, the journal's search record and the run's searches say how many (agents/prompting.py)."""

import json
import re

import pytest
from django.test import Client

from api.selectors import run_searches
from citations.models import CitationReference
from knowledge.models import Chunk
from runtime.engine import execute_run
from runtime.services import start_run
from tests import factories
from tests.providers.fake_openai import (
    FakeOpenAI,
    finish_chunk,
    stream,
    text_chunk,
    tool_call_chunk,
)

pytestmark = pytest.mark.django_db(transaction=True)

# Three documents of one long paragraph each: about 3,000 estimated tokens per excerpt, so a
# budget of 6,000 (minus about 1,000 for the prompt, the tool schemas and the messages) holds
# one excerpt and not two, with a wide margin either way.
EXCERPT_CHARS = 3_000


def _long_knowledge(tenant, app):
    version = factories.make_knowledge(tenant, "long-notes")
    for n, filler in enumerate(("储能", "电池", "锂价")):
        body = f"澜海新能源第{n + 1}份纪要：营收增长。" + filler * (EXCERPT_CHARS // 2)
        factories.add_document(version, [body], key=f"note-{n}", title=f"纪要 {n + 1}")
    factories.publish(version)
    factories.lease(app, version)
    return version


def _run_with_budget(app, alice, knowledge, monkeypatch, **model_extra):
    monkeypatch.setenv("SPARKTIDE_TEST_OPENAI_KEY", "sk-test")
    script = [
        stream(
            [
                tool_call_chunk(
                    0,
                    id="call_1",
                    name="search_knowledge",
                    arguments='{"query": "澜海新能源营收", "top_k": 3}',
                ),
                finish_chunk("tool_calls"),
            ]
        ),
        stream([text_chunk("完成。"), finish_chunk("stop")]),
    ]
    with FakeOpenAI(script) as server:
        model = server.model(**model_extra)
        factories.make_agent(app.tenant, "llm", model=model, knowledge=[knowledge], pin_to=[app])
        run = start_run(user=alice, app=app, agent_key="llm", input="澜海新能源营收如何？")
        execute_run(run.pk)
        requests = server.requests
    run.refresh_from_db()
    assert run.status == "COMPLETED"
    return run, json.loads(requests[1].body["messages"][-1]["content"])


def test_without_a_budget_every_excerpt_goes_to_the_model(app, alice, tenant, monkeypatch):
    knowledge = _long_knowledge(tenant, app)
    run, tool_result = _run_with_budget(app, alice, knowledge, monkeypatch)
    assert len(tool_result["results"]) == 3
    assert "omitted" not in tool_result
    assert "omitted" not in run_searches(run)[0]


def test_a_budget_sends_whole_excerpts_and_says_how_many_it_left_out(
    app, alice, tenant, monkeypatch, admin_user
):
    knowledge = _long_knowledge(tenant, app)
    run, tool_result = _run_with_budget(
        app, alice, knowledge, monkeypatch, contextTokens=6_000, maxTokens=1
    )
    [shown] = tool_result["results"]
    # Whole: the excerpt is its chunk's full text, not cut to fit.
    reference = CitationReference.objects.get(pk=shown["id"])
    assert shown["content"] == Chunk.objects.get(pk=reference.chunk_id).text
    assert len(shown["content"]) > EXCERPT_CHARS
    assert tool_result["omitted"] == {"count": 2, "reason": "CONTEXT_BUDGET"}
    # What was left out was never issued: the run holds one citation, not three.
    assert CitationReference.objects.filter(run=run).count() == 1
    [search] = run_searches(run)
    assert search["omitted"] == 2
    assert [hit["citationId"] for hit in search["hits"]] == [shown["id"]]
    # 运行详情's 检索记录 says it too.
    staff = Client()
    staff.force_login(admin_user)
    page = staff.get(f"/console/runs/{run.pk}/").content.decode()
    searches = page.split('id="searches"')[1].split("</section>")[0]
    assert re.search(r'data-role="omitted">[^<]*2 个', searches)


def test_a_budget_too_small_for_any_excerpt_sends_none_and_says_so(app, alice, tenant, monkeypatch):
    knowledge = _long_knowledge(tenant, app)
    _, tool_result = _run_with_budget(
        app, alice, knowledge, monkeypatch, contextTokens=2_000, maxTokens=1
    )
    assert tool_result["results"] == []
    assert tool_result["omitted"] == {"count": 3, "reason": "CONTEXT_BUDGET"}
