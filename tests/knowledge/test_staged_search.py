"""The staged MANAGED search: fewer chunks ranked, the same answer.

On PostgreSQL ``search_managed`` first ranks only the chunks holding the question's rarest
tokens and widens only when that cannot decide the top k (retrieval._STAGED_SQL). Its
answer must be exactly the plain search's: every chunk matching any token, ranked by
ts_rank against the OR of all of them, then document, then ordinal — written out here as
the reference (the query retrieval ran before the stages).
"""

import random

import pytest
from django.contrib.postgres.search import SearchQuery, SearchRank
from django.db import connection

from knowledge import retrieval
from knowledge.models import Chunk, Document
from knowledge.retrieval import (
    MAX_QUERY_TOKENS,
    StoredSearchVector,
    search_managed,
    staged_search_sql,
)
from knowledge.text import search_tokens
from tests import factories
from tests.factories import add_document, make_knowledge, publish

pytestmark = pytest.mark.django_db
LAST = len(retrieval._STAGE_BUDGETS) + 1


def _postgresql():
    factories.require(connection.vendor == "postgresql", "the staged search is PostgreSQL's")


def _tokens(query):
    return list(dict.fromkeys(search_tokens(query)))[:MAX_QUERY_TOKENS]


@pytest.fixture
def exact_frequencies(monkeypatch):
    """Stand in for the planner's statistics (pg_stats, what the stages read): every
    lexeme's exact share of the table's chunks. A test's rows are uncommitted, and an
    ANALYZE of them would leave its row count in pg_class for the tests after it."""

    def describe():
        if connection.vendor != "postgresql":
            return  # the stages are PostgreSQL's; SQLite ranks every match
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM knowledge_chunk")
            (total,) = cursor.fetchone()
            cursor.execute(
                "SELECT word, ndoc FROM ts_stat('SELECT search_vector FROM knowledge_chunk')"
            )
            rows = cursor.fetchall()
        values = ", ".join(
            "('{}', {}::real)".format(word.replace("'", "''"), ndoc / total) for word, ndoc in rows
        )
        monkeypatch.setattr(
            retrieval, "_STAGED_FREQUENCIES", f"SELECT * FROM (VALUES {values}) AS v(elem, freq)"
        )

    return describe


def _or_search(version, query, top_k):
    """The reference: every chunk matching ANY token, ranked against the OR of all."""
    vector = StoredSearchVector()
    tsquery = SearchQuery(
        " | ".join(retrieval._tsquery_literal(t) for t in _tokens(query)),
        search_type="raw",
        config="simple",
    )
    rows = (
        Chunk.objects.filter(document__version=version)
        .alias(search=vector)
        .annotate(rank=SearchRank(vector, tsquery))
        .filter(search=tsquery)
        .order_by("-rank", "document_id", "ordinal")[:top_k]
    )
    return [(chunk.pk, chunk.rank) for chunk in rows]


def _stage(version, tokens, top_k):
    """Which stage's answer was final (1, 2, … or LAST = the plain OR search)."""
    sql, params = staged_search_sql(Document.objects.filter(version=version), tokens, top_k)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        stages = {stage for _, stage in cursor.fetchall()}
    assert len(stages) <= 1
    return stages.pop() if stages else None


def _search(version, query, owner, top_k):
    items = search_managed([version], query=query, top_k=top_k, owner=owner)
    return [(item.chunk.pk, item) for item in items]


@pytest.fixture
def common_and_rare(tenant):
    """Twelve chunks repeating one common token (营收) forty times, one holding every
    token of 北辰医药营收 once."""
    version = make_knowledge(tenant)
    for n in range(12):
        add_document(version, ["营收" * 40 + f"第{n}份。"], key=f"common-{n}")
    add_document(version, ["北辰医药营收。"], key="everything")
    return publish(version)


def _rarest_stage_takes(monkeypatch, exact_frequencies, share):
    # The stage budgets are shares of the table's chunks: in a test's small table every
    # token is in a large share of them, so the budgets are set to what it needs.
    monkeypatch.setattr(retrieval, "_STAGE_BUDGETS", (share, share))
    exact_frequencies()


def test_a_chunk_holding_every_token_beats_one_repeating_a_common_token(
    common_and_rare, alice, monkeypatch, exact_frequencies
):
    if connection.vendor == "postgresql":
        # 北辰 辰医 医药 药营 (1 chunk in 13 each) are the rare stage; 营收 (13 in 13) not.
        _rarest_stage_takes(monkeypatch, exact_frequencies, 0.5)
        # The rare tokens decide the top 1: the chunks that only repeat 营收 are never
        # ranked, and the one holding everything still beats them.
        assert _stage(common_and_rare, _tokens("北辰医药营收"), 1) == 1

    for top_k in (1, 3):
        items = search_managed([common_and_rare], query="北辰医药营收", top_k=top_k, owner=alice)

        assert items[0].document.key == "everything"
        assert items[0].score == 1.0
        assert [item.document.key for item in items[1:]] == ["common-0", "common-1"][: top_k - 1]
        assert all(item.score < 1.0 for item in items[1:])


def test_a_final_rare_stage_leaves_the_wider_stages_unrun(
    common_and_rare, monkeypatch, exact_frequencies
):
    _postgresql()
    _rarest_stage_takes(monkeypatch, exact_frequencies, 0.5)
    chunk_scans = chunk_scans_of(common_and_rare, "北辰医药营收", 1)

    # Only the rare stage's scans of the chunks ran (the GIN match, then the rank), each
    # reading the one chunk holding a rare token: the twelve that only repeat 营收 were
    # neither matched nor ranked, and no wider stage nor the plain OR search ran.
    assert chunk_scans
    assert all(node["Actual Rows"] * node["Actual Loops"] == 1 for node in chunk_scans)


