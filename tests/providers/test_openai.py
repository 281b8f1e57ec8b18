"""The openai provider against a real local HTTP server speaking chat-completions."""

import copy
import socket
import time
from dataclasses import dataclass, field

import pytest

from agents.prompting import BUILTIN_PROMPTS, DEFAULT_PROMPT
from agents.providers import get_provider, validate_model_config
from agents.providers.base import TOOL_SCHEMAS, ProviderError, ToolCall, Turn
from agents.providers.openai import OpenAIProvider, validate_config
from tests.providers.fake_openai import (
    FakeOpenAI,
    Reply,
    chunk,
    completion,
    finish_chunk,
    sse_event,
    stream,
    text_chunk,
    tool_call_chunk,
)

KEY = "sk-test-0123456789abcdef"
KEY_ENV = "SPARKTIDE_TEST_OPENAI_KEY"


@dataclass
class FakeState:
    instructions: str = "You are a careful fund analyst. Cite with [[cite:<id>]]."
    task: str = "How did the fund's equity weight change?"
    messages: list[dict] = field(default_factory=list)

    def __post_init__(self):
        if not self.messages:
            self.messages = [{"role": "user", "content": self.task}]

    def evidence_ids(self) -> list[str]:
        return []

    def publication_ids(self) -> list[str]:
        return []

    def numeric_handles(self) -> list[str]:
        return []

    def search_results(self) -> list[dict]:
        return []


@pytest.fixture
def api_key(monkeypatch):
    monkeypatch.setenv(KEY_ENV, KEY)
    return KEY


def config_for(server: FakeOpenAI, **extra) -> dict:
    return {
        "provider": "openai",
        "baseUrl": server.base_url,
        "model": "fake-model",
        "apiKeyEnv": KEY_ENV,
        **extra,
    }


def run_turn(replies: list[Reply], state: FakeState | None = None, **extra):
    """One next_turn against a fresh server; returns (turn, recorded requests)."""
    with FakeOpenAI(replies) as server:
        turn = OpenAIProvider(config_for(server, **extra)).next_turn(state or FakeState())
    return turn, server.requests


def turn_error(replies: list[Reply], **extra) -> str:
    with FakeOpenAI(replies) as server, pytest.raises(ProviderError) as caught:
        OpenAIProvider(config_for(server, **extra)).next_turn(FakeState())
    return str(caught.value)


# -- streamed answers -------------------------------------------------------------------------


def test_streamed_text_answer_becomes_a_done_turn(api_key):
    """Content pieces are concatenated in order; "stop" with no tool call means done."""
    turn, _ = run_turn(
        [
            stream(
                [
                    chunk({"role": "assistant", "content": ""}),
                    text_chunk("权益仓位"),
                    text_chunk(" rose to "),
                    text_chunk("61.2% [[cite:cite_abc]]."),
                    finish_chunk("stop"),
                ]
            )
        ]
    )
    assert turn == Turn(text="权益仓位 rose to 61.2% [[cite:cite_abc]].", tool_calls=[], done=True)


