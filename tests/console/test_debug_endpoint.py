"""The staff-only endpoint of 运行调试 that tries another published version of a pinned agent.

The run's owner is proved by the owner's bearer token, verified on the server; which
version may run, membership and the input rules are start_run's."""

import pytest
from django.utils import timezone

from agents.models import AgentVersion
from runs.models import Run
from runtime.services import MAX_INPUT_CHARS
from tenancy.models import ApiToken
from tests import factories
from tests.console.conftest import ANSWER_STEPS

pytestmark = pytest.mark.django_db

URL = "/console/apps/business/debug/runs"


@pytest.fixture
def second_version(app, knowledge, researcher):
    return factories.make_agent(
        app.tenant,
        "researcher",
        model=factories.scripted(*ANSWER_STEPS),
        knowledge=[knowledge],
        version="2",
    )


def post(client, **fields):
    return client.post(URL, {"agent": "researcher", "input": "营收如何？", **fields})


def test_it_creates_a_run_of_the_chosen_version_owned_by_the_tokens_user(
    staff_client, second_version, alice, app
):
    response = post(staff_client, version=second_version.pk, token=alice.raw_token)
    assert response.status_code == 201
    body = response.json()
    run = Run.objects.get(pk=body["id"])
    assert (run.owner, run.agent_version, run.status) == (alice, second_version, "QUEUED")
    assert (body["agent"], body["agentVersion"]) == ("researcher", "2")
    assert app.agent_pins.get().version.version == "1"  # the pin does not move


def test_the_owner_is_the_tokens_user_and_no_owner_field_is_believed(
    staff_client, second_version, alice, bob
):
    response = post(staff_client, version=second_version.pk, token=bob.raw_token, owner=alice.pk)
    assert response.status_code == 201
    assert Run.objects.get(pk=response.json()["id"]).owner == bob


@pytest.mark.parametrize(
    "token",
    ["", "st_not_a_real_token", "prefix-only"],
)
def test_a_token_the_server_cannot_verify_creates_no_run(
    staff_client, second_version, alice, token
):
    if token == "prefix-only":
        token = alice.raw_token[:10]  # what the page used to match: proves nothing
    response = post(staff_client, version=second_version.pk, token=token)
    assert (response.status_code, response.json()["code"]) == (400, "INVALID_REQUEST")
    assert Run.objects.count() == 0


def test_a_revoked_token_creates_no_run(staff_client, second_version, alice):
    alice.api_tokens.update(revoked_at=timezone.now())
    response = post(staff_client, version=second_version.pk, token=alice.raw_token)
    assert response.status_code == 400
    assert Run.objects.count() == 0


def test_it_refuses_a_token_of_a_user_who_is_not_a_member_of_the_app(
    staff_client, second_version, outsider, tenant, admin_user
):
    stranger = factories.make_user(tenant, "carol")  # same tenant, not in the app
    _, admin_token = ApiToken.issue(admin_user)  # the staff user's own token owns nothing
    for token in (outsider.raw_token, stranger.raw_token, admin_token):
        response = post(staff_client, version=second_version.pk, token=token)
        assert (response.status_code, response.json()["code"]) == (404, "RESOURCE_NOT_FOUND")
    assert Run.objects.count() == 0


def test_it_refuses_a_draft_version_and_another_agents_version(
    staff_client, researcher, app, alice, knowledge
):
    draft = AgentVersion.objects.create(
        agent=researcher.agent, version="3-draft", model=factories.scripted(*ANSWER_STEPS)
    )
    other = factories.make_agent(
        app.tenant, "other", model=factories.scripted(*ANSWER_STEPS), knowledge=[knowledge]
    )
    for version in (draft, other):
        response = post(staff_client, version=version.pk, token=alice.raw_token)
        assert (response.status_code, response.json()["code"]) == (422, "AGENT_NOT_AVAILABLE")
    assert Run.objects.count() == 0


def test_it_refuses_an_agent_not_pinned_in_the_app(staff_client, second_version, alice):
    response = post(staff_client, agent="nobody", version=second_version.pk, token=alice.raw_token)
    assert (response.status_code, response.json()["code"]) == (422, "AGENT_NOT_AVAILABLE")


@pytest.mark.parametrize("text", ["   ", "问" * (MAX_INPUT_CHARS + 1)])
def test_it_applies_the_run_input_rules(staff_client, second_version, alice, text):
    response = post(staff_client, version=second_version.pk, token=alice.raw_token, input=text)
    assert (response.status_code, response.json()["code"]) == (400, "INVALID_REQUEST")
    assert "input" in response.json()["detail"]
    assert Run.objects.count() == 0


def test_a_suspended_app_answers_app_not_active(staff_client, second_version, alice, app):
    app.status = "SUSPENDED"
    app.save()
    response = post(staff_client, version=second_version.pk, token=alice.raw_token)
    assert (response.status_code, response.json()["code"]) == (403, "APP_NOT_ACTIVE")


def test_it_is_for_staff_only(client, second_version, alice):
    client.force_login(alice)
    response = post(client, version=second_version.pk, token=alice.raw_token)
    assert response.status_code == 302
    assert Run.objects.count() == 0


def test_it_only_accepts_posts(staff_client):
    assert staff_client.get(URL).status_code == 405
