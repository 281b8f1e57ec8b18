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

The score is computed in Python from a chunk's ``search_text``, on PostgreSQL and
SQLite alike: the same corpus and query give the same top k on both. The database
chooses candidates: chunks holding one of the rarest tokens R (the GIN index on
PostgreSQL, a substring filter on SQLite). A chunk holding none of R scores below
Σ_{t∉R} idf(t)·(k1+1); when the k-th candidate scores at least that, the answer is
final, else R widens (``STAGE_BUDGETS``) and at last holds every token.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from django.db import connection
from django.db.models import BooleanField, Q, QuerySet
from django.db.models.expressions import RawSQL

from knowledge.models import (
    Chunk,
    Knowledge,
    KnowledgeVersion,
    VersionIndex,
    VersionTerm,
    count_version,
)
from knowledge.text import MAX_TOKEN_CHARS, search_tokens
from knowledge.vocabulary import Vocabulary, entity_aliases

K1 = 1.2
B = 0.75
# A query searches at most this many distinct tokens (its own first, then its
# expansions'): enough for any real question, and it bounds the OR on SQLite.
MAX_QUERY_TOKENS = 128
# A stage's rare tokens: the rarest first while the chunks holding them (a sum of
# their document frequencies) stay within the budget; always at least the rarest.
STAGE_BUDGETS = (2_000, 20_000)


@dataclass(frozen=True)
class SearchPlan:
    """What one search looks for: ``weights`` maps each token to its query weight (1.0),
    ``expansions`` each vocabulary term of the question to what it also searched."""

    query_tokens: tuple[str, ...]
    expansions: dict[str, tuple[str, ...]] = field(default_factory=dict)
    weights: dict[str, float] = field(default_factory=dict)

    @classmethod
    def of(cls, query: str, vocabulary: Vocabulary) -> SearchPlan:
        own = [t for t in dict.fromkeys(search_tokens(query)) if len(t) <= MAX_TOKEN_CHARS]
        expansions = {e.term: e.expansions for e in vocabulary.topic_terms(query)}
        weights = dict.fromkeys(own, 1.0)
        for targets in expansions.values():
            for target in targets:
                for token in search_tokens(target):
                    if len(token) <= MAX_TOKEN_CHARS:
                        weights.setdefault(token, 1.0)
        weights = dict(list(weights.items())[:MAX_QUERY_TOKENS])
        return cls(tuple(own), expansions, weights)


@dataclass(frozen=True)
class Statistics:
    chunks: int
    average_length: float
    frequencies: dict[str, int]  # the query's tokens only


@dataclass(frozen=True)
class StoredIndex:
    chunk_count: int
    token_count: int
    entities: dict
    # Counted now, for a version published without stored statistics; None: stored.
    counted: Counter[str] | None = None


def stored_indexes(versions: Sequence[KnowledgeVersion]) -> dict[int, StoredIndex]:
    """Every version's statistics, by pk: stored ones in one query. A version published
    without them (by a bulk update that bypassed ``save``) is counted from its chunks
    here, in memory: slower, never a different answer, until ``manage.py
    index_knowledge`` stores them. Nothing is written during a search."""
    indexes = {
        pk: StoredIndex(chunks, tokens, entities)
        for pk, chunks, tokens, entities in VersionIndex.objects.filter(
            version_id__in=[v.pk for v in versions]
        ).values_list("version_id", "chunk_count", "token_count", "entities")
    }
    for version in versions:
        if version.pk not in indexes and version.knowledge.type != Knowledge.Type.REMOTE:
            counts = count_version(version)
            indexes[version.pk] = StoredIndex(
                counts.chunk_count,
                counts.token_count,
                entity_aliases(counts.titles).entries(),
                counts.frequencies,
            )
    return indexes


