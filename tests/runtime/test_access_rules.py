"""Trust rules enforced at the service boundary: retrieval asks the app's capability,
start_run trusts no caller, one gate for run history, and no existence leak by cost."""

from datetime import timedelta

import pytest
from django.utils import timezone
from guardian.shortcuts import remove_perm

from agents.models import AgentVersion
from citations.models import CitationReference
from foundation.errors import SparkTideError
from knowledge.models import Lease
from runs.models import Run
from runtime.engine import execute_run
from runtime.services import MAX_INPUT_CHARS, start_run
from tenancy.models import Membership
from tests import factories, remote_server
from tests.factories import client_for
from tests.remote_server import make_remote_version, remote_item

pytestmark = pytest.mark.django_db(transaction=True)

remote_knowledge = remote_server.remote_knowledge  # the fixture

SEARCH = ({"search": "营收", "topK": 5}, {"answerPart": "营收 [[cite:{{c1}}]]"})


@pytest.fixture
def researcher(app, knowledge):
    """Versions 1 and 2 of a published agent; 2 is pinned in the app."""
    factories.make_agent(
        app.tenant, "researcher", model=factories.scripted(*SEARCH), knowledge=[knowledge]
    )
    return factories.make_agent(
        app.tenant,
        "researcher",
        model=factories.scripted(*SEARCH),
        knowledge=[knowledge],
        version="2",
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


# --- 1. retrieval asks the capability -------------------------------------------------


@pytest.mark.parametrize("cut", ["revoked", "expired"])
def test_a_run_never_searches_a_version_whose_lease_is_not_current(
    app, knowledge, remote_knowledge, cut
):
    remote_knowledge.set_items([remote_item("crm-1", "拜访记录：营收。", version="1")])
    crm = make_remote_version(app.tenant, remote_knowledge, key="crm")
    factories.lease(app, crm)
    now = timezone.now()
    change = {"revoked_at": now} if cut == "revoked" else {"expires_at": now - timedelta(1)}
    Lease.objects.filter(app=app).update(**change)

    factories.make_agent(
        app.tenant,
        "leased",
        model=factories.scripted(*SEARCH),
        knowledge=[knowledge, crm],
        pin_to=[app],
    )
    owner = app.memberships.order_by("id").first().user
    run = start_run(user=owner, app=app, agent_key="leased", input="营收？")
    execute_run(run.pk)

    assert remote_knowledge.requests == []
    assert not CitationReference.objects.filter(run=run).exists()
    assert not run.events.filter(type="citation.created").exists()


def test_a_run_never_calls_a_remote_version_of_another_tenant(app, alice, remote_knowledge):
    remote_knowledge.set_items([remote_item("x-1", "别人的营收。", version="1")])
    foreign = make_remote_version(factories.make_tenant("globex"), remote_knowledge, key="crm")
    factories.lease(app, foreign)
    factories.make_agent(
        app.tenant, "nosy", model=factories.scripted(*SEARCH), knowledge=[foreign], pin_to=[app]
    )
    run = start_run(user=alice, app=app, agent_key="nosy", input="营收？")
    execute_run(run.pk)

    assert remote_knowledge.requests == []
    assert not run.events.filter(type="citation.created").exists()


# --- 3. start_run trusts nobody -------------------------------------------------------


def test_start_run_refuses_a_draft_version(app, alice, researcher):
    draft = AgentVersion.objects.create(
        agent=researcher.agent, version="3-draft", model=factories.scripted(*SEARCH)
    )
    with pytest.raises(SparkTideError) as refused:
        start_run(user=alice, app=app, agent_key="researcher", input="x", agent_version=draft)
    assert (refused.value.status, refused.value.code) == (422, "AGENT_NOT_AVAILABLE")
    assert not Run.objects.exists()


def test_start_run_refuses_another_tenants_version_and_another_agents(
    app, alice, researcher, knowledge
):
    other_tenant = factories.make_tenant("globex")
    foreign = factories.make_agent(other_tenant, "researcher", model=factories.scripted(*SEARCH))
    other_agent = factories.make_agent(app.tenant, "other", model=factories.scripted(*SEARCH))
    for version in (foreign, other_agent, foreign.pk):
        with pytest.raises(SparkTideError) as refused:
            start_run(user=alice, app=app, agent_key="researcher", input="x", agent_version=version)
        assert refused.value.code == "AGENT_NOT_AVAILABLE"
    assert not Run.objects.exists()


def test_start_run_accepts_another_published_version_of_the_pinned_agent(app, alice, researcher):
    first = AgentVersion.objects.get(agent=researcher.agent, version="1")
    run = start_run(user=alice, app=app, agent_key="researcher", input="x", agent_version=first)
    assert run.agent_version == first


def test_start_run_refuses_a_user_who_is_not_a_member(app, researcher, outsider, tenant):
    stranger = factories.make_user(tenant, "carol")
    for user in (outsider, stranger):
        with pytest.raises(SparkTideError) as refused:
            start_run(user=user, app=app, agent_key="researcher", input="x")
        assert (refused.value.status, refused.value.code) == (404, "RESOURCE_NOT_FOUND")
    assert not Run.objects.exists()


@pytest.mark.parametrize("text", ["", "  \n\t", "问" * (MAX_INPUT_CHARS + 1), None])
def test_start_run_enforces_the_input_rules(app, alice, researcher, text):
    with pytest.raises(SparkTideError) as refused:
        start_run(user=alice, app=app, agent_key="researcher", input=text)
    assert (refused.value.status, refused.value.code) == (400, "INVALID_REQUEST")
    assert "input" in refused.value.detail
    assert not Run.objects.exists()


def test_the_rest_api_applies_the_same_input_rules(app, alice, researcher):
    for text, status in (("问" * MAX_INPUT_CHARS, 201), ("问" * (MAX_INPUT_CHARS + 1), 400)):
        response = client_for(alice).post(
            "/v1/apps/business/runs", {"agent": "researcher", "input": text}, format="json"
        )
        assert response.status_code == status


# --- 4 and 11. one gate for run history -------------------------------------------------


HISTORY = ("/events", "/answer")


def history_answers(run, user):
    client = client_for(user)
    base = f"/v1/apps/business/runs/{run.pk}"
    answers = [client.get(base + suffix) for suffix in HISTORY]
    answers.append(client.post(base + "/events/ticket"))
    return [(r.status_code, r.json().get("code")) for r in answers]


def test_history_reads_are_not_stored_by_browsers_or_proxies(finished_run, alice):
    for suffix in HISTORY:
        response = client_for(alice).get(f"/v1/apps/business/runs/{finished_run.pk}{suffix}")
        assert response.status_code == 200
        assert response["Cache-Control"] == "no-store"


def test_a_run_past_retention_gets_no_ticket(finished_run, alice):
    Run.objects.filter(pk=finished_run.pk).update(created_at=timezone.now() - timedelta(days=31))
    assert history_answers(finished_run, alice) == [(410, "EVENT_CURSOR_EXPIRED")] * 3


def test_an_archived_run_gets_no_ticket(finished_run, alice):
    Run.objects.filter(pk=finished_run.pk).update(archived_at=timezone.now())
    assert history_answers(finished_run, alice)[2] == (410, "EVENT_CURSOR_EXPIRED")


def test_history_is_refused_once_the_history_permission_is_removed(finished_run, alice, app):
    remove_perm("tenancy.view_run_history", alice, app)
    assert history_answers(finished_run, alice) == [(403, "BUSINESS_PERMISSION_DENIED")] * 3


def test_history_is_refused_once_the_owner_is_removed_from_the_app(finished_run, alice, app):
    Membership.objects.filter(app=app, user=alice).delete()
    assert history_answers(finished_run, alice) == [(403, "BUSINESS_PERMISSION_DENIED")] * 3


def test_history_is_refused_while_the_app_is_suspended(finished_run, alice, app):
    app.status = "SUSPENDED"
    app.save()
    assert history_answers(finished_run, alice) == [(403, "APP_NOT_ACTIVE")] * 3


def test_the_run_itself_stays_readable_by_its_owner_without_history(finished_run, alice, app):
    remove_perm("tenancy.view_run_history", alice, app)
    response = client_for(alice).get(f"/v1/apps/business/runs/{finished_run.pk}")
    assert response.status_code == 200


# --- 12. no existence leak by cost ------------------------------------------------------


def test_a_non_member_costs_the_same_and_reads_the_same_whether_the_app_exists_or_not(
    researcher, outsider, tenant, django_assert_num_queries
):
    stranger = factories.make_user(tenant, "carol")
    body = {"agent": "researcher", "input": "营收？"}
    for user in (outsider, stranger):
        client = client_for(user)
        client.post("/v1/apps/nothing-here/runs", body, format="json")  # last_used_at written
        answers = []
        for slug in ("business", "nothing-here"):
            with django_assert_num_queries(2):  # the token, then the app with membership
                answers.append(client.post(f"/v1/apps/{slug}/runs", body, format="json"))
        existing, missing = answers
        assert (existing.status_code, missing.status_code) == (404, 404)
        assert existing.content == missing.content
        assert existing.headers == missing.headers
    assert not Run.objects.exists()
