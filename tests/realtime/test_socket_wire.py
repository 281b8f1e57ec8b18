"""The fast path of an event frame to a daphne socket (delivery/wire.py): framed once,
written to the socket's transport — the same bytes autobahn would send, only to a socket that
is open, never ahead of what is buffered, and never a frame other than the one the socket took."""

import functools
import json
import socket as sockets

import pytest
from autobahn.twisted.websocket import WebSocketServerFactory, WebSocketServerProtocol
from autobahn.websocket.protocol import WebSocketProtocol
from channels.sessions import InstanceSessionWrapper
from daphne.server import Server
from twisted.internet import tcp
from twisted.internet.testing import StringTransport

from delivery import wire
from delivery.shared import RunTail
from delivery.wire import DirectSocket, direct_socket, frame_text, write_now

FRAME = (
    '{"kind": "event", "seq": 7, "type": "citation.created", "at": "2026-12-02T05:00:00+00:00", '
    '"data": {"title": "\\u5317\\u8fb0\\u533b\\u836f", "page": 1}}'
)


def open_protocol(transport=None) -> WebSocketServerProtocol:
    """An autobahn server protocol (daphne's is a subclass) past its handshake."""
    factory = WebSocketServerFactory()
    factory.protocol = WebSocketServerProtocol
    protocol = factory.buildProtocol(None)
    protocol.makeConnection(transport or StringTransport())
    protocol.state = WebSocketProtocol.STATE_OPEN
    return protocol


class FakeServer:
    """daphne's Server as the fast path sees it: the connections it still holds."""

    def __init__(self, *protocols) -> None:
        self.connections = {protocol: {} for protocol in protocols}


@pytest.mark.parametrize(
    "text", [FRAME, "x", "é" * 200, "y" * 70_000], ids=["event", "tiny", "126+", "65536+"]
)
def test_the_fast_path_writes_the_bytes_autobahn_sends(text):
    """Every length class of the frame header (7-bit, 16-bit, 64-bit), UTF-8 included."""
    fallback, fast = open_protocol(), open_protocol()
    fallback.sendMessage(text.encode("utf-8"))
    assert DirectSocket(FakeServer(fast), fast).write([frame_text(text)])
    assert fast.transport.value() == fallback.transport.value()
    assert fast.trafficStats.outgoingWebSocketMessages == 1
    assert fast.trafficStats.outgoingOctetsWireLevel == len(fallback.transport.value())


def test_a_page_is_written_as_the_frames_one_after_another():
    fallback, fast = open_protocol(), open_protocol()
    texts = [FRAME.replace('"seq": 7', f'"seq": {seq}') for seq in range(1, 6)]
    for text in texts:
        fallback.sendMessage(text.encode("utf-8"))
    assert DirectSocket(FakeServer(fast), fast).write([frame_text(t) for t in texts])
    assert fast.transport.value() == fallback.transport.value()


@pytest.mark.parametrize(
    "close",
    [
        lambda server, protocol: server.connections.pop(protocol),
        lambda server, protocol: server.connections[protocol].update(disconnected=1.0),
        lambda server, protocol: setattr(protocol, "state", WebSocketProtocol.STATE_CLOSING),
        lambda server, protocol: setattr(protocol, "state", WebSocketProtocol.STATE_CLOSED),
    ],
    ids=["daphne-forgot-it", "daphne-saw-it-disconnect", "closing", "closed"],
)
def test_a_closed_socket_is_skipped(close):
    """Nothing is written; the consumer's plain send (which daphne drops) is left to decide."""
    protocol = open_protocol()
    server = FakeServer(protocol)
    close(server, protocol)
    assert not DirectSocket(server, protocol).write([frame_text(FRAME)])
    assert protocol.transport.value() == b""


@pytest.mark.parametrize(
    "unsafe",
    [
        lambda protocol: setattr(protocol, "_perMessageCompress", object()),
        lambda protocol: protocol.send_queue.append((b"queued", False)),
        lambda protocol: setattr(
            protocol, "send_state", WebSocketProtocol.SEND_STATE_INSIDE_MESSAGE
        ),
        lambda protocol: setattr(protocol, "autoFragmentSize", 10),
        lambda protocol: setattr(protocol, "maxMessagePayloadSize", 10),
        lambda protocol: setattr(protocol, "maskServerFrames", True),
    ],
    ids=["compressed", "queued-ahead", "mid-message", "fragmenting", "too-large", "masking"],
)
def test_a_socket_autobahn_would_frame_otherwise_takes_the_plain_send(unsafe):
    protocol = open_protocol()
    unsafe(protocol)
    assert not DirectSocket(FakeServer(protocol), protocol).write([frame_text(FRAME)])
    assert protocol.transport.value() == b""


