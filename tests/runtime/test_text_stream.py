"""The text stream under bad input: it stays clean and bounded, writes little, and is fenced.

``TurnStream`` is driven as the provider drives it (one callback per content piece) against a
real run in the database; the end-to-end cases run the engine against a real local model server.
"""

import json

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from publication.models import AnswerBlock
from publication.reader import RunReader
from publication.text import MAX_DISPLAY_CHARS, clean_text
from runs.models import AgentCall, AnswerStream, Run, RunEvent
from runs.streams import live_streams
from runtime import streaming
from runtime.engine import execute_run
from runtime.services import start_run
from runtime.streaming import TurnStream
from tests import factories
from tests.providers.fake_openai import FakeOpenAI, Reply, finish_chunk, stream, text_chunk

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def live_call(app, alice):
    run = factories.scripted_run(app, alice, [{"text": "x"}], execute=False)
    Run.objects.filter(pk=run.pk).update(status=Run.Status.RUNNING)
    run.refresh_from_db()
    call = AgentCall.objects.create(run=run, depth=0, agent_version=run.agent_version, task="q")
    return run, call


def row(call) -> AnswerStream:
    return AnswerStream.objects.get(agent_call=call)


def test_nul_lone_surrogates_and_split_pairs_are_cleaned_as_publication_cleans(live_call):
    run, call = live_call
    pieces = ["a\x00b", "\ud800", "c\r", "\nd\u202e", "\ud83d", "\ude00e", "\x7f[[cite:cite_x"]
    turn = TurnStream(run, call, step=1)
    for piece in pieces:
        turn.feed(piece)
    turn.flush()
    # The same cleaning as Publication's prepare step gives the turn's whole text (a CRLF
    # split across two deltas is one line break, as in one piece); lone surrogates — each half
    # of a pair escaped in its own chunk is one — become U+FFFD in both.
    whole = clean_text("".join(pieces))
    assert row(call).text == whole == "ab\ufffdc\nd\ufffd\ufffde[[cite:cite_x"
    assert row(call).length == len(whole)


def test_the_stream_never_exceeds_the_display_bound_and_writes_once_per_coalesced_delta(
    live_call, monkeypatch
):
    run, call = live_call
    monkeypatch.setattr(streaming, "COALESCE_SECONDS", 1e9)  # flush by size only: countable
    turn = TurnStream(run, call, step=1, batched=False)  # written here: countable
    with CaptureQueriesContext(connection) as queries:
        for _ in range(MAX_DISPLAY_CHARS + 10_000):
            turn.feed("字")
    stored = row(call)
    assert stored.length == len(stored.text) == MAX_DISPLAY_CHARS
    assert stored.truncated is True
    updates = [q for q in queries if 'UPDATE "runs_answerstream" SET' in q["sql"]]
    # The first character at once, then one UPDATE per 2,000 characters, none past the bound.
    assert len(updates) == MAX_DISPLAY_CHARS // streaming.COALESCE_CHARS
    assert len(queries) <= 10 + len(updates)  # + the first write of the turn


def test_nothing_is_written_once_the_run_has_ended(live_call):
    run, call = live_call
    turn = TurnStream(run, call, step=1, batched=False)  # each write in this thread
    turn.feed("开头")
    Run.objects.filter(pk=run.pk).update(status=Run.Status.FAILED)
    turn.flush()
    turn.pending.append("之后")
    turn.flush()
    assert turn.stopped
    assert row(call).text == "开头"
    turn.close("failed")
    # A run that ended gets no close event either: its terminal event ends every stream.
    assert not RunEvent.objects.filter(run=run, type="answer.stream").exists()


def _openai_run(app, alice, knowledge, server, monkeypatch) -> Run:
    monkeypatch.setenv("SPARKTIDE_TEST_OPENAI_KEY", "sk-test")
    factories.make_agent(
        app.tenant, "llm", model=server.model(), knowledge=[knowledge], pin_to=[app]
    )
    return start_run(user=alice, app=app, agent_key="llm", input="营收如何？")


def _stream_events(run) -> list[dict]:
    return list(
        RunEvent.objects.filter(run=run, type="answer.stream")
        .order_by("seq")
        .values_list("data", flat=True)
    )


