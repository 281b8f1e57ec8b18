"""The WebSocket passes the same gate as every history read (runs.access.access_run_history):
a ticket issued while the owner could read the run opens nothing once they cannot, and a socket
already open re-checks it on every read of the log, so it closes instead of streaming on."""

import pytest
from channels.db import database_sync_to_async
from django.utils import timezone
from guardian.shortcuts import remove_perm

from runs.events import append_event
from runs.models import Run
from tenancy.models import App, Membership
from tests.realtime.helpers import (
    open_and_read,
    read_events,
    read_until_close,
    session_cookie,
    socket,
    ticket_for,
)

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def finished_run(make_run):
    return make_run({"search": "营收"}, {"answerPart": "增长 [[cite:{{c1}}]]"})


def only_error(frames_and_code):
    frames, code = frames_and_code
    assert len(frames) == 1 and frames[0]["kind"] == "error", frames
    return frames[0]["code"], code


async def test_a_ticket_opens_nothing_once_the_history_permission_is_removed(
    finished_run, alice, app
):
    ticket = await ticket_for(finished_run, alice)
    await database_sync_to_async(remove_perm)("tenancy.view_run_history", alice, app)

    refused = await open_and_read(socket(finished_run, ticket=ticket))

    assert only_error(refused) == ("BUSINESS_PERMISSION_DENIED", 4403)


async def test_a_ticket_opens_nothing_once_the_owner_left_the_app(finished_run, alice, app):
    ticket = await ticket_for(finished_run, alice)
    await database_sync_to_async(Membership.objects.filter(app=app, user=alice).delete)()

    refused = await open_and_read(socket(finished_run, ticket=ticket))

    assert only_error(refused) == ("BUSINESS_PERMISSION_DENIED", 4403)


# -- an open socket ---------------------------------------------------------------------


def revoke_permission(run):
    remove_perm("tenancy.view_run_history", run.owner, run.app)


def leave_app(run):
    Membership.objects.filter(app=run.app, user=run.owner).delete()


def suspend_app(run):
    App.objects.filter(pk=run.app_id).update(status=App.Status.SUSPENDED)


def archive_run(run):
    Run.objects.filter(pk=run.pk).update(archived_at=timezone.now())


async def open_socket_with_one_event(make_run, alice, settings, cookie=None):
    """An open socket of a run still going, which has received the run's first event."""
    settings.SPARKTIDE_WS_POLL_SECONDS = 0.1
    run = await database_sync_to_async(make_run)({"text": "x"}, execute=False)
    if cookie is None:
        comm = socket(run, after=0, ticket=await ticket_for(run, alice))
    else:
        comm = socket(run, after=0, cookie=cookie)
    assert (await comm.connect(timeout=5))[0]
    await database_sync_to_async(append_event)(run, "agent.note", {"i": 1})
    assert [f["seq"] for f in await read_events(comm, 1)] == [1]
    return run, comm


@pytest.mark.parametrize(
    ("take_away", "code", "close"),
    [
        (revoke_permission, "BUSINESS_PERMISSION_DENIED", 4403),
        (leave_app, "BUSINESS_PERMISSION_DENIED", 4403),
        (suspend_app, "APP_NOT_ACTIVE", 4403),
        (archive_run, "EVENT_CURSOR_EXPIRED", 4410),
    ],
    ids=["permission revoked", "owner left the app", "app suspended", "run archived"],
)
async def test_an_open_socket_closes_with_the_documented_code_and_sends_no_further_event(
    make_run, alice, settings, take_away, code, close
):
    run, comm = await open_socket_with_one_event(make_run, alice, settings)
    await database_sync_to_async(take_away)(run)
    await database_sync_to_async(append_event)(run, "agent.note", {"i": 2})

    frames, closed = await read_until_close(comm)

    assert frames == [{"kind": "error", "code": code, "detail": frames[0]["detail"]}]
    assert closed == close
    await comm.disconnect()


async def test_sockets_woken_together_are_all_closed_when_the_permission_is_revoked(
    make_run, alice, settings
):
    settings.SPARKTIDE_WS_POLL_SECONDS = 0.1
    run = await database_sync_to_async(make_run)({"text": "x"}, execute=False)
    comms = [socket(run, after=0, ticket=await ticket_for(run, alice)) for _ in range(3)]
    for comm in comms:
        assert (await comm.connect(timeout=5))[0]
    await database_sync_to_async(revoke_permission)(run)
    await database_sync_to_async(append_event)(run, "agent.note", {"i": 1})

    for comm in comms:
        frames, closed = await read_until_close(comm)
        assert [(f["kind"], f.get("code")) for f in frames] == [
            ("error", "BUSINESS_PERMISSION_DENIED")
        ]
        assert closed == 4403
        await comm.disconnect()


async def test_a_console_admins_socket_keeps_streaming_when_the_owner_loses_the_permission(
    make_run, alice, staff, settings
):
    """The admin's gate is retention only; the owner's permission is the owner's gate."""
    run, comm = await open_socket_with_one_event(
        make_run, alice, settings, cookie=await session_cookie(staff)
    )
    await database_sync_to_async(revoke_permission)(run)
    await database_sync_to_async(append_event)(run, "agent.note", {"i": 2})

    assert [f["seq"] for f in await read_events(comm, 1)] == [2]
    await comm.disconnect()


def test_a_read_that_finds_events_costs_the_events_and_the_run_with_its_permission(
    make_run, django_assert_num_queries
):
    """The re-check adds one query to a page (the run, the permission read with it); an idle
    read adds nothing."""
    from tests.realtime.helpers import read_page

    run = make_run({"text": "x"}, execute=False)
    append_event(run, "agent.note", {"i": 1})
    with django_assert_num_queries(1):  # the events: none new, nothing checked
        assert read_page(run, after=1, limit=10) == []
    with django_assert_num_queries(2):  # the events, the run (owner, app) with the permission
        assert [e["seq"] for e in read_page(run, after=0, limit=10)] == [1]
    with django_assert_num_queries(2):  # a console admin's gate is retention: no permission
        assert [e["seq"] for e in read_page(run, after=0, limit=10, staff=True)] == [1]
