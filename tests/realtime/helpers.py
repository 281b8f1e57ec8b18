"""Shared steps of the WebSocket tests: open a socket, read it to its close, make credentials."""

import json
from urllib.parse import urlencode

from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator

from delivery.routing import websocket_application

SAME_ORIGIN = [(b"origin", b"http://testserver"), (b"host", b"testserver")]


def events_path(app_slug: str, run_id: str, **query) -> str:
    query = {k: v for k, v in query.items() if v is not None}
    return f"/ws/v1/apps/{app_slug}/runs/{run_id}/events?{urlencode(query)}"


def socket(run=None, *, app=None, run_id=None, headers=None, cookie=None, **query):
    path = events_path(app or run.app.slug, run_id or run.pk, **query)
    headers = list(SAME_ORIGIN if headers is None else headers)
    if cookie:
        headers.append((b"cookie", cookie.encode()))
    return WebsocketCommunicator(websocket_application, path, headers=headers)


async def read_until_close(comm, *, timeout: float = 10.0, limit: int = 100_000):
    """Every frame until the server closes: (frames, close code)."""
    frames = []
    for _ in range(limit):
        message = await comm.receive_output(timeout)
        if message["type"] == "websocket.send":
            frames.append(json.loads(message["text"]))
        elif message["type"] == "websocket.close":
            return frames, message.get("code", 1000)
    raise AssertionError("no close")


async def open_and_read(comm, *, timeout: float = 10.0):
    connected, _ = await comm.connect(timeout=5)
    assert connected
    try:
        return await read_until_close(comm, timeout=timeout)
    finally:
        await comm.disconnect(timeout=5)


async def read_events(comm, count: int, *, timeout: float = 10.0) -> list[dict]:
    frames = []
    while len(frames) < count:
        frame = await comm.receive_json_from(timeout)
        assert frame["kind"] == "event", frame
        frames.append(frame)
    return frames


def read_page(run, **page) -> list[dict]:
    """The events of one read of the log as a socket sends them (``fanout.read_frames``)."""
    from delivery.fanout import read_frames

    return [
        {k: v for k, v in json.loads(text).items() if k != "kind"}
        for _, _, text in read_frames(run, **page)
    ]


@database_sync_to_async
def ticket_for(run, user) -> str:
    from delivery.tickets import issue_ticket

    raw, _ = issue_ticket(run=run, user=user)
    return raw


@database_sync_to_async
def session_cookie(user) -> str:
    from django.conf import settings
    from django.test import Client

    client = Client()
    client.force_login(user)
    return f"{settings.SESSION_COOKIE_NAME}={client.cookies[settings.SESSION_COOKIE_NAME].value}"


@database_sync_to_async
def public_events(run, after: int = 0) -> list[dict]:
    """What the log says, hydrated now: the expected frames (without "kind")."""
    from publication.reader import RunReader
    from runs.models import Run

    run = Run.objects.select_related("app", "tenant", "owner").get(pk=run.pk)
    return RunReader(run).hydrate(run.events.filter(seq__gt=after).order_by("seq"))


def without_kind(frames: list[dict]) -> list[dict]:
    return [{k: v for k, v in frame.items() if k != "kind"} for frame in frames]
