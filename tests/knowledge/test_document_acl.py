"""Retrieval returns only chunks of documents the run's owner may read, and the
ACL is applied in the query, before top_k."""

import pytest
from django.contrib.auth.models import Group
from guardian.shortcuts import assign_perm, remove_perm

from knowledge.models import Document, user_may_read_document
from knowledge.retrieval import readable_documents, search_managed
from tests.factories import add_document, make_knowledge, make_tenant, make_user, publish

pytestmark = pytest.mark.django_db


@pytest.fixture
def version(tenant, alice):
    version = make_knowledge(tenant, "reports")
    add_document(version, ["公开材料：营收增长。"], key="public")
    add_document(version, ["内部材料：营收增长，营收超预期。"], key="secret", readers=[alice])
    return publish(version)


def keys(version, owner, query="营收", top_k=5):
    items = search_managed([version], query=query, top_k=top_k, owner=owner)
    return [item.document.key for item in items]


def test_the_owner_with_the_permission_sees_the_restricted_document(version, alice):
    assert keys(version, alice) == ["secret", "public"]


def test_a_restricted_document_is_invisible_to_a_member_without_the_permission(version, bob):
    assert keys(version, bob) == ["public"]


def test_a_restricted_document_becomes_visible_after_assign_perm(version, bob):
    assign_perm("knowledge.read_document", bob, Document.objects.get(key="secret"))

    assert keys(version, bob) == ["secret", "public"]


def test_a_restricted_document_disappears_after_remove_perm(version, alice):
    remove_perm("knowledge.read_document", alice, Document.objects.get(key="secret"))

    assert keys(version, alice) == ["public"]


def test_a_group_permission_opens_a_restricted_document(version, bob):
    analysts = Group.objects.create(name="analysts")
    bob.groups.add(analysts)
    assign_perm("knowledge.read_document", analysts, Document.objects.get(key="secret"))

    assert keys(version, bob) == ["secret", "public"]


def test_a_user_of_another_tenant_sees_nothing(version, outsider):
    assert keys(version, outsider) == []


def test_a_permission_on_another_tenants_document_opens_nothing(version, outsider):
    assign_perm("knowledge.read_document", outsider, Document.objects.get(key="secret"))

    assert keys(version, outsider) == []


def test_a_user_without_a_tenant_sees_nothing(version, admin_user):
    assert keys(version, admin_user) == []


def test_forbidden_chunks_do_not_use_up_top_k(tenant, alice, bob):
    version = make_knowledge(tenant)
    for n in range(3):
        add_document(version, ["营收营收营收，营收增长。"], key=f"secret-{n}", readers=[alice])
    add_document(version, ["提到营收。"], key="public")
    publish(version)

    assert keys(version, bob, top_k=1) == ["public"]


def test_permission_on_a_document_of_another_version_does_not_leak(version, tenant, bob):
    other = make_knowledge(tenant, "other")
    add_document(other, ["另一份：营收。"], key="elsewhere", readers=[bob])
    publish(other)

    assert keys(version, bob) == ["public"]


def test_readable_documents_agrees_with_the_preview_check(version, tenant, alice, bob, outsider):
    """The preview re-checks one document with user_may_read_document; retrieval
    must have applied the same rule, or a citation would be unpreviewable."""
    colleague = make_user(tenant, "carol")
    analysts = Group.objects.create(name="analysts")
    colleague.groups.add(analysts)
    assign_perm("knowledge.read_document", analysts, Document.objects.get(key="secret"))
    root = make_user(tenant, "root-of-acme")
    root.is_superuser = True
    root.save()
    other_tenant_admin = make_user(make_tenant(), "root-elsewhere")
    other_tenant_admin.is_superuser = True
    other_tenant_admin.save()
    deactivated = make_user(tenant, "dave")
    deactivated.is_active = False
    deactivated.save()

    for user in (alice, bob, outsider, colleague, root, other_tenant_admin, deactivated):
        readable = set(readable_documents(user, [version]))
        expected = {
            d for d in Document.objects.filter(version=version) if user_may_read_document(user, d)
        }
        assert readable == expected, user.username


def test_an_inactive_owner_retrieves_nothing_not_even_unrestricted_documents(version, bob):
    """Source proof refuses an inactive owner every document; retrieval must not have
    issued a citation for one."""
    bob.is_active = False
    bob.save()

    assert keys(version, bob) == []


def test_a_search_counts_the_chunks_the_acl_kept_out_without_naming_them(version, alice, bob):
    assert search_managed([version], query="营收", top_k=5, owner=bob).acl_refused == 1
    assert search_managed([version], query="营收", top_k=5, owner=alice).acl_refused == 0
