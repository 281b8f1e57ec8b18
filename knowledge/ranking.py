"""Managed ranking: BM25 over search tokens, with the statistics of the exact versions.

Tokens are today's (``knowledge.text.search_tokens``: CJK character bigrams, ASCII
words); a query searches its own tokens and those of its vocabulary expansions
(``knowledge.vocabulary``), each once. A chunk's score is

    Σ over the query's tokens t it holds:  idf(t) · tf·(k1+1) / (tf + k1·(1 − b + b·len/avglen))
    idf(t) = ln(1 + (N − df(t) + 0.5) / (df(t) + 0.5))

with N, avglen and df(t) over all the searched versions' chunks: the statistics stored
when each version was published (``VersionIndex``, ``VersionTerm``), so a token every
page repeats (a company name, boilerplate) weighs little and the rare word of the
question decides. Ties: document id, then ordinal — ingest order, as before.

The score a search returns is computed in Python from a chunk's ``search_text``, on
PostgreSQL and SQLite alike: the same corpus and query give the same top k on both. The
database chooses candidates (the GIN index on PostgreSQL, a substring filter on SQLite)
in at most two stages (``knowledge.candidates.top_chunks``): the chunks holding one of the rarest tokens,
whose k-th score is a floor; then only the chunks whose tokens' bounds (idf·(k1+1)·
impact, the impact stored at publish) can still reach it. Of the chunks read, only those
whose ceiling (their tokens' bounds, a token held once by its single impact:
``Bm25.reaches``) reaches the k-th score so far are scored. Exactly the exhaustive
ranking. (Scoring in the statement instead, tf from the stored vector's positions, was
measured slower than Python's: docs/retrieval.md.)
"""

from __future__ import annotations

import itertools
import math
import re
import threading
from collections import Counter, OrderedDict
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from django.db import connection
from django.db.models import Q

from knowledge.models import (
    Chunk,
    Knowledge,
    KnowledgeVersion,
    VersionCounts,
    VersionIndex,
    VersionTerm,
)
from knowledge.text import MAX_TOKEN_CHARS, marked, search_tokens
from knowledge.token_queries import chunk_texts
from knowledge.vocabulary import Vocabulary

K1 = 1.2
B = 0.75
# A query searches at most this many distinct tokens (its own first, then its
# expansions'): enough for any real question, and it bounds the OR on SQLite.
MAX_QUERY_TOKENS = 128
# The first stage's rare tokens: the rarest first while the chunks holding them (a sum
# of their document frequencies) stay within this budget — or this share of the chunks
# when that is more —; always at least the rarest. At 1,000,000 chunks a question's
# rare words are held by thousands: within 500, three questions of 40 set a floor far
# below the final one and read 10–12k second-stage rows; within 2,000, none.
FIRST_STAGE_BUDGET = 500
FIRST_STAGE_SHARE = 0.002
# ... and at least until they sum to this many times k. Their sum counts a chunk once
# per bigram it holds of a word (a 3-character word: twice), so 2k holds about k
# chunks. At 4k a question of a few rare words also read a word held by a quarter of
# the chunks (2,400 rows of 10,000, 93 ms; docs/retrieval.md).
FIRST_STAGE_HITS = 2
# Where a question's clause ends: full-width and ASCII clause punctuation (a comma or
# colon before a digit is part of a number, 2,780). Not 、, which lists within a clause.
_CLAUSE_END = re.compile(r"[，。；？！：;!?]|[,:](?!\d)")
# A chunk holds a clause when it holds at least this share of the clause's tokens:
# "nearly verbatim".
CLAUSE_SHARE = 0.8


@dataclass(frozen=True)
class Clause:
    """One clause of a question: its own tokens (what a chunk must hold to hold the
    clause) and those with its vocabulary expansions' (what its weight applies to)."""

    own: tuple[str, ...]
    tokens: tuple[str, ...]


