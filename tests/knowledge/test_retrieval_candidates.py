"""PostgreSQL managed search ranks the chunks holding the question's rarest tokens
(planner statistics of ``search_vector``), and falls back to every token when
those find fewer than top_k chunks."""

import pytest
from django.db import connection

from sparktide.knowledge import retrieval
from sparktide.knowledge.retrieval import candidate_tokens, search_managed
from tests import factories
from tests.factories import add_document, make_knowledge, publish

pytestmark = pytest.mark.django_db


@pytest.fixture
def analyzed(tenant, monkeypatch):
    """300 chunks holding 营收, two holding 研发 too; the table ANALYZEd."""
    factories.require(connection.vendor == "postgresql", "planner statistics are PostgreSQL's")
    version = make_knowledge(tenant)
    add_document(version, [f"第{n}页营收。" for n in range(300)], key="common")
    add_document(version, ["营收与研发投入。", "研发。"], key="rare")
    publish(version)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE knowledge_chunk")
    monkeypatch.setattr(retrieval, "_stats_cache", {})
    monkeypatch.setattr(retrieval, "CANDIDATE_BUDGET", 50)
    return version


def test_without_statistics_every_token_matches(tenant, monkeypatch):
    factories.require(connection.vendor == "postgresql", "planner statistics are PostgreSQL's")
    monkeypatch.setattr(retrieval, "_token_statistics", lambda: None)
    assert candidate_tokens(["营收", "研发"]) == ["营收", "研发"]


def test_a_token_in_most_chunks_is_left_out_of_the_match(analyzed):
    assert candidate_tokens(["营收", "研发"]) == ["研发"]


def test_the_rarest_token_is_kept_even_over_the_budget(analyzed):
    assert candidate_tokens(["营收"]) == ["营收"]


def test_the_common_token_still_counts_in_the_rank(analyzed, alice):
    items = search_managed([analyzed], query="营收研发", top_k=2, owner=alice)

    # Both chunks hold 研发; the one holding 营收 as well ranks first.
    assert [item.content for item in items] == ["营收与研发投入。", "研发。"]


def test_too_few_rare_matches_fall_back_to_every_token(analyzed, alice):
    items = search_managed([analyzed], query="营收研发", top_k=5, owner=alice)

    assert len(items) == 5
    assert items[0].content == "营收与研发投入。"
    assert {item.document.key for item in items[2:]} == {"common"}
