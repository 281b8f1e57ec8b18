"""Runs against model servers as they behave: what a WebSocket client is sent, how the run ends.

Each model server is tests/providers/fake_openai.py replaying one server's streaming format
(vLLM, llama.cpp, Ollama's /v1, a Qwen thinking model); the run executes in a worker thread while
a socket follows it. Whatever the format, the client gets the model's content only — never its
reasoning, a tool's name or its arguments — and a run the provider cannot complete ends with a
reason that says why.
"""

import asyncio
import json

import pytest
from channels.db import database_sync_to_async

from publication.models import AnswerBlock
from runs.models import Run
from runtime.services import start_run
from tests import factories
from tests.providers.fake_openai import (
    FakeOpenAI,
    cut_in_a_tool_call,
    llamacpp_text,
    reasoning_then_text,
    think_in_content,
    vllm_tool_calls,
    whole_tool_calls,
)
from tests.realtime.helpers import read_until_close, socket, ticket_for
from tests.realtime.test_stream import texts

pytestmark = pytest.mark.django_db(transaction=True)

SECRET = "SECRET-思考-用户想知道营收"
QUERY = "SECRET-ARGS-北辰医药营收"
SEARCH = ("call_s1", "search_knowledge", json.dumps({"query": QUERY, "top_k": 2}))
SEARCH_2 = ("call_s2", "search_knowledge", json.dumps({"query": QUERY + "二", "top_k": 1}))
WORDS = ["营收", "同比", "增长", " 12%", "。"]
ANSWER = "".join(WORDS)
HIDDEN = (SECRET, QUERY, "search_knowledge", "send_answer_part", "tool_calls", "think>")


@pytest.fixture(autouse=True)
def openai_key(monkeypatch):
    monkeypatch.setenv("SPARKTIDE_TEST_OPENAI_KEY", "sk-test")


def start(app, alice, knowledge, server, extra) -> Run:
    factories.make_agent(
        app.tenant, "llm", model=server.model(**extra), knowledge=[knowledge], pin_to=[app]
    )
    return start_run(user=alice, app=app, agent_key="llm", input="营收如何？")


async def follow(app, alice, knowledge, replies, **extra) -> tuple[list[dict], Run]:
    """Start a run on a server replaying ``replies``; every frame its socket is sent, and the
    run as it ended."""
    from runtime.engine import execute_run

    with FakeOpenAI(replies) as server:
        run = await database_sync_to_async(start)(app, alice, knowledge, server, extra)
        comm = socket(run, after=0, ticket=await ticket_for(run, alice))
        assert (await comm.connect(timeout=5))[0]
        worker = asyncio.create_task(
            database_sync_to_async(execute_run, thread_sensitive=False)(run.pk)
        )
        try:
            frames, code = await read_until_close(comm, timeout=30)
        finally:
            await comm.disconnect()
            await asyncio.wait_for(worker, 30)
    assert code == 1000
    wire = json.dumps(frames, ensure_ascii=False)
    for hidden in HIDDEN:
        assert hidden not in wire, hidden
    return frames, await database_sync_to_async(Run.objects.get)(pk=run.pk)


def published(frames: list[dict]) -> list[str]:
    return [f["data"]["content"]["text"] for f in frames if f.get("type") == "answer.published"]


def slowly(reply, delay=0.02):
    reply.delay_between = delay
    return reply


async def test_vllm_parallel_tool_calls_then_an_answer_complete_the_run(app, alice, knowledge):
    frames, run = await follow(
        app,
        alice,
        knowledge,
        [slowly(vllm_tool_calls([SEARCH, SEARCH_2], fragments=8)), slowly(llamacpp_text(WORDS))],
    )
    assert run.status == Run.Status.COMPLETED
    assert list(texts(frames).values()) == [ANSWER]
    assert published(frames) == [ANSWER]
    types = [f.get("type") for f in frames]
    assert types.count("citation.created") >= 1  # both searches ran with their arguments


