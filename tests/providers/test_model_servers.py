"""The openai provider against the streaming formats of real model servers.

Each reply comes from tests/providers/fake_openai.py in the shape vLLM, llama.cpp's server,
Ollama's ``/v1`` or a Qwen thinking model sends it. Each test asserts the turn and what the
reader's stream was handed (``on_text``): content only — no reasoning, no tool arguments.
"""

import pytest

from agents.providers.base import ProviderError, ToolCall, Turn
from agents.providers.openai import OpenAIProvider
from tests.providers.fake_openai import (
    FakeOpenAI,
    Reply,
    cut_in_a_tool_call,
    finish_chunk,
    llamacpp_text,
    reasoning_then_text,
    stream,
    text_chunk,
    think_in_content,
    usage_chunk,
    vllm_tool_calls,
    whole_tool_calls,
)
from tests.providers.test_openai import FakeState, config_for

SECRET = "SECRET-思考-用户想知道营收"
SEARCH = ("call_s1", "search_knowledge", '{"query": "北辰医药 营收", "top_k": 3}')
ANSWER = ("call_a1", "send_answer_part", '{"markdown": "## 结论\\n营收增长 12%"}')
WORDS = ["营收", "增长", " 12%", "。"]


@pytest.fixture(autouse=True)
def api_key(monkeypatch):
    monkeypatch.setenv("SPARKTIDE_TEST_OPENAI_KEY", "sk-test")


class Sink(FakeState):
    """A state whose on_text records what the reader's stream is handed."""

    def __init__(self) -> None:
        super().__init__()
        self.shown: list[str] = []
        self.on_text = self.shown.append


def turn_of(reply: Reply, **config) -> tuple[Turn, str]:
    state = Sink()
    with FakeOpenAI([reply]) as server:
        turn = OpenAIProvider(config_for(server, **config)).next_turn(state)
    return turn, "".join(state.shown)


def error_of(reply: Reply, **config) -> tuple[str, str]:
    state = Sink()
    with FakeOpenAI([reply]) as server, pytest.raises(ProviderError) as caught:
        OpenAIProvider(config_for(server, **config)).next_turn(state)
    return str(caught.value), "".join(state.shown)


def test_vllm_parallel_tool_calls_split_into_many_argument_deltas_are_joined_by_index():
    turn, shown = turn_of(vllm_tool_calls([SEARCH, ANSWER], fragments=7))
    assert turn == Turn(text="", tool_calls=[ToolCall(*SEARCH), ToolCall(*ANSWER)], done=False)
    assert shown == ""


def test_llamacpp_final_chunk_with_timings_and_usage_ends_a_text_turn():
    turn, shown = turn_of(llamacpp_text(WORDS))
    assert turn == Turn(text="营收增长 12%。", tool_calls=[], done=True)
    assert shown == "营收增长 12%。"


def test_llamacpp_tool_call_whole_in_one_delta_is_a_tool_turn():
    turn, shown = turn_of(whole_tool_calls([SEARCH], finish="tool_calls"))
    assert turn == Turn(text="", tool_calls=[ToolCall(*SEARCH)], done=False)
    assert shown == ""


def test_ollama_tool_calls_whole_with_a_stop_finish_are_a_tool_turn():
    """Ollama's /v1 says "stop" with tool calls; older versions send no index."""
    for index in (True, False):
        turn, shown = turn_of(whole_tool_calls([SEARCH, ANSWER], finish="stop", index=index))
        assert turn == Turn(text="", tool_calls=[ToolCall(*SEARCH), ToolCall(*ANSWER)], done=False)
        assert shown == ""


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
def test_qwen_reasoning_in_its_own_field_is_neither_streamed_nor_text(field):
    turn, shown = turn_of(reasoning_then_text(SECRET, WORDS, field=field))
    assert turn.text == shown == "营收增长 12%。"
    assert turn.done


def test_qwen_think_block_in_content_is_withheld_from_the_stream_and_the_text():
    """The tags arrive split across deltas; what follows the block is the answer."""
    turn, shown = turn_of(think_in_content(SECRET, WORDS))
    assert turn.text == shown == "营收增长 12%。"
    assert "think" not in shown and SECRET[:6] not in shown


def test_a_turn_that_ends_inside_its_think_block_fails_having_shown_nothing():
    message, shown = error_of(think_in_content(SECRET, WORDS, closed=False))
    assert "ended inside its <think> block" in message
    assert shown == ""


def test_a_closing_think_tag_without_its_opening_fails_the_turn():
    """A template that opens the block in the prompt: the content is reasoning, then the tag."""
    reply = stream(
        [
            text_chunk("用户问营收"),
            text_chunk("</think>\n\n"),
            text_chunk("增长"),
            finish_chunk("stop"),
        ]
    )
    message, _ = error_of(reply)
    assert "</think> without its <think>" in message


def test_a_think_tag_later_in_the_answer_is_text():
    turn, shown = turn_of(stream([text_chunk("标签 <think> 是文本"), finish_chunk("stop")]))
    assert turn.text == shown == "标签 <think> 是文本"


def test_text_that_starts_like_the_think_tag_but_is_not_is_shown_whole():
    turn, shown = turn_of(stream([text_chunk("<th"), text_chunk("ead>表头"), finish_chunk("stop")]))
    assert turn.text == shown == "<thead>表头"


def test_a_non_streamed_completion_with_a_think_block_keeps_only_the_answer():
    from tests.providers.fake_openai import completion

    turn, shown = turn_of(
        completion({"role": "assistant", "content": f"<think>{SECRET}</think>\n\n结论"})
    )
    assert turn.text == shown == "结论"


def test_usage_only_chunks_before_and_after_the_finish_are_ignored():
    turn, shown = turn_of(
        stream(
            [usage_chunk(), text_chunk("ok"), usage_chunk(), finish_chunk("stop"), usage_chunk()]
        )
    )
    assert turn == Turn(text="ok", tool_calls=[], done=True)
    assert shown == "ok"


def test_a_stalled_first_byte_ends_the_turn_at_its_deadline_with_a_clear_reason():
    message, shown = error_of(llamacpp_text(WORDS, delay_before=5), timeoutSeconds=0.3)
    assert message.endswith("timed out after 0.3 s")
    assert shown == ""


def test_a_length_cut_inside_a_tool_call_fails_and_the_arguments_are_never_shown():
    message, shown = error_of(cut_in_a_tool_call("先写结论", ANSWER))
    assert "token limit (finish_reason length) in the middle of a tool call" in message
    assert shown == "先写结论"
