"""Managed ranking: BM25 over the published versions' statistics, with the vocabulary.

The staged candidates must give exactly the exhaustive answer; rare words outweigh
common ones; the shared cases (cases/ranking.json) give the same top k on PostgreSQL
and SQLite; bad queries give a clean empty result."""

import json
import math
import random
from collections import Counter
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.db import connection

from knowledge import ranking
from knowledge.models import (
    Chunk,
    KnowledgeVersion,
    VersionIndex,
    VersionTerm,
    readable_documents,
)
from knowledge.retrieval import search_managed
from knowledge.text import search_tokens
from tests.factories import add_document, make_knowledge, publish, require

pytestmark = pytest.mark.django_db
CASES = json.loads((Path(__file__).parent / "cases" / "ranking.json").read_text("utf-8"))


def _keys(version, query, owner, top_k=5):
    items = search_managed([version], query=query, top_k=top_k, owner=owner)
    return [item.document.key for item in items]


@pytest.fixture
def shared(tenant, alice):
    version = make_knowledge(tenant, "shared")
    for document in CASES["documents"]:
        add_document(version, document["pages"], key=document["key"], title=document["title"])
    return publish(version)


@pytest.mark.parametrize("case", CASES["cases"], ids=lambda case: case["query"][:12])
def test_the_shared_cases_give_the_same_top_k_on_either_database(shared, alice, case):
    assert _keys(shared, case["query"], alice, top_k=len(case["top"])) == case["top"], (
        connection.vendor
    )


def test_a_rare_word_outweighs_a_name_repeated_on_every_page(tenant, alice):
    version = make_knowledge(tenant)
    for n in range(6):
        add_document(version, ["北辰医药北辰医药北辰医药，公司经营稳健。"], key=f"name-{n}")
    add_document(version, ["北辰医药研发管线共有十二项。"], key="answer")
    publish(version)

    assert _keys(version, "北辰医药研发管线", alice, top_k=1) == ["answer"]


def test_an_abbreviation_finds_the_words_the_filing_prints(shared, alice):
    assert _keys(shared, "EPS", alice, top_k=1) == ["eps"]


def test_publishing_stores_the_statistics_once(tenant):
    version = make_knowledge(tenant)
    add_document(version, ["营收增长。", "营收下降。"], title="北辰")
    assert not VersionIndex.objects.filter(version=version).exists()
    publish(version)

    index = VersionIndex.objects.get(version=version)
    assert index.chunk_count == 2
    assert VersionTerm.objects.get(version=version, token="营收").chunks == 2
    assert VersionTerm.objects.get(version=version, token="北辰").chunks == 2
    built_at = index.built_at
    version.save()
    assert VersionIndex.objects.get(version=version).built_at == built_at


def test_a_version_published_without_statistics_is_counted_on_the_fly(shared, alice, tenant):
    expected = [_keys(shared, case["query"], alice) for case in CASES["cases"]]
    VersionIndex.objects.filter(version=shared).delete()
    VersionTerm.objects.filter(version=shared).delete()

    assert [_keys(shared, case["query"], alice) for case in CASES["cases"]] == expected


def _exhaustive(versions, query, top_k, vocabulary=None):
    """The reference, written out: BM25 of every chunk of the versions, one statement."""
    versions = versions if isinstance(versions, list) else [versions]
    plan = ranking.SearchPlan.of(query, vocabulary or ranking.Vocabulary())
    rows = list(
        Chunk.objects.filter(document__version__in=versions).values_list(
            "pk", "search_text", "document_id", "ordinal"
        )
    )
    lengths = {pk: len(text.split()) for pk, text, *_ in rows}
    average = sum(lengths.values()) / len(rows)
    df = Counter(t for _, text, *_ in rows for t in set(text.split()))
    scored = []
    for pk, text, document_id, ordinal in rows:
        tf = Counter(text.split())
        norm = ranking.K1 * (1 - ranking.B + ranking.B * lengths[pk] / average)
        score = sum(
            math.log(1 + (len(rows) - df[t] + 0.5) / (df[t] + 0.5))
            * tf[t]
            * (ranking.K1 + 1)
            / (tf[t] + norm)
            for t in plan.weights
            if tf[t]
        )
        if score > 0:
            scored.append((-score, document_id, ordinal, pk))
    return [pk for *_, pk in sorted(scored)[:top_k]]


def _queries_of(pages, rng, count):
    """Questions cut from the corpus itself: runs of 2–14 characters of random pages,
    two glued together half the time (a rare word beside a common one)."""
    queries = []
    for _ in range(count):
        parts = []
        for _ in range(rng.choice((1, 2))):
            page = rng.choice(pages)
            start = rng.randrange(max(1, len(page) - 2))
            parts.append(page[start : start + rng.randint(2, 14)])
        queries.append("".join(parts))
    return queries


