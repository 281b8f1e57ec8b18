"""GET /v1/apps/{app}/runs: the caller's own runs, newest first, keyset-paged by an opaque cursor."""

from datetime import timedelta

import pytest
from django.utils import timezone

from runs.models import Run
from tests import factories
from tests.factories import client_for

pytestmark = pytest.mark.django_db

URL = "/v1/apps/business/runs"


@pytest.fixture
def researcher(app):
    return factories.make_agent(
        app.tenant, "researcher", model=factories.scripted({"answerPart": "x"}), pin_to=[app]
    )


def make_runs(app, owner, agent_version, count, *, start=None, tie=1, **fields) -> list[Run]:
    """``count`` runs, ``tie`` of them at each timestamp (so the id has to break ties)."""
    start = start or timezone.now() - timedelta(days=1)
    runs = [
        Run(
            tenant=app.tenant,
            app=app,
            owner=owner,
            agent_version=agent_version,
            input="营收？",
            security_policy_epoch=app.security_policy_epoch,
            knowledge_access_epoch=app.knowledge_access_epoch,
            created_at=start + timedelta(seconds=i // tie),
            **fields,
        )
        for i in range(count)
    ]
    return Run.objects.bulk_create(runs)


def newest_first(runs) -> list[str]:
    return [r.pk for r in sorted(runs, key=lambda r: (r.created_at, r.pk), reverse=True)]


def page_through(client, query: str = "") -> list[list[str]]:
    pages, cursor = [], None
    while True:
        params = query + (f"&cursor={cursor}" if cursor else "")
        response = client.get(f"{URL}?{params}")
        assert response.status_code == 200, response.content
        body = response.json()
        pages.append([run["id"] for run in body["runs"]])
        cursor = body["nextCursor"]
        if cursor is None:
            return pages
        assert len(pages) <= 300, "the cursor never ended"


def test_250_runs_page_newest_first_without_a_gap_or_a_repeat(app, alice, bob, researcher):
    # Ten runs per timestamp: only the (createdAt, id) order keeps ties stable across pages.
    mine = make_runs(app, alice, researcher, 250, tie=10)
    theirs = make_runs(app, bob, researcher, 40, tie=10)

    pages = page_through(client_for(alice))

    assert [len(page) for page in pages] == [20] * 12 + [10]
    listed = [run_id for page in pages for run_id in page]
    assert len(listed) == len(set(listed)) == 250
    assert listed == newest_first(mine)
    assert not set(listed) & {r.pk for r in theirs}


def test_every_page_size_up_to_100_covers_the_same_runs(app, alice, researcher):
    mine = make_runs(app, alice, researcher, 250, tie=7)
    for limit in (7, 37, 100):
        pages = page_through(client_for(alice), f"limit={limit}")
        assert [r for page in pages for r in page] == newest_first(mine)
        assert max(len(page) for page in pages) == limit


def test_another_members_runs_never_appear(app, alice, bob, researcher):
    make_runs(app, alice, researcher, 5)
    body = client_for(bob).get(URL).json()
    assert body == {"runs": [], "nextCursor": None}


def test_a_listed_run_has_the_contract_fields(app, alice, researcher):
    (run,) = make_runs(app, alice, researcher, 1, session_id="s-1")
    listed = client_for(alice).get(URL).json()["runs"][0]
    assert listed == {
        "id": run.pk,
        "status": "QUEUED",
        "agent": "researcher",
        "agentVersion": "1",
        "sessionId": "s-1",
        "createdAt": run.created_at.isoformat(),
    }
    Run.objects.filter(pk=run.pk).update(status="COMPLETED", completed_at=timezone.now())
    listed = client_for(alice).get(URL).json()["runs"][0]
    assert listed["status"] == "COMPLETED" and "completedAt" in listed


def test_filters_by_status_session_and_created_range(app, alice, researcher):
    start = timezone.now() - timedelta(hours=1)
    done = make_runs(app, alice, researcher, 3, start=start, status="COMPLETED")
    queued = make_runs(app, alice, researcher, 2, start=start + timedelta(minutes=10))
    in_session = make_runs(
        app, alice, researcher, 2, start=start + timedelta(minutes=20), session_id="sess-9"
    )
    client = client_for(alice)

    def ids(query: str) -> set[str]:
        response = client.get(URL, query)
        assert response.status_code == 200, response.content
        return {run["id"] for run in response.json()["runs"]}

    assert ids({"status": "COMPLETED"}) == {r.pk for r in done}
    assert ids({"sessionId": "sess-9"}) == {r.pk for r in in_session}
    assert ids({"sessionId": ""}) == {r.pk for r in done + queued}
    window = {
        "createdAfter": (start + timedelta(minutes=10)).isoformat(),  # inclusive
        "createdBefore": (start + timedelta(minutes=20)).isoformat(),  # exclusive
    }
    assert ids(window) == {r.pk for r in queued}
    assert ids({**window, "status": "COMPLETED"}) == set()


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ({"limit": "0"}, "limit"),
        ({"limit": "101"}, "limit"),
        ({"limit": "ten"}, "limit"),
        ({"status": "DONE"}, "status"),
        ({"createdAfter": "yesterday"}, "createdAfter"),
        (
            {"createdAfter": "2026-10-02T00:00:00Z", "createdBefore": "2026-10-01T00:00:00Z"},
            "createdBefore",
        ),
        ({"cursor": "not-a-cursor"}, "cursor"),
    ],
)
def test_bad_query_values_are_a_400_invalid_request(app, alice, researcher, query, field):
    response = client_for(alice).get(URL, query)
    assert response.status_code == 400
    assert response["Content-Type"] == "application/problem+json"
    problem = response.json()
    assert problem["code"] == "INVALID_REQUEST"
    assert field in problem["detail"]


def test_a_tampered_cursor_is_refused(app, alice, researcher):
    make_runs(app, alice, researcher, 3)
    cursor = client_for(alice).get(URL, {"limit": 1}).json()["nextCursor"]
    tampered = cursor[:-2] + ("aa" if not cursor.endswith("aa") else "bb")
    response = client_for(alice).get(URL, {"cursor": tampered})
    assert (response.status_code, response.json()["code"]) == (400, "INVALID_REQUEST")


def test_a_non_member_gets_the_identical_404_of_a_missing_app(app, alice, tenant, outsider):
    stranger = factories.make_user(tenant, "carol")  # same tenant, not a member
    missing = client_for(alice).get("/v1/apps/no-such-app/runs")
    assert missing.status_code == 404
    for user in (stranger, outsider):
        response = client_for(user).get(URL)
        assert response.status_code == 404
        assert response.content == missing.content
        assert response["Content-Type"] == missing["Content-Type"] == "application/problem+json"


def test_no_token_is_a_401(app):
    from rest_framework.test import APIClient

    response = APIClient().get(URL)
    assert (response.status_code, response.json()["code"]) == (401, "AUTHENTICATION_REQUIRED")


def test_a_page_costs_three_queries_whatever_its_size(
    app, alice, researcher, django_assert_num_queries
):
    make_runs(app, alice, researcher, 120, tie=3)
    client = client_for(alice)
    cursor = client.get(URL).json()["nextCursor"]  # also refreshes the token's last_used_at
    # token, app with its membership (one query), the page (agent and version joined in)
    for query in ({"limit": 100}, {"limit": 100, "cursor": cursor, "status": "QUEUED"}):
        with django_assert_num_queries(3):
            assert client.get(URL, query).status_code == 200
