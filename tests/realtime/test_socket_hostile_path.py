"""A WebSocket path the database cannot compare (NUL) is the same 4404 as an
unknown run, never an HTTP 500 handshake (issue 14, finding 4)."""

import pytest
from channels.testing import WebsocketCommunicator

from delivery.routing import websocket_application
from tests.realtime.helpers import SAME_ORIGIN, read_until_close, session_cookie

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.mark.parametrize(
    "path",
    ["/ws/v1/apps/business/runs/run_\x00x/events", "/ws/v1/apps/bus\x00iness/runs/run_x/events"],
)
async def test_a_nul_in_the_socket_path_is_not_found(path, admin_user):
    headers = [*SAME_ORIGIN, (b"cookie", (await session_cookie(admin_user)).encode())]
    comm = WebsocketCommunicator(websocket_application, path, headers=headers)
    connected, _ = await comm.connect()
    assert connected
    frames, code = await read_until_close(comm)
    assert code == 4404
    assert [f["code"] for f in frames] == ["RESOURCE_NOT_FOUND"]
