"""The preview asks the same capability rule retrieval and source proof ask
(knowledge: PUBLISHED, a current lease of the app, the app's tenant), and the
document ACL is checked before the re-fetched digest."""

import pytest
from django.db import connection
from guardian.shortcuts import remove_perm

from citations.models import CitationReference
from knowledge.models import Chunk, Knowledge
from tests import factories
from tests.factories import client_for

pytestmark = pytest.mark.django_db


def problem(response) -> tuple[int, str]:
    assert response["Content-Type"] == "application/problem+json"
    assert response["Cache-Control"] == "no-store"
    return response.status_code, response.json()["code"]


def test_with_the_acl_revoked_and_the_chunk_changed_the_answer_is_knowledge_access_denied(
    cited_memo, alice, knowledge
):
    remove_perm("knowledge.read_document", alice, knowledge.memo)
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {Chunk._meta.db_table} SET text = %s WHERE id = %s",
            ["纪要已被改写", cited_memo.reference.chunk_id],
        )

    response = client_for(alice).get(cited_memo.url)

    assert problem(response) == (403, "KNOWLEDGE_ACCESS_DENIED")
    assert "改写" not in response.content.decode()


def test_a_version_moved_to_another_tenant_is_refused_even_with_a_current_lease(
    cited, alice, knowledge
):
    """A lease does not carry a version across tenants: knowledge access denied (403)."""
    elsewhere = factories.make_tenant("elsewhere")
    Knowledge.objects.filter(pk=knowledge.knowledge_id).update(tenant=elsewhere)

    assert problem(client_for(alice).get(cited.url)) == (403, "KNOWLEDGE_ACCESS_DENIED")


def test_the_preview_and_source_proof_answer_from_the_same_rule(cited, alice, app, knowledge):
    from citations.evidence import SourceAccess
    from knowledge.models import Lease

    reference = CitationReference.objects.select_related("version__knowledge").get(
        pk=cited.reference.pk
    )
    assert SourceAccess(cited.run).version_ok(reference.version)
    Lease.objects.filter(app=app).delete()

    assert problem(client_for(alice).get(cited.url)) == (503, "CAPABILITY_UNAVAILABLE")
    assert not SourceAccess(cited.run).version_ok(reference.version)
