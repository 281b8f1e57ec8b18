"""Membership has one home (tenancy/models.py ``Membership.objects.current()``): an active
user, a business user of the app's own tenant, with a membership row in the app. The two entry
points that ask it — ``access_app_for_member`` (runs/access.py: the REST and evaluation
surfaces) and ``require_member`` (runtime/services.py: every run started) — give the same
answer for every user, whichever is asked first: neither relies on the other having run."""

import itertools

import pytest

from foundation.errors import ErrorCode, SparkTideError
from runs.access import access_app_for_member
from runtime.services import require_member
from tenancy.models import Membership
from tests import factories

pytestmark = pytest.mark.django_db


def _by_slug(user, app) -> bool:
    try:
        return access_app_for_member(user, app.slug) == app
    except SparkTideError as refused:
        assert refused.code == ErrorCode.RESOURCE_NOT_FOUND
        return False


def _before_a_run(user, app) -> bool:
    try:
        require_member(user, app)
    except SparkTideError as refused:
        assert refused.code == ErrorCode.RESOURCE_NOT_FOUND
        return False
    return True


ENTRY_POINTS = {"access_app_for_member": _by_slug, "require_member": _before_a_run}


@pytest.fixture
def users(tenant, app, alice, outsider):
    """Who asks, and whether they are a member now."""
    inactive = factories.make_user(tenant, "former")
    Membership.objects.create(app=app, user=inactive)
    inactive.is_active = False
    inactive.save(update_fields=["is_active"])
    # A membership row naming a user of another tenant (written by hand in the admin, say).
    Membership.objects.create(app=app, user=outsider)
    stranger = factories.make_user(tenant, "stranger")
    return {
        "a member": (alice, True),
        "a deactivated member": (inactive, False),
        "a member row of another tenant's user": (outsider, False),
        "a user of the tenant in no membership": (stranger, False),
    }


@pytest.mark.parametrize("order", list(itertools.permutations(ENTRY_POINTS)))
def test_both_entry_points_answer_alike_in_either_order(app, users, order):
    for case, (user, member) in users.items():
        answers = [ENTRY_POINTS[name](user, app) for name in order]
        assert answers == [member, member], f"{case}: {dict(zip(order, answers, strict=True))}"


def test_an_open_sockets_re_read_refuses_an_owner_deactivated_since_it_opened(app, alice):
    """The socket's re-read of the history gate (runs/access.py ``run_for_history_read``) asks
    the same membership: an owner deactivated after the ticket was spent is no member now."""
    from runs.access import require_run_history, run_for_history_read

    run = factories.scripted_run(app, alice, [{"text": "好"}], execute=False)
    require_run_history(run_for_history_read(run.pk))
    alice.is_active = False
    alice.save(update_fields=["is_active"])
    with pytest.raises(SparkTideError) as refused:
        require_run_history(run_for_history_read(run.pk))
    assert refused.value.code == ErrorCode.BUSINESS_PERMISSION_DENIED
