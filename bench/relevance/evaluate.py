"""Scoring for the relevance bench: two baselines, the metrics and the printed tables.

Nothing here touches Django or a database. ``bench/retrieval.py --relevance`` ingests
the corpus into SparkTide, asks SparkTide for each query, and hands the hits of all
three systems to ``report``. The baselines rank the same pages SparkTide indexes (a
page's text plus its document's title, as ``ingest_document`` indexes every chunk),
and break ties by the same ingest order SparkTide's ranking does (document, then page).
"""

from __future__ import annotations

import logging
import math
import random
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from bench.relevance.corpus import KINDS, SEED, CorpusDocument

TOP_K = 5
Hit = tuple[str, int]  # (document key, page)


def ingest_order(documents: Sequence[CorpusDocument]) -> list[CorpusDocument]:
    """The order documents are ingested in: shuffled with a fixed seed, so that ties in
    a ranking (broken by document id) favour no kind of document and no period."""
    order = list(documents)
    random.Random(SEED + 1).shuffle(order)
    return order


@dataclass(frozen=True)
class Page:
    key: str
    page: int
    text: str  # what is indexed: the page and its document's title


def pages_of(documents: Sequence[CorpusDocument]) -> list[Page]:
    return [
        Page(d.key, number, f"{text} {d.title}")
        for d in documents
        for number, text in enumerate(d.pages, 1)
    ]


# --- character bigrams: the plain overlap count ---------------------------------------

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
_ASCII = re.compile(r"[0-9a-z]+(?:\.[0-9]+)?")


def bigrams(text: str) -> set[str]:
    """Distinct CJK character bigrams (a lone character as itself) and ASCII words."""
    text = unicodedata.normalize("NFKC", text).lower()
    tokens = set()
    for run in _CJK.findall(text):
        if len(run) == 1:
            tokens.add(run)
        else:
            tokens.update(run[i : i + 2] for i in range(len(run) - 1))
    tokens.update(_ASCII.findall(_CJK.sub(" ", text)))
    return tokens


class BigramOverlap:
    """Score = how many of the query's distinct bigrams the page holds. No weights."""

    name = "char bigrams"

    def __init__(self, pages: Sequence[Page]) -> None:
        self.pages = pages
        self.sets = [bigrams(p.text) for p in pages]

    def search(self, query: str, top_k: int = TOP_K) -> list[Hit]:
        wanted = bigrams(query)
        scored = [(-len(wanted & s), i) for i, s in enumerate(self.sets) if wanted & s]
        return [(self.pages[i].key, self.pages[i].page) for _, i in sorted(scored)[:top_k]]


# --- jieba (search mode) + BM25 --------------------------------------------------------

_WORDLIKE = re.compile(r"\w")


def jieba_tokens(text: str) -> list[str]:
    import jieba

    jieba.setLogLevel(logging.WARNING)
    text = unicodedata.normalize("NFKC", text).lower()
    return [t for t in jieba.cut_for_search(text) if _WORDLIKE.search(t)]


class JiebaBM25:
    """Okapi BM25 (k1=1.2, b=0.75, idf = ln(1 + (N - df + .5) / (df + .5))) over jieba's
    search-mode tokens, the query's distinct tokens summed."""

    name = "jieba + BM25"

    def __init__(self, pages: Sequence[Page], k1: float = 1.2, b: float = 0.75) -> None:
        self.pages, self.k1, self.b = pages, k1, b
        self.tfs = [Counter(jieba_tokens(p.text)) for p in pages]
        self.lengths = [sum(tf.values()) for tf in self.tfs]
        self.average = sum(self.lengths) / len(self.lengths)
        df: Counter[str] = Counter()
        for tf in self.tfs:
            df.update(tf.keys())
        n = len(pages)
        self.idf = {t: math.log(1 + (n - d + 0.5) / (d + 0.5)) for t, d in df.items()}

    def search(self, query: str, top_k: int = TOP_K) -> list[Hit]:
        terms = [t for t in dict.fromkeys(jieba_tokens(query)) if t in self.idf]
        scored = []
        for i, tf in enumerate(self.tfs):
            norm = self.k1 * (1 - self.b + self.b * self.lengths[i] / self.average)
            score = sum(
                self.idf[t] * tf[t] * (self.k1 + 1) / (tf[t] + norm) for t in terms if t in tf
            )
            if score > 0:
                scored.append((-score, i))
        return [(self.pages[i].key, self.pages[i].page) for _, i in sorted(scored)[:top_k]]


