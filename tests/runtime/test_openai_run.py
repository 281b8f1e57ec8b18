"""A run driven by an OpenAI-compatible model served by a real local HTTP server."""

import json

import pytest

from publication.models import AnswerBlock
from publication.reader import RunReader
from runs.models import JournalEntry
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


def test_an_openai_run_searches_refuses_unsealed_arguments_and_publishes_its_text(
    app, alice, knowledge, monkeypatch
):
    """Tool results flow back to the model with issued cite_ IDs; unsealed tool
    arguments are refused by the tool entry; the final text is published (entry A)."""
    monkeypatch.setenv("SPARKTIDE_TEST_OPENAI_KEY", "sk-test")
    script = [
        stream(
            [
                tool_call_chunk(
                    0, id="call_1", name="search_knowledge", arguments='{"query": "营收", '
                ),
                tool_call_chunk(0, arguments='"top_k": 2}'),
                finish_chunk("tool_calls"),
            ]
        ),
        stream(
            [
                tool_call_chunk(
                    0, id="call_2", name="send_answer_part", arguments='{"markdown": "半截'
                ),
                finish_chunk("tool_calls"),
            ]
        ),
        stream([text_chunk("营收增长"), text_chunk("了 12%。"), finish_chunk("stop")]),
    ]
    with FakeOpenAI(script) as server:
        factories.make_agent(
            app.tenant, "llm", model=server.model(), knowledge=[knowledge], pin_to=[app]
        )
        run = start_run(user=alice, app=app, agent_key="llm", input="营收如何？")
        execute_run(run.pk)
        requests = server.requests
    run.refresh_from_db()
    assert run.status == "COMPLETED"
    tool_result = json.loads(requests[1].body["messages"][-1]["content"])
    assert [r["id"][:5] for r in tool_result["results"]] == ["cite_", "cite_"]
    refused = json.loads(requests[2].body["messages"][-1]["content"])
    assert refused["error"]["code"] == "ARGUMENTS_NOT_SEALED"
    assert [v.content["text"] for v in RunReader(run).blocks()] == ["营收增长了 12%。"]
    assert AnswerBlock.objects.get(run=run).origin == "A"
    assert JournalEntry.objects.filter(
        run=run, kind="TOOL_RECEIPT", data__receipt__error="ARGUMENTS_NOT_SEALED"
    ).exists()
