"""Each chunk carries its document's version (``Chunk.version``, migrations 0011–0013):
set for every chunk written, never another, filled for chunks stored before it, and on
PostgreSQL the key of the GIN index the candidates are matched on."""

import importlib
import io
from types import SimpleNamespace

import pytest
from django.db import IntegrityError, connection, transaction

from knowledge import candidates
from knowledge.files import ingest_file, read_stream
from knowledge.models import Chunk, Document
from knowledge.retrieval import search_managed
from tests.factories import add_document, make_knowledge, publish

pytestmark = pytest.mark.django_db

backfill_migration = importlib.import_module("knowledge.migrations.0012_chunk_version_backfill")


def chunk_versions(document: Document) -> set[int]:
    return set(Chunk.objects.filter(document=document).values_list("version_id", flat=True))


def test_every_ingested_chunk_takes_its_documents_version(tenant):
    version = make_knowledge(tenant)
    other = make_knowledge(tenant)
    document = add_document(version, ["第一页：营收增长。", "第二页：利润下降。"])
    add_document(other, ["别的版本。"])

    assert document.chunks.count() == 2
    assert chunk_versions(document) == {version.pk}


def test_a_chunk_of_an_uploaded_file_takes_its_documents_version(tenant):
    version = make_knowledge(tenant)
    parsed = read_stream(io.BytesIO("年度报告\n\n营收增长百分之十二。".encode()), "report.txt")

    document = ingest_file(version, parsed, key="annual")

    assert chunk_versions(document) == {version.pk}


def test_a_chunk_naming_another_version_than_its_documents_is_refused(tenant):
    version = make_knowledge(tenant)
    other = make_knowledge(tenant)
    document = add_document(version, ["营收增长。"])

    with pytest.raises(ValueError, match="its document is of"):
        Chunk.objects.bulk_create([_chunk(document, ordinal=1, version=other)])
    with pytest.raises(ValueError, match="its document is of"):
        _chunk(document, ordinal=1, version=other).save()
    assert document.chunks.count() == 1


@pytest.mark.postgres(reason="the (document, version) foreign key is PostgreSQL's")
def test_the_database_refuses_a_chunk_version_its_document_does_not_have(tenant):
    version = make_knowledge(tenant)
    other = make_knowledge(tenant)
    document = add_document(version, ["营收增长。"])

    with pytest.raises(IntegrityError), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        cursor.execute(
            "UPDATE knowledge_chunk SET version_id = %s WHERE document_id = %s",
            [other.pk, document.pk],
        )
    assert chunk_versions(document) == {version.pk}


@pytest.mark.postgres(reason="the (document, version) foreign key is PostgreSQL's")
def test_a_document_moved_to_another_draft_takes_its_chunks_along(tenant):
    version = make_knowledge(tenant)
    other = make_knowledge(tenant)
    document = add_document(version, ["营收增长。", "利润下降。"])

    document.version = other
    document.save()

    assert chunk_versions(document) == {other.pk}


def test_the_migration_fills_each_chunk_with_its_documents_version(tenant, capsys):
    version = make_knowledge(tenant)
    other = make_knowledge(tenant)
    first = add_document(version, ["营收增长。", "利润下降。"])
    second = add_document(other, ["别的版本。"])
    with connection.cursor() as cursor:
        # As stored before the column (or wrong): here the other version, on every chunk.
        # The foreign keys are checked at commit, which this test never reaches.
        cursor.execute("UPDATE knowledge_chunk SET version_id = %s", [other.pk])

    backfill_migration.backfill(None, SimpleNamespace(connection=connection))

    assert chunk_versions(first) == {version.pk}
    assert chunk_versions(second) == {other.pk}
    assert "chunk versions: 3 of 3" in capsys.readouterr().out


@pytest.mark.postgres(reason="the GIN index is PostgreSQL's")
def test_the_candidates_are_one_scan_of_the_version_and_vector_index(tenant, alice):
    """``version_id = ANY(…) AND search_vector @@ …`` are both conditions of one scan of
    one index: the versions' documents are not walked, their chunks not filtered."""
    version = make_knowledge(tenant)
    add_document(version, ["北辰医药三季度营收增长。", "研发投入继续加大。"])
    publish(version)
    # Another version's chunks holding the token: what the version key keeps out.
    add_document(make_knowledge(tenant), [f"第{n}页：营收增长。" for n in range(200)])
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE knowledge_chunk")
        cursor.execute(
            "SELECT indexdef FROM pg_indexes WHERE indexname = 'knowledge_chunk_search_vector_gin'"
        )
        assert "gin (version_id, search_vector)" in cursor.fetchone()[0]
    fenced, params = candidates._fenced_sql([version.pk], ["营收"], [], [])
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute(f"EXPLAIN SELECT c.id FROM {fenced}", params)  # noqa: S608 -- the SQL under test
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert "knowledge_document" not in plan
    index_scans = [line for line in plan.splitlines() if "Index Scan" in line]
    assert len(index_scans) == 1 and "knowledge_chunk_search_vector_gin" in index_scans[0]
    assert "version_id = ANY" in plan and "search_vector @@" in plan
    assert "Filter" not in plan
    items = search_managed([version], query="营收", top_k=3, owner=alice)
    assert [item.content for item in items] == ["北辰医药三季度营收增长。"]


def _chunk(document: Document, *, ordinal: int, version) -> Chunk:
    return Chunk(
        document=document,
        version=version,
        ordinal=ordinal,
        page=1,
        start=0,
        end=1,
        text="营",
        digest="0" * 64,
        search_text="营",
    )