# --- metrics ---------------------------------------------------------------------------


def rank_of(hits: Sequence[Hit], expected: Hit, top_k: int = TOP_K) -> int | None:
    """1-based rank of the first hit on the expected page within top_k, or None."""
    for position, hit in enumerate(hits[:top_k], 1):
        if tuple(hit) == expected:
            return position
    return None


def expected_of(query: dict) -> Hit:
    return (query["expect"]["document"], query["expect"]["page"])


@dataclass(frozen=True)
class Scores:
    n: int
    r1: float
    r5: float
    mrr: float


def scores(ranks: Sequence[int | None]) -> Scores:
    n = len(ranks)
    if not n:
        return Scores(0, math.nan, math.nan, math.nan)
    return Scores(
        n,
        sum(r == 1 for r in ranks) / n,
        sum(r is not None for r in ranks) / n,
        sum(1 / r for r in ranks if r) / n,
    )


def report(
    title: str,
    files: dict[str, list[dict]],
    systems: dict[str, Callable[[str], list[Hit]]],
    *,
    show_misses: str | None = None,
    out: Callable[[str], None] = print,
) -> dict[str, dict[str, dict[str, Scores]]]:
    """Run every system on every query of each file and print, per file, R@1, R@5 and
    MRR@5 per kind and overall, then what each system gets right that no other does.
    ``show_misses`` names a system whose misses (@1) are listed with its top hits — for
    the tuning file only: the held-out file is reported as totals, never read query by
    query.
    Returns {file: {system: {kind or "all": Scores}}}."""
    out(f"\n{title}")
    results: dict[str, dict[str, dict[str, Scores]]] = {}
    for which, queries in files.items():
        hits = {
            name: {q["id"]: list(search(q["query"])) for q in queries}
            for name, search in systems.items()
        }
        ranks = {
            name: {q["id"]: rank_of(by_id[q["id"]], expected_of(q)) for q in queries}
            for name, by_id in hits.items()
        }
        table: dict[str, dict[str, Scores]] = {}
        for name in systems:
            table[name] = {
                kind: scores([ranks[name][q["id"]] for q in queries if q["kind"] == kind])
                for kind in KINDS
            }
            table[name]["all"] = scores([ranks[name][q["id"]] for q in queries])
        results[which] = table
        out(f"\n{which}: {len(queries)} queries, top {TOP_K}")
        head = f"{'kind':<17}{'n':>3} |" + "|".join(f"{name:^22}" for name in systems)
        sub = f"{'':<20} |" + "|".join(f"{'R@1':>6}{'R@5':>6}{'MRR@5':>8}  " for _ in systems)
        out(head)
        out(sub)
        out("-" * len(sub))
        for kind in (*KINDS, "all"):
            n = table[next(iter(systems))][kind].n
            cells = "|".join(
                f"{s.r1:>6.2f}{s.r5:>6.2f}{s.mrr:>8.3f}  "
                for s in (table[name][kind] for name in systems)
            )
            out(f"{kind:<17}{n:>3} |{cells}")
        for cut, label in ((1, "@1"), (TOP_K, f"@{TOP_K}")):
            right = {
                name: {qid for qid, r in ranks[name].items() if r is not None and r <= cut}
                for name in systems
            }
            only = []
            for name in systems:
                others = set().union(*(right[o] for o in systems if o != name))
                only.append(f"{name} {len(right[name] - others)}")
            pairs = [
                f"{a} not {b}: {len(right[a] - right[b])}"
                for a in systems
                for b in systems
                if a != b
            ]
            out(f"right {label} where the others both miss: " + ", ".join(only))
            out(f"  pairwise {label}: " + "; ".join(pairs))
        if show_misses and which.startswith("tuning"):
            out(f"\n{show_misses} misses @1 ({which}):")
            for q in queries:
                r = ranks[show_misses][q["id"]]
                if r == 1:
                    continue
                got = ", ".join(f"{k} p{p}" for k, p in hits[show_misses][q["id"]][:TOP_K])
                expected = "{} p{}".format(*expected_of(q))
                out(
                    f"  {q['id']} [{'rank ' + str(r) if r else 'not in top 5'}] {q['query']}\n"
                    f"      expected {expected}; got {got or 'nothing'}"
                )
    return results
