"""Tool results to the model carry a code and a neutral message; a provider that
cannot be built fails its own agent call, never its parent (issue 10, defects 7
and 8); a REMOTE item the database cannot store is a tool error of its own
(issue 14, finding 4)."""

import json

import pytest

from citations.models import CitationReference
from knowledge.models import KnowledgeVersion
from publication.reader import RunReader
from runs.models import AgentCall, JournalEntry, Run
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
from tests.realtime.processes import free_port
from tests.remote_server import make_remote_version, remote_item

pytestmark = pytest.mark.django_db(transaction=True)

KEY_ENV = "SPARKTIDE_TEST_OPENAI_KEY"


def openai_model(base_url: str, **extra) -> dict:
    return {"provider": "openai", "baseUrl": base_url, "model": "m", "apiKeyEnv": KEY_ENV, **extra}


def completed_events(run: Run) -> list[dict]:
    return [e.data for e in run.events.filter(type="agent.completed").order_by("seq")]


# ------------------------------------------------------------- defect 7: unbuildable providers


def test_a_provider_that_cannot_be_built_ends_its_call_with_agent_completed_failed(app, alice):
    """A version stored before the sleep bound tightened (60 s > 30 s)."""
    run = factories.scripted_run(app, alice, [{"sleep": 60}, {"text": "好"}])

    assert (run.status, run.reason) == ("FAILED", "PROVIDER_FAILED")
    assert "steps[0].sleep" in run.reason_detail
    (root,) = AgentCall.objects.filter(run=run)
    assert root.status == AgentCall.Status.FAILED
    assert [e["status"] for e in completed_events(run)] == ["FAILED"]


@pytest.mark.parametrize(
    "model",
    [
        factories.scripted({"sleep": 60}),
        openai_model("http://127.0.0.1:9/v1", stream=True),
    ],
    ids=["scripted sleep above 30 s", "openai with an unknown key"],
)
def test_a_sub_agent_whose_provider_cannot_be_built_is_a_sub_agent_failed_tool_error(
    app, alice, model
):
    child = factories.make_agent(app.tenant, "child", model=model, pin_to=[app])
    run = factories.scripted_run(
        app,
        alice,
        [{"callAgent": "child", "task": "查营收"}, {"answerPart": "子任务失败，继续回答。"}],
        sub_agents=[child.agent],
    )

    assert (run.status, run.reason) == ("COMPLETED", "")
    calls = {call.depth: call for call in AgentCall.objects.filter(run=run)}
    assert calls[1].status == AgentCall.Status.FAILED
    assert calls[0].status == AgentCall.Status.COMPLETED
    assert sorted(e["status"] for e in completed_events(run)) == ["COMPLETED", "FAILED"]
    assert JournalEntry.objects.filter(
        run=run, kind="TOOL_RECEIPT", tool="call_agent", data__receipt__error="SUB_AGENT_FAILED"
    ).exists()


# ------------------------------------------------------------- defect 8: nothing internal reaches the model


def _parent_asks(tool: str, arguments: dict):
    return [
        stream(
            [
                tool_call_chunk(0, id="call_1", name=tool, arguments=json.dumps(arguments)),
                finish_chunk("tool_calls"),
            ]
        ),
        stream([text_chunk("好的。"), finish_chunk("stop")]),
    ]


def _tool_result(request) -> dict:
    return json.loads(request.body["messages"][-1]["content"])


def test_a_sub_agent_failure_reaches_the_model_as_a_code_without_the_url(app, alice, monkeypatch):
    monkeypatch.setenv(KEY_ENV, "sk-test")
    closed = free_port()
    child = factories.make_agent(
        app.tenant, "child", model=openai_model(f"http://127.0.0.1:{closed}/v1"), pin_to=[app]
    )
    with FakeOpenAI(_parent_asks("call_agent", {"agent": "child", "task": "查"})) as server:
        factories.make_agent(
            app.tenant,
            "llm",
            model=openai_model(server.base_url),
            sub_agents=[child.agent],
            pin_to=[app],
        )
        run = start_run(user=alice, app=app, agent_key="llm", input="营收？")
        execute_run(run.pk)
        requests = server.requests
    result = _tool_result(requests[1])
    assert result == {
        "error": {
            "code": "SUB_AGENT_FAILED",
            "message": "The sub-agent failed and returned no answer.",
        }
    }
    run.refresh_from_db()
    assert run.status == "COMPLETED"