async def test_llamacpp_text_with_timings_streams_and_is_published(app, alice, knowledge):
    frames, run = await follow(app, alice, knowledge, [slowly(llamacpp_text(WORDS))])
    assert run.status == Run.Status.COMPLETED
    kinds = [(f["kind"], f.get("type")) for f in frames]
    assert kinds.index(("stream", "answer.stream")) < kinds.index(("event", "answer.published"))
    assert list(texts(frames).values()) == [ANSWER]
    assert published(frames) == [ANSWER]


@pytest.mark.parametrize("finish", ["tool_calls", "stop"])
async def test_whole_tool_calls_of_llamacpp_and_ollama_run_their_tools(
    app, alice, knowledge, finish
):
    """llama.cpp says tool_calls, Ollama's /v1 says stop: either way the tool runs."""
    frames, run = await follow(
        app,
        alice,
        knowledge,
        [whole_tool_calls([SEARCH], finish=finish), slowly(llamacpp_text(WORDS))],
    )
    assert run.status == Run.Status.COMPLETED
    assert "citation.created" in [f.get("type") for f in frames]
    assert published(frames) == [ANSWER]


async def test_qwen_reasoning_content_is_neither_streamed_nor_published(app, alice, knowledge):
    frames, run = await follow(
        app, alice, knowledge, [slowly(reasoning_then_text(SECRET * 3, WORDS))]
    )
    assert run.status == Run.Status.COMPLETED
    assert list(texts(frames).values()) == [ANSWER]
    assert published(frames) == [ANSWER]


async def test_qwen_think_block_in_content_is_neither_streamed_nor_published(app, alice, knowledge):
    frames, run = await follow(app, alice, knowledge, [slowly(think_in_content(SECRET, WORDS))])
    assert run.status == Run.Status.COMPLETED
    assert list(texts(frames).values()) == [ANSWER]
    assert published(frames) == [ANSWER]


async def test_a_turn_cut_inside_its_think_block_fails_the_run_with_nothing_shown(
    app, alice, knowledge
):
    frames, run = await follow(
        app, alice, knowledge, [slowly(think_in_content(SECRET, WORDS, closed=False))]
    )
    assert (run.status, run.reason) == (Run.Status.FAILED, "PROVIDER_FAILED")
    assert "ended inside its <think> block" in run.reason_detail
    assert not [f for f in frames if f["kind"] == "stream"]
    assert frames[-1]["type"] == "run.failed"


async def test_a_stalled_first_byte_fails_the_run_at_the_turns_deadline(app, alice, knowledge):
    frames, run = await follow(
        app, alice, knowledge, [llamacpp_text(WORDS, delay_before=10)], timeoutSeconds=0.5
    )
    assert (run.status, run.reason) == (Run.Status.FAILED, "PROVIDER_FAILED")
    assert run.reason_detail.endswith("timed out after 0.5 s")
    assert frames[-1]["type"] == "run.failed"
    assert frames[-1]["data"]["reason"] == "PROVIDER_FAILED"


async def test_a_length_cut_inside_an_answer_call_publishes_nothing_and_says_why(
    app, alice, knowledge
):
    """The unclosed send_answer_part never reaches Publication; the text before it was shown
    and is withdrawn by the stream's close."""
    call = ("call_a1", "send_answer_part", '{"markdown": "' + QUERY + " 未完")
    frames, run = await follow(
        app, alice, knowledge, [slowly(cut_in_a_tool_call("先写结论", call))]
    )
    assert (run.status, run.reason) == (Run.Status.FAILED, "PROVIDER_FAILED")
    assert "token limit (finish_reason length) in the middle of a tool call" in run.reason_detail
    assert published(frames) == []
    assert not await database_sync_to_async(AnswerBlock.objects.filter(run=run).exists)()
    close = next(f for f in frames if f["kind"] == "event" and f["type"] == "answer.stream")
    assert close["data"]["reason"] == "failed"