@pytest.mark.parametrize("budget", [0, 40, 2_000])
def test_the_staged_search_equals_the_exhaustive_ranking_over_the_shared_cases(
    shared, alice, monkeypatch, budget
):
    """Every shared case and 150 questions cut from the shared corpus, with the
    vocabulary a search of it uses: the staged top k is the exhaustive top k."""
    from knowledge.retrieval import vocabulary_for

    monkeypatch.setattr(ranking, "FIRST_STAGE_BUDGET", budget)
    pages = [page for document in CASES["documents"] for page in document["pages"]]
    queries = [case["query"] for case in CASES["cases"]]
    queries += _queries_of(pages, random.Random(budget), 150)
    vocabulary = vocabulary_for([shared])
    for query in queries:
        for top_k in (1, 5):
            items = search_managed([shared], query=query, top_k=top_k, owner=alice)
            expected = _exhaustive(shared, query, top_k, vocabulary)
            assert [item.chunk.pk for item in items] == expected, (query, top_k)


def test_the_staged_search_is_exact_over_versions_of_different_page_lengths(
    tenant, alice, monkeypatch
):
    """Impacts are stored with each version's own average length; searched together,
    the average differs and the bound must still hold."""
    monkeypatch.setattr(ranking, "FIRST_STAGE_BUDGET", 0)
    monkeypatch.setattr("knowledge.retrieval.BUILTIN", ranking.Vocabulary())
    rng = random.Random(11)
    words = ["营收", "增长", "北辰", "医药", "研发", "管线", "毛利", "下降", "回购", "分红"]
    short, long = make_knowledge(tenant, "short"), make_knowledge(tenant, "long")
    for d in range(30):
        # Short pages of rare words, long pages of common ones: searched together, the
        # average is far above the short version's own.
        add_document(short, ["".join(rng.choices(words[5:], k=rng.randint(1, 2)))], key=f"s{d}")
        add_document(long, ["".join(rng.choices(words, k=rng.randint(30, 60)))], key=f"l{d}")
    publish(short), publish(long)
    queries = words + ["".join(rng.choices(words, k=3)) for _ in range(60)]

    for query in queries:
        for top_k in (1, 3, 8):
            items = search_managed([short, long], query=query, top_k=top_k, owner=alice)
            expected = _exhaustive([short, long], query, top_k)
            assert [item.chunk.pk for item in items] == expected, (query, top_k)


def test_publishing_stores_each_terms_most_weight_in_one_chunk(tenant):
    version = make_knowledge(tenant)
    add_document(version, ["营收营收营收。", "营收下降，毛利下降，回购。"])
    publish(version)

    rows = [text.split() for text in Chunk.objects.values_list("search_text", flat=True)]
    average = sum(map(len, rows)) / len(rows)
    expected = max(
        tokens.count("营收")
        / (tokens.count("营收") + ranking.K1 * (1 - ranking.B + ranking.B * len(tokens) / average))
        for tokens in rows
    )
    assert VersionTerm.objects.get(version=version, token="营收").impact == pytest.approx(expected)
    assert 0 < VersionTerm.objects.get(version=version, token="回购").impact < expected


def test_a_search_that_the_rare_words_decide_reads_its_candidates_in_one_statement(
    tenant, alice, django_assert_num_queries, monkeypatch
):
    """The rarest token's chunks prove the top k: one candidate statement. A floor they
    cannot prove: a second one, never more."""
    monkeypatch.setattr(ranking, "FIRST_STAGE_BUDGET", 0)
    monkeypatch.setattr("knowledge.retrieval.BUILTIN", ranking.Vocabulary())
    version = make_knowledge(tenant)
    filler = "公司经营稳健，业务持续发展，" * 6
    for n in range(8):
        add_document(version, [f"第{n}份材料：营收数据。"], key=f"doc-{n}")
    # 回购 (4 chunks) only in long pages; 分红 (5 chunks) twice in a short one.
    add_document(version, ["回购方案。" + filler], key="buyback-1")
    for n in range(2, 5):
        add_document(version, ["回购进展。" + filler], key=f"buyback-{n}")
    add_document(version, ["分红分红。"], key="dividend")
    add_document(version, ["分红预案。" + filler], key="dividend-2")
    for n in range(3, 6):
        add_document(version, ["分红实施。" + filler], key=f"dividend-{n}")
    publish(version)

    # Statistics, vocabulary, frequencies, the candidates, the ACL count, the winners.
    with django_assert_num_queries(6):
        items = search_managed([version], query="回购方案", top_k=1, owner=alice)
    assert [item.document.key for item in items] == ["buyback-1"]
    # The first stage (回购) finds the long pages; the short page's 分红 could beat
    # them: the second stage reads it, once.
    with django_assert_num_queries(7):
        items = search_managed([version], query="回购分红", top_k=1, owner=alice)
    assert [item.document.key for item in items] == ["dividend"]
    assert [item.chunk.pk for item in items] == _exhaustive(version, "回购分红", 1)


