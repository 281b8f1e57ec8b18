"""The runs REST API: contracts of API.md, ownership, and no private field in public payloads."""

import json

import pytest
from django.core.management import call_command
from rest_framework.test import APIClient

from citations.models import CitationReference
from runs.models import Run
from runtime.engine import execute_run
from tests import factories
from tests.factories import client_for

pytestmark = pytest.mark.django_db(transaction=True)

STEPS = (
    {"search": "营收 querymarker", "topK": 2},
    {"answerPart": "营收增长 [[cite:{{c1}}]]"},
    {"answerPart": "营收增长 12% [[cite:{{c1}}]]", "replaces": "{{p1}}"},
)


@pytest.fixture
def researcher(app, knowledge):
    return factories.make_agent(
        app.tenant,
        "researcher",
        model=factories.scripted(*STEPS),
        knowledge=[knowledge],
        pin_to=[app],
    )


@pytest.fixture
def finished_run(researcher, alice):
    response = client_for(alice).post(
        "/v1/apps/business/runs", {"agent": "researcher", "input": "营收？"}, format="json"
    )
    assert response.status_code == 201, response.content
    execute_run(response.json()["id"])
    return Run.objects.get(pk=response.json()["id"])


def test_creating_a_run_answers_201_with_the_contract_fields(researcher, alice):
    response = client_for(alice).post(
        "/v1/apps/business/runs",
        {"agent": "researcher", "input": "营收？", "sessionId": "s-1"},
        format="json",
    )
    assert response.status_code == 201
    body = response.json()
    assert set(body) >= {"id", "status", "agent", "agentVersion", "createdAt"}
    assert body["id"].startswith("run_")
    assert (body["status"], body["agent"], body["agentVersion"]) == ("QUEUED", "researcher", "1")


def test_a_created_run_is_executed_by_the_task_worker(researcher, alice):
    response = client_for(alice).post(
        "/v1/apps/business/runs", {"agent": "researcher", "input": "营收？"}, format="json"
    )
    call_command("db_worker", "--batch", "--no-startup-delay", "--no-reload")
    assert Run.objects.get(pk=response.json()["id"]).status == "COMPLETED"


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        ({"input": "x"}, "agent"),
        ({"agent": "researcher"}, "input"),
        ({"agent": "researcher", "input": "   "}, "input"),
        ({"agent": "nobody", "input": "x"}, None),
    ],
)
def test_bad_run_requests_get_specific_problems(researcher, alice, body, fragment):
    response = client_for(alice).post("/v1/apps/business/runs", body, format="json")
    assert response["Content-Type"] == "application/problem+json"
    problem = response.json()
    if fragment:
        assert (response.status_code, problem["code"]) == (400, "INVALID_REQUEST")
        assert fragment in problem["detail"]
    else:
        assert (response.status_code, problem["code"]) == (422, "AGENT_NOT_AVAILABLE")
    assert Run.objects.count() == 0


def test_a_run_in_a_suspended_app_is_refused(researcher, alice, app):
    app.status = "SUSPENDED"
    app.save()
    response = client_for(alice).post(
        "/v1/apps/business/runs", {"agent": "researcher", "input": "x"}, format="json"
    )
    assert (response.status_code, response.json()["code"]) == (403, "APP_NOT_ACTIVE")


def test_missing_or_revoked_tokens_are_401(finished_run, alice):
    assert APIClient().get(f"/v1/apps/business/runs/{finished_run.pk}").status_code == 401
    alice.api_tokens.get().revoke()
    response = client_for(alice).get(f"/v1/apps/business/runs/{finished_run.pk}")
    assert (response.status_code, response.json()["code"]) == (401, "AUTHENTICATION_REQUIRED")


def test_the_run_is_readable_by_its_owner(finished_run, alice):
    body = client_for(alice).get(f"/v1/apps/business/runs/{finished_run.pk}").json()
    assert body["id"] == finished_run.pk
    assert body["status"] == "COMPLETED"
    assert {"createdAt", "completedAt", "sessionId"} <= set(body)


def test_everyone_but_the_owner_gets_the_same_404_as_a_missing_run(
    finished_run, bob, outsider, admin_user
):
    from tenancy.models import ApiToken

    _, admin_token = ApiToken.issue(admin_user)
    admin_client = APIClient()
    admin_client.credentials(HTTP_AUTHORIZATION=f"Bearer {admin_token}")
    missing = client_for(bob).get("/v1/apps/business/runs/run_doesnotexist")
    for client in (client_for(bob), client_for(outsider), admin_client):
        for suffix in ("", "/events", "/answer"):
            response = client.get(f"/v1/apps/business/runs/{finished_run.pk}{suffix}")
            assert response.status_code == 404
            assert response.content == missing.content
            assert response["Content-Type"] == missing["Content-Type"]


def test_events_page_through_a_cursor(finished_run, alice):
    client = client_for(alice)
    first = client.get(f"/v1/apps/business/runs/{finished_run.pk}/events?after=0&limit=3").json()
    assert [e["seq"] for e in first["events"]] == [1, 2, 3]
    assert first["nextAfter"] == 3 and first["terminal"] is False
    rest = client.get(f"/v1/apps/business/runs/{finished_run.pk}/events?after=3&limit=500").json()
    assert rest["events"][0]["seq"] == 4
    assert rest["terminal"] is True
    assert rest["events"][-1]["type"] == "run.completed"
    assert all(set(e) == {"seq", "type", "at", "data"} for e in rest["events"])


