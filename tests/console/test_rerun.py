"""用其他版本重跑 from 运行详情: the run's question again with another published version of its
agent, as the run's owner — the owner's own token, verified by the server as in 运行调试; never a
staff member's own credentials, never another member's."""

import pytest
from django.test import Client

from agents.models import AgentPin, AgentVersion
from console.models import Rerun
from runs.models import Run
from tests import factories
from tests.console.conftest import ANSWER_STEPS

pytestmark = pytest.mark.django_db


@pytest.fixture
def second(app, knowledge, researcher):
    """researcher@2: published, not pinned (the app still pins researcher@1)."""
    return factories.make_agent(
        app.tenant,
        "researcher",
        model=factories.scripted(*ANSWER_STEPS),
        knowledge=[knowledge],
        version="2",
    )


@pytest.fixture
def run(researcher, make_run):
    return make_run(input="北辰医药三季度营收如何？", session_id="desk-7")


def rerun(client, run, **fields):
    return client.post(f"/console/runs/{run.pk}/reruns", fields)


def test_a_rerun_is_a_run_of_the_owner_with_the_chosen_version_and_the_same_question(
    staff_client, run, second, alice, admin_user
):
    response = rerun(staff_client, run, token=alice.raw_token, version=second.pk)
    assert response.status_code == 201, response.content
    body = response.json()
    new = Run.objects.select_related("agent_version__agent").get(pk=body["id"])
    assert new.owner == alice and new.app == run.app
    assert new.agent_version == second and new.input == run.input
    assert new.session_id == ""  # a debugging run adds no turn to the business session
    assert body["agentVersion"] == "2" and body["rerunOf"] == run.pk
    assert body["url"] == f"/console/runs/{new.pk}/"
    link = Rerun.objects.get(run=new)
    assert link.original == run and link.started_by == admin_user
    # The app's pin does not move.
    assert AgentPin.objects.get(app=run.app, agent__key="researcher").version.version == "1"

    # The new run links back; the original lists its re-runs.
    page = staff_client.get(f"/console/runs/{new.pk}/").content.decode()
    assert f'data-rerun-of="{run.pk}"' in page and f'href="/console/runs/{run.pk}/"' in page
    original = staff_client.get(f"/console/runs/{run.pk}/").content.decode()
    listed = original.split("data-reruns>")[1].split("</ul>")[0]
    assert f'href="/console/runs/{new.pk}/"' in listed and "@2" in listed
    assert "还没有重跑" not in listed and "data-rerun-of" not in original


def test_the_panel_offers_the_agents_published_versions_another_one_first(
    staff_client, run, second, app
):
    draft = AgentVersion.objects.create(agent=second.agent, version="3-draft", model={})
    page = staff_client.get(f"/console/runs/{run.pk}/").content.decode()
    panel = page.split('id="rerun"')[1].split("</section>")[0]
    assert f'<option value="{second.pk}" selected>researcher@2</option>' in panel
    assert f'value="{run.agent_version_id}">researcher@1 （本次运行的版本）' in panel
    assert f'value="{draft.pk}"' not in panel
    assert "还没有重跑。" in panel


def staff_member(tenant, username):
    """A console user who is also a business user of the tenant, with their own token."""
    user = factories.make_user(tenant, username)
    user.is_staff = True
    user.save()
    client = Client()
    client.force_login(user)
    return user, client


def test_a_staff_member_with_their_own_token_and_no_access_to_the_app_gets_404(run, second, tenant):
    ops, client = staff_member(tenant, "ops")
    response = rerun(client, run, token=ops.raw_token, version=second.pk)
    assert response.status_code == 404
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["code"] == "RESOURCE_NOT_FOUND"
    assert Run.objects.count() == 1 and not Rerun.objects.exists()


def test_a_staff_member_who_is_a_member_of_the_app_still_cannot_rerun_as_themselves(
    run, second, tenant, app
):
    """Membership of the app is not ownership of the run: the identical 404."""
    ops, client = staff_member(tenant, "ops")
    factories.make_app(tenant, "other")  # unrelated
    app.memberships.create(user=ops)
    denied = rerun(client, run, token=ops.raw_token, version=second.pk)
    assert denied.status_code == 404
    assert Run.objects.count() == 1


def test_another_members_or_another_tenants_token_gets_the_identical_404(
    staff_client, run, second, bob, outsider
):
    bodies = set()
    for user in (bob, outsider):
        response = rerun(staff_client, run, token=user.raw_token, version=second.pk)
        assert response.status_code == 404
        bodies.add(response.content)
    assert len(bodies) == 1
    assert Run.objects.count() == 1 and not Rerun.objects.exists()


def test_a_version_that_may_not_run_is_refused_with_its_reason(staff_client, run, alice, app):
    draft = AgentVersion.objects.create(
        agent=run.agent_version.agent, version="3", model=factories.scripted(*ANSWER_STEPS)
    )
    other_agent = factories.make_agent(app.tenant, "helper", model=factories.scripted())
    for version in (draft.pk, other_agent.pk, 999_999):
        response = rerun(staff_client, run, token=alice.raw_token, version=version)
        assert response.status_code == 422, version
        problem = response.json()
        assert problem["code"] == "AGENT_NOT_AVAILABLE"
        assert problem["detail"] == "只有此应用固定的智能体的已发布版本可以运行。"
    assert Run.objects.count() == 1 and not Rerun.objects.exists()


@pytest.mark.parametrize(
    ("fields", "detail"),
    [
        ({"token": "st_not-a-token", "version": "1"}, "token: 令牌无效或已撤销。"),
        ({"version": "1"}, "token: 该字段是必填项。"),
        ({"token": "TOKEN", "version": "abc"}, "version: 输入整数。"),
        ({"token": "TOKEN", "version": "0"}, "version: "),
        ({"token": "TOKEN\x00", "version": "1"}, "token: "),
    ],
)
def test_bad_input_is_a_400_problem_never_a_500(staff_client, run, alice, fields, detail):
    fields = {k: v.replace("TOKEN", alice.raw_token) for k, v in fields.items()}
    response = rerun(staff_client, run, **fields)
    assert response.status_code == 400
    assert response.json()["code"] == "INVALID_REQUEST"
    assert detail in response.json()["detail"]


def test_rerun_is_staff_only_and_csrf_protected(client, run, second, alice, admin_user):
    client.force_login(alice)  # the owner herself is no console user
    response = rerun(client, run, token=alice.raw_token, version=second.pk)
    assert response.status_code == 302 and "/console/login/" in response["Location"]
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(admin_user)
    assert rerun(strict, run, token=alice.raw_token, version=second.pk).status_code == 403
    assert Run.objects.count() == 1


def test_rerun_of_a_missing_run_is_404(staff_client, alice, researcher):
    response = staff_client.post("/console/runs/run_missing/reruns", {"token": alice.raw_token})
    assert response.status_code == 404


def test_a_run_detail_costs_the_same_queries_with_many_reruns(staff_client, run, second, alice):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    def cost():
        with CaptureQueriesContext(connection) as queries:
            assert staff_client.get(f"/console/runs/{run.pk}/").status_code == 200
        return len(queries)

    assert rerun(staff_client, run, token=alice.raw_token, version=second.pk).status_code == 201
    one = cost()
    for _ in range(3):
        assert rerun(staff_client, run, token=alice.raw_token, version=second.pk).status_code == 201
    assert cost() == one
