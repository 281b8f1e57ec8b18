"""The relevance bench's data stays honest: the corpus is what its queries expect.

bench/relevance/corpus.py generates the corpus; queries.json (tuning) and
queries_heldout.json (held out) name, for each query, the one page that answers it
and strings that page states. No database: the corpus is plain Python, and the page
→ chunk mapping is checked with the ingest's own chunker.
"""

import copy
import json
from collections import Counter

import pytest

from bench.relevance import corpus
from bench.relevance.evaluate import bigrams, rank_of, scores
from knowledge.ingest import TARGET_CHUNK_UTF16, chunk_spans
from knowledge.text import utf16_len

DOCUMENTS = corpus.documents_by_key()
QUERIES = {which: corpus.load_queries(which) for which in corpus.QUERY_FILES}
ALL_QUERIES = [q for queries in QUERIES.values() for q in queries]


def test_the_corpus_is_large_varied_and_deterministic():
    documents = corpus.build_corpus()
    assert len(documents) >= 150
    assert len({d.company for d in documents}) >= 25
    assert len(DOCUMENTS) == len(documents), "document keys are unique"
    assert {d.kind for d in documents} == {"report", "placement", "board", "note"}
    assert {d.period for d in documents if d.kind == "report"} == set(corpus.PERIODS)
    # Built again from scratch (not the cached tuple): the same text, page for page.
    assert corpus.build_corpus.__wrapped__(corpus.SEED) == documents
    assert corpus.build_corpus.__wrapped__(corpus.SEED + 1) != documents


def test_every_page_is_one_chunk_so_a_hit_names_its_page():
    assert corpus.MAX_PAGE_UTF16 == TARGET_CHUNK_UTF16
    for document in DOCUMENTS.values():
        assert all(utf16_len(p) <= corpus.MAX_PAGE_UTF16 for p in document.pages), document.key
        _, spans = chunk_spans(document.pages)
        assert [s.page for s in spans] == list(range(1, len(document.pages) + 1)), document.key


def test_reports_carry_running_headers_and_are_near_duplicates_across_periods():
    names = corpus.companies()
    for document in DOCUMENTS.values():
        if document.kind == "report":
            header = names[document.company][1] + corpus.PERIODS[document.period][0]
            assert all(page.startswith(header + "\n") for page in document.pages), document.key
    for code in names:
        q1, h1 = DOCUMENTS[f"{code}-2026q1"], DOCUMENTS[f"{code}-2026h1"]
        a, b = bigrams("".join(q1.pages[:4])), bigrams("".join(h1.pages[:4]))
        assert len(a & b) / len(a | b) > 0.7, code  # most text shared …
        assert q1.pages[1] != h1.pages[1]  # … but not the figures


def test_query_files_are_well_formed():
    ids = [q["id"] for q in ALL_QUERIES]
    assert len(ids) == len(set(ids)), [i for i, n in Counter(ids).items() if n > 1]
    texts = [q["query"] for q in ALL_QUERIES]
    assert len(texts) == len(set(texts))
    assert len(ALL_QUERIES) >= 60
    share = len(QUERIES["heldout"]) / len(ALL_QUERIES)
    assert 0.28 <= share <= 0.40, f"held-out share {share:.2f}"
    for which, queries in QUERIES.items():
        kinds = Counter(q["kind"] for q in queries)
        assert set(kinds) == set(corpus.KINDS), which
        assert min(kinds.values()) >= 5, (which, kinds)


@pytest.mark.parametrize("query", ALL_QUERIES, ids=lambda q: q["id"])
def test_the_expected_page_states_the_answer_and_only_it(query):
    assert corpus.query_problems(query, DOCUMENTS) == []


def test_the_check_catches_a_wrong_expectation():
    query = QUERIES["tuning"][0]
    wrong_page = copy.deepcopy(query)
    wrong_page["expect"]["page"] = 1
    assert corpus.query_problems(wrong_page, DOCUMENTS)
    missing = copy.deepcopy(query)
    missing["expect"]["document"] = "000000-2026q1"
    assert corpus.query_problems(missing, DOCUMENTS)
    vague = copy.deepcopy(query)
    vague["answer"] = ["基本每股收益"]  # on every report's page 2: not one page
    assert "also on" in " ".join(corpus.query_problems(vague, DOCUMENTS))
    other_period = copy.deepcopy(query)
    document = DOCUMENTS[query["expect"]["document"]]
    other_period["expect"]["document"] = document.key.replace(document.period, "2026h1")
    assert corpus.query_problems(other_period, DOCUMENTS)
    assert corpus.query_problems(json.loads('{"id": "x"}'), DOCUMENTS)


def test_metrics():
    assert rank_of([("a", 1), ("b", 2)], ("b", 2)) == 2
    assert rank_of([("a", 1)] * 5 + [("b", 2)], ("b", 2)) is None
    s = scores([1, 2, None, 5])
    assert (s.n, s.r1, s.r5) == (4, 0.25, 0.75)
    assert s.mrr == pytest.approx((1 + 0.5 + 0.2) / 4)
