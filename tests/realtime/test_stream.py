"""The text stream of a live model turn, as a WebSocket client and a REST client get it.

A real local model server (tests/providers/fake_openai.py) streams a turn slowly; the run
executes in a worker thread while a socket watches. What the client is sent proves: text
before the answer is published, the deltas join to the published text, no hidden reasoning
and no tool call ever reaches it, the stream is closed in the log, a reconnect mid-turn gets
a snapshot then only what is new, and a replay after the turn shows no stream.
"""

import asyncio
import json

import pytest
from channels.db import database_sync_to_async

from runs.models import AnswerStream, Run, RunEvent
from runtime.services import start_run
from tests import factories
from tests.providers.fake_openai import (
    FakeOpenAI,
    chunk,
    finish_chunk,
    stream,
    text_chunk,
    tool_call_chunk,
)
from tests.realtime.helpers import open_and_read, read_until_close, socket, ticket_for

pytestmark = pytest.mark.django_db(transaction=True)

SECRET_REASONING = "SECRET-REASONING-过程"
SECRET_ARGUMENTS = "SECRET-ARGS-查询"
WORDS = ["营收", "增长", "了", " 12%", "，", "结论", "如下", "：", "稳健", "。"]


def _model(server) -> dict:
    return server.model()


@pytest.fixture
def openai_key(monkeypatch):
    monkeypatch.setenv("SPARKTIDE_TEST_OPENAI_KEY", "sk-test")


def start(app, alice, knowledge, server) -> Run:
    factories.make_agent(
        app.tenant, "llm", model=_model(server), knowledge=[knowledge], pin_to=[app]
    )
    return start_run(user=alice, app=app, agent_key="llm", input="营收如何？")


def execute_in_background(run_id: str) -> asyncio.Task:
    from runtime.engine import execute_run

    return asyncio.create_task(database_sync_to_async(execute_run, thread_sensitive=False)(run_id))


def slow_turn(words=WORDS, *, delay=0.06) -> list:
    """A turn that thinks (hidden), then says ``words`` one chunk each."""
    chunks = [chunk({"reasoning_content": SECRET_REASONING}), chunk({"role": "assistant"})]
    chunks += [text_chunk(w) for w in words]
    return [stream([*chunks, finish_chunk("stop")], delay_between=delay)]


def tool_then_text() -> list:
    """A turn whose text is interleaved with a tool call's name and arguments, then the answer."""
    first = [
        text_chunk("先查一下"),
        tool_call_chunk(0, id="call_a", name="search_knowledge", arguments='{"query": "'),
        chunk({"reasoning": SECRET_REASONING}),
        tool_call_chunk(0, arguments=SECRET_ARGUMENTS),
        text_chunk("资料"),
        tool_call_chunk(0, arguments='"}'),
        finish_chunk("tool_calls"),
    ]
    return [stream(first, delay_between=0.03), *slow_turn(delay=0.03)]


def texts(frames: list[dict]) -> dict[str, str]:
    """Each stream's text as a client rebuilds it: text[:offset] + delta."""
    built: dict[str, str] = {}
    for f in frames:
        if f["kind"] == "stream":
            d = f["data"]
            have = built.get(d["streamId"], "")
            assert d["offset"] <= len(have), "a gap"
            built[d["streamId"]] = have[: d["offset"]] + d["delta"]
    return built