def test_a_model_that_streams_8_mib_one_character_a_chunk_ends_clearly_and_keeps_the_commit(
    app, alice, knowledge, monkeypatch
):
    event = b'data: {"choices":[{"index":0,"delta":{"content":"a"}}]}\n\n'
    per_piece = 2000
    pieces = [event * per_piece] * ((9 * 1024 * 1024) // (len(event) * per_piece))
    first = stream([text_chunk("已保存的第一段"), finish_chunk("stop")])
    # The first turn is committed; the model is then asked again (a tool call) and runs away.
    first = stream(
        [
            text_chunk("已保存的第一段"),
            {
                "choices": [
                    {
                        "index": 0,
                        "delta": {
                            "tool_calls": [
                                {
                                    "index": 0,
                                    "id": "c1",
                                    "type": "function",
                                    "function": {
                                        "name": "search_knowledge",
                                        "arguments": '{"query": "q"}',
                                    },
                                }
                            ]
                        },
                        "finish_reason": "tool_calls",
                    }
                ]
            },
        ]
    )
    with FakeOpenAI([first, Reply(pieces=pieces)]) as server:
        run = _openai_run(app, alice, knowledge, server, monkeypatch)
        execute_run(run.pk)
    run.refresh_from_db()
    assert (run.status, run.reason) == ("PARTIAL", "PROVIDER_FAILED")
    assert "8 MiB" in run.reason_detail
    # Nothing committed is lost; the runaway turn's stream was bounded, then closed (its row
    # keeps the bounded text up to the close offset, and is no longer live).
    assert [v.content["text"] for v in RunReader(run).blocks()] == ["已保存的第一段"]
    assert AnswerBlock.objects.filter(run=run).count() == 1
    closes = _stream_events(run)
    assert [(c["step"], c["reason"]) for c in closes] == [(1, "committed"), (2, "failed")]
    assert closes[1]["offset"] == MAX_DISPLAY_CHARS
    closed = AnswerStream.objects.get(run=run)
    assert (closed.state, closed.length, len(closed.text)) == (
        "CLOSED",
        MAX_DISPLAY_CHARS,
        MAX_DISPLAY_CHARS,
    )
    assert live_streams(run.pk) == []


def test_a_stream_cut_mid_utf8_fails_the_run_and_closes_the_stream(
    app, alice, knowledge, monkeypatch
):
    body = 'data: {"choices":[{"index":0,"delta":{"content":"半句"}}]}\n\ndata: {"choices":[{"index":0,"delta":{"content":"'
    cut = Reply(pieces=[body.encode(), "话".encode()[:2]])
    with FakeOpenAI([cut]) as server:
        run = _openai_run(app, alice, knowledge, server, monkeypatch)
        execute_run(run.pk)
    run.refresh_from_db()
    assert (run.status, run.reason) == ("FAILED", "PROVIDER_FAILED")
    assert [(c["offset"], c["reason"]) for c in _stream_events(run)] == [(2, "failed")]
    assert not AnswerBlock.objects.filter(run=run).exists()


def test_text_interleaved_with_tool_call_deltas_streams_only_the_text(
    app, alice, knowledge, monkeypatch
):
    sent: list[dict] = []
    from runs import streams

    monkeypatch.setattr(streams, "_senders", [lambda run_id, data: sent.append(data)])
    mixed = stream(
        [
            text_chunk("查"),
            {
                "choices": [
                    {
                        "index": 0,
                        "delta": {
                            "content": "询",
                            "reasoning_content": "HIDDEN",
                            "tool_calls": [
                                {
                                    "index": 0,
                                    "id": "c1",
                                    "function": {"name": "search_knowledge", "arguments": '{"qu'},
                                }
                            ],
                        },
                    }
                ]
            },
            {
                "choices": [
                    {
                        "index": 0,
                        "delta": {
                            "tool_calls": [{"index": 0, "function": {"arguments": 'ery": "ARGS"}'}}]
                        },
                    }
                ]
            },
            finish_chunk("tool_calls"),
        ]
    )
    final = stream([text_chunk("完毕"), finish_chunk("stop")])
    with FakeOpenAI([mixed, final]) as server:
        run = _openai_run(app, alice, knowledge, server, monkeypatch)
        execute_run(run.pk)
    wire = json.dumps(sent, ensure_ascii=False)
    assert "".join(d["delta"] for d in sent) == "查询完毕"
    for hidden in ("HIDDEN", "ARGS", "search_knowledge", "tool_calls"):
        assert hidden not in wire


def test_a_socket_reads_only_what_it_has_not_sent_and_the_rest_up_to_the_close(
    live_call, alice, django_assert_num_queries
):
    """The socket's two reads of the row, each through the history gate: the live text after
    what it sent, and after the close the rest of that turn up to the close offset — never
    another turn's text, never past the close."""
    from delivery import fanout
    from runs.streams import close_stream, extend_stream

    run, call = live_call
    assert extend_stream(run, call, 1, offset=0, delta="北辰医药")
    assert extend_stream(run, call, 1, offset=4, delta="营收增长")
    stream = f"stm_{call.pk}_1"
    with django_assert_num_queries(2):  # the gate (run, owner, permission), the row
        [rest] = fanout.stream_text(run, sent={stream: 4})
    assert (rest["streamId"], rest["offset"], rest["delta"]) == (stream, 4, "营收增长")
    with django_assert_num_queries(2):
        assert fanout.stream_text(run, sent={stream: 8}) == []  # nothing new: nothing sent

    close_stream(run, call, 1, length=8, reason="committed")
    assert fanout.stream_text(run, sent={}) == []  # closed: never live again
    close = {"agentCallId": f"call_{call.pk}", "streamId": stream, "step": 1, "offset": 8}
    with django_assert_num_queries(2):
        end = fanout.stream_rest_at_close(run, close, start=2)
    assert end is not None and (end["offset"], end["delta"]) == (2, "医药营收增长")
    assert fanout.stream_rest_at_close(run, close, start=8) is None

    # The call's next turn starts the row again: the old turn's text is gone, not mixed in.
    assert extend_stream(run, call, 3, offset=0, delta="下一轮的话很长很长")
    assert fanout.stream_rest_at_close(run, close, start=2) is None


def test_a_socket_whose_owner_lost_access_reads_no_stream_text(live_call, alice):
    from delivery import fanout
    from foundation.errors import SparkTideError
    from runs.streams import extend_stream

    run, call = live_call
    assert extend_stream(run, call, 1, offset=0, delta="不该看到")
    run.app.memberships.filter(user=alice).delete()
    with pytest.raises(SparkTideError):
        fanout.stream_text(run, sent={})