@dataclass(frozen=True)
class SearchPlan:
    """What one search looks for: ``weights`` maps each token to its query weight (1.0),
    ``expansions`` each vocabulary term of the question to what it also searched."""

    query_tokens: tuple[str, ...]
    expansions: dict[str, tuple[str, ...]] = field(default_factory=dict)
    weights: dict[str, float] = field(default_factory=dict)
    clauses: tuple[Clause, ...] = ()
    # The names the question calls its entity by (and their aliases), each as its tokens
    # in order: a chunk says a name once or not, however often it repeats it.
    names: tuple[tuple[str, ...], ...] = ()

    @classmethod
    def of(
        cls, query: str, vocabulary: Vocabulary, entities: frozenset[str] = frozenset()
    ) -> SearchPlan:
        own = [t for t in dict.fromkeys(search_tokens(query)) if len(t) <= MAX_TOKEN_CHARS]
        expansions = {e.term: e.expansions for e in vocabulary.topic_terms(query)}
        names = tuple(
            dict.fromkeys(
                tuple(search_tokens(name))
                for term, targets in expansions.items()
                if term in entities
                for name in (term, *targets)
            )
        )
        weights = dict.fromkeys(own, 1.0)
        for targets in expansions.values():
            for target in targets:
                for token in search_tokens(target):
                    if len(token) <= MAX_TOKEN_CHARS:
                        weights.setdefault(token, 1.0)
        weights = dict(list(weights.items())[:MAX_QUERY_TOKENS])
        clauses = []
        for text in _CLAUSE_END.split(query):
            mine = [t for t in dict.fromkeys(search_tokens(text)) if t in weights]
            expanded = [
                t
                for e in vocabulary.topic_terms(text)
                for target in e.expansions
                for t in search_tokens(target)
                if t in weights
            ]
            if mine or expanded:
                clauses.append(Clause(tuple(mine), tuple(dict.fromkeys(mine + expanded))))
        return cls(tuple(own), expansions, weights, tuple(clauses), names)


# A published version, as the per-process caches below know it: its pk and its
# creation time (a pk alone could name another version on a database that reuses the
# ids of a rolled-back transaction, as SQLite does).
VersionKey = tuple[int, datetime]


@dataclass(frozen=True)
class Statistics:
    chunks: int
    average_length: float
    frequencies: dict[str, int]  # the query's tokens only
    # The most of its (k1+1)·idf a query token can add to one chunk, ≤ 1 (1: unknown).
    impacts: dict[str, float] = field(default_factory=dict)
    # The same in a chunk holding it once (a token known in every version holding it);
    # the rest of its chunks carry its mark (``knowledge.text.search_marks``).
    singles: dict[str, float] = field(default_factory=dict)
    # The searched versions' keys (what may be cached of them).
    keys: tuple[VersionKey, ...] = ()


@dataclass(frozen=True)
class StoredIndex:
    chunk_count: int
    token_count: int
    entities: dict[str, list[str]]
    # The version's key (``version_key``).
    key: VersionKey