async def test_streamed_text_reaches_the_socket_before_publication_and_nothing_hidden_does(
    app, alice, knowledge, openai_key
):
    with FakeOpenAI(tool_then_text()) as server:
        run = await database_sync_to_async(start)(app, alice, knowledge, server)
        comm = socket(run, after=0, ticket=await ticket_for(run, alice))
        assert (await comm.connect(timeout=5))[0]
        worker = execute_in_background(run.pk)
        try:
            frames, code = await read_until_close(comm, timeout=20)
        finally:
            await comm.disconnect()
            await asyncio.wait_for(worker, 30)
    assert code == 1000
    kinds = [(f["kind"], f.get("type")) for f in frames]
    first_stream = kinds.index(("stream", "answer.stream"))
    published = kinds.index(("event", "answer.published"))
    assert first_stream < published, kinds

    # Every streamed turn's deltas join to exactly the turn's text; the last is the answer.
    built = texts(frames)
    assert sorted(built.values()) == sorted(["先查一下资料", "".join(WORDS)])
    published_texts = [
        f["data"]["content"]["text"] for f in frames if f.get("type") == "answer.published"
    ]
    assert published_texts == ["先查一下资料", "".join(WORDS)]

    # Nothing hidden reached the client: not the reasoning, not a tool's name or arguments.
    wire = json.dumps(frames, ensure_ascii=False)
    for secret in (SECRET_REASONING, SECRET_ARGUMENTS, "search_knowledge", "tool_calls"):
        assert secret not in wire

    # Each streamed turn is closed in the log after its text went through Publication,
    # and a stream frame never follows its stream's close.
    closes = [f for f in frames if f.get("type") == "answer.stream" and f["kind"] == "event"]
    assert {c["data"]["streamId"] for c in closes} == set(built)
    assert {c["data"]["reason"] for c in closes} <= {"committed", "previewed"}
    for close in closes:
        after = frames[frames.index(close) + 1 :]
        assert not any(
            f["kind"] == "stream" and f["data"]["streamId"] == close["data"]["streamId"]
            for f in after
        )
    # The row is closed; it keeps the last turn's text (what a socket behind at the close
    # still sends up to the close offset), never shown as live again.
    assert await database_sync_to_async(
        lambda: list(AnswerStream.objects.filter(run=run).values_list("state", "text"))
    )() == [("CLOSED", "".join(WORDS))]


async def test_a_reconnect_mid_turn_gets_a_snapshot_then_only_new_text(
    app, alice, knowledge, openai_key
):
    with FakeOpenAI(slow_turn(delay=0.15)) as server:
        run = await database_sync_to_async(start)(app, alice, knowledge, server)
        first = socket(run, after=0, ticket=await ticket_for(run, alice))
        assert (await first.connect(timeout=5))[0]
        worker = execute_in_background(run.pk)
        try:
            seen: list[dict] = []
            while sum(1 for f in seen if f["kind"] == "stream") < 3:
                seen.append(await first.receive_json_from(10))
            await first.disconnect()
            cursor = max(f["seq"] for f in seen if f["kind"] == "event")
            second = socket(run, after=cursor, ticket=await ticket_for(run, alice))
            rest, code = await open_and_read(second, timeout=20)
        finally:
            await asyncio.wait_for(worker, 30)
    assert code == 1000
    stream_frames = [f for f in rest if f["kind"] == "stream"]
    snapshot = stream_frames[0]["data"]
    assert snapshot["snapshot"] is True and snapshot["offset"] == 0
    assert len(snapshot["delta"]) >= len(texts(seen)[snapshot["streamId"]])
    # After the snapshot: consecutive offsets, no byte twice, the whole text.
    offset = 0
    for f in stream_frames:
        assert f["data"]["offset"] == offset
        offset += len(f["data"]["delta"])
    assert texts(rest) == {snapshot["streamId"]: "".join(WORDS)}


async def test_a_replay_after_the_turn_shows_the_published_blocks_not_the_stream(
    app, alice, knowledge, openai_key
):
    with FakeOpenAI(slow_turn(delay=0.01)) as server:
        run = await database_sync_to_async(start)(app, alice, knowledge, server)
        from runtime.engine import execute_run

        await database_sync_to_async(execute_run, thread_sensitive=False)(run.pk)
    frames, code = await open_and_read(socket(run, after=0, ticket=await ticket_for(run, alice)))
    assert code == 1000
    assert not [f for f in frames if f["kind"] == "stream"]
    types = [f["type"] for f in frames]
    assert types.count("answer.stream") == 1  # the one close event of the streamed turn
    assert types.index("answer.published") < types.index("answer.stream")
    # The log holds one stream event per streamed turn: the deltas are not events.
    assert (
        await database_sync_to_async(
            lambda: RunEvent.objects.filter(run=run, type="answer.stream").count()
        )()
        == 1
    )