def test_request_posts_system_instructions_state_messages_and_the_tool_schemas(api_key):
    """The body is model + [system, *state.messages] + TOOL_SCHEMAS + stream, to /chat/completions."""
    history = [
        {"role": "user", "content": "How did the fund's equity weight change?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "search_knowledge", "arguments": '{"query": "equity"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "cite_abc: equity weight 61.2%"},
    ]
    state = FakeState(messages=history)
    _, requests = run_turn([stream([text_chunk("ok"), finish_chunk("stop")])], state)

    [request] = requests
    assert request.method == "POST"
    assert request.path == "/v1/chat/completions"
    assert request.body == {
        "model": "fake-model",
        "messages": [
            {
                "role": "system",
                "content": f"{BUILTIN_PROMPTS[DEFAULT_PROMPT]}\n\n{state.instructions}",
            },
            *history,
        ],
        "tools": TOOL_SCHEMAS,
        "stream": True,
    }


def test_the_default_system_prompt_teaches_the_markers_and_the_answer_tools(api_key):
    """With no systemPrompt the model is taught the answer contract before the instructions."""
    _, requests = run_turn([stream([text_chunk("ok"), finish_chunk("stop")])])
    system = requests[0].body["messages"][0]["content"]
    for taught in ("[[cite:<id>]]", "[[num:<handle>]]", "send_answer_part", "replaces=", "cite_"):
        assert taught in system
    assert system.endswith("\n\n" + FakeState().instructions)


def test_a_versions_own_prompt_replaces_the_built_in_one(api_key):
    own = "Answer in English. Cite every fact as [[cite:ID]]."
    _, requests = run_turn(
        [stream([text_chunk("ok"), finish_chunk("stop")])], systemPrompt={"text": own}
    )
    assert requests[0].body["messages"][0]["content"] == f"{own}\n\n{FakeState().instructions}"


def test_empty_instructions_leave_the_prompt_alone(api_key):
    _, requests = run_turn(
        [stream([text_chunk("ok"), finish_chunk("stop")])],
        FakeState(instructions=""),
        systemPrompt={"builtin": DEFAULT_PROMPT},
    )
    assert requests[0].body["messages"][0]["content"] == BUILTIN_PROMPTS[DEFAULT_PROMPT]


def test_optional_settings_are_sent_as_temperature_and_max_tokens(api_key):
    _, requests = run_turn(
        [stream([text_chunk("ok"), finish_chunk("stop")])], temperature=0.2, maxTokens=512
    )
    assert requests[0].body["temperature"] == 0.2
    assert requests[0].body["max_tokens"] == 512


def test_the_provider_appends_nothing_to_state_messages(api_key):
    state = FakeState()
    before = copy.deepcopy(state.messages)
    run_turn(
        [stream([tool_call_chunk(0, id="c1", name="search_knowledge", arguments="{}")])], state
    )
    assert state.messages == before


def test_a_trailing_slash_in_base_url_does_not_double_the_slash(api_key):
    with FakeOpenAI([stream([text_chunk("ok"), finish_chunk("stop")])]) as server:
        provider = OpenAIProvider({**config_for(server), "baseUrl": server.base_url + "/"})
        provider.next_turn(FakeState())
    assert server.requests[0].path == "/v1/chat/completions"


def test_hidden_reasoning_is_never_part_of_the_text(api_key):
    turn, _ = run_turn(
        [
            stream(
                [
                    chunk({"reasoning_content": "The user wants… secret chain of thought"}),
                    chunk({"reasoning": "more hidden reasoning", "content": "Visible"}),
                    text_chunk(" answer."),
                    finish_chunk("stop"),
                ]
            )
        ]
    )
    assert turn.text == "Visible answer."


def test_length_finish_without_tool_calls_is_a_done_turn(api_key):
    turn, _ = run_turn([stream([text_chunk("A cut-off answ"), finish_chunk("length")])])
    assert turn == Turn(text="A cut-off answ", tool_calls=[], done=True)


def test_sse_comments_crlf_line_endings_and_multiline_data_are_parsed(api_key):
    """Keep-alive comments, event/id fields, CRLF and a data field split over lines are all SSE."""
    pieces = [
        b": keep-alive\r\n\r\n",
        b'event: message\r\nid: 1\r\ndata: {"choices": [{"index": 0,\r\ndata:  "delta": {"content": "He"}}]}\r\n\r\n',
        b'data:{"choices":[{"index":0,"delta":{"content":"llo \xe2\x80\xa8 there"}}]}\r',
        b'\n\r\ndata: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\r\n\r\n',
        b"data: [DONE]\r\n\r\n",
    ]
    turn, _ = run_turn([Reply(pieces=pieces)])
    assert turn.text == "Hello \u2028 there"
    assert turn.done


def test_a_utf8_character_split_across_network_chunks_is_decoded(api_key):
    event = sse_event(text_chunk("基金"))
    turn, _ = run_turn(
        [
            Reply(
                pieces=[event[:20], event[20:21], event[21:], sse_event(finish_chunk("stop"))],
                delay_between=0.01,
            )
        ]
    )
    assert turn.text == "基金"


def test_a_usage_chunk_with_no_choices_after_finish_is_ignored(api_key):
    usage = {"id": "x", "choices": [], "usage": {"prompt_tokens": 10, "completion_tokens": 2}}
    turn, _ = run_turn([stream([text_chunk("ok"), finish_chunk("stop"), usage])])
    assert turn == Turn(text="ok", tool_calls=[], done=True)


def test_a_stream_that_finishes_without_done_marker_is_accepted(api_key):
    turn, _ = run_turn([stream([text_chunk("ok"), finish_chunk("stop")], done=False)])
    assert turn.text == "ok"


# -- tool calls -------------------------------------------------------------------------------


def test_streamed_tool_call_arguments_arrive_in_fragments_and_are_concatenated(api_key):
    turn, _ = run_turn(
        [
            stream(
                [
                    tool_call_chunk(0, id="call_abc", name="search_knowledge", arguments=""),
                    tool_call_chunk(0, arguments='{"que'),
                    tool_call_chunk(0, arguments='ry": "权益'),
                    tool_call_chunk(0, arguments='仓位", "top_k"'),
                    tool_call_chunk(0, arguments=": 3}"),
                    finish_chunk("tool_calls"),
                ]
            )
        ]
    )
    assert turn == Turn(
        text="",
        tool_calls=[
            ToolCall(
                id="call_abc",
                name="search_knowledge",
                arguments='{"query": "权益仓位", "top_k": 3}',
            )
        ],
        done=False,
    )


def test_two_parallel_tool_calls_with_interleaved_fragments_are_kept_apart(api_key):
    turn, _ = run_turn(
        [
            stream(
                [
                    text_chunk("Let me look that up."),
                    tool_call_chunk(0, id="call_a", name="search_knowledge", arguments='{"query"'),
                    tool_call_chunk(1, id="call_b", name="call_agent", arguments='{"agent": '),
                    tool_call_chunk(0, arguments=': "fees"}'),
                    tool_call_chunk(1, arguments='"helper", "task": "summarize"}'),
                    finish_chunk("tool_calls"),
                ]
            )
        ]
    )
    assert turn.text == "Let me look that up."
    assert turn.tool_calls == [
        ToolCall(id="call_a", name="search_knowledge", arguments='{"query": "fees"}'),
        ToolCall(
            id="call_b", name="call_agent", arguments='{"agent": "helper", "task": "summarize"}'
        ),
    ]
    assert turn.done is False


def test_unclosed_tool_arguments_are_passed_through_raw(api_key):
    """No parsing, no repair: the engine's tool entry judges sealing."""
    turn, _ = run_turn(
        [
            stream(
                [
                    tool_call_chunk(0, id="call_cut", name="send_answer_part"),
                    tool_call_chunk(0, arguments='{"markdown": "## 结论\\n权益仓位升至'),
                    finish_chunk("tool_calls"),
                ]
            )
        ]
    )
    assert turn.tool_calls == [
        ToolCall(
            id="call_cut", name="send_answer_part", arguments='{"markdown": "## 结论\\n权益仓位升至'
        )
    ]
    assert turn.done is False


def test_a_length_cut_in_the_middle_of_a_tool_call_is_a_provider_error(api_key):
    """The token limit cut the call: it is not the model's request, so it is not passed on."""
    message = turn_error(
        [
            stream(
                [
                    tool_call_chunk(0, id="call_cut", name="send_answer_part"),
                    tool_call_chunk(0, arguments='{"markdown": "## 结论\\n权益仓位升至'),
                    finish_chunk("length"),
                ]
            )
        ]
    )
    assert "token limit (finish_reason length) in the middle of a tool call" in message
    assert "maxTokens" in message


def test_tool_calls_with_a_stop_finish_reason_still_mean_the_turn_is_not_done(api_key):
    """Several compatible servers say "stop" even when the turn carries tool calls."""
    turn, _ = run_turn(
        [
            stream(
                [
                    tool_call_chunk(
                        0, id="c1", name="search_knowledge", arguments='{"query": "x"}'
                    ),
                    finish_chunk("stop"),
                ]
            )
        ]
    )
    assert turn.done is False
    assert [c.id for c in turn.tool_calls] == ["c1"]


def test_a_tool_call_without_an_id_gets_a_generated_one(api_key):
    turn, _ = run_turn(
        [
            stream(
                [
                    tool_call_chunk(0, name="search_knowledge", arguments='{"query": "x"}'),
                    finish_chunk("tool_calls"),
                ]
            )
        ]
    )
    assert turn.tool_calls[0].id.startswith("call_")
    assert turn.tool_calls[0].arguments == '{"query": "x"}'


def test_tool_calls_finish_without_any_tool_call_is_a_provider_error(api_key):
    message = turn_error([stream([text_chunk("hm"), finish_chunk("tool_calls")])])
    assert "no tool call" in message


# -- non-streaming answers --------------------------------------------------------------------


def test_a_non_streaming_text_completion_is_accepted(api_key):
    turn, _ = run_turn(
        [
            completion(
                {"role": "assistant", "content": "Plain answer.", "reasoning_content": "hidden"}
            )
        ]
    )
    assert turn == Turn(text="Plain answer.", tool_calls=[], done=True)


def test_a_non_streaming_completion_with_tool_calls_is_accepted(api_key):
    message = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_x",
                "type": "function",
                "function": {"name": "search_knowledge", "arguments": '{"query": "fees"'},
            }
        ],
    }
    turn, _ = run_turn([completion(message, "tool_calls")])
    assert turn == Turn(
        text="",
        tool_calls=[ToolCall(id="call_x", name="search_knowledge", arguments='{"query": "fees"')],
        done=False,
    )


