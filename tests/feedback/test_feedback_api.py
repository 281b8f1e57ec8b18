"""Feedback on a run and on its answer blocks: PUT replaces, GET lists, only the owner,
bad input a documented problem, counts per agent version in one query."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from feedback.models import Feedback
from feedback.service import counts_by_agent_version, give_feedback
from tests import factories
from tests.factories import client_for

pytestmark = pytest.mark.django_db(transaction=True)

STEPS = [{"answerPart": "第一段回答。"}, {"answerPart": "第二段回答。"}]


@pytest.fixture
def run(app, alice):
    return factories.scripted_run(app, alice, STEPS)


def _url(run) -> str:
    return f"/v1/apps/{run.app.slug}/runs/{run.pk}/feedback"


def _blocks(run, user) -> list[str]:
    answer = client_for(user).get(f"/v1/apps/{run.app.slug}/runs/{run.pk}/answer").json()
    return [block["id"] for block in answer["blocks"]]


def test_the_owner_rates_the_run_and_a_second_put_replaces_the_first(run, alice):
    api = client_for(alice)
    first = api.put(_url(run), {"rating": "up", "note": "清楚"}, format="json")
    assert first.status_code == 200, first.content
    assert first.json()["rating"] == "up" and first.json()["block"] is None
    second = api.put(_url(run), {"rating": "down", "note": "引用不对"}, format="json")
    assert second.status_code == 200
    listed = api.get(_url(run)).json()["feedback"]
    assert [(f["rating"], f["note"], f["block"]) for f in listed] == [("down", "引用不对", None)]
    assert listed[0]["createdAt"] == first.json()["createdAt"]
    assert listed[0]["updatedAt"] > first.json()["updatedAt"]
    assert Feedback.objects.filter(run=run).count() == 1


def test_feedback_on_each_block_stands_beside_the_runs_own(run, alice):
    api = client_for(alice)
    blocks = _blocks(run, alice)
    assert len(blocks) == 2
    api.put(_url(run), {"rating": "up"}, format="json")
    api.put(_url(run), {"rating": "down", "block": blocks[1], "note": "第二段错"}, format="json")
    api.put(_url(run), {"rating": "up", "block": blocks[0]}, format="json")
    api.put(_url(run), {"rating": "up", "block": blocks[1]}, format="json")  # replaces
    listed = api.get(_url(run)).json()["feedback"]
    assert sorted((f["block"] or "", f["rating"], f["note"]) for f in listed) == sorted(
        [("", "up", ""), (blocks[0], "up", ""), (blocks[1], "up", "")]
    )


def test_a_note_of_exactly_2000_characters_is_kept(run, alice):
    response = client_for(alice).put(
        _url(run), {"rating": "up", "note": "字" * 2000}, format="json"
    )
    assert response.status_code == 200
    assert Feedback.objects.get(run=run).note == "字" * 2000


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"rating": "meh"}, "rating"),
        ({"note": "没有评价"}, "rating"),
        ({"rating": "up", "note": "字" * 2001}, "note"),
        ({"rating": "up", "note": "a\x00b"}, "note"),
        ({"rating": "up", "block": "pub_not_in_this_run"}, "block"),
        ({"rating": "up", "block": "pub\x00"}, "block"),
        ({"rating": "up", "stars": 5}, "stars"),
    ],
)
def test_bad_feedback_is_a_400_naming_the_field_and_stores_nothing(run, alice, body, field):
    response = client_for(alice).put(_url(run), body, format="json")
    assert response.status_code == 400, response.content
    assert response["Content-Type"] == "application/problem+json"
    problem = response.json()
    assert problem["code"] == "INVALID_REQUEST"
    assert problem["detail"].startswith(f"{field}:"), problem["detail"]
    assert not Feedback.objects.exists()


def test_a_block_of_another_run_of_the_same_owner_is_refused(app, alice, run):
    other = factories.scripted_run(app, alice, STEPS, key="other")
    foreign_block = _blocks(other, alice)[0]
    response = client_for(alice).put(
        _url(run), {"rating": "up", "block": foreign_block}, format="json"
    )
    assert (response.status_code, response.json()["code"]) == (400, "INVALID_REQUEST")
    assert not Feedback.objects.exists()


def test_anyone_but_the_owner_gets_the_identical_404_of_get_run(run, alice, bob, outsider):
    give_feedback(run, owner=alice, rating="up", note="私密备注")
    expected = client_for(bob).get(f"/v1/apps/{run.app.slug}/runs/{run.pk}")
    assert expected.status_code == 404
    for user in (bob, outsider):
        api = client_for(user)
        for response in (
            api.get(_url(run)),
            api.put(_url(run), {"rating": "down", "note": "x"}, format="json"),
        ):
            assert response.status_code == 404
            assert response.content == expected.content
            assert "私密备注" not in response.content.decode()
    missing = client_for(alice).get(f"/v1/apps/{run.app.slug}/runs/run_missing/feedback")
    assert missing.content == expected.content
    assert list(Feedback.objects.values_list("rating", flat=True)) == ["up"]


def test_no_token_is_a_401(run):
    response = client_for().put(_url(run), {"rating": "up"}, format="json")
    assert (response.status_code, response.json()["code"]) == (401, "AUTHENTICATION_REQUIRED")


def test_counts_per_agent_version_take_one_query_whatever_the_number(app, alice):
    runs = [factories.scripted_run(app, alice, STEPS, key=f"agent{i}") for i in range(3)]
    give_feedback(runs[0], owner=alice, rating="up")
    give_feedback(runs[0], owner=alice, rating="down", block_id=_blocks(runs[0], alice)[0])
    give_feedback(runs[1], owner=alice, rating="down")
    versions = [r.agent_version_id for r in runs]
    with CaptureQueriesContext(connection) as queries:
        counts = counts_by_agent_version(versions)
    assert len(queries) == 1
    assert counts == {versions[0]: (1, 1), versions[1]: (0, 1)}


def test_the_database_itself_holds_one_feedback_per_target(run, alice):
    """Two writers that both miss the other's row still cannot store two: the partial unique
    constraints refuse the second run-level row and the second row on the same block."""
    from django.db import IntegrityError, transaction

    block = _blocks(run, alice)[0]
    Feedback.objects.create(run=run, owner=alice, rating="up")
    Feedback.objects.create(run=run, owner=alice, rating="up", block_id=block)
    for extra in ({}, {"block_id": block}):
        with pytest.raises(IntegrityError), transaction.atomic():
            Feedback.objects.create(run=run, owner=alice, rating="down", **extra)
    assert Feedback.objects.filter(run=run).count() == 2


def test_listing_feedback_costs_the_same_queries_for_one_item_or_three(run, alice):
    api = client_for(alice)
    blocks = _blocks(run, alice)
    api.put(_url(run), {"rating": "up"}, format="json")
    api.get(_url(run))  # the token's first use (last-used stamp) out of the count
    with CaptureQueriesContext(connection) as one:
        assert len(api.get(_url(run)).json()["feedback"]) == 1
    for block in blocks:
        api.put(_url(run), {"rating": "down", "block": block}, format="json")
    with CaptureQueriesContext(connection) as three:
        assert len(api.get(_url(run)).json()["feedback"]) == 3
    assert len(one) == len(three), [q["sql"] for q in three]


@pytest.mark.timing
@pytest.mark.postgres(reason="SQLite serializes writers: no two creates meet")
def test_concurrent_feedback_on_the_same_target_ends_in_one_row_and_no_error(run, alice):
    """Eight PUTs of the same target released together: none fails, one row is left."""
    import threading

    barrier = threading.Barrier(8)
    errors: list[BaseException] = []

    def put(index: int) -> None:
        try:
            barrier.wait(timeout=10)
            give_feedback(run, owner=alice, rating="up" if index % 2 else "down", note=str(index))
        except BaseException as error:  # noqa: BLE001 - any failure is the finding
            errors.append(error)
        finally:
            from django.db import close_old_connections

            close_old_connections()

    threads = [threading.Thread(target=put, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert errors == []
    (only,) = Feedback.objects.filter(run=run)
    assert only.note in {str(i) for i in range(8)}