async def test_a_failed_turn_clears_its_stream(app, alice, knowledge, openai_key):
    cut = stream([text_chunk("半句话"), text_chunk("没说完")], done=False, delay_between=0.05)
    with FakeOpenAI([cut]) as server:
        run = await database_sync_to_async(start)(app, alice, knowledge, server)
        comm = socket(run, after=0, ticket=await ticket_for(run, alice))
        assert (await comm.connect(timeout=5))[0]
        worker = execute_in_background(run.pk)
        try:
            frames, code = await read_until_close(comm, timeout=20)
        finally:
            await comm.disconnect()
            await asyncio.wait_for(worker, 30)
    # What was shown is the start of what the model said (a last delta racing the close event
    # may be dropped: the text goes away with the close either way).
    [shown] = texts(frames).values()
    assert shown and "半句话没说完".startswith(shown)
    close = next(f for f in frames if f["kind"] == "event" and f["type"] == "answer.stream")
    assert close["data"]["state"] == "closed" and close["data"]["reason"] == "failed"
    assert frames[-1]["type"] == "run.failed"
    assert "answer.published" not in [f.get("type") for f in frames]


def paused_turn(words=WORDS, *, pause_ticks=15, delay=0.1) -> list:
    """A turn that thinks (hidden), says ``words``, then pauses ``pause_ticks`` intervals
    (empty chunks) before it ends."""
    chunks = [chunk({"reasoning_content": SECRET_REASONING})]
    chunks += [text_chunk(w) for w in words]
    chunks += [chunk({}) for _ in range(pause_ticks)]
    return [stream([*chunks, finish_chunk("stop")], delay_between=delay)]


async def wait_for_stream_text(run, text: str, timeout: float = 20.0) -> None:
    def current() -> str | None:
        return AnswerStream.objects.filter(run=run).values_list("text", flat=True).first()

    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while await database_sync_to_async(current)() != text:
        assert loop.time() < deadline, "the stream never held the text"
        await asyncio.sleep(0.05)


async def test_rest_events_of_a_live_run_carry_the_stream_snapshot_and_drop_it_at_the_end(
    app, alice, knowledge, openai_key
):
    """GET …/events while the model pauses mid-turn: ``stream`` is the text so far (offset 0,
    a snapshot) and nothing hidden; once the run has ended there is no ``stream``."""
    from tests.factories import client_for

    def events_page() -> dict:
        response = client_for(alice).get(f"/v1/apps/business/runs/{run.pk}/events?after=0")
        assert response.status_code == 200
        return response.json()

    with FakeOpenAI(paused_turn()) as server:
        run = await database_sync_to_async(start)(app, alice, knowledge, server)
        worker = execute_in_background(run.pk)
        try:
            await wait_for_stream_text(run, "".join(WORDS))
            live = await database_sync_to_async(events_page)()
        finally:
            await asyncio.wait_for(worker, 30)
    [snapshot] = live["stream"]
    assert snapshot["delta"] == "".join(WORDS)
    assert (snapshot["offset"], snapshot["snapshot"], snapshot["state"]) == (0, True, "streaming")
    assert snapshot["streamId"].startswith("stm_") and snapshot["agentCallId"].startswith("call_")
    assert "answer.published" not in [e["type"] for e in live["events"]]
    assert SECRET_REASONING not in json.dumps(live, ensure_ascii=False)

    ended = await database_sync_to_async(events_page)()
    assert "stream" not in ended or ended["stream"] == []
    types = [e["type"] for e in ended["events"]]
    assert types.count("answer.stream") == 1 and "answer.published" in types


async def test_an_unclosed_marker_is_streamed_as_the_plain_text_the_model_wrote(
    app, alice, knowledge, openai_key
):
    """The stream does not parse markers: a half-written ``[[cite:`` reaches the socket as the
    characters the model sent, whatever Publication then makes of the turn."""
    words = ["结论：", "营收增长", " [[cite:cite_", "abcdef", "ghij"]
    with FakeOpenAI(slow_turn(words, delay=0.05)) as server:
        run = await database_sync_to_async(start)(app, alice, knowledge, server)
        comm = socket(run, after=0, ticket=await ticket_for(run, alice))
        assert (await comm.connect(timeout=5))[0]
        worker = execute_in_background(run.pk)
        try:
            frames, code = await read_until_close(comm, timeout=20)
        finally:
            await comm.disconnect()
            await asyncio.wait_for(worker, 30)
    assert code == 1000
    assert list(texts(frames).values()) == ["".join(words)]
    close = next(f for f in frames if f["kind"] == "event" and f["type"] == "answer.stream")
    published = [f for f in frames if f.get("type") == "answer.published"]
    # Publication decides: whatever it is, the close reason names it and matches the log.
    assert close["data"]["reason"] in {"committed", "previewed", "rejected"}
    if close["data"]["reason"] == "committed":
        assert len(published) == 1
    assert frames[-1]["type"] in {"run.completed", "run.partial", "run.failed"}