def test_a_json_completion_sent_with_a_generic_content_type_is_accepted(api_key):
    reply = completion({"role": "assistant", "content": "ok"})
    reply.content_type = "text/plain"
    turn, _ = run_turn([reply])
    assert turn.text == "ok"


# -- authentication ---------------------------------------------------------------------------


def test_authorization_header_carries_the_key_from_the_named_env_var(api_key):
    _, requests = run_turn([stream([text_chunk("ok"), finish_chunk("stop")])])
    assert requests[0].headers["authorization"] == f"Bearer {KEY}"


def test_the_key_is_read_when_the_turn_is_requested_not_when_the_provider_is_built(monkeypatch):
    monkeypatch.delenv(KEY_ENV, raising=False)
    with FakeOpenAI([stream([text_chunk("ok"), finish_chunk("stop")])]) as server:
        provider = OpenAIProvider(config_for(server))
        monkeypatch.setenv(KEY_ENV, "sk-rotated")
        provider.next_turn(FakeState())
    assert server.requests[0].headers["authorization"] == "Bearer sk-rotated"


def test_a_missing_env_var_is_a_provider_error_naming_it_and_sends_nothing(monkeypatch):
    monkeypatch.delenv(KEY_ENV, raising=False)
    with FakeOpenAI([]) as server, pytest.raises(ProviderError, match=KEY_ENV) as caught:
        OpenAIProvider(config_for(server)).next_turn(FakeState())
    assert "not set" in str(caught.value)
    assert server.requests == []


