"""Who may open a run's socket: the owner with a single-use ticket, or a console admin's session.

Everyone else learns nothing, not even whether the run exists.
"""

from datetime import timedelta

import pytest
from channels.db import database_sync_to_async
from django.utils import timezone

from runs.models import DeliveryLog, EventTicket, Run
from tests import factories
from tests.realtime.helpers import (
    open_and_read,
    read_until_close,
    session_cookie,
    socket,
    ticket_for,
)

pytestmark = pytest.mark.django_db(transaction=True)

NOT_FOUND = (
    [{"kind": "error", "code": "RESOURCE_NOT_FOUND", "detail": "资源不存在。"}],
    4404,
)


@pytest.fixture
def finished_run(make_run):
    return make_run({"search": "营收"}, {"answerPart": "增长 [[cite:{{c1}}]]"})


def error_of(frames_and_code):
    frames, code = frames_and_code
    assert len(frames) == 1 and frames[0]["kind"] == "error", frames
    return frames[0]["code"], code


@database_sync_to_async
def delivery_count() -> int:
    return DeliveryLog.objects.count()


# -- tickets -------------------------------------------------------------------------


async def test_a_ticket_opens_the_owners_run_once(finished_run, alice):
    """The first use of a ticket streams the run; a second use is refused 4401 TICKET_INVALID."""
    ticket = await ticket_for(finished_run, alice)
    frames, code = await open_and_read(socket(finished_run, ticket=ticket))
    assert code == 1000 and frames[-1]["type"] == "run.completed"
    again = await open_and_read(socket(finished_run, ticket=ticket))
    assert error_of(again) == ("TICKET_INVALID", 4401)


async def test_an_expired_ticket_is_refused(finished_run, alice):
    """A ticket past its expiry is 4401, as if it never existed."""
    ticket = await ticket_for(finished_run, alice)
    await database_sync_to_async(EventTicket.objects.update)(
        expires_at=timezone.now() - timedelta(seconds=1)
    )
    assert error_of(await open_and_read(socket(finished_run, ticket=ticket))) == (
        "TICKET_INVALID",
        4401,
    )


async def test_a_made_up_ticket_or_another_runs_ticket_is_refused(finished_run, make_run, alice):
    """Unknown tickets and tickets issued for another run are 4401 (and spend nothing)."""
    other = await database_sync_to_async(make_run)({"text": "x"}, key="other")
    other_ticket = await ticket_for(other, alice)
    for ticket in ("wst_madeup", "", "x" * 500, other_ticket):
        assert error_of(await open_and_read(socket(finished_run, ticket=ticket))) == (
            "TICKET_INVALID",
            4401,
        )
    frames, code = await open_and_read(socket(other, ticket=other_ticket))
    assert code == 1000  # still unused


async def test_no_credentials_is_4401(finished_run):
    """Without a ticket or an admin session the socket is refused 4401 AUTHENTICATION_REQUIRED."""
    assert error_of(await open_and_read(socket(finished_run))) == (
        "AUTHENTICATION_REQUIRED",
        4401,
    )


async def test_a_deactivated_owners_ticket_is_refused(finished_run, alice):
    """A ticket whose user was deactivated after it was issued is 4401."""
    ticket = await ticket_for(finished_run, alice)
    alice.is_active = False
    await database_sync_to_async(alice.save)()
    assert error_of(await open_and_read(socket(finished_run, ticket=ticket)))[1] == 4401


# -- ownership: 4404 for everyone but the owner ----------------------------------------


async def test_a_non_owner_is_refused_exactly_like_a_missing_run(
    finished_run, alice, bob, outsider, staff
):
    """Another member, another tenant, a wrong app and a missing run all get the same 4404 frame."""
    other_app = await database_sync_to_async(factories.make_app)(
        finished_run.tenant, "other", members=[alice]
    )
    admin_cookie = await session_cookie(staff)
    attempts = [
        socket(finished_run, ticket=await ticket_for(finished_run, bob)),
        socket(finished_run, ticket=await ticket_for(finished_run, outsider)),
        socket(finished_run, app=other_app.slug, ticket=await ticket_for(finished_run, alice)),
        socket(finished_run, app="no-such-app", cookie=admin_cookie),
        socket(finished_run, run_id="run_" + "0" * 24, cookie=admin_cookie),
    ]
    for comm in attempts:
        assert await open_and_read(comm) == NOT_FOUND


