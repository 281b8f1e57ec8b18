"""sparktide-client's send_feedback / list_feedback (sync and async) against a real daphne:
the owner's 👍/👎 on the run and on a block, a second send replaces, bad input is the
server's INVALID_REQUEST naming the field, another member gets NotFoundError."""

import asyncio

import pytest
from sparktide_client import AsyncClient, BadRequestError, NotFoundError

from feedback.models import Feedback
from tests.clients.test_python_client import client_for, finished_run

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


def test_the_owner_sends_and_lists_feedback_and_others_cannot(sparktide_server, agents, alice, bob):
    with client_for(sparktide_server, alice) as client:
        run = finished_run(client)
        block = client.answer(run["id"])["blocks"][0]["id"]
        given = client.send_feedback(run["id"], "up", note="引用准确")
        assert (given["rating"], given["note"], given["block"]) == ("up", "引用准确", None)
        client.send_feedback(run["id"], "down", block=block, note="第一段数字不对")
        client.send_feedback(run["id"], "down")  # replaces the run's own
        listed = client.list_feedback(run["id"])
        assert sorted((f["block"] or "", f["rating"], f["note"]) for f in listed) == sorted(
            [("", "down", ""), (block, "down", "第一段数字不对")]
        )
        with pytest.raises(BadRequestError) as refused:
            client.send_feedback(run["id"], "meh")
        assert refused.value.code == "INVALID_REQUEST" and "rating" in refused.value.detail
        with pytest.raises(BadRequestError) as too_long:
            client.send_feedback(run["id"], "up", note="字" * 2001)
        assert "note" in too_long.value.detail
    with client_for(sparktide_server, bob) as other:
        with pytest.raises(NotFoundError):
            other.send_feedback(run["id"], "up")
        with pytest.raises(NotFoundError):
            other.list_feedback(run["id"])
    assert Feedback.objects.filter(run_id=run["id"]).count() == 2


def test_the_async_client_sends_and_lists_feedback(sparktide_server, agents, alice):
    with client_for(sparktide_server, alice) as client:
        run = finished_run(client)

    async def main() -> list[dict]:
        async with AsyncClient(sparktide_server.url, "business", alice.raw_token) as client:
            await client.send_feedback(run["id"], "up", note="好")
            return await client.list_feedback(run["id"])

    listed = asyncio.run(main())
    assert [(f["rating"], f["note"], f["block"]) for f in listed] == [("up", "好", None)]