class Lru[K: Hashable, V]:
    """A bounded map, least recently used out first; safe across threads."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._items: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        with self._lock:
            value = self._items.get(key)
            if value is not None:
                self._items.move_to_end(key)
            return value

    def put(self, key: K, value: V) -> None:
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()

    def __len__(self) -> int:
        return len(self._items)


# What a search reads of a published version's stored statistics never changes: its
# chunks cannot (``VersionIndex``, ``VersionTerm``: built in the publishing transaction,
# never rebuilt). So each process keeps what it read, by version key: the statistics
# (a few versions), each term's frequency and impact or its absence (the terms
# questions repeat), how many chunks hold a clause. Nothing else is kept: declared
# vocabulary, the ACL, the candidates are read by every search. Not kept: a term stored
# without its impact (``index_knowledge`` may store it later).
INDEX_CACHE: Lru[VersionKey, StoredIndex] = Lru(64)
TERM_CACHE: Lru[tuple[VersionKey, str], tuple[int, float, float] | tuple[()]] = Lru(32_768)
CLAUSE_CACHE: Lru[tuple[tuple[VersionKey, ...], tuple[str, ...], int], int] = Lru(10_000)


def forget_statistics() -> None:
    """Empty the per-process caches of stored statistics (tests)."""
    for cache in (INDEX_CACHE, TERM_CACHE, CLAUSE_CACHE):
        cache.clear()


def version_key(version: KnowledgeVersion) -> VersionKey:
    return (version.pk, version.created_at)


class IndexMissing(Exception):
    """Published versions without stored statistics — published by a bulk update that
    bypassed ``KnowledgeVersion.save`` — are refused, not searched: a search never
    builds an index, and never ranks with a half-built one. ``manage.py index_knowledge``
    stores them."""

    def __init__(self, versions: Sequence[KnowledgeVersion]) -> None:
        self.versions = list(versions)
        labels = ", ".join(str(version.pk) for version in self.versions)
        super().__init__(f"version(s) {labels} have no search index: run manage.py index_knowledge")


def stored_indexes(versions: Sequence[KnowledgeVersion]) -> dict[int, StoredIndex]:
    """Every MANAGED or INLINE version's statistics, by pk: from this process's cache,
    or in one query. Raises ``IndexMissing`` for a PUBLISHED one without."""
    indexes: dict[int, StoredIndex] = {}
    unknown: dict[int, VersionKey] = {}
    for version in versions:
        key = version_key(version)
        cached = INDEX_CACHE.get(key)
        if cached is not None:
            indexes[version.pk] = cached
        else:
            unknown[version.pk] = key
    if unknown:
        for pk, chunks, tokens, entities in VersionIndex.objects.filter(
            version_id__in=list(unknown)
        ).values_list("version_id", "chunk_count", "token_count", "entities"):
            indexes[pk] = StoredIndex(chunks, tokens, entities, key=unknown[pk])
            INDEX_CACHE.put(unknown[pk], indexes[pk])
    # Not PUBLISHED (a draft, never indexed): nothing of it is searched anyway.
    missing = [
        version
        for version in versions
        if version.pk not in indexes
        and version.status == KnowledgeVersion.Status.PUBLISHED
        and version.knowledge.type != Knowledge.Type.REMOTE
    ]
    if missing:
        raise IndexMissing(missing)
    return {version.pk: indexes[version.pk] for version in versions if version.pk in indexes}


def version_statistics(indexes: dict[int, StoredIndex], tokens: list[str]) -> Statistics:
    """N, the average chunk length, the query tokens' document frequencies and their
    impacts over the versions together. One query for the terms this process has not
    read yet (none when it has read them all, or no version has stored statistics).

    A token's impact is its stored ``VersionTerm.impact`` — its most in one chunk,
    tf / (tf + k1·(1 − b + b·len/avglen_v)) with the version's own average — scaled by
    max(1, avglen / avglen_v): with the searched versions' average avglen a chunk's term
    can weigh at most that much more. Unknown (a term stored before impacts were) is 1,
    the bound of BM25 itself. Its single impact
    (``VersionTerm.single``: the most in a chunk holding it once) is scaled alike, and
    known only when every version holding the token stored it."""
    chunks = sum(index.chunk_count for index in indexes.values())
    length = sum(index.token_count for index in indexes.values())
    average = length / chunks if chunks else 1.0
    frequencies: Counter[str] = Counter()
    impacts: dict[str, float] = {}
    singles: dict[str, float] = {}
    unknown: set[str] = set()  # tokens some version holds without a stored single impact

    def widen(token: str, impact: float | None, single: float | None, index: StoredIndex) -> None:
        if impact is None or not index.token_count:
            impact = 1.0
            unknown.add(token)
        else:
            scale = max(1.0, average * index.chunk_count / index.token_count) * (1 + 1e-9)
            impact = min(1.0, impact * scale)
            if single is None:
                unknown.add(token)
            else:
                singles[token] = max(singles.get(token, 0.0), min(1.0, single * scale))
        impacts[token] = max(impacts.get(token, 0.0), impact)

    asked: dict[int, set[str]] = {}  # the terms of each version this process has not read
    for pk, index in indexes.items():
        for token in tokens:
            cached = TERM_CACHE.get((index.key, token))
            if cached is None:
                asked.setdefault(pk, set()).add(token)
            elif cached:
                frequencies[token] += cached[0]
                widen(token, cached[1], cached[2], index)
    if asked:
        for version_id, token, n, impact, single in VersionTerm.objects.filter(
            version_id__in=list(asked), token__in=sorted(set().union(*asked.values()))
        ).values_list("version_id", "token", "chunks", "impact", "single"):
            if token not in asked[version_id]:  # read from the cache already
                continue
            asked[version_id].discard(token)
            frequencies[token] += n
            widen(token, impact, single, indexes[version_id])
            if impact is not None and single is not None:
                TERM_CACHE.put((indexes[version_id].key, token), (n, impact, single))
        # A token the version's stored terms lack: no chunk of it holds the token, ever.
        for version_id, absent in asked.items():
            for token in absent:
                TERM_CACHE.put((indexes[version_id].key, token), ())
    keys = tuple(sorted(index.key for index in indexes.values()))
    singles = {t: single for t, single in singles.items() if t not in unknown}
    return Statistics(chunks, average, dict(frequencies), impacts, singles, keys)


@dataclass(slots=True)
class Impact:
    """A token's most weight in one chunk of a version, tf / (tf + k1·(1 − b + b·len/
    avglen)): over all its chunks (``most``) and over those holding it once (``single``,
    0 when none does)."""

    most: float = 0.0
    single: float = 0.0


def term_impacts(version: KnowledgeVersion, counts: VersionCounts) -> dict[str, Impact]:
    """Each token's ``Impact`` in ``version``, avglen the version's (``counts``:
    ``count_version``). Read when the version is published and stored with its
    frequencies; the bounds the staged search closes on."""
    if not counts.chunk_count:
        return {}
    average = counts.token_count / counts.chunk_count or 1.0
    impacts: dict[str, Impact] = {}
    rows = Chunk.objects.filter(document__version=version).values_list("search_text", flat=True)
    for search_text in rows.iterator(chunk_size=2000):
        tokens = search_text.split()
        norm = K1 * (1 - B + B * len(tokens) / average)
        for token, n in Counter(tokens).items():
            if len(token) > MAX_TOKEN_CHARS:
                continue
            weight = n / (n + norm)
            impact = impacts.get(token) or impacts.setdefault(token, Impact())
            impact.most = max(impact.most, weight)
            if n == 1:
                impact.single = max(impact.single, weight)
    return impacts


def store_missing_impacts(version: KnowledgeVersion, batch: int = 5000) -> int:
    """Store the impacts of ``version``'s terms stored without one (published before
    migration 0009) or without their single impact (before 0014); how many. With the
    version's stored averages, as publishing would have; nothing to do the second time.
    Until then a search bounds those terms by 1, or by their impact alone."""
    missing = VersionTerm.objects.filter(version=version).filter(
        Q(impact__isnull=True) | Q(single__isnull=True)
    )
    index = VersionIndex.objects.filter(version=version).first()
    if index is None or not missing.exists():
        return 0
    counts = VersionCounts(index.chunk_count, index.token_count, Counter(), [])
    impacts = term_impacts(version, counts)
    terms = list(missing.values_list("pk", "token"))
    for first in range(0, len(terms), batch):
        # A token of the statistics the chunks no longer hold cannot be: 1, the bound.
        rows = [
            (pk, impacts.get(token, Impact(1.0, 1.0))) for pk, token in terms[first : first + batch]
        ]
        _store_impacts(rows)
    return len(terms)


def _store_impacts(rows: list[tuple[int, Impact]]) -> None:
    """Write ``VersionTerm`` impacts by pk: on PostgreSQL one UPDATE from arrays (the
    ORM's ``bulk_update`` is a CASE of every row for every row: hours at a million
    terms)."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(
                "UPDATE knowledge_versionterm t SET impact = u.most, single = u.single"
                " FROM unnest(%s::bigint[], %s::float8[], %s::float8[]) AS u(id, most, single)"
                " WHERE t.id = u.id",
                [[pk for pk, _ in rows], [i.most for _, i in rows], [i.single for _, i in rows]],
            )
        return
    VersionTerm.objects.bulk_update(
        [VersionTerm(pk=pk, impact=i.most, single=i.single) for pk, i in rows],
        ["impact", "single"],
    )