async def test_an_unknown_websocket_path_is_4404(finished_run):
    """Any other path gets the same 4404 as a missing run, not a server error."""
    from channels.testing import WebsocketCommunicator

    from delivery.routing import websocket_application
    from tests.realtime.helpers import SAME_ORIGIN

    comm = WebsocketCommunicator(websocket_application, "/ws/v1/nothing", headers=SAME_ORIGIN)
    assert await open_and_read(comm) == NOT_FOUND


# -- console admins ------------------------------------------------------------------


async def test_a_console_admin_session_can_watch_any_run(finished_run, staff):
    """An active staff user's session cookie replays another user's run in full."""
    frames, code = await open_and_read(socket(finished_run, cookie=await session_cookie(staff)))
    assert code == 1000
    assert [f["seq"] for f in frames] == list(range(1, finished_run.last_seq + 1))


async def test_a_session_that_is_not_an_active_admins_is_4401(finished_run, alice, staff):
    """The owner's own session (not staff) and an inactive admin's session are not credentials."""
    owner_cookie = await session_cookie(alice)
    inactive_cookie = await session_cookie(staff)
    staff.is_active = False
    await database_sync_to_async(staff.save)()
    for cookie in (owner_cookie, inactive_cookie):
        assert error_of(await open_and_read(socket(finished_run, cookie=cookie)))[1] == 4401


# -- origin --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "origin",
    [b"http://evil.example", b"null", b"https://testserver.evil.example", b"file://"],
)
async def test_a_cross_site_page_is_refused_4403_before_anything_else(
    finished_run, alice, staff, origin
):
    """Another site's page gets close 4403 and not one frame; its cookie and ticket are untouched."""
    ticket = await ticket_for(finished_run, alice)
    comm = socket(
        finished_run,
        ticket=ticket,
        headers=[(b"origin", origin), (b"host", b"testserver")],
        cookie=await session_cookie(staff),
    )
    assert await open_and_read(comm) == ([], 4403)
    assert await delivery_count() == 0
    frames, code = await open_and_read(socket(finished_run, ticket=ticket))
    assert code == 1000  # the ticket was not spent by the refused page


async def test_origins_of_allowed_hosts_and_trusted_origins_pass(finished_run, alice, settings):
    """The site itself, a host in ALLOWED_HOSTS and a CSRF_TRUSTED_ORIGINS entry may connect."""
    settings.ALLOWED_HOSTS = ["testserver", "app.example.com"]
    settings.CSRF_TRUSTED_ORIGINS = ["https://portal.example.org"]
    for origin in (b"http://testserver", b"https://app.example.com", b"https://portal.example.org"):
        comm = socket(
            finished_run,
            ticket=await ticket_for(finished_run, alice),
            headers=[(b"origin", origin), (b"host", b"testserver")],
        )
        assert (await open_and_read(comm))[1] == 1000, origin


async def test_a_wildcard_allowed_host_admits_only_the_site_itself(finished_run, alice, settings):
    """With ALLOWED_HOSTS = ["*"], a page must still be of the host it connects to."""
    settings.ALLOWED_HOSTS = ["*"]
    same = [(b"origin", b"https://api.example.com"), (b"host", b"api.example.com")]
    cross = [(b"origin", b"https://evil.example"), (b"host", b"api.example.com")]
    ticket = await ticket_for(finished_run, alice)
    assert await open_and_read(socket(finished_run, ticket=ticket, headers=cross)) == ([], 4403)
    assert (await open_and_read(socket(finished_run, ticket=ticket, headers=same)))[1] == 1000


