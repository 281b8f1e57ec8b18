"""A real HTTP server on 127.0.0.1 that speaks the chat-completions protocol from a script.

Each request takes the next ``Reply`` of the script (a request beyond the script gets a 500) and
is recorded as a ``Recorded`` (method, path, headers, parsed JSON body). Streams are sent with
chunked transfer encoding, one write per piece, with optional pauses, the way real servers do.

    with FakeOpenAI([stream([text_chunk("Hi"), finish_chunk("stop")])]) as server:
        provider = OpenAIProvider({..., "baseUrl": server.base_url})
"""

import contextlib
import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Reply:
    status: int = 200
    content_type: str = "text/event-stream"
    # Sent one by one; a stream with pieces uses chunked encoding, a single body uses Content-Length.
    pieces: list[bytes] = field(default_factory=list)
    chunked: bool = True
    delay_before: float = 0.0  # before the status line
    delay_between: float = 0.0  # between pieces
    headers: dict[str, str] = field(default_factory=dict)
    # Held before the status line until set (a bench opens it when its clients are ready).
    gate: threading.Event | None = None
    # time.monotonic() after each piece was written and flushed (filled as it is sent).
    written_at: list[float] = field(default_factory=list)


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: dict


def sse_event(data: dict | str) -> bytes:
    text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
    return f"data: {text}\n\n".encode()


def chunk(delta: dict, finish_reason: str | None = None) -> dict:
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion.chunk",
        "model": "fake-model",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
    }


def text_chunk(text: str) -> dict:
    return chunk({"content": text})


def finish_chunk(reason: str) -> dict:
    return chunk({}, reason)


def tool_call_chunk(
    index: int, *, id: str | None = None, name: str | None = None, arguments: str | None = None
) -> dict:
    function: dict = {}
    if name is not None:
        function["name"] = name
    if arguments is not None:
        function["arguments"] = arguments
    call: dict = {"index": index, "function": function}
    if id is not None:
        call.update(id=id, type="function")
    return chunk({"tool_calls": [call]})


def stream(chunks: list[dict | str], *, done: bool = True, **reply) -> Reply:
    """A Server-Sent Events reply, one event per chunk, then ``data: [DONE]``."""
    pieces = [sse_event(c) for c in chunks]
    if done:
        pieces.append(b"data: [DONE]\n\n")
    return Reply(pieces=pieces, **reply)


def completion(message: dict, finish_reason: str = "stop", **reply) -> Reply:
    """A non-streaming chat completion (a server that ignores ``stream``)."""
    body = {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "model": "fake-model",
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
    }
    return Reply(
        content_type="application/json", pieces=[json.dumps(body).encode()], chunked=False, **reply
    )


class FakeOpenAI:
    def __init__(self, script: list[Reply]):
        self.script = list(script)
        self.requests: list[Recorded] = []
        self._lock = threading.Lock()
        # Set on exit so a handler pausing on purpose (timeout tests) lets the server stop.
        self._stopping = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self._server.block_on_close = False
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,))
        self._thread.daemon = True

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def model(self, **extra) -> dict:
        """An agent version's ``openai`` model config for this server (the key is read from
        ``SPARKTIDE_TEST_OPENAI_KEY``), with ``extra`` settings."""
        return {
            "provider": "openai",
            "baseUrl": self.base_url,
            "model": "m",
            "apiKeyEnv": "SPARKTIDE_TEST_OPENAI_KEY",
            **extra,
        }

    def __enter__(self) -> "FakeOpenAI":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stopping.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def _next(self, recorded: Recorded) -> Reply:
        with self._lock:
            self.requests.append(recorded)
            if self.script:
                return self.script.pop(0)
        return Reply(status=500, content_type="text/plain", pieces=[b"no scripted reply left"])

    def _handler_class(self):
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format, *args):  # keep test output quiet
                pass

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = {"_unparsed": raw.decode(errors="replace")}
                reply = fake._next(
                    Recorded(
                        "POST", self.path, {k.lower(): v for k, v in self.headers.items()}, body
                    )
                )
                # The client may give up first (timeout tests).
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self._send(reply)

            def _send(self, reply: Reply):
                if reply.delay_before and fake._stopping.wait(reply.delay_before):
                    return
                while reply.gate is not None and not reply.gate.wait(0.05):
                    if fake._stopping.is_set():
                        return
                self.send_response(reply.status)
                self.send_header("Content-Type", reply.content_type)
                self.send_header("Connection", "close")
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                if not reply.chunked:
                    payload = b"".join(reply.pieces)
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                    return
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                for i, piece in enumerate(reply.pieces):
                    if i and reply.delay_between and fake._stopping.wait(reply.delay_between):
                        return
                    self.wfile.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
                    self.wfile.flush()
                    reply.written_at.append(time.monotonic())
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()

        return Handler