def test_events_refuse_a_bad_cursor(finished_run, alice):
    response = client_for(alice).get(f"/v1/apps/business/runs/{finished_run.pk}/events?after=-1")
    assert (response.status_code, response.json()["code"]) == (400, "INVALID_REQUEST")


def test_published_events_carry_the_body_read_through_the_reader(finished_run, alice):
    events = (
        client_for(alice)
        .get(f"/v1/apps/business/runs/{finished_run.pk}/events?limit=500")
        .json()["events"]
    )
    published = [e["data"] for e in events if e["type"] == "answer.published"]
    assert [(p["revision"], p["state"], p["outcome"]) for p in published] == [
        (1, "visible", "COMMITTED"),
        (2, "visible", "COMMITTED"),
    ]
    assert published[1]["content"]["text"].startswith("营收增长 12%")
    assert published[0]["publicationId"] == published[1]["publicationId"]


def test_the_answer_lists_current_revisions(finished_run, alice):
    blocks = (
        client_for(alice).get(f"/v1/apps/business/runs/{finished_run.pk}/answer").json()["blocks"]
    )
    assert len(blocks) == 1
    block = blocks[0]
    assert block["id"].startswith("pub_")
    assert (
        block["revision"],
        block["deliveryOrdinal"],
        block["state"],
        block["sourceHint"],
        block["truncated"],
    ) == (
        2,
        1,
        "visible",
        "verified",
        False,
    )


def test_no_private_reference_field_appears_in_any_public_payload(finished_run, alice):
    client = client_for(alice)
    payloads = [
        client.get(f"/v1/apps/business/runs/{finished_run.pk}").content,
        client.get(f"/v1/apps/business/runs/{finished_run.pk}/events?limit=500").content,
        client.get(f"/v1/apps/business/runs/{finished_run.pk}/answer").content,
    ]
    secrets = set()
    for ref in CitationReference.objects.filter(run=finished_run):
        secrets.add(ref.query)
        # A source without an original version is versioned by its normalized
        # snippet digest in the public sourceRef (DESIGN.md); any other digest is private.
        if ref.source_ref.get("version") != ref.digest:
            secrets.add(ref.digest)
    assert len(secrets) >= 2
    text = b"\n".join(payloads).decode()
    for secret in secrets:
        assert secret not in text
    for key in ("digest", "query", "topK", "top_k", "snippet"):
        assert f'"{key}"' not in text


def test_cancelling_a_running_run_ends_it_cancelled(app, alice, knowledge):
    import threading
    import time

    factories.make_agent(
        app.tenant,
        "slow",
        model=factories.scripted({"sleep": 0.2}, {"text": "a"}, {"sleep": 0.2}, {"text": "b"}),
        knowledge=[knowledge],
        pin_to=[app],
        max_steps=50,
    )
    client = client_for(alice)
    run_id = client.post(
        "/v1/apps/business/runs", {"agent": "slow", "input": "x"}, format="json"
    ).json()["id"]
    worker = threading.Thread(target=execute_run, args=(run_id,))
    worker.start()
    time.sleep(0.1)
    assert client.post(f"/v1/apps/business/runs/{run_id}/cancel").status_code == 202
    worker.join(10)
    from django.db import connections

    connections.close_all()
    run = Run.objects.get(pk=run_id)
    assert (run.status, run.reason) in {("CANCELLED", "CANCELLED_BY_USER")}
    assert (
        client.post(f"/v1/apps/business/runs/{run_id}/cancel").json()["code"]
        == "RUN_ALREADY_FINISHED"
    )


def test_the_openapi_schema_is_served(db):
    response = APIClient().get("/v1/schema", HTTP_ACCEPT="application/json")
    assert response.status_code == 200
    schema = (
        json.loads(response.content)
        if response["Content-Type"].startswith("application/json")
        else None
    )
    text = response.content.decode()
    assert "/v1/apps/{app}/runs" in text
    assert schema is None or "paths" in schema


def test_reading_events_uses_a_fixed_number_of_queries(
    finished_run, alice, django_assert_max_num_queries
):
    client = client_for(alice)
    with django_assert_max_num_queries(14):
        client.get(f"/v1/apps/business/runs/{finished_run.pk}/events?limit=500")


def test_a_nul_byte_in_the_run_id_is_the_same_404(finished_run, alice):
    client = client_for(alice)
    missing = client.get("/v1/apps/business/runs/run_doesnotexist")
    response = client.get("/v1/apps/business/runs/run_%00x/events")
    assert (response.status_code, response.content) == (404, missing.content)


def test_the_run_detail_shows_each_search_with_its_hits_and_what_the_answer_cited(
    finished_run, alice
):
    body = client_for(alice).get(f"/v1/apps/business/runs/{finished_run.pk}").json()

    (search,) = body["searches"]
    assert search["terms"] == ["营收", "querymarker"]
    assert search["expansions"] == {"营收": ["营业收入"]}
    assert search["versions"] == [
        v.label for v in finished_run.agent_version.allowed_knowledge.all()
    ]
    assert search["refused"] == {"versions": 0, "acl": 0}
    issued = list(CitationReference.objects.filter(run=finished_run).order_by("ordinal"))
    assert [hit["citationId"] for hit in search["hits"]] == [ref.pk for ref in issued]
    assert [hit["rank"] for hit in search["hits"]] == list(range(1, len(issued) + 1))
    assert search["hits"][0]["score"] == 1.0
    assert search["hits"][0]["document"] == issued[0].source_ref["id"]
    assert search["hits"][0]["page"] == issued[0].source_ref["page"]
    # The answer cites {{c1}}, the first hit, in its current revision.
    assert [hit["cited"] for hit in search["hits"]] == [True] + [False] * (len(issued) - 1)
