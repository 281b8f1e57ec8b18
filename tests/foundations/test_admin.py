"""Django admin for provisioning: every model has a page, published versions are
read-only, and the actions publish/revoke versions, revoke leases and tokens,
bump an app's policy epochs and suspend it. Plus ensure_console_admin."""

import re
from datetime import timedelta
from io import StringIO

import pytest
from django.apps import apps as django_apps
from django.contrib import admin
from django.contrib.admin.utils import quote
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.urls import reverse
from django.utils import timezone

from agents.models import AgentVersion
from knowledge.models import Knowledge, KnowledgeVersion, Lease
from tenancy.authentication import authenticate_token
from tenancy.models import ApiToken, App, hash_token
from tests import factories

pytestmark = pytest.mark.django_db

OUR_APPS = ("tenancy", "knowledge", "agents")


@pytest.fixture
def client(client, admin_user):
    client.force_login(admin_user)
    return client


@pytest.fixture
def published(tenant, alice):
    version = factories.make_knowledge(tenant, "fund-reports", version="2026-10")
    factories.add_document(version, ["第一页。", "第二页。"], key="report", readers=[alice])
    return factories.publish(version)


def changelist(model) -> str:
    return reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_changelist")


def change(obj) -> str:
    # The ID as the admin quotes it: a raw "run_22…" reads as 'run"…' there.
    return reverse(
        f"admin:{obj._meta.app_label}_{obj._meta.model_name}_change", args=[quote(obj.pk)]
    )


def run_action(client, model, action: str, *objects):
    return client.post(
        changelist(model),
        {"action": action, "_selected_action": [o.pk for o in objects]},
        follow=True,
    )


def test_every_model_of_the_platform_core_has_an_admin():
    for label in OUR_APPS:
        for model in django_apps.get_app_config(label).get_models():
            assert admin.site.is_registered(model), model


def test_every_admin_changelist_renders(client, app, published):
    factories.lease(app, published)
    factories.make_agent(
        app.tenant,
        "researcher",
        model={"provider": "extractive"},
        knowledge=[published],
        pin_to=[app],
    )
    for label in OUR_APPS:
        for model in django_apps.get_app_config(label).get_models():
            response = client.get(changelist(model))
            assert response.status_code == 200, model
            obj = model.objects.first()
            if obj is not None:
                assert client.get(change(obj)).status_code == 200, model


def test_a_published_knowledge_version_is_read_only_in_the_admin(client, published):
    page = client.get(change(published))
    assert page.status_code == 200
    assert 'name="_save"' not in page.content.decode()
    response = client.post(
        change(published), {"version": "tampered", "knowledge": published.knowledge_id}
    )
    assert response.status_code == 403
    assert KnowledgeVersion.objects.get(pk=published.pk).version == "2026-10"


def test_a_published_remote_version_does_not_show_its_secret(client, tenant):
    version = factories.make_knowledge(
        tenant,
        "crm",
        type=Knowledge.Type.REMOTE,
        endpoint="http://127.0.0.1:9100/retrieve",
        secret="very-secret-signing-key",
    )
    factories.publish(version)
    page = client.get(change(version)).content.decode()
    assert "very-secret-signing-key" not in page


def test_a_draft_knowledge_version_is_editable(client, tenant):
    draft = factories.make_knowledge(tenant, "drafts")
    assert 'name="_save"' in client.get(change(draft)).content.decode()


def test_the_publish_action_publishes_a_draft_knowledge_version(client, tenant):
    draft = factories.make_knowledge(tenant, "drafts")
    run_action(client, KnowledgeVersion, "publish_versions", draft)
    draft.refresh_from_db()
    assert draft.status == KnowledgeVersion.Status.PUBLISHED and draft.published_at


def test_the_publish_action_refuses_a_remote_version_without_endpoint(client, tenant):
    draft = factories.make_knowledge(tenant, "crm", type=Knowledge.Type.REMOTE)
    response = run_action(client, KnowledgeVersion, "publish_versions", draft)
    assert "needs an endpoint" in response.content.decode()
    draft.refresh_from_db()
    assert draft.status == KnowledgeVersion.Status.DRAFT