def test_the_daphne_socket_is_found_behind_the_session_middleware_only():
    server = Server.__new__(Server)  # its handle_reply, bound: what daphne gives the app
    protocol = open_protocol()
    send = functools.partial(server.handle_reply, protocol)
    found = direct_socket(send)
    assert found is not None and (found.server, found.protocol) == (server, protocol)
    wrapped = InstanceSessionWrapper({"type": "websocket", "cookies": {}}, send)
    assert direct_socket(wrapped.send).protocol is protocol

    async def another_server(message):
        pass

    assert direct_socket(another_server) is None  # e.g. channels' test communicator
    assert direct_socket(functools.partial(another_server)) is None


class FakeReactor:
    def __init__(self) -> None:
        self.writers: set = set()  # as a reactor holds them: once each

    def addReader(self, reader) -> None:  # noqa: N802 - Twisted's interface
        pass

    def removeReader(self, reader) -> None:  # noqa: N802
        pass

    def addWriter(self, writer) -> None:  # noqa: N802
        self.writers.add(writer)

    def removeWriter(self, writer) -> None:  # noqa: N802
        self.writers.discard(writer)


@pytest.fixture
def tcp_pair():
    ours, peer = sockets.socketpair()
    ours.setblocking(False)
    peer.settimeout(1.0)
    reactor = FakeReactor()
    transport = tcp.Server(ours, open_protocol(), ("127.0.0.1", 1), None, 1, reactor)
    yield transport, peer, reactor
    ours.close()
    peer.close()


def test_with_nothing_buffered_the_bytes_reach_the_kernel_at_once(tcp_pair):
    transport, peer, reactor = tcp_pair
    write_now(transport, b"frame-1")
    assert peer.recv(100) == b"frame-1"
    assert reactor.writers == set()  # no writability round trip through the reactor


def test_bytes_buffered_ahead_are_never_overtaken(tcp_pair):
    transport, peer, reactor = tcp_pair
    transport.write(b"first,")  # Twisted holds it until the socket is writable
    write_now(transport, b"second")
    assert reactor.writers == {transport}
    peer.setblocking(False)
    with pytest.raises(BlockingIOError):
        peer.recv(100)  # nothing went ahead of the buffered bytes
    transport.doWrite()
    peer.settimeout(1.0)
    assert peer.recv(100) == b"first,second"


def test_what_the_kernel_does_not_take_is_left_to_twisted_in_order(tcp_pair, monkeypatch):
    transport, peer, reactor = tcp_pair

    class HalfTaking:
        def __init__(self, real) -> None:
            self.real = real

        def send(self, data):
            return self.real.send(data[:3])

        def __getattr__(self, name):
            return getattr(self.real, name)

    monkeypatch.setattr(transport, "socket", HalfTaking(transport.socket))
    write_now(transport, b"abcdef")
    assert peer.recv(100) == b"abc"
    assert transport._tempDataBuffer == [b"def"] and reactor.writers == {transport}


def test_a_shared_write_sends_the_frame_the_socket_took_never_an_older_one(monkeypatch):
    """A run's frames are framed once for all its sockets; when a seq is read again (a
    revocation committed since: the body is now withheld), the bytes written are the new
    frame's, never the earlier read's framing."""
    framed = []
    real = wire.frame_text

    def counting(text):
        framed.append(text)
        return real(text)

    monkeypatch.setattr("delivery.shared.frame_text", counting)
    tail = RunTail()
    visible = (5, "answer.published", '{"seq": 5, "data": {"content": "secret"}}')
    tail.store([visible], read_started=1e12)
    assert tail.wire(visible) == real(visible[2])
    assert tail.wire(visible) == real(visible[2])
    assert len(framed) == 1  # framed once, whatever the number of sockets

    withheld = (5, "answer.published", '{"seq": 5, "data": {"state": "PROTECTED"}}')
    tail.store([withheld], read_started=1e12 + 1)
    assert tail.wire(withheld) == real(withheld[2])
    # A socket still holding the earlier frame object is not served from the cache.
    assert tail.wire(visible) == real(visible[2])
    assert tail.wires == {5: real(withheld[2])}


def test_a_sockets_own_read_is_not_cached_for_others():
    tail = RunTail()
    own = (9, "agent.note", '{"seq": 9}')
    assert tail.wire(own) == frame_text(own[2])
    assert tail.wires == {}


# -- the consumer on the fast path ----------------------------------------------------------


class RecordingSocket:
    """Stands in for a daphne socket: what the fast path wrote, or a socket that is gone."""

    def __init__(self, *, open_: bool = True) -> None:
        self.open = open_
        self.written: list[bytes] = []

    def write(self, wires) -> bool:
        if not self.open:
            return False
        self.written += [raw for _, raw in wires]
        return True


def unframe(raw: bytes) -> dict:
    """The JSON of one unmasked server text frame (as the fast path writes them)."""
    import json

    length, start = raw[1] & 0x7F, 2
    if length == 126:
        length, start = int.from_bytes(raw[2:4], "big"), 4
    elif length == 127:
        length, start = int.from_bytes(raw[2:10], "big"), 10
    assert raw[0] == 0x81 and len(raw) == start + length
    return json.loads(raw[start:])


