"""Runs of one sessionId (same owner and app) are a conversation: the provider is given the
earlier questions and their committed answers, bounded, read through Publication's reader."""

import itertools
import json
import re

import pytest

from runtime.conversation import MAX_TURNS, conversation_history
from runtime.engine import execute_run
from runtime.services import start_run
from tests import factories
from tests.providers.fake_openai import FakeOpenAI, finish_chunk, stream, text_chunk

pytestmark = pytest.mark.django_db(transaction=True)
_agents = itertools.count(1)


@pytest.fixture
def knowledge(tenant, app, alice):
    return factories.fund_reports(tenant, app, alice)


def answered(app, owner, knowledge, question, answer, *, session_id, key=None):
    """A finished run whose committed answer is ``answer`` (cited to its first excerpt)."""
    run = factories.scripted_run(
        app,
        owner,
        [{"search": "营收", "topK": 1}, {"answerPart": answer}],
        knowledge=[knowledge],
        key=key or f"writer-{next(_agents)}",
        session_id=session_id,
    )
    run.input = question
    run.save(update_fields=["input"])
    return run


def test_the_history_holds_the_earlier_questions_and_answers_oldest_first(app, alice, knowledge):
    answered(app, alice, knowledge, "问一", "答一 [[cite:{{c1}}]]", session_id="s")
    answered(app, alice, knowledge, "问二", "答二", session_id="s")
    current = answered(app, alice, knowledge, "问三", "答三", session_id="s")
    history = conversation_history(current)
    assert [(t["question"], t["answer"]) for t in history] == [("问一", "答一"), ("问二", "答二")]


def test_the_history_is_bounded_to_the_last_turns(app, alice, knowledge):
    for i in range(MAX_TURNS + 2):
        answered(app, alice, knowledge, f"问{i}", f"答{i}", session_id="s")
    current = answered(app, alice, knowledge, "最后", "答", session_id="s")
    history = conversation_history(current)
    assert len(history) == MAX_TURNS == 5
    assert history[0]["question"] == "问2" and history[-1]["question"] == f"问{MAX_TURNS + 1}"


def test_only_runs_of_the_same_session_owner_and_app_are_the_conversation(
    app, alice, bob, knowledge, tenant
):
    answered(app, alice, knowledge, "别的会话", "x", session_id="other")
    answered(app, bob, knowledge, "别人的", "y", session_id="s")
    other_app = factories.make_app(tenant, "other-app", members=[alice])
    factories.lease(other_app, knowledge)
    answered(other_app, alice, knowledge, "别的应用", "z", session_id="s")
    answered(app, alice, knowledge, "同一会话", "答", session_id="s")
    current = answered(app, alice, knowledge, "现在", "答", session_id="s")
    assert [t["question"] for t in conversation_history(current)] == ["同一会话"]
    assert (
        conversation_history(answered(app, alice, knowledge, "无会话", "答", session_id="")) == []
    )


def test_a_block_whose_source_was_revoked_is_left_out_of_the_history(app, alice, knowledge):
    from guardian.shortcuts import remove_perm

    factories.scripted_run(
        app,
        alice,
        [{"search": "内部投研纪要", "topK": 1}, {"answerPart": "纪要说 [[cite:{{c1}}]]"}],
        knowledge=[knowledge],
        session_id="s",
    )
    current = answered(app, alice, knowledge, "现在", "答", session_id="s")
    assert "纪要说" in conversation_history(current)[0]["answer"]
    remove_perm("knowledge.read_document", alice, knowledge.memo)
    assert conversation_history(current)[0]["answer"] == ""


def test_the_openai_provider_is_sent_the_earlier_turns_as_chat_history(
    app, alice, knowledge, monkeypatch
):
    monkeypatch.setenv("SPARKTIDE_TEST_OPENAI_KEY", "sk-test")
    answered(
        app,
        alice,
        knowledge,
        "北辰医药营收如何？",
        "营收增长 12% [[cite:{{c1}}]]。",
        session_id="chat",
    )
    with FakeOpenAI([stream([text_chunk("净利润未披露。"), finish_chunk("stop")])]) as server:
        factories.make_agent(
            app.tenant, "llm", model=server.model(), knowledge=[knowledge], pin_to=[app]
        )
        run = start_run(
            user=alice, app=app, agent_key="llm", input="那净利润呢？", session_id="chat"
        )
        execute_run(run.pk)
        (request,) = server.requests
    messages = request.body["messages"]
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user"]
    assert messages[1:] == [
        {"role": "user", "content": "北辰医药营收如何？"},
        {"role": "assistant", "content": "营收增长 12%。"},
        {"role": "user", "content": "那净利润呢？"},
    ]
    # An earlier run's IDs are never offered (the system prompt only names the prefix).
    assert not re.search(r"cite_[0-9a-z]{6,}", json.dumps(messages))