def idf(chunks: int, frequency: int) -> float:
    """BM25's inverse document frequency of what ``frequency`` of ``chunks`` hold."""
    return math.log(1 + (chunks - frequency + 0.5) / (frequency + 0.5))


def clause_weights(
    plan: SearchPlan, statistics: Statistics, versions: Sequence[int]
) -> dict[str, float]:
    """The query weight of each token of ``plan``: what its clause tells apart.

    A long question carries context — 在公司董事会、监事会及董事、监事、高级管理人员保证报告
    内容真实、准确、完整的前提下 — copied from the filings' boilerplate: its many common
    words together outweigh the one rare word of the ask. So each clause of two known
    tokens or more is weighed as a whole: its document frequency is the number of the
    versions' chunks holding it nearly verbatim (``CLAUSE_SHARE`` of its tokens), and a
    token's weight is the idf of its clause over the largest clause idf of the question
    (a token of several clauses: the largest). The clause that no page repeats keeps
    weight 1; one that every cover page repeats weighs what its idf says. And a clause
    that two or more chunks hold nearly verbatim, other than the question's rarest, is
    copied text: its tokens are not independent evidence (a chunk holding one holds them
    all), so together they weigh at most what one term of the clause's idf weighs — each
    token at most idf(clause) / Σ idf(its tokens). Weighed only by its idf, a context
    clause of thirty bigrams still outweighed a rare ask of ten on the page that copies
    it (a board announcement's 会议的召集、召开和表决程序… before 选举谁担任董事长). A
    question of fewer than two such clauses keeps every weight 1, and no statement is
    made."""
    owns = [[t for t in clause.own if statistics.frequencies.get(t)] for clause in plan.clauses]
    measured = [own for own in owns if len(own) >= 2]
    if len(measured) < 2:
        return plan.weights
    holders = clause_holders(measured, versions, statistics)
    weighed = [idf(statistics.chunks, n) for n in holders]
    top = max(weighed)
    ratios = iter(
        min(weight / top, weight / _summed_idf(own, statistics))
        if n >= 2 and weight < top
        else weight / top
        for own, n, weight in zip(measured, holders, weighed, strict=True)
    )
    share: dict[str, float] = {}
    for clause, own in zip(plan.clauses, owns, strict=True):
        weight = next(ratios) if len(own) >= 2 else 1.0
        for token in clause.tokens:
            share[token] = max(share.get(token, 0.0), weight)
    return {token: share.get(token, weight) for token, weight in plan.weights.items()}