# -- model servers as they behave ---------------------------------------------------------
#
# Each builder returns the ``Reply`` a real server sends for one turn, in that server's own
# shape (checked against their server code). ``calls`` are ``(id, name, arguments)``.

Call = tuple[str, str, str]


def _split(text: str, parts: int) -> list[str]:
    size = max(1, -(-len(text) // parts))
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def usage_chunk() -> dict:
    """What vLLM, llama.cpp and OpenAI send last under ``stream_options.include_usage``."""
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion.chunk",
        "choices": [],
        "usage": {"prompt_tokens": 120, "completion_tokens": 17, "total_tokens": 137},
    }


def vllm_tool_calls(calls: list[Call], *, fragments: int = 6, **reply) -> Reply:
    """vLLM's tool parsers: a first delta per call with its index, id, type and name (no
    arguments), then the arguments in many small deltas; parallel calls by index, one after
    the other; ``finish_reason: "tool_calls"`` on an empty delta; a usage chunk."""
    chunks: list[dict | str] = [chunk({"role": "assistant", "content": ""})]
    for index, (call_id, name, arguments) in enumerate(calls):
        chunks.append(
            chunk(
                {
                    "tool_calls": [
                        {
                            "index": index,
                            "id": call_id,
                            "type": "function",
                            "function": {"name": name},
                        }
                    ]
                }
            )
        )
        for piece in _split(arguments, fragments):
            chunks.append(tool_call_chunk(index, arguments=piece))
    chunks += [finish_chunk("tool_calls"), usage_chunk()]
    return stream(chunks, **reply)


def llamacpp_text(words: list[str], **reply) -> Reply:
    """llama.cpp's server: a first delta ``{"role": "assistant", "content": null}``, the
    words, then a final chunk carrying ``finish_reason``, ``usage`` and ``timings``."""
    final = finish_chunk("stop")
    final["usage"] = {"completion_tokens": len(words), "prompt_tokens": 90, "total_tokens": 99}
    final["timings"] = {
        "prompt_n": 90,
        "prompt_ms": 20.1,
        "predicted_n": len(words),
        "predicted_ms": 180.5,
        "predicted_per_second": 55.4,
    }
    chunks = [chunk({"role": "assistant", "content": None})]
    chunks += [text_chunk(w) for w in words]
    return stream([*chunks, final], **reply)


def whole_tool_calls(calls: list[Call], *, finish: str, index: bool = True, **reply) -> Reply:
    """Each call whole in one delta (llama.cpp for some templates; Ollama's ``/v1`` always,
    which also ends with ``finish_reason: "stop"``; older Ollama sent no ``index``)."""
    deltas = []
    for i, (call_id, name, arguments) in enumerate(calls):
        call = {
            "id": call_id,
            "type": "function",
            "function": {"name": name, "arguments": arguments},
        }
        if index:
            call["index"] = i
        deltas.append(chunk({"role": "assistant", "content": "", "tool_calls": [call]}))
    return stream([*deltas, finish_chunk(finish)], **reply)


def reasoning_then_text(
    reasoning: str, words: list[str], *, field: str = "reasoning_content", **reply
) -> Reply:
    """A thinking model behind a server with a reasoning parser (vLLM ``--reasoning-parser
    qwen3``, llama.cpp ``--reasoning-format deepseek``): the thinking in ``field``, then content."""
    chunks = [chunk({"role": "assistant", "content": ""})]
    chunks += [chunk({field: piece}) for piece in _split(reasoning, 4)]
    chunks += [text_chunk(w) for w in words]
    return stream([*chunks, finish_chunk("stop"), usage_chunk()], **reply)


def think_in_content(reasoning: str, words: list[str], *, closed: bool = True, **reply) -> Reply:
    """Qwen without a reasoning parser: ``<think>…</think>`` in the content itself, the tags
    split across deltas the way a tokenizer splits them."""
    pieces = ["<th", "ink>\n", *_split(reasoning, 4)]
    if closed:
        pieces += ["\n</th", "ink>\n\n", *words]
    chunks = [text_chunk(p) for p in pieces]
    return stream([*chunks, finish_chunk("stop" if closed else "length")], **reply)


def cut_in_a_tool_call(text: str, call: Call, **reply) -> Reply:
    """``finish_reason: "length"`` while a call's arguments are still open."""
    call_id, name, arguments = call
    chunks = [
        text_chunk(text),
        tool_call_chunk(0, id=call_id, name=name, arguments=""),
        *(tool_call_chunk(0, arguments=piece) for piece in _split(arguments, 3)),
        finish_chunk("length"),
    ]
    return stream(chunks, **reply)
