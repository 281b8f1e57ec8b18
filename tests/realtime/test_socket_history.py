"""The WebSocket passes the same gate as every history read (runs.access.access_run_history):
a ticket issued while the owner could read the run opens nothing once they cannot."""

import pytest
from channels.db import database_sync_to_async
from guardian.shortcuts import remove_perm

from sparktide.tenancy.models import Membership
from tests.realtime.helpers import open_and_read, socket, ticket_for

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