def test_when_the_rare_tokens_hold_fewer_than_top_k_a_wider_stage_fills_it(
    tenant, alice, monkeypatch, exact_frequencies
):
    version = make_knowledge(tenant)
    add_document(version, ["北辰医药营收增长。"], key="both")
    for n in range(9):
        add_document(version, [f"营收增长第{n}季。"], key=f"common-{n}")
    for n in range(40):
        add_document(version, [f"无关材料{n}。"], key=f"other-{n}")
    publish(version)
    question = "北辰医药营收增长"
    if connection.vendor == "postgresql":
        # Stage 1: 北辰 辰医 医药 药营 (1 chunk in 50 each); stage 2 adds 营收 and 收增
        # (10 in 50 each); 增长 is left to the last.
        monkeypatch.setattr(retrieval, "_STAGE_BUDGETS", (0.1, 0.5))
        exact_frequencies()
        # One chunk holds the rare tokens: enough for a top 1, not for a top 6.
        assert _stage(version, _tokens(question), 1) == 1
        assert _stage(version, _tokens(question), 6) == 2

    items = search_managed([version], query=question, top_k=6, owner=alice)

    assert len(items) == 6
    assert items[0].document.key == "both"
    assert [item.document.key for item in items[1:]] == [f"common-{n}" for n in range(5)]
    if connection.vendor == "postgresql":
        assert [pk for pk, _ in _search(version, question, alice, 6)] == [
            pk for pk, _ in _or_search(version, question, 6)
        ]


@pytest.fixture
def zipf_version(tenant, exact_frequencies):
    """Chunks drawn from a Zipf vocabulary (as bench/retrieval.py): some bigrams in
    nearly every chunk, most rare — what makes the stages differ from each other."""
    rng = random.Random(12)
    chars = [chr(0x4E00 + i * 7) for i in range(300)]
    words = ["".join(rng.choice(chars) for _ in range(rng.choice((2, 2, 3)))) for _ in range(400)]
    weights = [1 / (rank + 1) for rank in range(len(words))]
    version = make_knowledge(tenant)
    for d in range(12):
        pages = [
            "".join(rng.choices(words, weights=weights, k=rng.randint(4, 30))) for _ in range(8)
        ]
        add_document(version, pages, key=f"doc-{d:02}")
    publish(version)
    exact_frequencies()
    questions = ["".join(random.Random(q).choices(words, weights=weights, k=4)) for q in range(30)]
    questions += [words[0] + words[1], words[0], words[350] + words[0]]
    return version, questions


@pytest.mark.parametrize(
    "budgets", [retrieval._STAGE_BUDGETS, (0.0, 0.0), (0.0, 0.3), (0.2, 0.6), (0.5, 1.5)]
)
def test_the_staged_search_returns_exactly_the_or_search(zipf_version, alice, monkeypatch, budgets):
    _postgresql()
    monkeypatch.setattr(retrieval, "_STAGE_BUDGETS", budgets)
    version, questions = zipf_version
    stages = set()

    for question in questions:
        for top_k in (1, 3, 8):
            expected = _or_search(version, question, top_k)
            found = _search(version, question, alice, top_k)

            assert [(pk, item.score) for pk, item in found] == [
                (pk, rank / expected[0][1]) for pk, rank in expected
            ], (question, top_k)
            stages.add(_stage(version, _tokens(question), top_k))

    # Not a vacuous comparison: the rare stages answered some of these.
    assert stages & {1, 2}
    if budgets[1] > budgets[0] and budgets != retrieval._STAGE_BUDGETS:
        assert 2 in stages


def test_a_token_that_is_not_one_lexeme_leaves_only_the_plain_or_search(tenant, exact_frequencies):
    """The bound needs one distinct lexeme per token; 12.5e parses as two (12.5 <-> e)."""
    _postgresql()
    version = make_knowledge(tenant)
    add_document(version, ["12.5e 营收。"])
    for n in range(3):
        add_document(version, [f"无关{n}。"])
    publish(version)
    exact_frequencies()

    assert _stage(version, ["12.5e"], 1) == LAST
    assert _stage(version, ["营收"], 1) == 1


def test_without_statistics_the_search_is_still_the_or_search(tenant, alice):
    """No ANALYZE yet: every token is as rare as any other, the answer is unchanged."""
    _postgresql()
    version = make_knowledge(tenant)
    for n in range(6):
        add_document(version, [f"第{n}份材料：营收增长。", "北辰医药营收。" * n], key=f"doc-{n}")
    publish(version)

    for top_k in (1, 3, 8):
        assert [pk for pk, _ in _search(version, "北辰医药营收增长", alice, top_k)] == [
            pk for pk, _ in _or_search(version, "北辰医药营收增长", top_k)
        ]


def chunk_scans_of(version, question: str, k: int) -> list[dict]:
    """The scans of the chunks that ran (EXPLAIN ANALYZE) in the staged statement of
    ``question``'s top ``k`` over ``version``, as on a large table: a test's is too small
    for the planner to use an index."""
    documents = Document.objects.filter(version=version)
    sql, params = staged_search_sql(documents, _tokens(question), k)
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + sql, params)
        (plan,) = cursor.fetchone()

    def nodes(node):
        yield node
        for child in node.get("Plans", ()):
            yield from nodes(child)

    return [
        node
        for node in nodes(plan[0]["Plan"])
        if node.get("Relation Name") == "knowledge_chunk" and node["Actual Loops"] > 0
    ]
