"""The OpenAI chat-completions wire format, read: a Server-Sent Events stream (or one JSON
completion, for servers that ignore ``stream``) turned into a ``Turn`` — the visible text
(hidden reasoning and an opening ``<think>`` block withheld), the tool calls with their raw
arguments as streamed, and whether the turn is done. How each server family streams is
pinned by tests/providers (docs/openai-provider.md). No I/O: the provider
(agents/providers/openai.py) hands it the response's bytes.
"""

import codecs
import json
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from agents.providers.base import (
    ProviderError,
    ToolCall,
    Turn,
)

# A bound on what one turn may read, so a runaway server cannot exhaust memory before the
# deadline. Far above any legitimate turn: the tool entry caps one call's arguments at 256 KiB.
MAX_RESPONSE_BYTES = 8 * 1024 * 1024

# The engine's callback for the turn's content as it arrives (runtime/streaming.py): each
# piece of ``delta.content``, and "" for any other chunk read (a tick).
TextSink = Callable[[str], None]

THINK_OPEN, THINK_CLOSE = "<think>", "</think>"


def no_sink(piece: str) -> None:
    pass


def bounded_chunks(chunks: Iterable[bytes], deadline: float, timeout: float) -> Iterator[bytes]:
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


def decode_body(data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ProviderError("openai provider: malformed response: not UTF-8") from None


def sse_lines(chunks: Iterable[bytes]) -> Iterator[str]:
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


def turn_from_stream(lines: Iterable[str], on_text: TextSink = no_sink) -> Turn:
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


def turn_from_completion(body: str) -> Turn:
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