def test_the_revoke_action_revokes_a_published_version(client, published):
    run_action(client, KnowledgeVersion, "revoke_versions", published)
    published.refresh_from_db()
    assert published.status == KnowledgeVersion.Status.REVOKED and published.revoked_at


def test_the_acl_of_a_published_document_stays_editable(client, published):
    document = published.documents.get()
    inline = {"facts-TOTAL_FORMS": "0", "facts-INITIAL_FORMS": "0"}
    response = client.post(change(document), {"restricted": "", **inline})
    assert response.status_code == 302
    document.refresh_from_db()
    assert document.restricted is False
    assert document.title == "文档"


def test_the_object_permission_pages_render(client, app, published):
    for obj in (app, published.documents.get()):
        url = reverse(
            f"admin:{obj._meta.app_label}_{obj._meta.model_name}_permissions", args=[quote(obj.pk)]
        )
        assert client.get(url).status_code == 200


def test_the_revoke_lease_action(client, app, published):
    lease = factories.lease(app, published)
    run_action(client, Lease, "revoke_leases", lease)
    lease.refresh_from_db()
    assert lease.revoked_at is not None and not Lease.objects.current().filter(pk=lease.pk).exists()


def test_the_lease_list_says_which_leases_are_current_by_the_capability_rule(
    client, app, published
):
    """Revoked and expired leases are not current; an open-ended one and one expiring later are."""
    other = factories.make_app(app.tenant, "other")
    third = factories.make_app(app.tenant, "third")
    fourth = factories.make_app(app.tenant, "fourth")
    now = timezone.now()
    leases = {
        "open": factories.lease(app, published),
        "later": factories.lease(other, published, expires_at=now + timedelta(days=1)),
        "expired": factories.lease(third, published, expires_at=now - timedelta(seconds=1)),
        "revoked": factories.lease(fourth, published, revoked_at=now),
    }
    response = client.get(changelist(Lease))
    shown = {row.pk: row.current_now for row in response.context["cl"].result_list}
    assert {name: shown[lease.pk] for name, lease in leases.items()} == {
        "open": True,
        "later": True,
        "expired": False,
        "revoked": False,
    }


def test_the_revoke_token_action(client, alice):
    token = ApiToken.objects.get(user=alice)
    run_action(client, ApiToken, "revoke_tokens", token)
    assert authenticate_token(alice.raw_token) is None


def test_a_token_issued_in_the_admin_is_shown_once_and_stored_hashed(client, alice):
    response = client.post(
        reverse("admin:tenancy_apitoken_add"), {"user": alice.pk, "name": "ci"}, follow=True
    )
    raw = re.search(r"st_[A-Za-z0-9_-]{20,}", response.content.decode()).group(0)
    token = ApiToken.objects.get(user=alice, name="ci")
    assert token.digest == hash_token(raw)
    assert authenticate_token(raw) == alice
    assert raw not in client.get(change(token)).content.decode()


def test_a_token_cannot_be_edited_in_the_admin(client, alice):
    token = ApiToken.objects.get(user=alice)
    assert client.post(change(token), {"name": "renamed", "user": alice.pk}).status_code == 403


def test_the_epoch_actions_bump_by_one(client, app):
    run_action(client, App, "bump_security_policy_epoch", app)
    run_action(client, App, "bump_knowledge_access_epoch", app)
    run_action(client, App, "bump_knowledge_access_epoch", app)
    app.refresh_from_db()
    assert (app.security_policy_epoch, app.knowledge_access_epoch) == (2, 3)


def test_the_suspend_action_suspends_an_app(client, app):
    run_action(client, App, "suspend_apps", app)
    app.refresh_from_db()
    assert app.status == App.Status.SUSPENDED
    run_action(client, App, "activate_apps", app)
    app.refresh_from_db()
    assert app.status == App.Status.ACTIVE


def test_a_published_agent_version_is_read_only_and_can_be_retired(client, tenant, published):
    version = factories.make_agent(tenant, "researcher", model={"provider": "extractive"})
    assert 'name="_save"' not in client.get(change(version)).content.decode()
    run_action(client, AgentVersion, "retire_versions", version)
    version.refresh_from_db()
    assert version.status == AgentVersion.Status.RETIRED


