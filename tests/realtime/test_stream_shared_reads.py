"""One read of live text per stream wake-up per process, whatever the number of sockets.

Runs are put RUNNING with a live stream row each (no model: the rows are extended here), and
sockets watch them. A ``run.streams`` wake-up naming the runs is answered by ONE statement of
the process (``fanout.read_live_streams``: every run's gate and its rows' new text), never by a
read per socket; each socket still gets exactly its run's new text, and a socket whose gate
refuses gets the refusal and none of the text.
"""

import json

import pytest
from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from django.db import connection
from django.test.utils import CaptureQueriesContext

from delivery import fanout
from delivery.wakeups import STREAM_GROUP
from runs import streams
from runs.models import AgentCall, Run
from runs.streams import extend_stream
from tests import factories
from tests.realtime.helpers import session_cookie, socket, ticket_for

pytestmark = pytest.mark.django_db(transaction=True)


@database_sync_to_async
def live_runs(app, owner, count: int) -> list[tuple[Run, AgentCall]]:
    made = []
    for i in range(count):
        run = factories.scripted_run(app, owner, [{"text": "x"}], key=f"a{i}", execute=False)
        Run.objects.filter(pk=run.pk).update(status=Run.Status.RUNNING)
        run = Run.objects.select_related("app", "tenant", "owner").get(pk=run.pk)
        call = AgentCall.objects.create(run=run, depth=0, agent_version=run.agent_version, task="q")
        assert extend_stream(run, call, 1, offset=0, delta=f"R{i:02d}")
        made.append((run, call))
    return made


@pytest.fixture
def quiet_streams(monkeypatch):
    """Extensions announce nothing by themselves: the test sends each wake-up."""
    monkeypatch.setattr(streams, "_senders", [])


@pytest.fixture
def counted(monkeypatch):
    """Every statement of the shared reads, and every read a socket makes alone."""
    seen: dict[str, list[int]] = {"shared": [], "alone": []}
    shared, alone = fanout.read_live_streams, fanout.stream_text

    def read_live_streams(*args, **kwargs):
        with CaptureQueriesContext(connection) as queries:
            found = shared(*args, **kwargs)
        seen["shared"].append(len(queries))
        return found

    def stream_text(*args, **kwargs):
        seen["alone"].append(1)
        return alone(*args, **kwargs)

    monkeypatch.setattr(fanout, "read_live_streams", read_live_streams)
    monkeypatch.setattr(fanout, "stream_text", stream_text)
    return seen


async def next_stream(comm, timeout: float = 5.0) -> dict:
    while True:
        frame = json.loads(await comm.receive_from(timeout))
        if frame["kind"] != "event":
            return frame


async def wake(runs) -> None:
    await get_channel_layer().group_send(
        STREAM_GROUP, {"type": "run.streams", "runs": [run.pk for run, _ in runs]}
    )


@database_sync_to_async
def extend_all(runs, offset: int, delta: str) -> None:
    for run, call in runs:
        assert extend_stream(run, call, 1, offset=offset, delta=delta)


async def test_a_wake_up_for_any_number_of_sockets_is_one_statement_of_the_process(
    app, alice, staff, quiet_streams, counted
):
    """One socket, then nine sockets on eight runs (one run also watched by a console admin):
    each wake-up is one statement of the process and no read of its own per socket, and
    every socket gets its own run's new text at the offset it had."""
    runs = await live_runs(app, alice, 8)
    comms = [socket(run, after=0, ticket=await ticket_for(run, alice)) for run, _ in runs]
    comms.append(socket(runs[0][0], after=0, cookie=await session_cookie(staff)))
    try:
        for comm in comms:
            assert (await comm.connect(timeout=5))[0]
        snapshots = [await next_stream(comm) for comm in comms]
        assert [s["data"]["delta"] for s in snapshots] == [f"R{i:02d}" for i in range(8)] + ["R00"]
        assert all(s["data"]["snapshot"] for s in snapshots)
        counted["alone"].clear()  # each socket's snapshot at connect is its own read

        await extend_all(runs[:1], 3, "甲")
        await wake(runs[:1])
        first = [await next_stream(comms[0]), await next_stream(comms[-1])]
        assert [(f["data"]["offset"], f["data"]["delta"]) for f in first] == [(3, "甲")] * 2
        assert counted["shared"] == [1]

        await extend_all(runs[:1], 4, "乙")
        await extend_all(runs[1:], 3, "乙")
        await wake(runs)
        frames = [await next_stream(comm) for comm in comms]
        assert [f["data"]["streamId"] for f in frames] == [
            f"stm_{call.pk}_1" for _, call in [*runs, runs[0]]
        ]
        assert [(f["data"]["offset"], f["data"]["delta"]) for f in frames] == [
            (4, "乙"),
            *[(3, "乙")] * 7,
            (4, "乙"),
        ]
        assert counted["shared"] == [1, 1]
        assert counted["alone"] == []
    finally:
        for comm in comms:
            await comm.disconnect()


async def test_a_socket_whose_gate_refuses_the_shared_read_gets_the_refusal_not_the_text(
    app, alice, staff, quiet_streams
):
    """The owner loses the app between two wake-ups: the owner's socket is refused (4403)
    with nothing of the new text; the console admin's socket on the same run, read in the
    same statement, still gets it."""
    runs = await live_runs(app, alice, 1)
    run = runs[0][0]
    owner = socket(run, after=0, ticket=await ticket_for(run, alice))
    admin = socket(run, after=0, cookie=await session_cookie(staff))
    try:
        for comm in (owner, admin):
            assert (await comm.connect(timeout=5))[0]
            assert (await next_stream(comm))["data"]["snapshot"]
        await database_sync_to_async(lambda: app.memberships.filter(user=alice).delete())()
        await extend_all(runs, 3, "不该看到")
        await wake(runs)
        refused = await next_stream(owner)
        assert refused["kind"] == "error" and refused["code"] == "BUSINESS_PERMISSION_DENIED"
        assert (await owner.receive_output(5))["code"] == 4403
        assert (await next_stream(admin))["data"]["delta"] == "不该看到"
    finally:
        for comm in (owner, admin):
            await comm.disconnect()


def test_the_shared_read_is_one_statement_for_any_number_of_runs(app, alice, staff):
    """``read_live_streams`` directly: one statement for one run and for six, each gate
    decided on that read, text after the offset given, nothing for a run no longer
    RUNNING."""
    from asgiref.sync import async_to_sync

    runs = async_to_sync(live_runs)(app, alice, 6)
    ids = [run.pk for run, _ in runs]
    with CaptureQueriesContext(connection) as one:
        found = fanout.read_live_streams({ids[0]: {False, True}}, {})
    assert len(one) == 1
    assert [d["delta"] for d in found[ids[0], False]] == ["R00"]
    assert found[ids[0], True] == found[ids[0], False]

    Run.objects.filter(pk=ids[5]).update(status=Run.Status.COMPLETED)
    sent = {f"stm_{runs[1][1].pk}_1": 2}
    with CaptureQueriesContext(connection) as six:
        found = fanout.read_live_streams({i: {False} for i in ids}, sent)
    assert len(six) == 1
    assert [(d["offset"], d["delta"]) for d in found[ids[1], False]] == [(2, "1")]
    assert found[ids[5], False] == []
    assert [d["delta"] for i in ids[2:5] for d in found[i, False]] == ["R02", "R03", "R04"]