def test_an_empty_env_var_is_a_provider_error(monkeypatch):
    monkeypatch.setenv(KEY_ENV, "  ")
    with FakeOpenAI([]) as server, pytest.raises(ProviderError, match=f"{KEY_ENV}.*empty"):
        OpenAIProvider(config_for(server)).next_turn(FakeState())


def test_a_key_with_characters_illegal_in_a_header_is_refused_without_quoting_it(monkeypatch):
    monkeypatch.setenv(KEY_ENV, "sk-secret\nvalue")
    with FakeOpenAI([]) as server, pytest.raises(ProviderError) as caught:
        OpenAIProvider(config_for(server)).next_turn(FakeState())
    assert KEY_ENV in str(caught.value)
    assert "sk-secret" not in str(caught.value)


# -- failures ---------------------------------------------------------------------------------


def test_http_500_is_a_provider_error_with_the_status_but_not_the_body(api_key):
    body = b'{"error": {"message": "internal: db password hunter2 leaked"}}'
    message = turn_error([Reply(status=500, content_type="application/json", pieces=[body])])
    assert "HTTP 500" in message
    assert "hunter2" not in message


def test_http_401_names_the_env_var_but_never_the_key(api_key):
    message = turn_error([Reply(status=401, content_type="application/json", pieces=[b"{}"])])
    assert "HTTP 401" in message
    assert KEY_ENV in message
    assert KEY not in message