def test_a_remote_failure_reaches_the_model_as_a_code_without_host_or_port(
    tenant,
    app,
    alice,
    remote_knowledge,
    monkeypatch,
    settings,
):
    monkeypatch.setenv(KEY_ENV, "sk-test")
    version = make_remote_version(tenant, remote_knowledge, key="crm")
    factories.lease(app, version)
    # The endpoint is refused before any call: the error names its host and port.
    settings.SPARKTIDE_REMOTE_ALLOWED_HOSTS = ["remote.example.com"]
    with FakeOpenAI(_parent_asks("search_knowledge", {"query": "营收"})) as server:
        factories.make_agent(
            app.tenant,
            "llm",
            model=openai_model(server.base_url),
            knowledge=[version],
            pin_to=[app],
        )
        run = start_run(user=alice, app=app, agent_key="llm", input="营收？")
        execute_run(run.pk)
        requests = server.requests
    result = _tool_result(requests[1])
    assert result["error"]["code"] == "KNOWLEDGE_SOURCE_UNAVAILABLE"
    text = json.dumps(result)
    assert "127.0.0.1" not in text
    assert str(remote_knowledge.port) not in text


def test_a_version_without_its_search_index_is_refused_to_the_model_by_code(
    tenant, app, alice, monkeypatch
):
    """A version published by a bulk update has no stored statistics: the search is
    refused with a code of its own, nothing is issued, and the run goes on."""
    monkeypatch.setenv(KEY_ENV, "sk-test")
    version = factories.make_knowledge(tenant, "bulk")
    factories.add_document(version, ["北辰医药营收 48.6 亿元。"], title="北辰医药")
    KnowledgeVersion.objects.filter(pk=version.pk).update(status=KnowledgeVersion.Status.PUBLISHED)
    factories.lease(app, version)
    with FakeOpenAI(_parent_asks("search_knowledge", {"query": "营收"})) as server:
        factories.make_agent(
            app.tenant,
            "llm",
            model=openai_model(server.base_url),
            knowledge=[version],
            pin_to=[app],
        )
        run = start_run(user=alice, app=app, agent_key="llm", input="营收？")
        execute_run(run.pk)
        requests = server.requests
    assert _tool_result(requests[1]) == {
        "error": {
            "code": "KNOWLEDGE_INDEX_MISSING",
            "message": "A knowledge version has no search index yet; nothing was searched.",
        }
    }
    assert not CitationReference.objects.filter(run=run).exists()
    run.refresh_from_db()
    assert run.status == "COMPLETED"


# ------------------------------------------------------------- issue 14: unstorable REMOTE items


@pytest.mark.parametrize("field", ["title", "id", "version", "uri", "content"])
def test_a_remote_item_with_nul_is_a_coded_tool_error_and_the_run_completes(
    tenant,
    app,
    alice,
    remote_knowledge,
    field,
):
    hostile = remote_item("crm-bad", "坏条目的内容。", version="1", title="标题", uri="http://x/1")
    hostile[field] = hostile[field][:2] + "\x00" + hostile[field][2:]
    remote_knowledge.set_items(
        [hostile, remote_item("crm-ok", "回款正常，营收增长。", version="2")]
    )
    version = make_remote_version(tenant, remote_knowledge, key="crm")
    factories.lease(app, version)

    run = factories.scripted_run(
        app,
        alice,
        [{"search": "营收", "topK": 2}, {"answerPart": "回款正常 [[cite:{{c1}}]]"}],
        knowledge=[version],
    )

    assert (run.status, run.reason) == ("COMPLETED", "")
    assert list(
        CitationReference.objects.filter(run=run).values_list("remote_item_id", flat=True)
    ) == ["crm-ok"]
    receipt = JournalEntry.objects.get(run=run, kind="TOOL_RECEIPT", tool="search_knowledge")
    assert receipt.data["receipt"]["itemErrors"] == ["SOURCE_ITEM_UNSTORABLE"]


def test_a_remote_item_with_a_lone_surrogate_is_left_out_not_the_whole_answer(
    tenant,
    app,
    alice,
    remote_knowledge,
):
    remote_knowledge.respond_raw(
        '{"items": [{"id": "a", "title": "\\ud800", "content": "营收"},'
        ' {"id": "b", "title": "好", "content": "营收增长"}]}'
    )
    version = make_remote_version(tenant, remote_knowledge, key="crm")
    factories.lease(app, version)
    run = factories.scripted_run(app, alice, [{"search": "营收", "topK": 2}], knowledge=[version])
    assert run.status == "COMPLETED"
    assert list(
        CitationReference.objects.filter(run=run).values_list("remote_item_id", flat=True)
    ) == ["b"]


def test_model_output_with_nul_is_stored_without_it(app, alice, monkeypatch):
    """Model output is not refused (no one to send a 400 to): the NUL is removed."""
    monkeypatch.setenv(KEY_ENV, "sk-test")
    script = [stream([text_chunk("营收\x00增长"), finish_chunk("stop")])]
    with FakeOpenAI(script) as server:
        factories.make_agent(app.tenant, "llm", model=openai_model(server.base_url), pin_to=[app])
        run = start_run(user=alice, app=app, agent_key="llm", input="营收？")
        execute_run(run.pk)
    run.refresh_from_db()
    assert (run.status, run.reason) == ("COMPLETED", "")
    assert [view.content["text"] for view in RunReader(run).blocks()] == ["营收增长"]
