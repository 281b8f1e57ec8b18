"""The ``openai`` provider: any OpenAI-compatible chat-completions endpoint.

Config (an agent version's ``model``)::

    {"provider": "openai", "baseUrl": "http://127.0.0.1:8000/v1", "model": "name",
     "apiKeyEnv": "ENV_VAR_NAME", "temperature": 0.2, "timeoutSeconds": 60, "maxTokens": 1024}

``temperature``, ``timeoutSeconds`` (default 60, at most 120), ``maxTokens``, ``systemPrompt`` and
``contextTokens`` (agents/prompting.py) are optional. The key itself never appears in the config:
it is read from the environment variable named by ``apiKeyEnv`` each time a turn is requested,
and it is never logged or put in an error message.

One ``next_turn`` is one ``POST {baseUrl}/chat/completions`` with
``{"model", "messages", "tools": TOOL_SCHEMAS, "stream": true}`` (plus ``temperature`` and
``max_tokens`` when configured). No redirects; a 429/503 before any output is retried, bounded.
The answer may be a Server-Sent Events stream or, for servers that ignore ``stream``, one JSON
completion; either becomes a ``Turn`` (the wire format is read in agents/providers/chat_stream.py):

- ``text`` is the concatenation of ``content`` only. Hidden reasoning (``reasoning_content``,
  ``reasoning``, …) is never part of it, and neither is a ``<think>…</think>`` block that opens
  the content (what Qwen-style models emit when the server runs no reasoning parser): it is
  withheld from the stream and the text; a turn that ends inside it, or whose content holds a
  ``</think>`` that closes no block, fails (``ProviderError``), so hidden reasoning is never
  published.
- ``tool_calls`` keep the model's raw ``arguments`` text exactly as streamed (fragments
  concatenated). It is never parsed or repaired: the engine's tool entry decides whether it is
  sealed. A turn cut at the token limit (``finish_reason: "length"``) while it carried tool calls
  fails instead: it was cut inside a call, and a cut call is not the model's request.
- ``done`` is True when the turn has no tool calls (``finish_reason`` ``stop`` or ``length``).

Transport failures, a non-2xx status, a malformed stream or body, an error object in the stream,
a ``content_filter`` stop, a timeout, or a response over ``MAX_RESPONSE_BYTES`` raise
``ProviderError`` with a message that names the cause (the status code, never the body).

The conversation's earlier turns (``state.history``, runtime/conversation.py) are sent between
the system message and ``state.messages`` as ``user`` (the earlier question) / ``assistant``
(its committed answer, markers removed) pairs, oldest first.

Messages the provider expects in ``state.messages`` (the engine appends them; this module never
mutates ``state``). They are sent after one system message: the version's system prompt, then
``state.instructions`` (agents/prompting.py), so ``state.messages`` must not contain a system
message of its own:

- the task: ``{"role": "user", "content": "<task>"}``
- an assistant turn: ``{"role": "assistant", "content": "<text>" | None, "tool_calls": [{"id":
  "<ToolCall.id>", "type": "function", "function": {"name": "<ToolCall.name>", "arguments":
  "<ToolCall.arguments, raw>"}}]}`` (``tool_calls`` omitted when the turn had none)
- a tool result, one per call of that turn, in order: ``{"role": "tool", "tool_call_id":
  "<ToolCall.id>", "content": "<result text>"}``
"""

import math
import os
import re
import time
from typing import Any
from urllib.parse import urlsplit

import httpx

from agents.prompting import system_message, validate_prompt_config
from agents.providers.base import (
    TOOL_SCHEMAS,
    AgentState,
    ModelConfigError,
    ProviderError,
    Turn,
)
from agents.providers.chat_stream import (
    TextSink,
    bounded_chunks,
    decode_body,
    no_sink,
    sse_lines,
    turn_from_completion,
    turn_from_stream,
)

DEFAULT_TIMEOUT_SECONDS = 60.0
MAX_TIMEOUT_SECONDS = 120.0
# A 429/503 answered before any output is asked again, at most this often and never past the
# turn's deadline; once the body is being read nothing is retried.
MAX_RETRIES = 2
RETRY_DEFAULT_SECONDS = 1.0
RETRY_MAX_SECONDS = 10.0