@pytest.mark.parametrize("budget", [0, 3, 40, 10_000])
def test_the_staged_search_returns_exactly_the_exhaustive_ranking(
    tenant, alice, monkeypatch, budget
):
    monkeypatch.setattr(ranking, "FIRST_STAGE_BUDGET", budget)
    rng = random.Random(7)
    words = ["营收", "增长", "北辰", "医药", "研发", "管线", "毛利", "下降", "回购", "分红"]
    version = make_knowledge(tenant)
    for d in range(12):
        pages = ["".join(rng.choices(words, weights=range(10, 0, -1), k=12)) for _ in range(4)]
        add_document(version, pages, key=f"d{d}")
    publish(version)
    monkeypatch.setattr("knowledge.retrieval.BUILTIN", ranking.Vocabulary())

    for query in ["北辰医药营收", "回购分红", "营收增长", "研发管线毛利下降回购"]:
        items = search_managed([version], query=query, top_k=6, owner=alice)
        assert [item.chunk.pk for item in items] == _exhaustive(version, query, 6), query


@pytest.mark.parametrize(
    "query",
    ["！！？。，", "😀🎉", "x" * 10_000 + "营收", "营\x00收", "营\ud800收", "a" * 200],
    ids=["punctuation", "emoji", "10k-chars", "nul", "lone-surrogate", "over-long-token"],
)
def test_a_bad_query_is_a_clean_result(shared, alice, query):
    items = search_managed([shared], query=query, top_k=5, owner=alice)
    assert all(item.document.version_id == shared.pk for item in items)
    if query.startswith(("！", "😀", "a")):
        assert items == []


def test_an_over_long_token_is_neither_counted_nor_searched(tenant, alice):
    version = make_knowledge(tenant)
    add_document(version, ["a" * 100 + " 营收"])
    publish(version)

    assert not VersionTerm.objects.filter(version=version, token__startswith="aaa").exists()
    assert search_managed([version], query="a" * 100, top_k=3, owner=alice) == []
    assert len(search_managed([version], query="营收", top_k=3, owner=alice)) == 1


def test_a_search_never_sees_a_version_publishing_without_its_statistics(tenant, alice):
    """Publishing writes the status and the statistics in one transaction."""
    version = make_knowledge(tenant)
    add_document(version, ["营收增长。"])
    version.status = KnowledgeVersion.Status.PUBLISHED
    tokens = search_tokens("营收")
    assert tokens == ["营收"]
    version.save()
    assert VersionIndex.objects.filter(version=version).exists()


def test_index_knowledge_stores_the_statistics_a_bulk_publish_skipped(tenant):
    version = make_knowledge(tenant)
    add_document(version, ["营收增长。"])
    KnowledgeVersion.objects.filter(pk=version.pk).update(status=KnowledgeVersion.Status.PUBLISHED)
    assert not VersionIndex.objects.filter(version=version).exists()

    out = StringIO()
    call_command("index_knowledge", stdout=out)

    assert VersionIndex.objects.get(version=version).chunk_count == 1
    assert "1 version(s) indexed" in out.getvalue()
    call_command("index_knowledge", stdout=out)
    assert "0 version(s) indexed" in out.getvalue()


def test_index_knowledge_gives_terms_stored_before_impacts_their_bound(tenant, alice):
    """A version published before migration 0009 has terms without an impact (searched
    with BM25's own bound); the command stores the impacts publishing would have stored,
    with progress, once; the search's answer does not change."""
    version = make_knowledge(tenant)
    add_document(version, ["营收营收营收。", "营收下降，毛利下降，回购。"])
    publish(version)
    stored = dict(VersionTerm.objects.filter(version=version).values_list("token", "impact"))
    before = [
        item.chunk.pk for item in search_managed([version], query="营收回购", top_k=2, owner=alice)
    ]
    VersionTerm.objects.filter(version=version).update(impact=None)

    out = StringIO()
    call_command("index_knowledge", stdout=out)

    restored = dict(VersionTerm.objects.filter(version=version).values_list("token", "impact"))
    assert restored == pytest.approx(stored)
    assert None not in restored.values()
    assert f"[1/1] impacts of {tenant.key}/{version.label}: {len(stored)} term(s)" in out.getvalue()
    assert [
        item.chunk.pk for item in search_managed([version], query="营收回购", top_k=2, owner=alice)
    ] == before
    again = StringIO()
    call_command("index_knowledge", stdout=again)
    assert "0 version(s) given term impacts" in again.getvalue()


