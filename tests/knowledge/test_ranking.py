"""Managed ranking: BM25 over the published versions' statistics, with the vocabulary.

The staged candidates must give exactly the exhaustive answer; rare words outweigh
common ones; the shared cases (cases/ranking.json) give the same top k on PostgreSQL
and SQLite; bad queries give a clean empty result."""

import importlib
import itertools
import json
import math
import random
from collections import Counter
from io import StringIO
from pathlib import Path
from types import SimpleNamespace

import pytest
from django.core.management import call_command
from django.db import connection

from knowledge import candidates, ranking
from knowledge.models import Chunk, KnowledgeVersion, VersionIndex, VersionTerm
from knowledge.retrieval import search_managed
from knowledge.text import search_marks, search_tokens
from tests.factories import add_document, make_knowledge, publish

pytestmark = pytest.mark.django_db
CASES = json.loads((Path(__file__).parent / "cases" / "ranking.json").read_text("utf-8"))


@pytest.fixture(autouse=True)
def _no_statistics_read_before():
    """Each test starts from a process that has read no stored statistics: the
    statement counts below are a first search's, unless a test searches first."""
    ranking.forget_statistics()


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


def test_a_version_published_without_statistics_is_refused_until_indexed(shared, alice, tenant):
    """A search never builds an index and never ranks without one: a version whose
    statistics are missing is refused; ``index_knowledge`` stores them and the same
    searches give the same answers as before."""
    expected = [_keys(shared, case["query"], alice) for case in CASES["cases"]]
    VersionIndex.objects.filter(version=shared).delete()
    VersionTerm.objects.filter(version=shared).delete()
    ranking.forget_statistics()  # a process that never read them

    with pytest.raises(ranking.IndexMissing) as refused:
        _keys(shared, CASES["cases"][0]["query"], alice)
    assert refused.value.versions == [shared]
    assert "index_knowledge" in str(refused.value)

    call_command("index_knowledge", stdout=StringIO())
    assert [_keys(shared, case["query"], alice) for case in CASES["cases"]] == expected


def test_a_version_read_before_is_not_taken_for_another_of_the_same_id(tenant, alice):
    """What the process keeps of a version is keyed by its id and creation time: a
    database that gives a rolled-back version's id to the next one (SQLite) never shows
    the next one the first one's statistics."""
    first = make_knowledge(tenant, "first")
    add_document(first, ["营收增长。"], key="only")
    publish(first)
    assert _keys(first, "营收", alice) == ["only"]
    assert ranking.stored_indexes([first])[first.pk].chunk_count == 1

    pk, knowledge = first.pk, first.knowledge
    KnowledgeVersion.objects.filter(pk=pk).delete()  # as a rollback would leave it
    second = KnowledgeVersion.objects.create(pk=pk, knowledge=knowledge, version="2")
    for n in range(3):
        add_document(second, [f"第{n}页：营收下降，回购。"], key=f"page-{n}")
    add_document(second, ["分红。"], key="dividend")
    publish(second)

    index = ranking.stored_indexes([second])[pk]
    assert (index.chunk_count, index.key) == (4, (pk, second.created_at))
    statistics = ranking.version_statistics({pk: index}, ["营收", "回购", "增长"])
    assert statistics.frequencies == {"营收": 3, "回购": 3}
    assert _keys(second, "营收增长", alice) == ["page-0", "page-1", "page-2"]


def test_a_new_version_is_searched_with_its_own_statistics(tenant, alice):
    old = make_knowledge(tenant, "reports", version="1")
    add_document(old, ["营收增长。", "营收下降。"], key="old")
    publish(old)
    assert ranking.version_statistics(ranking.stored_indexes([old]), ["营收"]).frequencies == {
        "营收": 2
    }

    new = KnowledgeVersion.objects.create(knowledge=old.knowledge, version="2")
    add_document(new, ["营收增长。", "回购。", "分红。"], key="new")
    publish(new)

    statistics = ranking.version_statistics(ranking.stored_indexes([new]), ["营收", "回购"])
    assert (statistics.chunks, statistics.frequencies) == (3, {"营收": 1, "回购": 1})
    both = ranking.version_statistics(ranking.stored_indexes([old, new]), ["营收"])
    assert (both.chunks, both.frequencies) == (5, {"营收": 3})