@pytest.fixture
def late_stream_sender(monkeypatch):
    """The channel layer made slow for the stream's announcements: each reaches daphne a
    second after it was committed (as under load, when a process's one Redis key is
    backed up) — later than the turn's close event."""
    import threading

    from delivery.wakeups import send_stream
    from runs import streams

    timers: list[threading.Timer] = []

    def late(run_id, data):
        timer = threading.Timer(1.0, send_stream, args=(run_id, data))
        timer.daemon = True
        timers.append(timer)
        timer.start()

    monkeypatch.setattr(streams, "_senders", [late])
    yield
    for timer in timers:
        timer.cancel()


async def test_a_socket_shows_the_whole_turn_before_its_close_however_late_the_announcements(
    app, alice, knowledge, openai_key, late_stream_sender
):
    """Every announcement of the turn's text arrives after the turn's close event: the socket
    still sends the turn's text, joined exactly to the published text, before the close
    (read from the row up to the close offset, through the gate), and nothing after it."""
    with FakeOpenAI(slow_turn(delay=0.02)) as server:
        run = await database_sync_to_async(start)(app, alice, knowledge, server)
        comm = socket(run, after=0, ticket=await ticket_for(run, alice))
        assert (await comm.connect(timeout=5))[0]
        worker = execute_in_background(run.pk)
        try:
            frames, code = await read_until_close(comm, timeout=20)
        finally:
            await comm.disconnect()
            await asyncio.wait_for(worker, 30)
    assert code == 1000
    published = [
        f["data"]["content"]["text"] for f in frames if f.get("type") == "answer.published"
    ]
    assert published == ["".join(WORDS)]
    assert list(texts(frames).values()) == published
    close = next(
        i for i, f in enumerate(frames) if f["kind"] == "event" and f["type"] == "answer.stream"
    )
    assert frames[close]["data"]["offset"] == len(published[0])
    assert not [f for f in frames[close:] if f["kind"] == "stream"]


async def test_many_runs_at_once_each_socket_gets_its_whole_turn_before_the_close(
    app, alice, knowledge, openai_key
):
    """Twelve runs stream at once, each watched by a socket: every socket's deltas join
    exactly to its run's published text, all before that turn's close event."""
    count = 12
    replies = [
        stream(
            [text_chunk(f"R{i:02d}"), *[text_chunk(w) for w in WORDS], finish_chunk("stop")],
            delay_between=0.02,
        )
        for i in range(count)
    ]
    with FakeOpenAI(replies) as server:
        await database_sync_to_async(factories.make_agent)(
            app.tenant, "llm", model=_model(server), knowledge=[knowledge], pin_to=[app]
        )
        runs = [
            await database_sync_to_async(start_run)(
                user=alice, app=app, agent_key="llm", input="营收如何？"
            )
            for _ in range(count)
        ]
        comms = [socket(r, after=0, ticket=await ticket_for(r, alice)) for r in runs]
        for comm in comms:
            assert (await comm.connect(timeout=5))[0]
        workers = [execute_in_background(r.pk) for r in runs]
        try:
            results = await asyncio.gather(*(read_until_close(c, timeout=30) for c in comms))
        finally:
            for comm in comms:
                await comm.disconnect()
            await asyncio.wait_for(asyncio.gather(*workers), 60)
    for frames, code in results:
        assert code == 1000
        published = [
            f["data"]["content"]["text"] for f in frames if f.get("type") == "answer.published"
        ]
        assert len(published) == 1 and published[0].endswith("".join(WORDS))
        assert list(texts(frames).values()) == published
        close = next(
            i for i, f in enumerate(frames) if f["kind"] == "event" and f["type"] == "answer.stream"
        )
        assert not [f for f in frames[close:] if f["kind"] == "stream"]