def _meets(condition, held):
    if isinstance(condition, str):
        return condition in held
    operator, parts = condition
    results = [_meets(part, held) for part in parts]
    return all(results) if operator == "&" else any(results)


def test_the_second_stage_condition_keeps_every_set_of_tokens_that_can_reach_the_floor():
    """Brute force over every set of held tokens: a set whose bounds reach the floor
    meets the condition; one that meets it reaches the floor (nothing wider is read)."""
    import itertools

    tokens = ["a", "b", "c", "d", "e", "f"]
    bounds = [5.25, 4.35, 4.35, 4.32, 4.28, 1.0]
    for floor in (0.5, 4.3, 8.0, 13.0, 17.2, 21.22, 23.55, 30.0):
        condition = ranking.reaching(tokens, bounds, floor)
        for size in range(len(tokens) + 1):
            for held in itertools.combinations(range(len(tokens)), size):
                reaches = sum(bounds[i] for i in held) >= floor
                names = {tokens[i] for i in held}
                meets = condition is not False and _meets(condition, names)
                assert meets == reaches, (floor, names, condition)
    assert ranking.reaching(tokens, bounds, 0.0) is None
    assert ranking.reaching(tokens, [1.0] * 6, 6.5) is False


def _scorer_and_scores(version, query):
    """The scorer a search of ``version`` for ``query`` uses (no vocabulary), and every
    chunk's score by it: {chunk pk: score}."""
    plan = ranking.SearchPlan.of(query, ranking.Vocabulary())
    indexes = ranking.stored_indexes([version])
    scorer = ranking.Bm25(ranking.version_statistics(indexes, list(plan.weights)), plan.weights)
    rows = Chunk.objects.filter(document__version=version).values_list("pk", "search_text")
    return scorer, {pk: scorer.score(text) for pk, text in rows}


def test_the_scoring_statement_returns_only_what_can_enter_the_top_k(tenant, alice):
    """PostgreSQL scores the candidates in the statement: of 30 chunks holding the
    word, only those at or above the third score come back to be scored in Python."""
    require(connection.vendor == "postgresql", "the statement scores on PostgreSQL")
    version = make_knowledge(tenant)
    for n in range(30):
        add_document(version, ["营收" * (n % 7 + 1) + "公司经营稳健" * (n % 5 + 1)], key=f"d{n}")
    publish(version)
    scorer, scores = _scorer_and_scores(version, "营收")
    third = sorted(scores.values(), reverse=True)[2]

    documents = readable_documents(alice, [version])
    rows = ranking.best_rows(documents, [version.pk], ["营收"], [], scorer, 3)

    assert {pk for pk, *_ in rows} == {pk for pk, score in scores.items() if score >= third}
    assert 3 <= len(rows) < 30


def test_a_count_the_stored_vector_caps_is_scored_from_the_text(tenant, alice, monkeypatch):
    """A tsvector keeps at most 255 positions of a lexeme: counted from the vector, a
    page printing 营收 290 times would score below one printing it 200 times. The
    statement returns such a page whatever its score there; Python counts 290, and it
    wins, as in the exhaustive ranking."""
    monkeypatch.setattr("knowledge.retrieval.BUILTIN", ranking.Vocabulary())
    version = make_knowledge(tenant)
    add_document(version, ["营收" * 290], key="many")
    add_document(version, ["营收" * 200], key="fewer")
    for n in range(10):
        add_document(version, ["公司经营稳健"], key=f"filler-{n}")
    publish(version)
    scorer, scores = _scorer_and_scores(version, "营收")
    texts = dict(Chunk.objects.filter(document__version=version).values_list("pk", "search_text"))
    many = next(pk for pk, text in texts.items() if text.split().count("营收") == 290)
    fewer = next(pk for pk, text in texts.items() if text.split().count("营收") == 200)
    # The premise: counted 256 times (the same length), "many" would score below "fewer".
    length = len(texts[many].split())
    norm = ranking.K1 * (1 - ranking.B + ranking.B * length / scorer.average)
    capped = scorer.weights["营收"] * 256 * (ranking.K1 + 1) / (256 + norm)
    assert capped < scores[fewer] < scores[many]

    items = search_managed([version], query="营收", top_k=1, owner=alice)

    assert [item.document.key for item in items] == ["many"]