def test_a_changed_declared_vocabulary_applies_from_the_next_search(tenant, alice):
    from knowledge.models import Vocabulary as DeclaredVocabulary

    version = make_knowledge(tenant)
    add_document(version, ["营业收入增长。"], key="income")
    add_document(version, ["净利润下降。"], key="profit")
    publish(version)
    assert _keys(version, "zq", alice) == []

    declared = DeclaredVocabulary.objects.create(tenant=tenant, entries={"zq": ["营业收入"]})
    assert _keys(version, "zq", alice) == ["income"]
    declared.entries = {"zq": ["净利润"]}
    declared.save()
    assert _keys(version, "zq", alice) == ["profit"]
    declared.delete()
    assert _keys(version, "zq", alice) == []


def test_an_impact_stored_after_a_search_is_used_by_the_next(tenant, alice):
    """A term stored without its impact (before migration 0009) is bounded by 1 and not
    kept: once ``index_knowledge`` stores the impact, the next search uses it."""
    version = make_knowledge(tenant)
    add_document(version, ["营收增长，公司经营稳健，业务持续发展。", "营收。"])
    publish(version)
    VersionTerm.objects.filter(version=version).update(impact=None)
    indexes = ranking.stored_indexes([version])
    assert ranking.version_statistics(indexes, ["营收"]).impacts == {"营收": 1.0}

    assert ranking.store_missing_impacts(version) > 0

    stored = VersionTerm.objects.get(version=version, token="营收").impact
    assert 0 < stored < 1
    impacts = ranking.version_statistics(indexes, ["营收"]).impacts
    assert impacts["营收"] == pytest.approx(stored)


