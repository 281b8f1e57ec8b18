"""The ``openai`` provider: any OpenAI-compatible chat-completions endpoint.

Config (an agent version's ``model``)::

    {"provider": "openai", "baseUrl": "http://127.0.0.1:8000/v1", "model": "name",
     "apiKeyEnv": "ENV_VAR_NAME", "temperature": 0.2, "timeoutSeconds": 60, "maxTokens": 1024}

``temperature``, ``timeoutSeconds`` (default 60, at most 120) and ``maxTokens`` are optional. The
key itself never appears in the config: it is read from the environment variable named by
``apiKeyEnv`` each time a turn is requested, and it is never logged or put in an error message.

One ``next_turn`` is one ``POST {baseUrl}/chat/completions`` with
``{"model", "messages", "tools": TOOL_SCHEMAS, "stream": true}`` (plus ``temperature`` and
``max_tokens`` when configured). No redirects; a 429/503 before any output is retried, bounded.
The answer may be a Server-Sent Events stream or, for servers that ignore ``stream``, one JSON completion; either becomes a ``Turn``:

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
mutates ``state``). They are sent after one system message built from ``state.instructions``, so
``state.messages`` must not contain a system message of its own:

- the task: ``{"role": "user", "content": "<task>"}``
- an assistant turn: ``{"role": "assistant", "content": "<text>" | None, "tool_calls": [{"id":
  "<ToolCall.id>", "type": "function", "function": {"name": "<ToolCall.name>", "arguments":
  "<ToolCall.arguments, raw>"}}]}`` (``tool_calls`` omitted when the turn had none)
- a tool result, one per call of that turn, in order: ``{"role": "tool", "tool_call_id":
  "<ToolCall.id>", "content": "<result text>"}``
"""

import codecs
import json
import math
import os
import re
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import httpx

from agents.providers.base import (
    TOOL_SCHEMAS,
    AgentState,
    ModelConfigError,
    ProviderError,
    ToolCall,
    Turn,
)

DEFAULT_TIMEOUT_SECONDS = 60.0
MAX_TIMEOUT_SECONDS = 120.0
# A bound on what one turn may read, so a runaway server cannot exhaust memory before the
# deadline. Far above any legitimate turn: the tool entry caps one call's arguments at 256 KiB.
MAX_RESPONSE_BYTES = 8 * 1024 * 1024
# A 429/503 answered before any output is asked again, at most this often and never past the
# turn's deadline; once the body is being read nothing is retried.
MAX_RETRIES = 2
RETRY_DEFAULT_SECONDS = 1.0
RETRY_MAX_SECONDS = 10.0

THINK_OPEN, THINK_CLOSE = "<think>", "</think>"

# The engine's callback for the turn's content as it arrives (runtime/streaming.py): each
# piece of ``delta.content``, and "" for any other chunk read (a tick).
TextSink = Callable[[str], None]