def _summed_idf(tokens: list[str], statistics: Statistics) -> float:
    return sum(idf(statistics.chunks, statistics.frequencies[t]) for t in tokens)


def clause_holders(
    clauses: list[list[str]], versions: Sequence[int], statistics: Statistics
) -> list[int]:
    """How many chunks of ``versions`` hold each clause: at least ``CLAUSE_SHARE`` of its
    tokens, counted exactly in Python on either database. One statement (none when this
    process counted these clauses of these versions before): a chunk holding m of a
    clause's n tokens holds one of any n − m + 1 of them, so the chunks holding one of
    each clause's n − m + 1 rarest are all that can."""
    needed = [math.ceil(CLAUSE_SHARE * len(tokens)) for tokens in clauses]
    rarest = {
        token
        for tokens, m in zip(clauses, needed, strict=True)
        for token in sorted(tokens, key=lambda t: (statistics.frequencies[t], t))[
            : len(tokens) - m + 1
        ]
    }
    # Stored statistics of exactly these versions: what their chunks hold never changes.
    cacheable = sorted(pk for pk, _ in statistics.keys) == sorted(versions) != []
    keys = [(statistics.keys, tuple(tokens), m) for tokens, m in zip(clauses, needed, strict=True)]
    cached = [CLAUSE_CACHE.get(key) if cacheable else None for key in keys]
    if all(count is not None for count in cached):
        return [count or 0 for count in cached]
    counts = [0] * len(clauses)
    for search_text in chunk_texts(versions, sorted(rarest)):
        held = set(search_text.split())
        for i, (tokens, m) in enumerate(zip(clauses, needed, strict=True)):
            if sum(t in held for t in tokens) >= m:
                counts[i] += 1
    if cacheable:
        for key, count in zip(keys, counts, strict=True):
            CLAUSE_CACHE.put(key, count)
    return counts


def said_once(
    tokens: list[str], counts: Counter[str], names: list[tuple[str, ...]]
) -> Counter[str]:
    """``counts`` with each name's second and later occurrences in ``tokens`` taken off
    its tokens' counts (never below one for a token the chunk holds)."""
    counts = counts.copy()
    for name in names:
        if counts[name[0]] < 2:
            continue
        width = len(name)
        repeats = (
            sum(
                1
                for i, token in enumerate(tokens)
                if token == name[0] and tuple(tokens[i : i + width]) == name
            )
            - 1
        )
        if repeats > 0:
            for token in name:
                counts[token] = max(1, counts[token] - repeats)
    return counts


