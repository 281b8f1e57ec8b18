"""The preview's reference statement: prepared on the server once per connection, read
into the same instances as the ORM's, the document's version read once — and every
click still runs it, so nothing it reads is kept (docs/preview.md "Cost")."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from citations.access import _reference_query
from citations.models import CitationReference
from citations.preview import _read_with
from foundation import compiled
from knowledge.models import Chunk
from tests import factories
from tests.factories import client_for
from tests.prepared import Since
from tests.preview.conftest import preview_url

pytestmark = pytest.mark.django_db

postgresql_only = pytest.mark.postgres(reason="prepared statements are PostgreSQL's")
REFERENCE_SELECT = 'SELECT "citations_citationreference"."id"'


def reference_runs(since: Since) -> list[int]:
    # The source proof's read of references (citations/evidence.py) is prepared too.
    return since.runs(REFERENCE_SELECT, excluding='AS "in_view"')


@postgresql_only
def test_the_reference_statement_is_prepared_once_and_run_on_every_click(cited, alice):
    client = client_for(alice)
    since = Since()
    for _ in range(3):
        assert client.get(cited.url).status_code == 200

    # One prepared statement, executed by each of the three clicks: PostgreSQL planned
    # its text once for this connection, and every click still ran it.
    assert reference_runs(since) == [3]


@postgresql_only
def test_a_chunk_altered_between_two_clicks_of_a_prepared_statement_is_caught(cited, alice):
    client = client_for(alice)
    since = Since()
    assert client.get(cited.url).status_code == 200
    with connection.cursor() as cursor:  # behind the platform's back: published is immutable
        cursor.execute(
            f"UPDATE {Chunk._meta.db_table} SET text = text || %s WHERE id = %s",
            ["（已篡改）", cited.reference.chunk_id],
        )

    response = client.get(cited.url)

    assert response.status_code == 409
    assert response.json()["code"] == "CITATION_SOURCE_CHANGED"
    assert reference_runs(since) == [2]  # the same statement read it anew


@postgresql_only
def test_an_explicit_prepare_threshold_of_none_prepares_nothing(cited, alice, monkeypatch):
    """``OPTIONS["prepare_threshold"] = None`` (e.g. behind PgBouncer in transaction mode)
    is kept: the statement is then sent with server-side binding but never prepared."""
    connection.ensure_connection()
    monkeypatch.setitem(connection.settings_dict["OPTIONS"], "prepare_threshold", None)
    monkeypatch.setattr(connection.connection, "prepare_threshold", None)
    client = client_for(alice)
    since = Since()
    for _ in range(2):
        assert client.get(cited.url).status_code == 200

    assert reference_runs(since) == []


@postgresql_only  # elsewhere the statement is not compiled (its time placeholder is cast)
def test_the_prepared_instances_are_those_the_orm_reads(cited, app):
    """``Prepared.instances`` (its converters and populators worked out once) gives the
    reference, its version, knowledge and document and every annotation exactly as the
    ORM's own iteration of the same query does, call after call."""
    now = timezone.now()
    placeholders = {
        "citation_id": compiled.placeholder_text("citation"),
        "run_id": compiled.placeholder_text("run"),
        "app_id": compiled.PLACEHOLDER_INT,
        "now": compiled.PLACEHOLDER_TIME,
        "read_with": _read_with(),
    }
    prepared = compiled.prepared_once(
        ("test_prepared_instances", *sorted(_read_with())),
        _reference_query,
        placeholders,
        fixed=("read_with",),
    )
    assert isinstance(prepared, compiled.Prepared)
    values = {"citation_id": cited.reference.pk, "run_id": cited.run.pk, "app_id": app.pk}
    values["now"] = now
    expected = list(_reference_query(**values, read_with=_read_with()))

    def state(reference: CitationReference) -> tuple:
        def fields(obj) -> dict:
            return {k: v for k, v in vars(obj).items() if not k.startswith("_")}

        return (
            fields(reference),
            fields(reference.version),
            fields(reference.version.knowledge),
            fields(reference.document),
        )

    for _ in range(2):  # the second call reuses the plan worked out by the first
        found = prepared.instances(values)
        assert [state(r) for r in found] == [state(r) for r in expected]
    assert found[0].chunk_text_now == Chunk.objects.get(pk=cited.reference.chunk_id).text
    assert found[0].app_lease_current is True


def test_the_reference_statement_reads_the_knowledge_version_once(cited, alice):
    """The document's version is the reference's own (step 9 checks it), so the
    statement joins the version table once, not a second time through the document."""
    with CaptureQueriesContext(connection) as queries:
        assert client_for(alice).get(cited.url).status_code == 200

    # (Django logs a server-bound statement as "QUERY = '…' - PARAMS = …".)
    (statement,) = [q["sql"] for q in queries if REFERENCE_SELECT in q["sql"]]
    assert statement.count('JOIN "knowledge_knowledgeversion"') == 1
    assert statement.count('JOIN "knowledge_knowledge"') == 1


def test_a_document_of_another_version_is_knowledge_access_denied(cited, alice, tenant):
    """The document's version is taken for the reference's only when their ids are equal;
    a reference whose document is of another version is refused, never shown."""
    other = factories.make_knowledge(tenant, "other-reports", version="2026-11")
    document = factories.add_document(other, ["另一版本的报告：营收增长12%。"], key="report-b")
    CitationReference.objects.filter(pk=cited.reference.pk).update(document=document)

    response = client_for(alice).get(preview_url(cited.run.pk, cited.reference.pk))

    assert response.status_code == 403
    assert response.json()["code"] == "KNOWLEDGE_ACCESS_DENIED"