def _exhaustive(versions, query, top_k, vocabulary=None):
    """The reference, written out: BM25 of every chunk of the versions, each token
    weighed by its clause's idf (chunks holding 80 % of the clause's known tokens) over
    the question's largest — a clause two chunks hold, not the largest, at most its idf
    over its tokens' summed idf —, one statement; a name of the question's entity counted once
    in a chunk."""
    versions = versions if isinstance(versions, list) else [versions]
    entities = frozenset(
        name for index in ranking.stored_indexes(versions).values() for name in index.entities
    )
    plan = ranking.SearchPlan.of(query, vocabulary or ranking.Vocabulary(), entities)
    rows = list(
        Chunk.objects.filter(document__version__in=versions).values_list(
            "pk", "search_text", "document_id", "ordinal"
        )
    )
    lengths = {pk: len(text.split()) for pk, text, *_ in rows}
    average = sum(lengths.values()) / len(rows)
    held = {pk: set(text.split()) for pk, text, *_ in rows}
    df = Counter(t for tokens in held.values() for t in tokens)

    def idf(n):
        return math.log(1 + (len(rows) - n + 0.5) / (n + 0.5))

    clause_idf, copied = [], []
    for clause in plan.clauses:
        own = [t for t in clause.own if df[t]]
        holders = sum(
            sum(t in tokens for t in own) >= math.ceil(0.8 * len(own)) for tokens in held.values()
        )
        clause_idf.append(idf(holders) if len(own) >= 2 else None)
        # Held nearly verbatim by two chunks or more: its tokens weigh one term together.
        copied.append(
            idf(holders) / sum(idf(df[t]) for t in own) if holders >= 2 and len(own) >= 2 else None
        )
    weights = dict.fromkeys(plan.weights, 1.0)
    if sum(w is not None for w in clause_idf) >= 2:
        top = max(w for w in clause_idf if w is not None)
        weights = {}
        for clause, weight, one in zip(plan.clauses, clause_idf, copied, strict=True):
            mine = 1.0 if weight is None else weight / top
            if weight is not None and weight < top and one is not None:
                mine = min(mine, one)
            for t in clause.tokens:
                weights[t] = max(weights.get(t, 0.0), mine)
        weights = {t: weights.get(t, 1.0) for t in plan.weights}
    scored = []
    for pk, text, document_id, ordinal in rows:
        tf = ranking.said_once(text.split(), Counter(text.split()), list(plan.names))
        norm = ranking.K1 * (1 - ranking.B + ranking.B * lengths[pk] / average)
        score = sum(
            weights[t] * idf(df[t]) * tf[t] * (ranking.K1 + 1) / (tf[t] + norm)
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
    # Its most in a chunk holding it once: the second page's; 营营 is never held once.
    once = [tokens for tokens in rows if tokens.count("营收") == 1]
    single = max(
        1 / (1 + ranking.K1 * (1 - ranking.B + ranking.B * len(tokens) / average))
        for tokens in once
    )
    assert len(once) == 1
    term = VersionTerm.objects.get(version=version, token="营收")
    assert term.single == pytest.approx(single) and term.single < term.impact
    assert VersionTerm.objects.get(version=version, token="收营").single == 0.0


def test_ingest_marks_the_tokens_a_chunk_holds_more_than_once(tenant):
    version = make_knowledge(tenant)
    add_document(version, ["营收营收增长，增长。"], title="年报")
    chunk = Chunk.objects.get(document__version=version)
    assert chunk.search_text.split().count("营收") == 2
    assert chunk.search_marks.split() == ["~营收", "~增长"]
    assert chunk.search_marks == search_marks(chunk.search_text.split())


def test_a_candidate_that_cannot_reach_the_kth_score_is_not_scored(tenant, alice, monkeypatch):
    """分红 is held once by long pages, twice by one short page. The first stage (回购)
    finds the long pages; the second reads every chunk holding 分红 but scores only those
    whose ceiling (分红 twice: its mark) can reach the best so far (``Bm25.reaches``) —
    and the answer is the exhaustive one."""
    monkeypatch.setattr(ranking, "FIRST_STAGE_BUDGET", 0)
    monkeypatch.setattr("knowledge.retrieval.BUILTIN", ranking.Vocabulary())
    scored = []
    scoring = ranking.Bm25.score

    def recorded(self, search_text):
        scored.append(search_text)
        return scoring(self, search_text)

    monkeypatch.setattr(ranking.Bm25, "score", recorded)
    version = make_knowledge(tenant)
    filler = "公司经营稳健，业务持续发展，" * 6
    for n in range(8):
        add_document(version, [f"第{n}份材料：营收数据。"], key=f"doc-{n}")
    for n in range(4):
        add_document(version, ["回购进展。" + filler], key=f"buyback-{n}")
    for n in range(4):
        add_document(version, ["分红实施。" + filler], key=f"dividend-{n}")
    add_document(version, ["分红分红。"], key="dividend")
    publish(version)

    items = search_managed([version], query="回购分红", top_k=1, owner=alice)

    assert [item.document.key for item in items] == ["dividend"]
    assert [item.chunk.pk for item in items] == _exhaustive(version, "回购分红", 1)
    texts = dict(Chunk.objects.values_list("document__key", "search_text"))
    # The 回购 pages set the bar; the 分红 pages holding it once cannot reach it (no
    # mark: its single bound), the short page holding it twice can.
    assert texts["dividend"] in scored
    assert texts["dividend-0"] not in scored


def test_a_chunk_always_reaches_its_own_score(shared, tenant):
    """Over the shared cases' chunks and questions cut from them: what ``reaches`` reads
    from a chunk's text and marks never rules out the chunk's own score (its ceiling is a
    bound), and rules out a little more."""
    rng = random.Random(7)
    chunks = list(Chunk.objects.values_list("search_text", "search_marks"))
    indexes = ranking.stored_indexes([shared])
    checked = 0
    pages = [page for document in CASES["documents"] for page in document["pages"]]
    for query in _queries_of(pages, rng, 60):
        plan = ranking.SearchPlan.of(query, ranking.Vocabulary())
        statistics = ranking.version_statistics(indexes, list(plan.weights))
        scorer = ranking.Bm25(statistics, plan.weights, plan.names)
        for text, marks in chunks:
            score = scorer.score(text)
            assert scorer.reaches(text, marks, score), (query, text)
            if scorer.weights:  # nothing reaches more than every bound together
                ceiling = sum(scorer.bound(t) for t in scorer.weights)
                assert not scorer.reaches(text, marks, ceiling * 1.01)
            checked += score > 0
    assert checked > 100


def test_the_marks_backfill_writes_what_ingest_writes(tenant, alice):
    """Migration 0015 fills the marks of chunks stored before them, from their tokens:
    the same marks ingest writes, and searches find the chunks by them again."""
    backfill = importlib.import_module("knowledge.migrations.0015_search_marks_backfill")
    version = make_knowledge(tenant)
    add_document(version, ["分红分红。", "分红实施，回购进展。", "回购回购方案。"])
    publish(version)
    written = dict(Chunk.objects.values_list("pk", "search_marks"))
    with connection.cursor() as cursor:  # as stored before 0014 (the ORM refuses it)
        cursor.execute("UPDATE knowledge_chunk SET search_marks = ''")

    backfill.backfill(None, SimpleNamespace(connection=connection))

    assert dict(Chunk.objects.values_list("pk", "search_marks")) == written
    assert "~分红" in written.values()
    items = search_managed([version], query="分红回购", top_k=3, owner=alice)
    assert [item.chunk.pk for item in items] == _exhaustive(version, "分红回购", 3)


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

    # Statistics, vocabulary, frequencies, the candidates (with the ACL's refused
    # count), the winners.
    with django_assert_num_queries(5):
        items = search_managed([version], query="回购方案", top_k=1, owner=alice)
    assert [item.document.key for item in items] == ["buyback-1"]
    # The first stage (回购) finds the long pages; the short page's 分红 could beat
    # them: the second stage reads it, once. The version's statistics were read by the
    # search before (this process keeps them); 分红's frequency was not.
    with django_assert_num_queries(5):
        items = search_managed([version], query="回购分红", top_k=1, owner=alice)
    assert [item.document.key for item in items] == ["dividend"]
    assert [item.chunk.pk for item in items] == _exhaustive(version, "回购分红", 1)
    # Asked again: the vocabulary, the two candidate statements, the winners.
    with django_assert_num_queries(4):
        again = search_managed([version], query="回购分红", top_k=1, owner=alice)
    assert [item.chunk.pk for item in again] == [item.chunk.pk for item in items]


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
    terms = VersionTerm.objects.filter(version=version)
    stored = {
        token: (impact, single)
        for token, impact, single in terms.values_list("token", "impact", "single")
    }
    before = [
        item.chunk.pk for item in search_managed([version], query="营收回购", top_k=2, owner=alice)
    ]
    terms.update(impact=None, single=None)

    out = StringIO()
    call_command("index_knowledge", stdout=out)

    restored = {
        token: (impact, single)
        for token, impact, single in terms.values_list("token", "impact", "single")
    }
    assert {t: pytest.approx(pair) for t, pair in restored.items()} == stored
    assert all(None not in pair for pair in restored.values())
    assert f"[1/1] impacts of {tenant.key}/{version.label}: {len(stored)} term(s)" in out.getvalue()
    assert [
        item.chunk.pk for item in search_managed([version], query="营收回购", top_k=2, owner=alice)
    ] == before
    again = StringIO()
    call_command("index_knowledge", stdout=again)
    assert "0 version(s) given term impacts" in again.getvalue()


def test_a_term_stored_before_its_single_impact_is_bounded_by_its_impact(tenant):
    """A term stored before migration 0014 has no single impact: a chunk holding it once
    is bounded by its impact (no mark asked), until ``index_knowledge`` stores it."""
    version = make_knowledge(tenant)
    add_document(version, ["营收营收增长。", "营收下降，毛利下降，回购。"])
    publish(version)
    VersionTerm.objects.filter(version=version, token="营收").update(single=None)
    indexes = ranking.stored_indexes([version])
    statistics = ranking.version_statistics(indexes, ["营收", "回购"])
    assert "营收" not in statistics.singles and "回购" in statistics.singles
    scorer = ranking.Bm25(statistics, {"营收": 1.0, "回购": 1.0})
    assert scorer.single_bound("营收") == scorer.bound("营收")

    assert ranking.store_missing_impacts(version) == 1

    ranking.forget_statistics()
    statistics = ranking.version_statistics(ranking.stored_indexes([version]), ["营收"])
    assert 0 < statistics.singles["营收"] < statistics.impacts["营收"]


def _meets(condition, held):
    if isinstance(condition, str):
        return condition in held
    operator, parts = condition
    results = [_meets(part, held) for part in parts]
    return all(results) if operator == "&" else any(results)


def test_the_second_stage_condition_keeps_every_set_of_tokens_that_can_reach_the_floor():
    """Brute force over every set of held tokens: a set whose bounds reach the floor
    meets the condition; one that meets it reaches the floor (nothing wider is read)."""

    tokens = ["a", "b", "c", "d", "e", "f"]
    bounds = [5.25, 4.35, 4.35, 4.32, 4.28, 1.0]
    for floor in (0.5, 4.3, 8.0, 13.0, 17.2, 21.22, 23.55, 30.0):
        condition = candidates.reaching(tokens, bounds, floor)
        for size in range(len(tokens) + 1):
            for held in itertools.combinations(range(len(tokens)), size):
                reaches = sum(bounds[i] for i in held) >= floor
                names = {tokens[i] for i in held}
                meets = condition is not False and _meets(condition, names)
                assert meets == reaches, (floor, names, condition)
    assert candidates.reaching(tokens, bounds, 0.0) is None
    assert candidates.reaching(tokens, [1.0] * 6, 6.5) is False


def test_a_condition_too_large_is_narrowed_on_the_largest_bounds_and_misses_nothing(monkeypatch):
    """With room for few token mentions, ``narrowest`` keeps the largest bounds and takes
    the others as held: every set of tokens that can reach the floor still meets it,
    and it is narrower than "one of the tokens" when the floor allows."""

    monkeypatch.setattr(candidates, "MAX_CONDITION_TOKENS", 4)
    tokens = ["a", "b", "c", "d", "e", "f", "g"]
    bounds = [5.0, 4.5, 4.0, 3.5, 1.0, 0.5, 0.25]
    assert candidates.reaching(tokens, bounds, 9.0) is None  # too many mentions
    narrowed = 0
    for floor in (4.4, 9.0, 12.0, 15.0, 18.0, 19.0):
        condition = candidates.narrowest(tokens, bounds, floor)
        assert condition is not None, floor
        for size in range(len(tokens) + 1):
            for held in itertools.combinations(range(len(tokens)), size):
                names = {tokens[i] for i in held}
                if sum(bounds[i] for i in held) >= floor:
                    assert condition is not False and _meets(condition, names), (floor, names)
                elif condition is False or not _meets(condition, names):
                    narrowed += 1
    assert narrowed > 0
    assert candidates.narrowest(tokens, bounds, 0.0) is None
    assert candidates.narrowest(tokens, bounds, 19.0) is False


def test_a_token_most_chunks_hold_is_taken_as_held_not_asked_of_the_index():
    """The condition never names a token held by more than half the chunks (the index
    would walk its whole posting list); its bound comes off the floor instead, so every
    set of tokens that can reach the floor still meets it."""
    tokens = ["a", "b", "c", "d", "e"]
    bounds = dict(zip(tokens, [6.0, 5.0, 4.0, 1.5, 0.5], strict=True))
    frequencies = dict(zip(tokens, [10, 40, 200, 600, 990], strict=True))
    scorer = SimpleNamespace(chunks=1000, frequencies=frequencies, bound=bounds.__getitem__)
    for floor in (4.2, 6.1, 9.5, 11.2, 15.5, 16.9):
        condition = candidates._asked(tokens, scorer, floor)
        assert condition is False or "d" not in repr(condition), (floor, condition)
        assert condition is False or "e" not in repr(condition), (floor, condition)
        _met_by_every_set_reaching(condition, bounds, floor)


def test_a_token_on_more_chunks_than_the_index_should_walk_is_taken_as_held():
    """At 2,000,000 chunks a token on 300,000 of them is under half, yet its posting list
    is longer than ``COMMON_POSTINGS``: not named either, and nothing that can reach the
    need is left out."""
    tokens = ["a", "b", "c"]
    bounds = dict(zip(tokens, [6.0, 5.0, 1.5], strict=True))
    frequencies = dict(zip(tokens, [900, 4_000, 300_000], strict=True))
    scorer = SimpleNamespace(chunks=2_000_000, frequencies=frequencies, bound=bounds.__getitem__)
    for need in (5.5, 6.2, 10.5, 11.8):
        condition = candidates._asked(tokens, scorer, need)
        assert condition is False or "c" not in repr(condition), (need, condition)
        _met_by_every_set_reaching(condition, bounds, need)


def _met_by_every_set_reaching(condition, bounds: dict[str, float], need: float) -> None:
    """Every set of held tokens whose bounds reach ``need`` meets ``condition``."""
    for size in range(len(bounds) + 1):
        for held in itertools.combinations(bounds, size):
            if sum(bounds[t] for t in held) >= need:
                assert condition is not False and _meets(condition, set(held)), (need, held)


def test_the_first_stage_budget_grows_with_the_chunks():
    """500 chunks' worth of rare tokens, or 0.2 % of the chunks when that is more: at a
    million chunks a question's rare words are held by thousands."""

    def budget(chunks):
        statistics = ranking.Statistics(chunks, 80.0, {"营收": 10})
        return ranking.Bm25(statistics, {"营收": 1.0}).first_stage_budget()

    assert budget(10_000) == budget(100_000) == ranking.FIRST_STAGE_BUDGET == 500
    assert budget(1_000_000) == 2_000


BOILERPLATE = "本公司董事会、监事会及董事、监事、高级管理人员保证报告内容的真实、准确、完整。"


def test_a_clause_every_cover_page_repeats_does_not_outweigh_the_ask(
    tenant, alice, django_assert_num_queries
):
    """The question's first clause is boilerplate twelve cover pages print; the answer
    page prints the one rare word of the ask. Summed as independent words, the
    boilerplate's many bigrams won; weighed as a clause, it is context."""
    version = make_knowledge(tenant)
    for n, bank in enumerate("东西南北中金银铜铁锡江河"):
        add_document(version, [f"{bank}海银行。{BOILERPLATE}"], key=f"cover-{n}")
        add_document(version, [f"{bank}海银行营业收入与净利润。"], key=f"income-{n}")
    add_document(version, ["江海银行拨备覆盖率267.29%。"], key="answer")
    publish(version)
    question = f"在{BOILERPLATE[1:-1]}的前提下，请问江海银行的拨备覆盖率是多少"

    # Statistics, vocabulary, frequencies, the clauses' holders (the one statement
    # clauses add), the candidates (the rare 拨备 proves the top k; with the ACL's
    # refused count), the winners.
    with django_assert_num_queries(6):
        items = search_managed([version], query=question, top_k=5, owner=alice)
    assert items[0].document.key == "answer"
    assert [item.chunk.pk for item in items] == _exhaustive(version, question, 5)
    # Asked again: what the version's chunks hold never changes, so the statistics,
    # the frequencies and the clauses' holders are this process's; the vocabulary, the
    # candidates and the winners are read again.
    with django_assert_num_queries(3):
        again = search_managed([version], query=question, top_k=5, owner=alice)
    assert [(item.chunk.pk, item.score) for item in again] == [
        (item.chunk.pk, item.score) for item in items
    ]


def test_a_clause_is_weighed_by_the_chunks_holding_it_nearly_verbatim(tenant):
    version = make_knowledge(tenant)
    for n in range(9):
        add_document(version, [BOILERPLATE, "营业收入。"], key=f"d{n}")
    add_document(version, ["拨备覆盖率。"], key="answer")
    publish(version)
    plan = ranking.SearchPlan.of(f"{BOILERPLATE}拨备覆盖率是多少？营业收入", ranking.Vocabulary())
    indexes = ranking.stored_indexes([version])
    statistics = ranking.version_statistics(indexes, list(plan.weights))

    weights = ranking.clause_weights(plan, statistics, [version.pk])

    # Three clauses: the boilerplate (held by 9 of 19 chunks), the ask (by 1 —
    # 是多, 多少 are in no chunk and do not count), 营业收入 (by 9). The two held by
    # nine chunks are copied text: together their tokens weigh at most one term of the
    # clause's idf.
    boilerplate, ask = ranking.idf(19, 9), ranking.idf(19, 1)
    assert weights["拨备"] == weights["覆盖"] == 1.0
    copied = [t for t in plan.clauses[0].own if t in statistics.frequencies]
    assert len(copied) > 20
    one_term = boilerplate / sum(ranking.idf(19, statistics.frequencies[t]) for t in copied)
    assert weights["完整"] == weights["董事"] == pytest.approx(one_term)
    assert sum(weights[t] * ranking.idf(19, statistics.frequencies[t]) for t in copied) == (
        pytest.approx(boilerplate)
    )
    # 营业收入's three tokens as one term would weigh more than its idf ratio: the ratio
    # stays, the smaller.
    assert weights["营业"] == pytest.approx(boilerplate / ask)
    assert one_term < boilerplate / ask


def test_a_clause_copied_from_the_pages_weighs_as_one_term_not_as_its_words(tenant, alice):
    """A board announcement's first page copies the long procedural clause the question
    opens with; its second page names who was elected. Weighed by its idf alone, the
    clause's thirty-odd bigrams summed above the ask's rare words on the copying page."""
    version = make_knowledge(tenant)
    procedure = "会议的召集、召开和表决程序符合《公司法》和《公司章程》的规定，表决结果同意9票"
    for n, name in enumerate("东西南北中金银铜铁锡江河"):
        add_document(
            version,
            [f"{name}源电力董事会决议公告。{procedure}。", f"{name}源电力选举王{name}担任董事长。"],
            key=f"board-{n}",
        )
    publish(version)
    question = f"{procedure}，请问江源电力这次董事会选举谁担任董事长"

    items = search_managed([version], query=question, top_k=3, owner=alice)

    assert items[0].document.key == "board-10"
    assert items[0].chunk.text == "江源电力选举王江担任董事长。"
    assert [item.chunk.pk for item in items] == _exhaustive(version, question, 3)


def test_a_question_of_one_clause_keeps_every_weight_and_makes_no_statement(
    tenant, django_assert_num_queries
):
    version = make_knowledge(tenant)
    add_document(version, [BOILERPLATE, "拨备覆盖率。"])
    publish(version)
    plan = ranking.SearchPlan.of("拨备覆盖率是多少", ranking.Vocabulary())
    statistics = ranking.version_statistics(ranking.stored_indexes([version]), list(plan.weights))

    with django_assert_num_queries(0):
        assert ranking.clause_weights(plan, statistics, [version.pk]) == plan.weights


def test_a_page_repeating_the_companys_name_does_not_outrank_the_page_that_answers(tenant, alice):
    # Titles of the filing shape give 海川物流 ↔ its full name (vocabulary.entity_aliases):
    # the cover page prints the names over and over, the answering page once.
    version = make_knowledge(tenant)
    title = "海川物流：海川冷链物流股份有限公司2026年半年度报告"
    add_document(
        version,
        [
            "海川冷链物流股份有限公司2026年半年度报告。海川物流（海川冷链物流股份有限公司）"
            "董事会保证海川冷链物流股份有限公司本报告内容真实。海川物流股票简称海川物流。",
            "海川冷链物流股份有限公司2026年半年度报告。营业收入（万元）：1,028,893.96。",
        ],
        key="h1",
        title=title,
    )
    for n in range(4):  # other companies, so the name is rare
        add_document(version, [f"远帆{n}号公司营业收入增长，经营稳健。"], key=f"other-{n}")
    publish(version)

    items = search_managed([version], query="海川物流营收多少", top_k=2, owner=alice)

    assert [(item.document.key, item.chunk.page) for item in items][0] == ("h1", 2)
    assert "1,028,893.96" in items[0].content


def test_the_acl_compiled_once_still_decides_every_search(tenant, alice, bob):
    """The readable documents' subquery is compiled once per owner and versions; what it
    lets through is decided by each search: a permission given or taken between two
    searches, or a deactivated owner, applies to the next one."""
    from guardian.shortcuts import assign_perm, remove_perm

    from knowledge.models import Document

    version = make_knowledge(tenant, "reports")
    add_document(version, ["公开材料：营收增长。"], key="public")
    add_document(version, ["内部材料：营收增长，营收超预期。"], key="secret", readers=[alice])
    publish(version)
    secret = Document.objects.get(key="secret")

    assert _keys(version, "营收", bob) == ["public"]
    assign_perm("knowledge.read_document", bob, secret)
    assert _keys(version, "营收", bob) == ["secret", "public"]
    remove_perm("knowledge.read_document", bob, secret)
    assert _keys(version, "营收", bob) == ["public"]
    assert _keys(version, "营收", alice) == ["secret", "public"]
    alice.is_active = False
    alice.save()
    assert _keys(version, "营收", alice) == []


@pytest.mark.postgres(reason="the narrowed first stage is asked of the GIN index")
def test_a_rare_word_held_by_many_chunks_is_read_only_where_the_rest_can_follow(
    tenant, alice, bob, monkeypatch
):
    """回购, the question's rarest word, is held by more chunks than the first stage's
    budget: the first stage reads only those that also hold enough of the rest (分红方案)
    to set the floor, not every 回购 page; the answer is the exhaustive one, in two
    candidate statements at most. When fewer than k of those are readable (the ACL
    keeps two from bob), the same statement reads the other 回购 chunks too."""
    monkeypatch.setattr(ranking, "FIRST_STAGE_BUDGET", 4)
    monkeypatch.setattr("knowledge.retrieval.BUILTIN", ranking.Vocabulary())
    read = []
    reading = candidates.first_rows

    def recorded(*args, **kwargs):
        found = reading(*args, **kwargs)
        read.append(len(found[0]))
        return found

    monkeypatch.setattr(candidates, "first_rows", recorded)
    version = make_knowledge(tenant)
    filler = "公司经营稳健，业务持续发展，" * 3
    for n in range(12):
        add_document(version, [f"回购进展{n}。" + filler], key=f"buyback-{n}")
    for n in range(20):
        add_document(version, ["分红方案实施。" + filler], key=f"dividend-{n}")
    for n in range(3):
        readers = [alice] if n else None
        add_document(version, [f"回购与分红方案{n}。"], key=f"both-{n}", readers=readers)
    for n in range(60):  # so that no word of the question is on a quarter of the pages
        add_document(version, [f"营收数据{n}。" + filler], key=f"revenue-{n}")
    publish(version)
    query = "回购，分红方案"
    statements = []

    def keep(execute, sql, params, many, context):
        statements.append(sql)
        return execute(sql, params, many, context)

    with connection.execute_wrapper(keep):
        items = search_managed([version], query=query, top_k=2, owner=alice)
    assert [item.chunk.pk for item in items] == _exhaustive(version, query, 2)
    assert read == [3]  # of the 15 回购 chunks, the three that also hold 分红方案
    assert sum("to_tsquery" in sql for sql in statements) <= 2

    read.clear()
    items = search_managed([version], query=query, top_k=2, owner=bob)
    both = [pk for pk in _exhaustive(version, query, 4) if pk in bob_readable(version, bob)]
    assert [item.chunk.pk for item in items] == both[:2]
    assert read == [13]  # one readable of the three: every 回购 chunk bob may read


def bob_readable(version, bob):
    from knowledge.models import readable_documents

    documents = readable_documents(bob, [version])
    return set(Chunk.objects.filter(document__in=documents).values_list("pk", flat=True))