class Bm25:
    def __init__(
        self,
        statistics: Statistics,
        weights: dict[str, float],
        names: tuple[tuple[str, ...], ...] = (),
    ) -> None:
        n = statistics.chunks
        self.chunks = n
        self.average = statistics.average_length or 1.0
        self.weights = {
            t: w * idf(n, df)
            for t, w in weights.items()
            if (df := statistics.frequencies.get(t, 0)) > 0
        }
        # Rarest first; the bound of a token is the most it can add to any chunk.
        self.order = sorted(self.weights, key=lambda t: (statistics.frequencies[t], t))
        self.frequencies = statistics.frequencies
        self.impacts = statistics.impacts
        self.singles = statistics.singles
        self._ceilings: list[tuple[str, str, float, float, float]] | None = None
        # Said once in a chunk: repeating a name does not make a page answer more (a bound
        # stays a bound: the count only falls).
        self.names = [name for name in names if name and not self.weights.keys().isdisjoint(name)]

    def bound(self, token: str) -> float:
        """More than ``token`` adds to any chunk's score (a term adds less than
        idf·(k1+1)·its impact)."""
        return self.weights[token] * (K1 + 1) * self.impacts.get(token, 1.0)

    def reaches(self, search_text: str, marks: str, floor: float) -> bool:
        """Whether the chunk of ``search_text`` and ``search_marks`` ``marks`` may score
        ``floor`` or more, read without splitting it: each query token it may hold (a
        substring: a superset) adds its bound when its mark is there (held twice or more;
        a substring too), its single bound when not (held once) — its *ceiling*. Largest
        bounds first, stopping as soon as the answer is known: a few substring tests, not
        a count of every token (``score``)."""
        if self._ceilings is None:
            ranked = sorted(self.weights, key=lambda t: -self.bound(t))
            # What the tokens after each one can add at most.
            after = list(itertools.accumulate((self.bound(t) for t in ranked[:0:-1]), initial=0.0))
            after = after if ranked else []
            self._ceilings = [
                (token, marked(token), self.bound(token), self.single_bound(token), rest)
                for token, rest in zip(ranked, after[::-1], strict=True)
            ]
        total = 0.0
        for token, mark, bound, single, rest in self._ceilings:
            if token in search_text:
                total += bound if mark in marks else single
                if total >= floor:
                    return True
            if total + rest < floor:
                return False
        return total >= floor

    def single_bound(self, token: str) -> float:
        """More than ``token`` adds to a chunk holding it once (one without its mark);
        ``bound`` when that is not known."""
        single = self.singles.get(token)
        return self.bound(token) if single is None else self.weights[token] * (K1 + 1) * single

    def score(self, search_text: str) -> float:
        """BM25 of one chunk. Its query tokens are counted in C (``Counter`` of every
        token) and summed in the query's order, the same for every chunk: two chunks
        holding the same counts score the same to the last bit, and tie by ingest order."""
        tokens = search_text.split()
        counts = Counter(tokens)
        if counts.keys().isdisjoint(self.weights):
            return 0.0
        if self.names:
            counts = said_once(tokens, counts, self.names)
        norm = K1 * (1 - B + B * len(tokens) / self.average)
        return sum(
            weight * n * (K1 + 1) / (n + norm)
            for t, weight in self.weights.items()
            if (n := counts.get(t, 0))
        )

    def outside(self, tokens: list[str]) -> float:
        """More than any chunk holding none of ``tokens`` can score."""
        held = set(tokens)
        return sum(self.bound(t) for t in self.order if t not in held)

    def first_stage_budget(self) -> float:
        """How many chunks the first stage's tokens may hold together:
        ``FIRST_STAGE_BUDGET``, or ``FIRST_STAGE_SHARE`` of the chunks when more."""
        return max(FIRST_STAGE_BUDGET, FIRST_STAGE_SHARE * self.chunks)

    def first_stage(self, top_k: int) -> list[str]:
        """The rarest tokens while their document frequencies sum to at most
        ``first_stage_budget``, and at least until they sum to ``FIRST_STAGE_HITS``·
        ``top_k`` (fewer hits than k set no floor, and the second stage would read every
        token; a word's bigrams are held by the same chunks, so their sum overcounts)."""
        rare: list[str] = []
        total = 0
        for token in self.order:
            if (
                rare
                and total >= FIRST_STAGE_HITS * top_k
                and total + self.frequencies[token] > self.first_stage_budget()
            ):
                break
            total += self.frequencies[token]
            rare.append(token)
        return rare