def test_a_redirect_is_not_followed(api_key):
    redirect = Reply(status=307, pieces=[b""], headers={"Location": "http://127.0.0.1:1/v1/x"})
    with FakeOpenAI([redirect]) as server, pytest.raises(ProviderError, match="HTTP 307"):
        OpenAIProvider(config_for(server)).next_turn(FakeState())
    assert len(server.requests) == 1


def test_a_500_is_not_retried(api_key):
    with (
        FakeOpenAI([Reply(status=500, pieces=[b""])] * 3) as server,
        pytest.raises(ProviderError, match="HTTP 500"),
    ):
        OpenAIProvider(config_for(server)).next_turn(FakeState())
    assert len(server.requests) == 1


def test_429_and_503_are_retried_a_bounded_number_of_times_after_retry_after(api_key):
    refused = [
        Reply(status=429, pieces=[b""], headers={"Retry-After": "0"}),
        Reply(status=503, pieces=[b""], headers={"Retry-After": "0"}),
        Reply(status=503, pieces=[b""], headers={"Retry-After": "0"}),
    ]
    with FakeOpenAI(refused) as server, pytest.raises(ProviderError, match="HTTP 503"):
        OpenAIProvider(config_for(server)).next_turn(FakeState())
    assert len(server.requests) == 3  # the first request and MAX_RETRIES (2) more

    answer = stream([text_chunk("Hallo"), finish_chunk("stop")])
    with FakeOpenAI([refused[0], answer]) as server:
        turn = OpenAIProvider(config_for(server)).next_turn(FakeState())
    assert (turn.text, len(server.requests)) == ("Hallo", 2)


def test_a_retry_after_past_the_deadline_is_not_waited_for(api_key):
    refused = Reply(status=429, pieces=[b""], headers={"Retry-After": "3600"})
    with FakeOpenAI([refused] * 3) as server, pytest.raises(ProviderError, match="HTTP 429"):
        OpenAIProvider(config_for(server, timeoutSeconds=5)).next_turn(FakeState())
    assert len(server.requests) == 1


def test_malformed_json_in_the_stream_is_a_provider_error(api_key):
    message = turn_error([stream([text_chunk("ok"), '{"choices": [{"delta": {"content": "x"'])])
    assert "malformed stream" in message


