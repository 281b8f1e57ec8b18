"""What the staged search's one statement costs PostgreSQL: the searched documents are
planned once, and a stage reads each chunk it ranks once (docs/performance.md "Fifth
round"). Its answer is tests/knowledge/test_staged_search.py's."""

import pytest

from knowledge.models import KnowledgeVersion
from knowledge.retrieval import readable_documents, staged_search_sql
from tests.knowledge import test_staged_search as staged

pytestmark = pytest.mark.django_db
# The staged search's own fixtures: a version where the rare tokens decide the top k,
# and the exact statistics that stand in for the planner's.
common_and_rare = staged.common_and_rare
exact_frequencies = staged.exact_frequencies


def test_the_staged_statement_names_the_searched_documents_once(common_and_rare, alice):
    """Written out in every stage, the ACL subqueries were planned once per stage."""
    documents = readable_documents(alice, [common_and_rare]).filter(
        version__status=KnowledgeVersion.Status.PUBLISHED
    )
    documents_sql, _ = documents.values("pk").query.sql_with_params()

    sql, _ = staged_search_sql(documents, staged._tokens("北辰医药营收"), 3)

    assert "guardian_userobjectpermission" in documents_sql
    assert sql.count(documents_sql) == 1
    assert sql.count("guardian_userobjectpermission") == documents_sql.count(
        "guardian_userobjectpermission"
    )


def test_a_final_stage_reads_the_chunks_it_ranks_in_one_scan(
    common_and_rare, monkeypatch, exact_frequencies
):
    staged._postgresql()
    staged._rarest_stage_takes(monkeypatch, exact_frequencies, 0.5)
    chunk_scans = staged.chunk_scans_of(common_and_rare, "北辰医药营收", 1)

    # The GIN match of stage 1 also ranks what it matched: no second scan of the chunks
    # by id, and (the stage being final) none of a wider stage.
    assert len(chunk_scans) == 1
    assert chunk_scans[0]["Actual Rows"] == 1