def test_a_pinned_agent_version_cannot_be_retired(client, app):
    version = factories.make_agent(
        app.tenant, "researcher", model={"provider": "extractive"}, pin_to=[app]
    )
    response = run_action(client, AgentVersion, "retire_versions", version)
    assert "pin another version first" in response.content.decode()
    version.refresh_from_db()
    assert version.status == AgentVersion.Status.PUBLISHED


def test_the_publish_action_publishes_a_draft_agent_version(client, tenant):
    agent = factories.make_agent(tenant, "researcher", model={"provider": "extractive"}).agent
    draft = AgentVersion.objects.create(agent=agent, version="2", model={"provider": "extractive"})
    run_action(client, AgentVersion, "publish_versions", draft)
    draft.refresh_from_db()
    assert draft.status == AgentVersion.Status.PUBLISHED


def test_the_admin_is_closed_to_business_users(client, alice):
    client.force_login(alice)
    response = client.get(changelist(App))
    assert response.status_code == 302


# ---------------------------------------------------------------- ensure_console_admin


def test_ensure_console_admin_creates_a_staff_superuser_and_prints_a_generated_password(db):
    out = StringIO()
    call_command("ensure_console_admin", "--username", "ops", stdout=out)
    password = re.search(r"password=(\S+)", out.getvalue()).group(1)
    ops = get_user_model().objects.get(username="ops")
    assert ops.is_staff and ops.is_superuser and ops.check_password(password)


def test_ensure_console_admin_refreshes_an_existing_user(db):
    User = get_user_model()
    User.objects.create_user("ops", password="old-password-123", is_active=False)
    out = StringIO()
    call_command(
        "ensure_console_admin", "--username", "ops", "--password", "new-password-456", stdout=out
    )
    assert "refreshed" in out.getvalue() and "new-password-456" not in out.getvalue()
    ops = User.objects.get(username="ops")
    assert ops.is_active and ops.is_staff and ops.check_password("new-password-456")


def test_ensure_console_admin_reads_the_environment(db, monkeypatch):
    monkeypatch.setenv("SPARKTIDE_ADMIN_USERNAME", "envadmin")
    monkeypatch.setenv("SPARKTIDE_ADMIN_PASSWORD", "env-password-789")
    call_command("ensure_console_admin", stdout=StringIO())
    assert get_user_model().objects.get(username="envadmin").check_password("env-password-789")


def test_the_console_admin_can_log_in_to_the_console(client, db):
    out = StringIO()
    call_command("ensure_console_admin", "--username", "ops", stdout=out)
    password = re.search(r"password=(\S+)", out.getvalue()).group(1)
    client.logout()
    response = client.post(reverse("console:login"), {"username": "ops", "password": password})
    assert response.status_code == 302


def test_the_console_admins_session_survives_a_restart_that_keeps_its_password(
    client, db, tmp_path
):
    """make demo runs ensure_console_admin --password-file on every start: the kept password
    is not hashed again, so a logged-in admin stays logged in across restarts."""
    kept = tmp_path / "admin_password"
    call_command(
        "ensure_console_admin", "--username", "ops", "--password-file", kept, stdout=StringIO()
    )
    client.login(username="ops", password=kept.read_text().strip())
    assert client.get("/console/").status_code in (200, 302)
    home = client.get(reverse("console:home"))
    assert home.status_code == 200
    call_command(
        "ensure_console_admin", "--username", "ops", "--password-file", kept, stdout=StringIO()
    )
    assert client.get(reverse("console:home")).status_code == 200


def test_a_new_password_still_ends_the_admins_sessions(client, db):
    call_command(
        "ensure_console_admin",
        "--username",
        "ops",
        "--password",
        "first-pass-123",
        stdout=StringIO(),
    )
    client.login(username="ops", password="first-pass-123")
    assert client.get(reverse("console:home")).status_code == 200
    call_command(
        "ensure_console_admin",
        "--username",
        "ops",
        "--password",
        "second-pass-456",
        stdout=StringIO(),
    )
    assert client.get(reverse("console:home")).status_code == 302