def version_statistics(indexes: dict[int, StoredIndex], tokens: list[str]) -> Statistics:
    """N, the average chunk length and the query tokens' document frequencies over the
    versions together. One query (none when no version has stored statistics)."""
    chunks = sum(index.chunk_count for index in indexes.values())
    length = sum(index.token_count for index in indexes.values())
    frequencies: Counter[str] = Counter()
    stored = [pk for pk, index in indexes.items() if index.counted is None]
    if stored:
        for token, n in VersionTerm.objects.filter(
            version_id__in=stored, token__in=tokens
        ).values_list("token", "chunks"):
            frequencies[token] += n
    for index in indexes.values():
        if index.counted is not None:
            for token in tokens:
                frequencies[token] += index.counted.get(token, 0)
    return Statistics(chunks, length / chunks if chunks else 1.0, dict(frequencies))


class Bm25:
    def __init__(self, statistics: Statistics, weights: dict[str, float]) -> None:
        n = statistics.chunks
        self.average = statistics.average_length or 1.0
        self.weights = {
            t: w * math.log(1 + (n - df + 0.5) / (df + 0.5))
            for t, w in weights.items()
            if (df := statistics.frequencies.get(t, 0)) > 0
        }
        # Rarest first; the bound of a token is the most it can add to any chunk.
        self.order = sorted(self.weights, key=lambda t: (statistics.frequencies[t], t))
        self.frequencies = statistics.frequencies

    def bound(self, token: str) -> float:
        return self.weights[token] * (K1 + 1)

    def score(self, search_text: str) -> float:
        tokens = search_text.split()
        counts = Counter(t for t in tokens if t in self.weights)
        if not counts:
            return 0.0
        norm = K1 * (1 - B + B * len(tokens) / self.average)
        return sum(self.weights[t] * n * (K1 + 1) / (n + norm) for t, n in counts.items())

    def stages(self) -> list[list[str]]:
        stages: list[list[str]] = []
        for budget in (*STAGE_BUDGETS, math.inf):
            rare: list[str] = []
            total = 0
            for token in self.order:
                total += self.frequencies[token]
                if rare and total > budget:
                    break
                rare.append(token)
            if not stages or len(rare) > len(stages[-1]):
                stages.append(rare)
        return stages


def top_chunks(candidates: QuerySet[Chunk], scorer: Bm25, top_k: int) -> list[tuple[int, float]]:
    """(chunk id, score) of the top_k of ``candidates`` by ``scorer``, best first.
    One query per stage run; a stage whose k-th score beats every chunk outside it ends
    the search."""
    if not scorer.weights:
        return []
    everything = sum(scorer.bound(t) for t in scorer.order)
    best: list[tuple[float, int, int, int]] = []
    for rare in scorer.stages():
        outside = everything - sum(scorer.bound(t) for t in rare)
        scored = []
        for pk, search_text, document_id, ordinal in holding_any(candidates, rare).values_list(
            "pk", "search_text", "document_id", "ordinal"
        ):
            score = scorer.score(search_text)
            if score > 0:
                scored.append((-score, document_id, ordinal, pk))
        scored.sort()
        best = scored[:top_k]
        if len(rare) == len(scorer.order) or (len(best) == top_k and -best[-1][0] >= outside):
            break
    return [(pk, -negative) for negative, _, _, pk in best]


def holding_any(candidates: QuerySet[Chunk], tokens: list[str]) -> QuerySet[Chunk]:
    if connection.vendor == "postgresql":
        # The stored vector of migration 0004 (GIN-indexed); every token quoted, so
        # punctuation in a query cannot break or widen the tsquery.
        any_token = " | ".join(_tsquery_literal(t) for t in tokens)
        match = RawSQL(
            "knowledge_chunk.search_vector @@ to_tsquery('simple'::regconfig, %s)",
            [any_token],
            output_field=BooleanField(),
        )
        return candidates.alias(match=match).filter(match=True)
    # A substring is a superset ("ab" is inside "abc"); the score counts exact tokens.
    contains_any = Q()
    for token in tokens:
        contains_any |= Q(search_text__contains=token)
    return candidates.filter(contains_any)


def _tsquery_literal(token: str) -> str:
    return "'" + token.replace("\\", "\\\\").replace("'", "''") + "'"
