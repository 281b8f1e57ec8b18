"""MANAGED/INLINE search: Chinese bigrams and ASCII words, only the given published
versions, at most top_k, a deterministic order, and a constant number of queries."""

import pytest
from django.db import connection

from knowledge import ranking
from knowledge.models import Knowledge, KnowledgeVersion
from knowledge.retrieval import search_managed
from knowledge.text import snippet_digest
from tests.factories import add_document, make_knowledge, publish

pytestmark = pytest.mark.django_db


@pytest.fixture
def reports(tenant):
    version = make_knowledge(tenant, "fund-reports", version="2026-10")
    add_document(
        version,
        ["北辰医药三季度营收增长12%，净利润同比上升。", "第二页：研发投入继续加大。"],
        key="beichen",
        title="北辰医药季报",
        source_version="v3",
    )
    add_document(
        version,
        ["Quarterly revenue of Orion Pharma grew strongly in Q3."],
        key="orion",
        title="Orion report",
    )
    return publish(version)


def search(versions, query, owner, top_k=5):
    return search_managed(versions, query=query, top_k=top_k, owner=owner)


def test_a_two_character_chinese_query_finds_the_bigram(reports, alice):
    items = search([reports], "营收", alice)

    assert len(items) == 1
    assert "北辰医药三季度营收增长" in items[0].content
    assert items[0].document.key == "beichen"


def test_a_chinese_question_finds_the_chunk_that_answers_it(reports, alice):
    items = search([reports], "北辰医药的营收增长了多少？", alice)

    assert items[0].document.key == "beichen"
    assert items[0].chunk.page == 1


def test_ascii_words_are_found_whatever_their_case(reports, alice):
    items = search([reports], "REVENUE Orion", alice)

    assert [item.document.key for item in items] == ["orion"]


def test_a_query_without_a_match_finds_nothing(reports, alice):
    assert search([reports], "天气预报 weather", alice) == []


def test_a_query_without_search_tokens_finds_nothing(reports, alice):
    assert search([reports], "？！…", alice) == []


def test_punctuation_in_a_query_cannot_break_the_search(reports, alice):
    items = search([reports], "营收' & | ! :* (\\ revenue)", alice)

    assert {item.document.key for item in items} == {"beichen", "orion"}


def test_an_item_carries_the_chunk_as_the_model_sees_it(reports, alice):
    (item,) = search([reports], "营收", alice)

    assert item.version == reports
    assert item.content == item.chunk.text
    assert item.title == "北辰医药季报"
    assert item.digest == snippet_digest(item.content)
    assert item.score == 1.0
    assert item.remote_item_id == ""
    assert item.source_ref == {
        "type": "document",
        "id": "beichen",
        "version": "v3",
        "page": 1,
        "locator": {"start": item.chunk.start, "end": item.chunk.end},
    }


def test_a_document_without_a_source_version_uses_the_digest(reports, alice):
    (item,) = search([reports], "revenue", alice)

    assert item.source_ref["version"] == item.digest


def test_the_page_and_locator_point_into_the_document_text(reports, alice):
    (item,) = search([reports], "研发", alice)

    assert item.source_ref["page"] == 2
    text = item.document.text.encode("utf-16-le")
    start, end = item.source_ref["locator"]["start"], item.source_ref["locator"]["end"]
    assert text[start * 2 : end * 2].decode("utf-16-le") == item.content


def test_at_most_top_k_chunks_come_back(tenant, alice):
    version = make_knowledge(tenant)
    for n in range(6):
        add_document(version, [f"第{n}份材料：营收数据。"], key=f"doc-{n}")
    publish(version)

    assert len(search([version], "营收", alice, top_k=3)) == 3
    assert len(search([version], "营收", alice, top_k=10)) == 6
    assert search([version], "营收", alice, top_k=0) == []


def test_better_matches_come_first_and_ties_keep_document_order(tenant, alice):
    version = make_knowledge(tenant)
    weak_first = add_document(version, ["仅提到营收。"], key="weak-1")
    strong = add_document(version, ["营收增长，营收增长，北辰医药营收增长。"], key="strong")
    weak_second = add_document(version, ["也提到营收。"], key="weak-2")
    publish(version)

    items = search([version], "北辰医药营收增长", alice)

    assert [item.document for item in items] == [strong, weak_first, weak_second]
    assert items[0].score == 1.0
    assert items[1].score == items[2].score < 1.0
    assert search([version], "北辰医药营收增长", alice) == items


