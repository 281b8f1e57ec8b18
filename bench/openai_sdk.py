"""Comparison: the hand-written ``openai`` provider against the official ``openai`` Python SDK.

    .venv/bin/python bench/openai_sdk.py --sdk-path DIR [--chunks 20000]

The SDK is not a dependency of SparkTide (docs/openai-provider.md, "Why not the openai SDK"):
install it somewhere of its own (``pip install --target DIR openai``) and name DIR: it is
searched after the venv, so both clients use the venv's httpx and pydantic. Against the tests' fake model server (tests/providers/fake_openai.py,
in a process of its own so its CPU is not counted) it prints:

  (1) CPU per chunk reading one long text stream (``--chunks`` content chunks): the provider's
      ``next_turn`` (SSE parsing, the reader callback, the turn) and the SDK's streaming
      iterator doing the same (content joined, tool-call deltas merged by index);
  (2) what each does with the model-server fixtures of tests/test_model_servers.py: the text
      it would stream and publish, the tool calls, or the error.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

KEY_ENV = "SPARKTIDE_BENCH_OPENAI_KEY"


def server_process(kind: str, count: int, conn) -> None:
    sys.path.insert(0, str(ROOT))
    from tests.providers import fake_openai as f

    if kind == "long":
        script = [
            f.stream([*(f.text_chunk("营收") for _ in range(count)), f.finish_chunk("stop")])
            for _ in range(4)
        ]
    else:
        script = fixtures()[kind] * 2
    with f.FakeOpenAI(script) as server:
        conn.send(server.base_url)
        conn.recv()


def fixtures() -> dict:
    from tests.providers import fake_openai as f

    search = ("call_s1", "search_knowledge", '{"query": "营收", "top_k": 3}')
    answer = ("call_a1", "send_answer_part", '{"markdown": "## 结论\\n营收增长"}')
    words = ["营收", "增长", " 12%", "。"]
    return {
        "vllm parallel tool calls": [f.vllm_tool_calls([search, answer])],
        "llama.cpp text + timings": [f.llamacpp_text(words)],
        "ollama whole calls, stop": [f.whole_tool_calls([search], finish="stop")],
        "ollama whole calls, no index": [
            f.whole_tool_calls([search, answer], finish="stop", index=False)
        ],
        "qwen reasoning_content": [f.reasoning_then_text("SECRET", words)],
        "qwen <think> in content": [f.think_in_content("SECRET", words)],
        "usage-only chunks": [
            f.stream([f.usage_chunk(), f.text_chunk("ok"), f.finish_chunk("stop"), f.usage_chunk()])
        ],
        "stalled first byte (timeout 0.5 s)": [f.llamacpp_text(words, delay_before=3)],
        "length inside a tool call": [f.cut_in_a_tool_call("先写", answer)],
    }


class Server:
    def __init__(self, kind: str, count: int = 0) -> None:
        import multiprocessing

        context = multiprocessing.get_context("spawn")
        self.conn, child = context.Pipe()
        self.proc = context.Process(target=server_process, args=(kind, count, child), daemon=True)
        self.proc.start()
        self.base_url = self.conn.recv()

    def close(self) -> None:
        self.conn.send("stop")
        self.proc.join(10)


# --- the two clients ---------------------------------------------------------------------


def provider_turn(base_url: str, timeout: float = 30.0):
    """(text shown, text, tool calls) from the provider; an error's message instead."""
    from agents.providers.base import ProviderError
    from agents.providers.openai import OpenAIProvider
    from tests.providers.test_openai import FakeState

    state = FakeState()
    shown: list[str] = []
    state.on_text = shown.append  # type: ignore[attr-defined]
    config = {
        "provider": "openai",
        "baseUrl": base_url,
        "model": "m",
        "apiKeyEnv": KEY_ENV,
        "timeoutSeconds": timeout,
    }
    try:
        turn = OpenAIProvider(config).next_turn(state)
    except ProviderError as error:
        return f"error: {error}"
    return "".join(shown), turn.text, [(c.name, c.arguments) for c in turn.tool_calls]


def sdk_turn(base_url: str, timeout: float = 30.0):
    """The SDK used the documented way: a streaming create, content joined, tool-call deltas
    merged by index (what its own stream helpers do), default retries."""
    import openai

    client = openai.OpenAI(base_url=base_url, api_key="sk-bench", timeout=timeout)
    text: list[str] = []
    calls: dict[int, list[str]] = {}
    try:
        stream = client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "?"}], stream=True
        )
        for chunk in stream:
            if not chunk.choices:
                continue
            delta = chunk.choices[0].delta
            if delta.content:
                text.append(delta.content)
            for call in delta.tool_calls or []:
                entry = calls.setdefault(call.index, ["", ""])
                if call.function and call.function.name:
                    entry[0] = call.function.name
                if call.function and call.function.arguments:
                    entry[1] += call.function.arguments
    except Exception as error:  # what the SDK raises is what is being compared
        return f"error: {type(error).__name__}: {str(error)[:80]}"
    joined = "".join(text)
    return joined, joined, [tuple(c) for _, c in sorted(calls.items())]


def cpu_per_chunk(read, base_url: str, chunks: int, rounds: int = 2) -> float:
    best = float("inf")
    for _ in range(rounds):
        started = time.process_time()
        read(base_url)
        best = min(best, time.process_time() - started)
    return best / chunks * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--chunks", type=int, default=20_000)
    parser.add_argument("--sdk-path", default="", help="a directory holding the openai package")
    args = parser.parse_args()
    if args.sdk_path:
        sys.path.append(args.sdk_path)
    try:
        import openai
    except ImportError:
        sys.exit("bench/openai_sdk.py compares against the openai SDK: name it with --sdk-path")
    os.environ[KEY_ENV] = "sk-bench"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "sparktide.settings")
    os.environ.setdefault("SECRET_KEY", "sparktide-bench-secret-key-not-for-production-0123456789")
    import django

    django.setup()
    import logging

    logging.getLogger("httpx").setLevel(logging.WARNING)
    print(f"openai SDK {openai.__version__}, {args.chunks} content chunks per stream")

    server = Server("long", args.chunks)
    try:
        ours = cpu_per_chunk(provider_turn, server.base_url, args.chunks)
        theirs = cpu_per_chunk(sdk_turn, server.base_url, args.chunks)
    finally:
        server.close()
    print(f"(1) CPU per chunk: provider {ours:5.1f} µs, SDK {theirs:5.1f} µs")

    print("(2) fixtures: provider | SDK")
    for kind in fixtures():
        timeout = 0.5 if kind.startswith("stalled") else 30.0
        server = Server(kind)
        try:
            started = time.monotonic()
            ours_result = provider_turn(server.base_url, timeout)
            ours_s = time.monotonic() - started
            started = time.monotonic()
            theirs_result = sdk_turn(server.base_url, timeout)
            theirs_s = time.monotonic() - started
        finally:
            server.close()
        print(f"  {kind}")
        print(f"    provider ({ours_s:4.1f} s): {ours_result}")
        print(f"    SDK      ({theirs_s:4.1f} s): {theirs_result}")


if __name__ == "__main__":
    main()