async def test_a_client_without_origin_is_not_a_page_and_authenticates_normally(
    finished_run, alice
):
    """No Origin header (a server-side client) is not refused for origin; its ticket decides."""
    frames, code = await open_and_read(
        socket(finished_run, ticket=await ticket_for(finished_run, alice), headers=[])
    )
    assert code == 1000
    assert error_of(await open_and_read(socket(finished_run, headers=[])))[1] == 4401


# -- cursor and query ----------------------------------------------------------------


async def test_an_archived_run_is_4410_event_cursor_expired(finished_run, alice):
    """A run archived since it ended closes 4410 EVENT_CURSOR_EXPIRED at connect, no events."""
    await database_sync_to_async(Run.objects.filter(pk=finished_run.pk).update)(
        archived_at=timezone.now()
    )
    result = await open_and_read(socket(finished_run, ticket=await ticket_for(finished_run, alice)))
    assert error_of(result) == ("EVENT_CURSOR_EXPIRED", 4410)


async def test_a_run_past_retention_is_4410(finished_run, alice):
    """A run older than its app's retention window closes 4410 at connect."""
    days = finished_run.app.retention_days + 1
    await database_sync_to_async(Run.objects.filter(pk=finished_run.pk).update)(
        created_at=timezone.now() - timedelta(days=days)
    )
    result = await open_and_read(socket(finished_run, ticket=await ticket_for(finished_run, alice)))
    assert error_of(result) == ("EVENT_CURSOR_EXPIRED", 4410)


@pytest.mark.parametrize(
    "query", ["after=-1", "after=abc", "after=1&after=2", "after=1e3", "after=99999999999"]
)
async def test_a_bad_cursor_is_4400_and_spends_no_ticket(finished_run, alice, query):
    """after must be one non-negative integer; otherwise 4400 INVALID_REQUEST before authentication."""
    from channels.testing import WebsocketCommunicator

    from delivery.routing import websocket_application
    from tests.realtime.helpers import SAME_ORIGIN

    ticket = await ticket_for(finished_run, alice)
    path = (
        f"/ws/v1/apps/{finished_run.app.slug}/runs/{finished_run.pk}/events?{query}&ticket={ticket}"
    )
    comm = WebsocketCommunicator(websocket_application, path, headers=SAME_ORIGIN)
    assert error_of(await open_and_read(comm)) == ("INVALID_REQUEST", 4400)
    assert (await open_and_read(socket(finished_run, ticket=ticket)))[1] == 1000


async def test_refusals_never_subscribe_or_record_a_delivery(finished_run):
    """A refused socket leaves no DeliveryLog row behind."""
    await open_and_read(socket(finished_run))
    await open_and_read(socket(finished_run, ticket="wst_nope"))
    assert await delivery_count() == 0


async def test_the_error_frame_comes_before_the_close(finished_run):
    """The error frame is the last data frame; the close with the error's code follows it."""
    comm = socket(finished_run)
    assert (await comm.connect(timeout=5))[0]
    frames, code = await read_until_close(comm)
    await comm.disconnect()
    assert [f["kind"] for f in frames] == ["error"] and code == 4401


@pytest.mark.parametrize(
    ("origin", "host", "allowed"),
    [
        (None, "testserver", True),
        ("http://testserver", "testserver", True),
        ("http://[::1]:8000", "[::1]:8000", True),
        ("https://evil.example", "testserver", False),
        ("https://evil.example", "evil.example", False),  # a host this site does not serve
        ("null", "testserver", False),
        ("chrome-extension://abc", "testserver", False),
    ],
)
def test_origin_rules(settings, origin, host, allowed):
    """The origin table of docs/events.md, decided before any session or database work."""
    from delivery.origin import origin_allowed

    settings.ALLOWED_HOSTS = ["testserver", "[::1]"]
    settings.CSRF_TRUSTED_ORIGINS = []
    assert origin_allowed(origin, host) is allowed