def test_only_the_given_versions_are_searched(tenant, alice):
    old = make_knowledge(tenant, "reports", version="1")
    add_document(old, ["旧版：营收下降。"], key="a")
    publish(old)
    new = KnowledgeVersion.objects.create(knowledge=old.knowledge, version="2")
    add_document(new, ["新版：营收增长。"], key="a")
    publish(new)
    other = make_knowledge(tenant, "other")
    add_document(other, ["其他知识：营收持平。"], key="b")
    publish(other)

    items = search([new], "营收", alice)

    assert [item.content for item in items] == ["新版：营收增长。"]
    assert {item.version for item in search([old, other], "营收", alice)} == {old, other}


@pytest.mark.parametrize("status", ["DRAFT", "REVOKED"])
def test_a_version_that_is_not_published_is_never_searched(tenant, alice, status):
    version = make_knowledge(tenant)
    add_document(version, ["草稿：营收增长。"])
    if status == "REVOKED":
        publish(version)
        version.status = KnowledgeVersion.Status.REVOKED
        version.save()

    assert search([version], "营收", alice) == []


def test_inline_knowledge_is_searched_like_managed(tenant, alice):
    version = make_knowledge(tenant, type=Knowledge.Type.INLINE)
    add_document(version, ["内联知识：营收增长。"])
    publish(version)

    assert len(search([version], "营收", alice)) == 1


def test_the_number_of_queries_does_not_grow_with_the_results(
    tenant, alice, django_assert_num_queries
):
    version = make_knowledge(tenant)
    for n in range(8):
        add_document(version, [f"第{n}份材料：营收数据。"], key=f"doc-{n}", readers=[alice])
    publish(version)
    ranking.forget_statistics()
    # A first search of the version in this process: its stored statistics, the
    # declared vocabulary, the query tokens' frequencies, the candidates (one stage:
    # 营收 is the only token) with the count of chunks the ACL kept out (for the run's
    # search record), then the winners. The process keeps what a published version's
    # statistics said (they never change): from then on the vocabulary, the
    # candidates and the winners.
    for top_k, expected in ((1, 5), (8, 3), (1, 3)):
        with django_assert_num_queries(expected):
            items = search([version], "营收", alice, top_k=top_k)
            for item in items:
                assert item.document.title and item.chunk.text and item.version.version
        assert len(items) == top_k


@pytest.mark.postgres(reason="the GIN index is PostgreSQL's")
def test_the_search_can_use_the_gin_index(reports, alice):
    """The stored vector the candidates are matched on (migration 0004) is GIN-indexed."""
    captured = []

    def keep(execute, sql, params, many, context):
        if "search_vector @@" in sql:
            captured.append((sql, params))
        return execute(sql, params, many, context)

    with connection.execute_wrapper(keep):
        search([reports], "营收", alice, top_k=3)
    assert captured
    with connection.cursor() as cursor:
        # A tiny corpus: without these the planner rightly reads the few rows directly.
        for method in ("seqscan", "indexscan", "nestloop"):
            cursor.execute(f"SET LOCAL enable_{method} = off")
        sql, params = captured[0]
        cursor.execute(f"EXPLAIN {sql}", params)
        plan = "\n".join(row[0] for row in cursor.fetchall())

    assert "knowledge_chunk_search_vector_gin" in plan


@pytest.mark.postgres(reason="the GIN index is PostgreSQL's")
def test_the_search_index_keeps_no_pending_list(reports):
    """A pending list is read in full by every search and priced into every index
    scan: the planner then read every chunk's vector instead (migration 0010)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT reloptions FROM pg_class WHERE relname = 'knowledge_chunk_search_vector_gin'"
        )
        assert "fastupdate=off" in cursor.fetchone()[0]


@pytest.mark.postgres(reason="the stored vector is PostgreSQL's")
def test_the_stored_vector_is_the_searched_expression(reports):
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM knowledge_chunk WHERE search_vector IS DISTINCT FROM"
            " to_tsvector('simple', COALESCE(search_text, ''))"
        )
        assert cursor.fetchone() == (0,)
        cursor.execute("SELECT count(*) FROM knowledge_chunk")
        assert cursor.fetchone()[0] > 0


@pytest.mark.parametrize("query", ["Q3", "12", "3.5", "v1.2", "gpt4.5 模型"])
def test_numbers_and_mixed_words_are_found(tenant, alice, query):
    version = make_knowledge(tenant)
    add_document(version, ["Q3 营收增长12%，毛利率提升3.5个百分点；v1.2 版 GPT4.5 模型。"])
    add_document(version, ["无关内容。"])
    publish(version)

    assert len(search([version], query, alice)) == 1
