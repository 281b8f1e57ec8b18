"""The document ACL: unrestricted documents are readable by every user of the
tenant; restricted ones only by holders of the guardian object permission
knowledge.read_document, which can be granted and revoked at any time."""

import pytest
from django.contrib.auth import get_user_model
from guardian.shortcuts import assign_perm, remove_perm

from knowledge.models import user_may_read_document
from tests import factories

pytestmark = pytest.mark.django_db


def fresh(user):
    """A new instance, so no permission cache of an earlier check can answer."""
    return get_user_model().objects.get(pk=user.pk)


@pytest.fixture
def version(tenant, alice):
    version = factories.make_knowledge(tenant, "fund-reports")
    factories.add_document(version, ["公开的季度报告。"], key="report")
    factories.add_document(version, ["内部纪要。"], key="memo", readers=[alice])
    factories.add_document(version, ["另一份纪要。"], key="memo-2", readers=[])
    return factories.publish(version)


@pytest.fixture
def report(version):
    return version.documents.get(key="report")


@pytest.fixture
def memo(version):
    return version.documents.get(key="memo")


def test_an_unrestricted_document_is_readable_by_every_user_of_the_tenant(report, alice, bob):
    assert user_may_read_document(fresh(alice), report)
    assert user_may_read_document(fresh(bob), report)


def test_a_user_of_another_tenant_cannot_read_an_unrestricted_document(report, outsider):
    assert not user_may_read_document(fresh(outsider), report)


def test_a_restricted_document_is_readable_only_with_the_permission(memo, alice, bob):
    assert user_may_read_document(fresh(alice), memo)
    assert not user_may_read_document(fresh(bob), memo)


def test_granting_the_permission_opens_a_restricted_document(memo, bob):
    assign_perm("knowledge.read_document", bob, memo)
    assert user_may_read_document(fresh(bob), memo)


def test_revoking_the_permission_closes_a_restricted_document(memo, alice):
    remove_perm("knowledge.read_document", alice, memo)
    assert not user_may_read_document(fresh(alice), memo)


def test_the_permission_is_per_document(version, memo, alice):
    other = version.documents.get(key="memo-2")
    assert user_may_read_document(fresh(alice), memo)
    assert not user_may_read_document(fresh(alice), other)


def test_a_permission_does_not_cross_tenants(memo, outsider):
    assign_perm("knowledge.read_document", outsider, memo)
    assert not user_may_read_document(fresh(outsider), memo)


def test_a_platform_admin_is_not_a_reader(memo, report, admin_user):
    """Staff have no tenant: they provision, they do not read business sources."""
    assert not user_may_read_document(fresh(admin_user), memo)
    assert not user_may_read_document(fresh(admin_user), report)
