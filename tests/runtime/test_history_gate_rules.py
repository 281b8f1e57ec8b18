"""The run-history permission rule of runs/access.py, on each of its three paths: the
request's run query (``access_run_for_owner(history_permission=True)``), a loaded run
(``require_history_permission`` querying itself) and an open socket's re-read
(``run_for_history_read``). The owner's *own* membership of *this* app, and
``view_run_history`` on *this* app held by the owner or a group the owner is in — nothing
held elsewhere, or by someone else, opens it. Found as mutants of ``_history_grant`` and
``_run_for_owner`` that survived every other test (docs/reliability.md "## Mutation")."""

import pytest
from django.contrib.auth.models import Group
from django.db import connection
from django.test.utils import CaptureQueriesContext
from guardian.shortcuts import assign_perm, remove_perm

from foundation.errors import SparkTideError
from runs.access import (
    access_app_for_member,
    access_run_for_owner,
    access_run_history,
    require_history_permission,
    require_run_history,
    run_for_history_read,
)
from runs.models import Run
from tenancy.models import App, Membership, TenantUser
from tests import factories

pytestmark = pytest.mark.django_db

PERMISSION = "tenancy.view_run_history"
GATES = ["request", "loaded", "socket"]


@pytest.fixture
def run(app, alice):
    return factories.scripted_run(app, alice, [{"text": "好"}], execute=False)


def may_read_history(gate: str, run: Run) -> bool:
    """Whether the owner may read ``run``'s history now, through one path of the rule."""
    owner = run.owner
    if gate == "request":
        read = access_run_for_owner(owner, run.app.slug, run.pk, history_permission=True)
    elif gate == "loaded":
        read = access_run_for_owner(owner, run.app.slug, run.pk)
    else:
        read = run_for_history_read(run.pk)
    try:
        require_history_permission(read)
    except SparkTideError as refused:
        assert refused.code == "BUSINESS_PERMISSION_DENIED"
        return False
    return True


@pytest.fixture
def other_app(tenant, alice):
    """Another app of the tenant where the owner is a member holding the permission."""
    return factories.make_app(tenant, "other", members=[alice])


@pytest.mark.parametrize("gate", GATES)
def test_the_owner_holding_the_permission_on_the_app_reads_its_history(gate, run):
    assert may_read_history(gate, run)


@pytest.mark.parametrize("gate", GATES)
def test_an_owner_removed_from_the_app_is_refused_though_permitted_in_another_app(
    gate, run, app, alice, other_app
):
    Membership.objects.filter(app=app, user=alice).delete()  # the permission on app stays
    assert not may_read_history(gate, run)


@pytest.mark.parametrize("gate", GATES)
def test_the_permission_held_on_another_app_only_does_not_open_this_one(
    gate, run, app, alice, other_app
):
    remove_perm(PERMISSION, alice, app)  # still a member of app, permitted on other_app
    assert not may_read_history(gate, run)


@pytest.mark.parametrize("gate", GATES)
def test_a_group_holding_the_permission_on_another_app_only_does_not_open_this_one(
    gate, run, app, alice, other_app
):
    remove_perm(PERMISSION, alice, app)
    remove_perm(PERMISSION, alice, other_app)
    analysts = Group.objects.create(name="analysts")
    analysts.user_set.add(alice)
    assign_perm(PERMISSION, analysts, other_app)
    assert not may_read_history(gate, run)


@pytest.mark.parametrize("gate", GATES)
def test_another_members_permission_does_not_open_the_owners_history(gate, run, app, alice):
    remove_perm(PERMISSION, alice, app)  # bob, a member, keeps his on the same app
    assert not may_read_history(gate, run)


@pytest.mark.parametrize("gate", GATES)
def test_a_group_the_owner_is_not_in_does_not_open_its_history(gate, run, app, alice, bob):
    remove_perm(PERMISSION, alice, app)
    assign_perm(PERMISSION, Group.objects.create(name="nobody"), app)  # no member at all
    bobs = Group.objects.create(name="bobs")
    bobs.user_set.add(bob)
    assign_perm(PERMISSION, bobs, app)
    assert not may_read_history(gate, run)


@pytest.mark.parametrize("gate", GATES)
def test_a_group_of_the_owner_holding_the_permission_opens_its_history(gate, run, app, alice):
    remove_perm(PERMISSION, alice, app)
    analysts = Group.objects.create(name="analysts")
    analysts.user_set.add(alice)
    assign_perm(PERMISSION, analysts, app)
    assert may_read_history(gate, run)


