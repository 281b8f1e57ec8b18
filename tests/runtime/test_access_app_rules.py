"""``access_app_for_member`` (runs/access.py): the app named, and only for its members.
Found as a mutant (the slug filter dropped) that false kills had hidden."""

import pytest

from foundation.errors import SparkTideError
from runs.access import access_app_for_member
from tests import factories

pytestmark = pytest.mark.django_db


def test_a_member_of_two_apps_gets_the_one_named_and_nothing_for_an_app_it_is_not_in(
    tenant, app, alice, bob
):
    ops = factories.make_app(tenant, "ops", members=[alice])
    factories.make_app(tenant, "finance", members=[bob])

    assert access_app_for_member(alice, "business") == app
    assert access_app_for_member(alice, "ops") == ops
    assert access_app_for_member(bob, "business") == app
    for slug in ("finance", "missing"):
        with pytest.raises(SparkTideError):
            access_app_for_member(alice, slug)