ALLOWED_KEYS = frozenset(
    {
        "provider",
        "baseUrl",
        "model",
        "apiKeyEnv",
        "temperature",
        "timeoutSeconds",
        "maxTokens",
        "systemPrompt",
        "contextTokens",
    }
)
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Visible ASCII only: anything else would be refused by the HTTP layer with an error that
# quotes the header value, i.e. the key.
_KEY_CHARS = re.compile(r"[\x21-\x7e]+")


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def validate_config(config: dict[str, Any]) -> None:
    """Raise ModelConfigError (a ValueError) naming the key that is wrong in an ``openai`` model config.

    Messages never echo ``apiKeyEnv`` or ``baseUrl`` values: a key pasted in the wrong place
    must not end up in an error shown to an admin or stored in a log.
    """
    if not isinstance(config, dict):
        raise ModelConfigError("", "must be a mapping")
    if "apiKey" in config:
        raise ModelConfigError(
            "apiKey",
            "is not allowed: put the key in an environment variable and name it in model.apiKeyEnv",
        )
    unknown = sorted(str(k) for k in config if k not in ALLOWED_KEYS)
    if unknown:
        raise ModelConfigError(unknown[0], "is not a setting of the openai provider")
    if config.get("provider") != "openai":
        raise ModelConfigError("provider", "must be 'openai'")

    for key in ("baseUrl", "model", "apiKeyEnv"):
        if key not in config:
            raise ModelConfigError(key, "is required")
        if not isinstance(config[key], str) or not config[key].strip():
            raise ModelConfigError(key, "must be a non-empty string")

    url = config["baseUrl"]
    try:
        parts = urlsplit(url)
        host = parts.hostname
        parts.port  # noqa: B018 - raises ValueError on a malformed port
    except ValueError:
        raise ModelConfigError("baseUrl", "is not a valid URL")
    if parts.scheme not in ("http", "https"):
        raise ModelConfigError("baseUrl", "must be an http:// or https:// URL")
    if not host:
        raise ModelConfigError("baseUrl", "must name a host")
    if parts.username is not None or parts.password is not None:
        raise ModelConfigError("baseUrl", "must not carry credentials; use model.apiKeyEnv")
    if parts.query or parts.fragment:
        raise ModelConfigError("baseUrl", "must not have a query or fragment")

    if not _ENV_NAME.fullmatch(config["apiKeyEnv"]):
        raise ModelConfigError(
            "apiKeyEnv", "must be the name of an environment variable, not the key"
        )

    if "temperature" in config:
        t = config["temperature"]
        if not _is_number(t) or not 0 <= t <= 2:
            raise ModelConfigError("temperature", "must be a number between 0 and 2")
    if "timeoutSeconds" in config:
        s = config["timeoutSeconds"]
        if not _is_number(s) or not 0 < s <= MAX_TIMEOUT_SECONDS:
            raise ModelConfigError(
                "timeoutSeconds",
                f"must be a number greater than 0 and at most {MAX_TIMEOUT_SECONDS:g}",
            )
    if "maxTokens" in config:
        m = config["maxTokens"]
        if not isinstance(m, int) or isinstance(m, bool) or m < 1:
            raise ModelConfigError("maxTokens", "must be a positive integer")
    validate_prompt_config(config)