@pytest.mark.parametrize("gate", GATES)
def test_a_superuser_owner_needs_its_membership_but_not_the_permission(gate, run, app, alice):
    alice.is_superuser = True
    alice.save(update_fields=["is_superuser"])
    remove_perm(PERMISSION, alice, app)
    run = Run.objects.select_related("app", "owner").get(pk=run.pk)
    assert may_read_history(gate, run)

    Membership.objects.filter(app=app, user=alice).delete()
    assert not may_read_history(gate, run)


# --- the owner query: only the active owner, of the run's own tenant ----------------------


def assert_not_found(user, app_slug: str, run_id: str) -> None:
    for history_permission in (False, True):
        with pytest.raises(SparkTideError) as refused:
            access_run_for_owner(user, app_slug, run_id, history_permission=history_permission)
        assert refused.value.code == "RESOURCE_NOT_FOUND"


def test_a_deactivated_owner_gets_not_found(run, app, alice):
    alice.is_active = False
    alice.save(update_fields=["is_active"])
    assert_not_found(alice, app.slug, run.pk)


def test_an_owner_moved_to_another_tenant_gets_not_found(run, app, alice):
    TenantUser.objects.filter(user=alice).update(tenant=factories.make_tenant("initech"))
    assert_not_found(alice, app.slug, run.pk)


def test_a_run_whose_app_moved_to_another_tenant_is_not_found(run, app, alice):
    App.objects.filter(pk=app.pk).update(tenant=factories.make_tenant("initech"))
    assert_not_found(alice, app.slug, run.pk)


# --- the hot path: one query, the app read with the run -----------------------------------


def test_a_request_history_gate_costs_one_query(run, app, alice):
    access_run_history(alice, app.slug, run.pk)  # content types and the statement, once
    require_run_history(access_run_for_owner(alice, app.slug, run.pk, history_permission=True))
    with CaptureQueriesContext(connection) as queries:
        require_run_history(access_run_for_owner(alice, app.slug, run.pk, history_permission=True))
    assert len(queries) == 1


def test_a_sockets_history_re_check_costs_one_query(run):
    require_run_history(run_for_history_read(run.pk))  # content types and the statement, once
    with CaptureQueriesContext(connection) as queries:
        read = run_for_history_read(run.pk)
        require_run_history(read)
    assert len(queries) == 1


def test_the_owners_run_comes_with_what_its_views_read(run, app, alice):
    for history_permission in (False, True):
        found = access_run_for_owner(alice, app.slug, run.pk, history_permission=history_permission)
        with CaptureQueriesContext(connection) as queries:
            read = (found.app.slug, found.tenant.key, found.owner.tenant_user.tenant_id)
            agent = found.agent_version.agent.key
        assert read == (app.slug, app.tenant.key, app.tenant_id)
        assert agent == run.agent_version.agent.key
        assert len(queries) == 0


def test_a_sockets_re_read_comes_with_its_app_tenant_and_owner(run, app, alice):
    found = run_for_history_read(run.pk)
    with CaptureQueriesContext(connection) as queries:
        read = (found.app.slug, found.tenant.key, found.owner.username)
    assert read == (app.slug, app.tenant.key, alice.username)
    assert len(queries) == 0


def test_a_members_app_comes_with_its_tenant(app, alice):
    found = access_app_for_member(alice, app.slug)
    with CaptureQueriesContext(connection) as queries:
        key = found.tenant.key
    assert key == app.tenant.key
    assert len(queries) == 0


def test_a_run_gone_before_a_sockets_re_read_is_named_in_its_does_not_exist(run):
    run_for_history_read(run.pk)
    Run.objects.filter(pk=run.pk).delete()
    with pytest.raises(Run.DoesNotExist) as gone:
        run_for_history_read(run.pk)
    assert gone.value.args == (run.pk,)


def test_a_run_read_without_the_history_flag_is_checked_anew(run, app, alice):
    found = access_run_for_owner(alice, app.slug, run.pk)  # no answer read with the run
    remove_perm(PERMISSION, alice, app)
    with pytest.raises(SparkTideError) as refused:
        require_history_permission(found)
    assert refused.value.code == "BUSINESS_PERMISSION_DENIED"