@pytest.mark.parametrize(
    "bad_chunk",
    [
        "[1, 2, 3]",
        {"id": "no choices here"},
        {"choices": [{"index": 0, "delta": {"content": 42}}]},
        {
            "choices": [
                {
                    "index": 0,
                    "delta": {
                        "tool_calls": [{"index": 0, "function": {"arguments": {"query": "x"}}}]
                    },
                }
            ]
        },
        {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": -1}]}}]},
    ],
    ids=["not-an-object", "no-choices", "content-not-text", "arguments-not-a-string", "bad-index"],
)
def test_chunks_that_break_the_protocol_are_provider_errors(api_key, bad_chunk):
    message = turn_error([stream([text_chunk("ok"), bad_chunk, finish_chunk("stop")])])
    assert "malformed stream" in message


def test_a_stream_cut_before_the_completion_finished_is_a_provider_error(api_key):
    message = turn_error(
        [stream([text_chunk("The answer is"), tool_call_chunk(0, id="c")], done=False)]
    )
    assert "ended before the completion finished" in message


def test_a_body_that_is_neither_sse_nor_json_is_a_provider_error(api_key):
    message = turn_error([Reply(content_type="text/html", pieces=[b"<html>gateway</html>"])])
    assert "malformed" in message


def test_an_error_object_in_the_stream_is_a_provider_error(api_key):
    error = {
        "error": {
            "message": "prompt mentions hunter2",
            "type": "server_error",
            "code": "overloaded",
        }
    }
    message = turn_error([stream([text_chunk("par"), error])])
    assert "overloaded" in message
    assert "hunter2" not in message


def test_a_content_filter_stop_is_a_provider_error(api_key):
    message = turn_error([stream([text_chunk("Half an"), finish_chunk("content_filter")])])
    assert "content_filter" in message


def test_a_malformed_non_streaming_body_is_a_provider_error(api_key):
    message = turn_error(
        [Reply(content_type="application/json", pieces=[b'{"choices": '], chunked=False)]
    )
    assert "malformed response" in message


def test_a_server_that_answers_too_late_times_out_as_a_provider_error(api_key):
    started = time.monotonic()
    message = turn_error(
        [stream([text_chunk("late"), finish_chunk("stop")], delay_before=5)], timeoutSeconds=0.3
    )
    assert "timed out after 0.3 s" in message
    assert time.monotonic() - started < 3


def test_a_stream_that_stalls_midway_times_out_as_a_provider_error(api_key):
    message = turn_error(
        [stream([text_chunk("a"), text_chunk("b"), finish_chunk("stop")], delay_between=5)],
        timeoutSeconds=0.3,
    )
    assert "timed out" in message


def test_a_stream_that_trickles_past_the_overall_deadline_is_a_provider_error(api_key):
    """Each read is quick, but the turn as a whole must not outlive timeoutSeconds for long."""
    chunks = [text_chunk(".") for _ in range(40)] + [finish_chunk("stop")]
    started = time.monotonic()
    message = turn_error([stream(chunks, delay_between=0.05)], timeoutSeconds=0.5)
    assert "did not complete within 0.5 s" in message
    assert time.monotonic() - started < 1.5


def test_a_response_over_the_size_bound_is_a_provider_error(api_key, monkeypatch):
    monkeypatch.setattr("agents.providers.chat_stream.MAX_RESPONSE_BYTES", 4096)
    chunks = [text_chunk("x" * 500) for _ in range(20)] + [finish_chunk("stop")]
    message = turn_error([stream(chunks)])
    assert "exceeded" in message


def test_connection_refused_is_a_provider_error(api_key):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    config = {
        "provider": "openai",
        "baseUrl": f"http://127.0.0.1:{port}/v1",
        "model": "m",
        "apiKeyEnv": KEY_ENV,
    }
    with pytest.raises(ProviderError, match="could not connect"):
        OpenAIProvider(config).next_turn(FakeState())


# -- configuration ----------------------------------------------------------------------------

VALID = {
    "provider": "openai",
    "baseUrl": "https://llm.example.com/v1",
    "model": "m",
    "apiKeyEnv": "OPENAI_API_KEY",
}


@pytest.mark.parametrize(
    "config",
    [
        VALID,
        {
            **VALID,
            "baseUrl": "http://127.0.0.1:8080/v1",
            "temperature": 0,
            "timeoutSeconds": 120,
            "maxTokens": 1,
        },
        {**VALID, "temperature": 1.5, "timeoutSeconds": 0.5},
        {**VALID, "systemPrompt": {"builtin": "sparktide-citations-1"}, "contextTokens": 1024},
        {**VALID, "systemPrompt": {"text": "x" * 20_000}, "contextTokens": 2_000_000},
    ],
)
def test_valid_configs_pass(config):
    validate_config(config)
    validate_model_config(config)


@pytest.mark.parametrize(
    ("change", "named"),
    [
        ({"baseUrl": None}, "baseUrl"),
        ({"model": None}, "model"),
        ({"apiKeyEnv": None}, "apiKeyEnv"),
        ({"baseUrl": "ftp://llm.example.com/v1"}, "baseUrl"),
        ({"baseUrl": "file:///etc/passwd"}, "baseUrl"),
        ({"baseUrl": "llm.example.com/v1"}, "baseUrl"),
        ({"baseUrl": "http://"}, "baseUrl"),
        ({"baseUrl": "http://user:pw@llm.example.com/v1"}, "baseUrl"),
        ({"baseUrl": "http://llm.example.com:99999/v1"}, "baseUrl"),
        ({"baseUrl": 8080}, "baseUrl"),
        ({"model": ""}, "model"),
        ({"model": ["gpt"]}, "model"),
        ({"apiKeyEnv": "sk-live-abcdef"}, "apiKeyEnv"),
        ({"apiKeyEnv": 3}, "apiKeyEnv"),
        ({"temperature": "hot"}, "temperature"),
        ({"temperature": True}, "temperature"),
        ({"temperature": 2.5}, "temperature"),
        ({"temperature": float("nan")}, "temperature"),
        ({"timeoutSeconds": 0}, "timeoutSeconds"),
        ({"timeoutSeconds": 121}, "timeoutSeconds"),
        ({"timeoutSeconds": "30"}, "timeoutSeconds"),
        ({"maxTokens": 1.5}, "maxTokens"),
        ({"maxTokens": 0}, "maxTokens"),
        ({"maxTokens": True}, "maxTokens"),
        ({"apiKey": "sk-live-abcdef"}, "apiKey"),
        ({"stream": False}, "stream"),
        ({"systemPrompt": "be brief"}, "systemPrompt"),
        ({"systemPrompt": {}}, "systemPrompt"),
        ({"systemPrompt": {"builtin": "x", "text": "y"}}, "systemPrompt"),
        ({"systemPrompt": {"builtin": "sparktide-citations-0"}}, "systemPrompt.builtin"),
        ({"systemPrompt": {"text": " "}}, "systemPrompt.text"),
        ({"systemPrompt": {"text": "x" * 20_001}}, "systemPrompt.text"),
        ({"contextTokens": 1023}, "contextTokens"),
        ({"contextTokens": 2_000_001}, "contextTokens"),
        ({"contextTokens": 4096.0}, "contextTokens"),
        ({"contextTokens": True}, "contextTokens"),
    ],
)
def test_invalid_configs_raise_value_error_naming_the_key(change, named):
    config = {**VALID, **change}
    config = {k: v for k, v in config.items() if v is not None}
    with pytest.raises(ValueError, match=rf"model\.{named}\b") as caught:
        validate_config(config)
    # A key pasted in the wrong place is never echoed back.
    assert "sk-live" not in str(caught.value)


def test_validate_model_config_dispatches_to_the_openai_rules():
    with pytest.raises(ValueError, match=r"model\.model is required"):
        validate_model_config({k: v for k, v in VALID.items() if k != "model"})


def test_building_a_provider_from_a_bad_config_is_a_provider_error():
    with pytest.raises(ProviderError, match=r"model\.baseUrl"):
        OpenAIProvider({**VALID, "baseUrl": "ftp://x"})


def test_get_provider_returns_the_openai_provider():
    assert isinstance(get_provider(VALID), OpenAIProvider)