class OpenAIProvider:
    """Drives one agent call against an OpenAI-compatible chat-completions endpoint."""

    def __init__(self, config: dict[str, Any]):
        try:
            validate_config(config)
        except ValueError as exc:
            # The engine turns ProviderError into a FAILED run with this message.
            raise ProviderError(f"invalid openai model config: {exc}") from None
        self.url = config["baseUrl"].rstrip("/") + "/chat/completions"
        self.model = config["model"]
        self.api_key_env = config["apiKeyEnv"]
        self.temperature = config.get("temperature")
        self.timeout = float(config.get("timeoutSeconds", DEFAULT_TIMEOUT_SECONDS))
        self.max_tokens = config.get("maxTokens")
        self.config = config

    def next_turn(self, state: AgentState) -> Turn:
        key = self._api_key()
        payload = self.request_body(state)
        headers = {
            "Authorization": f"Bearer {key}",
            "Accept": "text/event-stream, application/json",
        }
        on_text: TextSink = getattr(state, "on_text", None) or no_sink
        deadline = time.monotonic() + self.timeout
        try:
            with httpx.Client(timeout=self.timeout, follow_redirects=False) as client:
                for attempt in range(MAX_RETRIES + 1):
                    with client.stream("POST", self.url, json=payload, headers=headers) as response:
                        wait = _retry_after(response, attempt, deadline)
                        if wait is None:
                            self._check_status(response)
                            return self._read_turn(response, deadline, on_text)
                    # Only a refusal (429/503) before any output is retried: nothing of
                    # this turn has been read, let alone streamed to a reader.
                    time.sleep(wait)
                raise AssertionError("unreachable")  # the last attempt never waits
        except httpx.TimeoutException as exc:
            raise ProviderError(
                f"openai provider: request to {self.url} timed out after {self.timeout:g} s"
            ) from exc
        except httpx.ConnectError as exc:
            raise ProviderError(f"openai provider: could not connect to {self.url}: {exc}") from exc
        except httpx.HTTPError as exc:
            # Not chained and not quoted: some transport errors repeat header values.
            raise ProviderError(
                f"openai provider: request to {self.url} failed ({type(exc).__name__})"
            ) from None

    def request_body(self, state: AgentState) -> dict[str, Any]:
        # Earlier turns of the conversation come as chat history before this run's messages.
        history = []
        for turn in getattr(state, "history", None) or []:
            history.append({"role": "user", "content": turn["question"]})
            history.append({"role": "assistant", "content": turn["answer"] or "（无回答）"})
        system = system_message(self.config, state.instructions)
        messages = [{"role": "system", "content": system}, *history, *state.messages]
        body: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "tools": TOOL_SCHEMAS,
            "stream": True,
        }
        if self.temperature is not None:
            body["temperature"] = self.temperature
        if self.max_tokens is not None:
            body["max_tokens"] = self.max_tokens
        return body

    def _api_key(self) -> str:
        raw = os.environ.get(self.api_key_env)
        if raw is None:
            raise ProviderError(
                f"openai provider: environment variable {self.api_key_env} (model.apiKeyEnv) "
                "is not set"
            )
        key = raw.strip()
        if not key:
            raise ProviderError(
                f"openai provider: environment variable {self.api_key_env} (model.apiKeyEnv) "
                "is empty"
            )
        if not _KEY_CHARS.fullmatch(key):
            raise ProviderError(
                f"openai provider: environment variable {self.api_key_env} (model.apiKeyEnv) "
                "contains characters not allowed in an HTTP header"
            )
        return key

    def _check_status(self, response: httpx.Response) -> None:
        status = response.status_code
        if 200 <= status < 300:
            return
        # The body is not read: it may echo the request or carry details the run must not store.
        hint = ""
        if status in (401, 403):
            hint = f" (check the key in {self.api_key_env})"
        elif status == 404:
            hint = " (check model.baseUrl and model.model)"
        elif status == 429:
            hint = " (rate limited)"
        elif 300 <= status < 400:
            hint = " (redirects are not followed)"
        raise ProviderError(f"openai provider: {self.url} answered HTTP {status}{hint}")

    def _read_turn(self, response: httpx.Response, deadline: float, on_text: "TextSink") -> Turn:
        content_type = response.headers.get("content-type", "").split(";")[0].strip().lower()
        chunks = bounded_chunks(response.iter_bytes(), deadline, self.timeout)
        if content_type == "text/event-stream":
            return turn_from_stream(sse_lines(chunks), on_text)
        # Some servers ignore "stream" and answer with one JSON completion; some send SSE with
        # a generic content type. Read it whole (bounded) and look at what it is.
        body = decode_body(b"".join(chunks))
        if body.lstrip().startswith("{"):
            turn = turn_from_completion(body)
            on_text(turn.text)
            return turn
        return turn_from_stream(sse_lines([body.encode()]), on_text)


def _retry_after(response: httpx.Response, attempt: int, deadline: float) -> float | None:
    """Seconds to wait before asking again, or None to take this response as it is.

    A 429 or 503 is retried at most MAX_RETRIES times, after its ``Retry-After`` (seconds;
    a date or nothing means RETRY_DEFAULT_SECONDS), capped at RETRY_MAX_SECONDS and only if
    the wait ends before the turn's deadline.
    """
    if response.status_code not in (429, 503) or attempt >= MAX_RETRIES:
        return None
    raw = response.headers.get("retry-after", "").strip()
    wait = float(raw) if raw.isascii() and raw.isdigit() else RETRY_DEFAULT_SECONDS
    wait = min(wait, RETRY_MAX_SECONDS)
    if time.monotonic() + wait >= deadline:
        return None
    return wait


# -- reading the response ---------------------------------------------------------------------