ALLOWED_KEYS = frozenset(
    {"provider", "baseUrl", "model", "apiKeyEnv", "temperature", "timeoutSeconds", "maxTokens"}
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

    def next_turn(self, state: AgentState) -> Turn:
        key = self._api_key()
        payload = self.request_body(state)
        headers = {
            "Authorization": f"Bearer {key}",
            "Accept": "text/event-stream, application/json",
        }
        on_text: TextSink = getattr(state, "on_text", None) or _no_sink
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
        messages = [{"role": "system", "content": state.instructions}, *history, *state.messages]
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
        chunks = _bounded(response.iter_bytes(), deadline, self.timeout)
        if content_type == "text/event-stream":
            return _turn_from_stream(_lines(chunks), on_text)
        # Some servers ignore "stream" and answer with one JSON completion; some send SSE with
        # a generic content type. Read it whole (bounded) and look at what it is.
        body = _decode(b"".join(chunks))
        if body.lstrip().startswith("{"):
            turn = _turn_from_completion(body)
            on_text(turn.text)
            return turn
        return _turn_from_stream(_lines([body.encode()]), on_text)


def _no_sink(piece: str) -> None:
    pass


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


def _bounded(chunks: Iterable[bytes], deadline: float, timeout: float) -> Iterator[bytes]:
    """The body's bytes, failing once the turn's deadline or size bound is passed.

    httpx's timeout bounds each read; a server trickling bytes could still hold a turn forever,
    hence the overall deadline (checked between reads, so a turn ends within ~2x the timeout).
    """
    total = 0
    for chunk in chunks:
        total += len(chunk)
        if total > MAX_RESPONSE_BYTES:
            raise ProviderError(
                f"openai provider: response exceeded {MAX_RESPONSE_BYTES // (1024 * 1024)} MiB"
            )
        if time.monotonic() > deadline:
            raise ProviderError(
                f"openai provider: the response did not complete within {timeout:g} s"
            )
        yield chunk


def _decode(data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ProviderError("openai provider: malformed response: not UTF-8") from None


def _lines(chunks: Iterable[bytes]) -> Iterator[str]:
    """Split a byte stream into SSE lines (terminated by CRLF, LF or CR)."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    buffer = ""
    try:
        for chunk in chunks:
            buffer += decoder.decode(chunk)
            while True:
                cut = min((i for i in (buffer.find("\n"), buffer.find("\r")) if i >= 0), default=-1)
                # A CR at the very end may be the first half of a CRLF: wait for more.
                if cut < 0 or (buffer[cut] == "\r" and cut == len(buffer) - 1):
                    break
                yield buffer[:cut]
                step = 2 if buffer.startswith("\r\n", cut) else 1
                buffer = buffer[cut + step :]
        buffer += decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        raise ProviderError("openai provider: malformed stream: not UTF-8") from None
    # What is left holds no line break but perhaps a final CR. (str.splitlines would also
    # split on U+2028 and friends, which JSON allows unescaped inside a string.)
    if buffer.removesuffix("\r"):
        yield buffer.removesuffix("\r")


def _events(lines: Iterable[str]) -> Iterator[str]:
    """The ``data`` of each Server-Sent Event (multi-line data joined with newlines)."""
    data: list[str] = []
    for line in lines:
        if line == "":
            if data:
                yield "\n".join(data)
                data = []
            continue
        if line.startswith(":"):  # comment / keep-alive
            continue
        name, _, value = line.partition(":")
        if name == "data":
            data.append(value[1:] if value.startswith(" ") else value)
        # event:, id:, retry: and unknown fields carry nothing for a completion.
    if data:
        yield "\n".join(data)


@dataclass
class _PendingCall:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


def _malformed(why: str) -> ProviderError:
    return ProviderError(f"openai provider: malformed stream: {why}")


def _stream_error(chunk: dict[str, Any]) -> ProviderError:
    error = chunk.get("error")
    label = ""
    if isinstance(error, dict):
        # Only the short machine-readable label: the free-text message may quote the request.
        for k in ("code", "type"):
            if isinstance(error.get(k), str) and len(error[k]) <= 64:
                label = f" ({error[k]})"
                break
    return ProviderError(f"openai provider: the endpoint reported an error{label}")


def _text_of(content: Any, where: str) -> str:
    """``content`` as text: a string, null, or a list of ``{"type": "text", "text": …}`` parts."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        pieces = []
        for part in content:
            if not isinstance(part, dict):
                raise _malformed(f"{where} content part is not an object")
            if part.get("type") == "text":
                if not isinstance(part.get("text"), str):
                    raise _malformed(f"{where} text part has no text")
                pieces.append(part["text"])
        return "".join(pieces)
    raise _malformed(f"{where} content is not text")


def _first_choice(chunk: dict[str, Any]) -> dict[str, Any] | None:
    choices = chunk.get("choices")
    if not isinstance(choices, list):
        raise _malformed("a chunk has no choices list")
    for choice in choices:
        if not isinstance(choice, dict):
            raise _malformed("a choice is not an object")
        if choice.get("index", 0) == 0:
            return choice
    return None  # e.g. a final usage chunk with "choices": []


class _VisibleContent:
    """The content a reader may see: a ``<think>…</think>`` block opening it is withheld.

    Qwen-style models think in the content itself when the server runs no reasoning parser
    (vLLM without ``--reasoning-parser``, llama.cpp with ``--reasoning-format none``). Only a
    block at the very start counts (after whitespace): that is where those models put it, and a
    ``<think>`` later in an answer is text the model wrote. Pieces are held while they could
    still be the opening tag, and inside the block until its closing tag, whose halves may
    arrive in different deltas.
    """

    def __init__(self) -> None:
        self.state = "start"  # "start" → "think" → "text", or "start" → "text"
        self.held = ""

    def feed(self, piece: str) -> str:
        if self.state == "text":
            return piece
        self.held += piece
        if self.state == "start":
            lead = self.held.lstrip()
            if not lead or THINK_OPEN.startswith(lead):
                return ""  # whitespace, or a prefix of the opening tag: wait
            if not lead.startswith(THINK_OPEN):
                self.state, visible, self.held = "text", self.held, ""
                return visible
            self.state, self.held = "think", lead[len(THINK_OPEN) :]
        end = self.held.find(THINK_CLOSE)
        if end < 0:
            # Only what could be the start of the closing tag is kept.
            self.held = self.held[-(len(THINK_CLOSE) - 1) :]
            return ""
        self.state, visible, self.held = "text", self.held[end + len(THINK_CLOSE) :], ""
        # The answer starts after the blank line the model puts after its thinking.
        return visible.lstrip()

    def finish(self, text: str) -> None:
        """Fail a turn that would publish or has shown reasoning: one ending inside its block,
        or content holding a closing tag that closes nothing (a template that opened the block
        in the prompt: configure the server's reasoning parser for such a model)."""
        if self.state == "think":
            raise ProviderError(
                "openai provider: the turn ended inside its <think> block: no answer was given"
            )
        if THINK_CLOSE in text:
            raise ProviderError(
                "openai provider: the content holds a </think> without its <think>: hidden "
                "reasoning reached the answer (enable the server's reasoning parser)"
            )


def visible_content(content: str) -> str:
    """A whole content's visible text (a non-streamed completion): as ``_VisibleContent``."""
    reader = _VisibleContent()
    text = reader.feed(content)
    text += reader.held if reader.state == "start" else ""
    reader.finish(text)
    return text


def _turn_from_stream(lines: Iterable[str], on_text: "TextSink" = _no_sink) -> Turn:
    text: list[str] = []
    visible = _VisibleContent()
    calls: dict[int, _PendingCall] = {}
    finish: str | None = None
    saw_done = False
    saw_chunk = False
    for data in _events(lines):
        if data.strip() == "[DONE]":
            saw_done = True
            break
        try:
            chunk = json.loads(data)
        except ValueError:
            raise _malformed("an event's data is not JSON") from None
        if not isinstance(chunk, dict):
            raise _malformed("an event's data is not a JSON object")
        if "error" in chunk and chunk["error"]:
            raise _stream_error(chunk)
        saw_chunk = True
        choice = _first_choice(chunk)
        if choice is None:
            continue
        delta = choice.get("delta") or {}
        if not isinstance(delta, dict):
            raise _malformed("delta is not an object")
        # Only "content" is the answer; reasoning_content and the like stay hidden, and
        # so do tool calls: the reader's stream is given the content and nothing else.
        piece = visible.feed(_text_of(delta.get("content"), "delta"))
        text.append(piece)
        on_text(piece)
        _merge_tool_call_deltas(calls, delta.get("tool_calls"))
        if choice.get("finish_reason") is not None:
            if not isinstance(choice["finish_reason"], str):
                raise _malformed("finish_reason is not a string")
            finish = choice["finish_reason"]
    if not saw_chunk:
        raise _malformed("no completion chunks")
    if finish is None and not saw_done:
        raise _malformed("the stream ended before the completion finished")
    if visible.state == "start":
        text.append(visible.held)  # whitespace, or a "<thi" that never became a tag
        on_text(visible.held)
    visible.finish("".join(text))
    tool_calls = [
        ToolCall(id=c.id or _call_id(), name=c.name, arguments="".join(c.arguments))
        for _, c in sorted(calls.items())
    ]
    return _turn("".join(text), tool_calls, finish)


def _merge_tool_call_deltas(calls: dict[int, _PendingCall], deltas: Any) -> None:
    if deltas is None:
        return
    if not isinstance(deltas, list):
        raise _malformed("delta.tool_calls is not a list")
    for d in deltas:
        if not isinstance(d, dict):
            raise _malformed("a tool call delta is not an object")
        index = d.get("index")
        if index is None:
            # Servers that omit the index send one call at a time: a new id starts a new call.
            last = max(calls, default=-1)
            new_id = d.get("id")
            starts_new = last < 0 or (new_id and calls[last].id and new_id != calls[last].id)
            index = last + 1 if starts_new else last
        if not isinstance(index, int) or isinstance(index, bool) or index < 0:
            raise _malformed("a tool call index is not a non-negative integer")
        call = calls.setdefault(index, _PendingCall())
        if d.get("id") is not None:
            if not isinstance(d["id"], str):
                raise _malformed("a tool call id is not a string")
            call.id = call.id or d["id"]
        function = d.get("function") or {}
        if not isinstance(function, dict):
            raise _malformed("a tool call function is not an object")
        name = function.get("name")
        if name is not None:
            if not isinstance(name, str):
                raise _malformed("a tool call name is not a string")
            # Sent once by OpenAI; some servers repeat it whole on every chunk.
            if name != call.name:
                call.name += name
        arguments = function.get("arguments")
        if arguments is not None:
            if not isinstance(arguments, str):
                raise _malformed("tool call arguments are not a string")
            call.arguments.append(arguments)


def _turn_from_completion(body: str) -> Turn:
    try:
        completion = json.loads(body)
    except ValueError:
        raise ProviderError("openai provider: malformed response: not JSON") from None
    if not isinstance(completion, dict):
        raise ProviderError("openai provider: malformed response: not a JSON object")
    if completion.get("error"):
        raise _stream_error(completion)
    choice = _first_choice(completion)
    if choice is None:
        raise ProviderError("openai provider: malformed response: no choice")
    message = choice.get("message")
    if not isinstance(message, dict):
        raise ProviderError("openai provider: malformed response: choice has no message")
    text = visible_content(_text_of(message.get("content"), "message"))
    raw_calls = message.get("tool_calls") or []
    if not isinstance(raw_calls, list):
        raise _malformed("message.tool_calls is not a list")
    tool_calls = []
    for raw in raw_calls:
        function = raw.get("function") if isinstance(raw, dict) else None
        if not isinstance(function, dict):
            raise _malformed("a tool call has no function")
        call_id, name, arguments = raw.get("id"), function.get("name"), function.get("arguments")
        if not isinstance(name, str) or not isinstance(arguments, str):
            raise _malformed("a tool call's name or arguments are not strings")
        if call_id is not None and not isinstance(call_id, str):
            raise _malformed("a tool call id is not a string")
        tool_calls.append(ToolCall(id=call_id or _call_id(), name=name, arguments=arguments))
    finish = choice.get("finish_reason")
    if finish is not None and not isinstance(finish, str):
        raise _malformed("finish_reason is not a string")
    return _turn(text, tool_calls, finish)


def _call_id() -> str:
    # Some local servers omit call ids; the engine needs one to pair the tool result.
    return f"call_{uuid.uuid4().hex[:24]}"


def _turn(text: str, tool_calls: list[ToolCall], finish: str | None) -> Turn:
    if finish == "content_filter":
        # A filtered answer is cut at an arbitrary point; publishing it as complete would lie.
        raise ProviderError("openai provider: the endpoint stopped the answer (content_filter)")
    if finish == "tool_calls" and not tool_calls:
        raise _malformed("finish_reason is tool_calls but no tool call was sent")
    if finish == "length" and tool_calls:
        # The token limit cut the turn inside a call: its arguments (and any call after it)
        # are not what the model asked for, and asking again hits the same limit.
        raise ProviderError(
            "openai provider: the answer reached the token limit (finish_reason length) in the "
            "middle of a tool call (raise model.maxTokens)"
        )
    # Calls win over the finish reason: several servers report "stop" even with tool calls.
    return Turn(text=text, tool_calls=tool_calls, done=not tool_calls)