@pytest.mark.django_db(transaction=True)
async def test_the_consumer_sends_a_run_through_the_fast_path_in_order_and_records_it(
    make_run, alice, monkeypatch
):
    from channels.db import database_sync_to_async

    from runs.models import DeliveryLog
    from tests.realtime.helpers import public_events, read_until_close, socket, ticket_for

    fast = RecordingSocket()
    monkeypatch.setattr("delivery.consumers.direct_socket", lambda send: fast)
    run = await database_sync_to_async(make_run)(
        {"search": "营收"}, {"answerPart": "增长 [[cite:{{c1}}]]"}
    )
    comm = socket(run, after=0, ticket=await ticket_for(run, alice))
    assert (await comm.connect(timeout=5))[0]
    frames, code = await read_until_close(comm)
    await comm.disconnect()
    assert (frames, code) == ([], 1000)  # every event went the fast way, none twice
    expected = await public_events(run)
    assert [{k: v for k, v in unframe(raw).items() if k != "kind"} for raw in fast.written] == (
        expected
    )
    sent = await database_sync_to_async(lambda: DeliveryLog.objects.get(run=run).last_sent_seq)()
    assert sent == expected[-1]["seq"]


@pytest.mark.django_db(transaction=True)
async def test_a_socket_the_fast_path_skips_gets_every_frame_through_the_plain_send(
    make_run, alice, monkeypatch
):
    from channels.db import database_sync_to_async

    from tests.realtime.helpers import (
        open_and_read,
        public_events,
        socket,
        ticket_for,
        without_kind,
    )

    gone = RecordingSocket(open_=False)
    monkeypatch.setattr("delivery.consumers.direct_socket", lambda send: gone)
    run = await database_sync_to_async(make_run)({"text": "x"})
    frames, code = await open_and_read(socket(run, after=0, ticket=await ticket_for(run, alice)))
    assert code == 1000 and gone.written == []
    assert without_kind(frames) == await public_events(run)


# -- what a page costs ----------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_a_page_read_as_tuples_is_what_the_reader_hydrates_for_every_event(make_run):
    """Answer events still go through the reader (their bodies decided now); every other
    event is its stored data — the same events as hydrating RunEvent instances."""
    from publication.reader import RunReader
    from runs.models import Run
    from tests.realtime.helpers import read_page

    run = make_run({"search": "营收"}, {"answerPart": "增长 [[cite:{{c1}}]]"}, {"text": "结论"})
    run = Run.objects.select_related("app", "tenant", "owner").get(pk=run.pk)
    events = list(run.events.order_by("seq"))
    assert {"answer.published", "citation.created", "run.completed"} <= {e.type for e in events}
    assert read_page(run, after=0, limit=1000) == RunReader(run).hydrate(events)
    assert read_page(run, after=2, limit=3) == RunReader(run).hydrate(events[2:5])


@pytest.mark.django_db(transaction=True)
def test_an_event_the_reader_does_not_fill_in_is_sent_as_its_stored_json(make_run):
    """Not parsed and encoded again: the frame holds the stored text itself, so what a
    JSON encoder would change (the order PostgreSQL keeps, non-ASCII text, big numbers)
    reaches the client as stored, and the answer events are still filled in."""
    from django.db import connection

    from delivery.fanout import read_frames
    from runs.models import Run, RunEvent

    run = make_run({"search": "营收"}, {"answerPart": "增长 [[cite:{{c1}}]]"})
    run = Run.objects.select_related("app", "tenant", "owner").get(pk=run.pk)
    event = RunEvent.objects.filter(run=run, type="citation.created").first()
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT CAST(data AS TEXT) FROM {RunEvent._meta.db_table} WHERE id = %s",  # noqa: S608
            [event.pk],
        )
        (stored,) = cursor.fetchone()
    frames = {seq: text for seq, _, text in read_frames(run, after=0, limit=1000)}
    assert f'"data":{stored}' in frames[event.seq]
    published = RunEvent.objects.get(run=run, type="answer.published")
    assert json.loads(frames[published.seq])["data"]["content"]  # filled in by the reader


@pytest.mark.django_db(transaction=True)
def test_what_was_sent_never_moves_back_and_the_first_close_is_kept(
    make_run, alice, django_assert_num_queries
):
    from delivery.fanout import open_delivery, record_deliveries
    from runs.models import DeliveryLog

    run = make_run({"text": "x"}, execute=False)
    a, b, c = (
        open_delivery(run=run, user=alice, client_id="", after=0).connection_id for _ in "abc"
    )
    with django_assert_num_queries(1):  # one statement, however many connections
        record_deliveries({a: 5, b: 3})
    with django_assert_num_queries(1):
        record_deliveries({a: 4, b: 6}, frozenset({a}))
    first_close = DeliveryLog.objects.get(connection_id=a).closed_at
    record_deliveries({a: 2}, frozenset({a}))
    rows = dict(DeliveryLog.objects.values_list("connection_id", "last_sent_seq"))
    assert rows == {a: 5, b: 6, c: 0}
    assert DeliveryLog.objects.get(connection_id=a).closed_at == first_close is not None
    assert DeliveryLog.objects.get(connection_id=b).closed_at is None
