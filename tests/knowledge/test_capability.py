"""One capability rule for using a knowledge version: PUBLISHED, a current lease of
the app, the app's tenant. Retrieval searches nothing else (no chunk, no REMOTE call)."""

from datetime import timedelta

import pytest
from django.utils import timezone

from knowledge.models import CapabilityRefusal, KnowledgeVersion, capability_refusals
from knowledge.retrieval import retrieve
from tests import factories
from tests.factories import add_document, lease, make_knowledge, publish
from tests.remote_server import make_remote_version, remote_item

pytestmark = pytest.mark.django_db


@pytest.fixture
def reports(tenant, app):
    version = make_knowledge(tenant, "reports")
    add_document(version, ["公开材料：北辰医药营收增长。"], key="public")
    publish(version)
    version.app_lease = lease(app, version)
    return version


@pytest.fixture
def crm(tenant, app, remote_knowledge):
    remote_knowledge.set_items([remote_item("crm-1", "拜访记录：营收。", version="1")])
    version = make_remote_version(tenant, remote_knowledge, key="crm")
    version.app_lease = lease(app, version)
    return version


def search(app, owner, context, *versions):
    return retrieve(
        versions=list(versions), query="营收", top_k=5, owner=owner, app=app, context=context
    )


def expire(version) -> None:
    version.app_lease.expires_at = timezone.now() - timedelta(seconds=1)
    version.app_lease.save()


def revoke_lease(version) -> None:
    version.app_lease.revoked_at = timezone.now()
    version.app_lease.save()


def test_a_leased_published_version_of_the_apps_tenant_is_usable(reports, crm, app):
    assert set(KnowledgeVersion.objects.usable_by(app)) == {reports, crm}
    assert capability_refusals(app, [reports, crm]) == {reports.pk: None, crm.pk: None}


@pytest.mark.parametrize("cut", [expire, revoke_lease])
def test_a_managed_version_whose_lease_is_not_current_is_never_searched(
    reports, app, alice, context, cut
):
    assert search(app, alice, context, reports)
    cut(reports)

    assert search(app, alice, context, reports) == []
    assert capability_refusals(app, [reports]) == {reports.pk: CapabilityRefusal.NO_CURRENT_LEASE}


@pytest.mark.parametrize("cut", [expire, revoke_lease])
def test_a_remote_endpoint_is_never_called_when_the_lease_is_not_current(
    crm, app, alice, context, remote_knowledge, cut
):
    cut(crm)

    assert search(app, alice, context, crm) == []
    assert remote_knowledge.requests == []


def test_a_version_without_any_lease_of_the_app_is_never_searched(
    tenant, alice, context, reports, crm, remote_knowledge
):
    other_app = factories.make_app(tenant, "other", members=[alice])

    assert search(other_app, alice, context, reports, crm) == []
    assert remote_knowledge.requests == []


def test_a_remote_version_of_another_tenant_is_refused_even_when_leased(
    app, alice, context, remote_knowledge
):
    remote_knowledge.set_items([remote_item("x-1", "别人的营收。", version="1")])
    foreign = make_remote_version(factories.make_tenant("globex"), remote_knowledge, key="crm")
    lease(app, foreign)

    assert search(app, alice, context, foreign) == []
    assert remote_knowledge.requests == []
    assert capability_refusals(app, [foreign]) == {foreign.pk: CapabilityRefusal.OTHER_TENANT}


def test_a_revoked_version_is_refused_before_its_lease_is_considered(reports, app):
    reports.status = KnowledgeVersion.Status.REVOKED
    reports.save()

    assert capability_refusals(app, [reports.pk]) == {reports.pk: CapabilityRefusal.NOT_PUBLISHED}
    assert not KnowledgeVersion.objects.usable_by(app).exists()


def test_the_capability_of_many_versions_is_one_query(reports, crm, app, django_assert_num_queries):
    with django_assert_num_queries(1):
        capability_refusals(app, [reports, crm])
