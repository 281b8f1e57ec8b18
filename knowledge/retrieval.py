"""Retrieval: which exact versions a query searches, and what comes back.

The run engine calls ``select_versions`` then ``retrieve``; every RetrievedItem
becomes a citation reference. Reads only — nothing here writes.

Scores: each source ranks on its own scale, so an item's ``score`` is relative to
its source's best hit of this search (1.0 = best). Managed knowledge (all MANAGED
and INLINE versions together, one database search) scales its rank by the top rank;
a REMOTE source gives only an order, so its items score 1, (n-1)/n, … 1/n. Merging
by that score interleaves sources instead of letting one scale drown the other.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from django.contrib.auth.models import AnonymousUser, User
from django.db import connection
from django.db.models import Q, QuerySet
from django.db.models.expressions import RawSQL

from foundation.compiled import instances_once
from knowledge.candidates import Readable, top_chunks
from knowledge.context import TrustedContext
from knowledge.models import Chunk, Document, Knowledge, KnowledgeVersion
from knowledge.models import Vocabulary as DeclaredVocabulary
from knowledge.models import readable_documents as readable_documents  # the ACL, re-exported
from knowledge.periods import other_period, periods_in
from knowledge.ranking import (
    Bm25,
    Lru,
    SearchPlan,
    StoredIndex,
    VersionKey,
    clause_weights,
    stored_indexes,
    version_key,
    version_statistics,
)
from knowledge.remote import RefusedItem, RemoteItem, call_remote
from knowledge.text import snippet_digest
from knowledge.vocabulary import BUILTIN, Vocabulary
from tenancy.models import App

# Loaded with each hit but not needed by it: the token column and the whole
# document text (a chunk's own text and locator are what a citation needs).
_NOT_NEEDED = ("search_text", "document__text")


# The most results one search may ask for: the tool, the providers' configs and steps
# all take this bound from here.
MAX_TOP_K = 20


class RoutedAgent(Protocol):
    """What ``select_versions`` reads of an agent version (``agents.models``)."""

    routing: Any  # [{"match": str, "knowledge": [label, …]}, …] or None
    allowed_knowledge: Any  # the versions it may search (a many-to-many manager)


@dataclass(frozen=True)
class RetrievedItem:
    version: KnowledgeVersion
    document: Document | None  # None for REMOTE
    chunk: Chunk | None  # None for REMOTE
    title: str
    content: str  # exactly what the model is given (1..16,384 UTF-16 units)
    source_ref: dict[str, Any]  # public {type, id, version?, page?, locator?, uri?}
    digest: str  # snippet_digest(content)
    score: float  # relative to the best hit of the same source (1.0)
    remote_item_id: str = ""
    # As the remote reported it, possibly empty; source_ref["version"] holds the
    # version citations bind to (this, or the digest when the source gave none).
    remote_item_version: str = ""


def select_versions(agent_version: RoutedAgent, query: str) -> list[KnowledgeVersion]:
    """The exact versions a query searches: the first routing rule whose ``match``
    occurs in the query (case-insensitive) picks them; no match → all allowed.

    Only PUBLISHED versions of ``allowed_knowledge`` are ever returned. A rule that
    matches but names nothing usable selects nothing: routing narrows, it never
    falls back to wider knowledge.
    """
    allowed = list(
        agent_version.allowed_knowledge.filter(status=KnowledgeVersion.Status.PUBLISHED)
        .select_related("knowledge")
        .order_by("knowledge__key", "version", "pk")
    )
    by_label = {version.label: version for version in allowed}
    folded_query = _fold(query)
    for rule in agent_version.routing or []:
        if not isinstance(rule, dict):
            continue
        match = rule.get("match")
        if not isinstance(match, str) or not match.strip():
            continue
        if _fold(match.strip()) in folded_query:
            labels = rule.get("knowledge") or []
            return [by_label[label] for label in dict.fromkeys(labels) if label in by_label]
    return allowed


def retrieve(
    *,
    versions: Sequence[KnowledgeVersion],
    query: str,
    top_k: int,
    owner: User | AnonymousUser | None,
    app: App,
    context: TrustedContext,
) -> list[RetrievedItem]:
    """Search those of the given versions ``app`` may use now; at most ``top_k``
    items, best first.

    A version the app may not use (``KnowledgeVersion.objects.usable_by``: not
    PUBLISHED, no current lease, another tenant's) is never searched — no query
    of its chunks, no call to its REMOTE endpoint. MANAGED/INLINE in the
    database, each REMOTE version by one call. A failing remote raises
    RemoteKnowledgeError: the engine reports it as a tool error.
    """
    if top_k <= 0 or not versions:
        return []
    usable = set(
        KnowledgeVersion.objects.filter(pk__in=[v.pk for v in versions])
        .usable_by(app)
        .values_list("pk", flat=True)
    )
    asked = [v.label for v in versions]
    not_usable = sum(1 for v in versions if v.pk not in usable)
    versions = [v for v in versions if v.pk in usable]
    managed = [v for v in versions if v.knowledge.type != Knowledge.Type.REMOTE]
    remote = [v for v in versions if v.knowledge.type == Knowledge.Type.REMOTE]
    results: list[RetrievedItem] = []
    refused: list[RefusedItem] = []
    searched = Searched([])
    if managed:
        searched = search_managed(managed, query=query, top_k=top_k, owner=owner)
        results.extend(searched)
    for version in remote:
        found = search_remote(version, query=query, top_k=top_k, context=context)
        results.extend(found)
        refused.extend(getattr(found, "refused", ()))
    # sorted() is stable: equal scores keep managed first, then remotes in the
    # order given, each in its own rank order.
    plan = searched.plan
    # The question's text itself stays private (CitationReference.query): the trace
    # holds the terms it was searched by.
    trace = {
        "terms": list(plan.query_tokens) if plan else [],
        "expansions": {t: list(e) for t, e in plan.expansions.items()} if plan else {},
        "versions": asked,
        "refused": {"versions": not_usable, "acl": searched.acl_refused},
        "periods": {"asked": sorted(searched.periods), "ranked_last": searched.demoted},
    }
    return Retrieved(sorted(results, key=lambda item: -item.score)[:top_k], refused, trace)


class Retrieved(list[RetrievedItem]):
    """Retrieved items, best first; ``refused`` lists the REMOTE items left out
    at the storage boundary (the engine reports each as a tool error); ``trace`` is
    what the search looked for and left out (counts only), for the run's record."""

    def __init__(
        self,
        items: Iterable[RetrievedItem] = (),
        refused: Iterable[RefusedItem] = (),
        trace: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(items)
        self.refused: tuple[RefusedItem, ...] = tuple(refused)
        self.trace: dict[str, Any] = trace or {}


def search_managed(
    versions: Sequence[KnowledgeVersion],
    *,
    query: str,
    top_k: int,
    owner: User | AnonymousUser | None,
) -> Searched:
    """Chunks of the given PUBLISHED versions that the owner may read, best first, by
    BM25 over the versions' statistics (module ``knowledge.ranking``).

    The query is the question's tokens plus its vocabulary expansions. Candidates come
    from the database (the GIN index on PostgreSQL, a substring filter on SQLite),
    rarest terms first, then only chunks that can still enter the top ``top_k``
    (``candidates.top_chunks``); the score is computed here, the same on both databases.
    A question of several clauses weighs each by how many chunks repeat it
    (``ranking.clause_weights``: one more statement). Five to seven queries whatever
    the results the first time this process searches a version; after that what a
    published version's statistics said is this process's (it never changes), and a
    search is three to four: the declared vocabulary, the candidates (one or two), the
    winners, and the frequencies of terms not read before. The ACL is part of the
    candidates' query.
    """
    if top_k <= 0 or not versions:
        return Searched([])
    indexes = stored_indexes(versions)
    entities = frozenset(name for index in indexes.values() for name in index.entities)
    plan = SearchPlan.of(query, vocabulary_for(versions, indexes), entities)
    if not plan.weights:
        return Searched([], plan)
    by_pk = {version.pk: version for version in versions}
    statistics = version_statistics(indexes, list(plan.weights))
    searched = [version.pk for version in versions]
    scorer = Bm25(statistics, clause_weights(plan, statistics, searched), plan.names)
    asked = periods_in(query) - {"YOY"}  # a comparison's base, not a report's period
    other = other_period_documents(versions, asked)
    # The ACL is part of the query (a subquery), so top_k is taken among readable
    # chunks only — never "best k, then drop the forbidden ones".
    ranked = top_chunks(Readable(owner, versions, other), searched, scorer, top_k)
    # Chunks holding the rarest term that the ACL kept out: a count, never which.
    scored, acl_refused = ranked.chunks, ranked.refused
    last: list[tuple[int, float]] = []
    if len(scored) < top_k and other:
        # Fewer hits than asked among the reports of the period asked (and the documents
        # naming none): the reports of other periods fill the rest, after them. Every
        # other hit is already here, so what the whole search adds is theirs.
        held = {pk for pk, _ in scored}
        rest = top_chunks(Readable(owner, versions), searched, scorer, top_k).chunks
        last = [hit for hit in rest if hit[0] not in held][: top_k - len(scored)]
    if not scored and not last:
        return Searched([], plan, acl_refused=acl_refused)
    chunks = _winners([pk for pk, _ in scored + last])
    items = _scaled(scored, 1.0, chunks, by_pk)
    # A report of another period comes after every other hit, whatever its score: its
    # relative score is at most half the last other hit's (merged with REMOTE items by
    # score, it stays behind them too).
    items += _scaled(last, items[-1].score / 2 if items else 1.0, chunks, by_pk)
    return Searched(
        items, plan, scored + last, acl_refused=acl_refused, periods=asked, demoted=len(last)
    )


def _scaled(
    hits: list[tuple[int, float]],
    top: float,
    chunks: dict[int, Chunk],
    by_pk: dict[int, KnowledgeVersion],
) -> list[RetrievedItem]:
    """``hits`` (best first) as items, their scores relative to the first, which scores ``top``."""
    best = (hits[0][1] if hits else 0.0) or 1.0
    return [_managed_item(chunks[pk], by_pk, top * score / best) for pk, score in hits]


# The documents of each published version whose title names a period, grouped by the
# periods it names (a few groups: one a report period): a published version's documents
# never change, so read once per process, and a search judges each group once.
TITLE_PERIODS: Lru[VersionKey, dict[frozenset[str], list[int]]] = Lru(64)


def other_period_documents(
    versions: Sequence[KnowledgeVersion], asked: frozenset[str]
) -> list[int]:
    """The documents of ``versions`` whose title names another period than ``asked``
    (``periods.other_period``): a search reads them only when the others do not fill its
    top k. One query per version the process has not read yet; none without a period."""
    if not asked:
        return []
    groups: list[dict[frozenset[str], list[int]]] = []
    missing = []
    for version in versions:
        cached = TITLE_PERIODS.get(version_key(version))
        if cached is None:
            missing.append(version)
        else:
            groups.append(cached)
    if missing:
        read: dict[int, dict[frozenset[str], list[int]]] = {v.pk: {} for v in missing}
        for pk, version_id, title in Document.objects.filter(version__in=missing).values_list(
            "pk", "version_id", "title"
        ):
            if periods := periods_in(title):
                read[version_id].setdefault(periods, []).append(pk)
        for version in missing:
            TITLE_PERIODS.put(version_key(version), read[version.pk])
            groups.append(read[version.pk])
    return sorted(
        pk
        for group in groups
        for periods, documents in group.items()
        if other_period(asked, periods)
        for pk in documents
    )


def _winners_query(*, ids: list[int]) -> QuerySet[Chunk]:
    chunks = Chunk.objects.select_related("document").defer(*_NOT_NEEDED)
    return chunks.filter(pk__in=RawSQL("SELECT unnest(%s::bigint[])", [ids]))


# The array the winners' statement is compiled with (its parameter's position).
_WINNERS_PLACEHOLDER: list[int] = []


def _winners(ids: list[int]) -> dict[int, Chunk]:
    """The winning chunks with their documents, by pk. One statement; on PostgreSQL
    compiled once per process and prepared once per connection (foundation/compiled.py):
    the ORM's building and compiling of it cost more than running it."""
    if connection.vendor != "postgresql":
        return Chunk.objects.select_related("document").defer(*_NOT_NEEDED).in_bulk(ids)
    found = instances_once(
        "search_managed.winners",
        _winners_query,
        {"ids": _WINNERS_PLACEHOLDER},
        {"ids": ids},
        prepare=True,
    )
    return {chunk.pk: chunk for chunk in found}


class Searched(list[RetrievedItem]):
    """Managed items, best first, with the plan searched and each hit's raw score."""

    def __init__(
        self,
        items: Iterable[RetrievedItem] = (),
        plan: SearchPlan | None = None,
        scored: Iterable[tuple[int, float]] = (),
        acl_refused: int = 0,
        periods: frozenset[str] = frozenset(),
        demoted: int = 0,
    ) -> None:
        super().__init__(items)
        self.plan = plan
        self.raw_scores = [score for _, score in scored]
        self.acl_refused = acl_refused
        self.periods = periods  # the periods the question names (knowledge.periods)
        self.demoted = demoted  # hits from reports of another period, ranked last


def vocabulary_for(
    versions: Sequence[KnowledgeVersion], indexes: dict[int, StoredIndex] | None = None
) -> Vocabulary:
    """BUILTIN, then the tenant's, each searched knowledge's, and the entity aliases of
    the versions' titles (stored with their statistics). One query."""
    tenants = {v.knowledge.tenant_id for v in versions}
    knowledge = {v.knowledge_id for v in versions}
    declared = list(
        DeclaredVocabulary.objects.filter(
            Q(tenant_id__in=tenants, knowledge__isnull=True) | Q(knowledge_id__in=knowledge)
        ).values_list("entries", flat=True)
    )
    if indexes is None:
        indexes = stored_indexes(versions)
    # The merged vocabulary (its closures and its compiled pattern with it) is kept per
    # process for what it is made of: the declared entries read just now, and the
    # versions' stored entity aliases, which never change. A declared change is a new key.
    versions_key = tuple(sorted(index.key for index in indexes.values()))
    key = (
        BUILTIN,  # the object itself: a test may replace it
        tuple(sorted(json.dumps(e, sort_keys=True, ensure_ascii=False) for e in declared)),
        versions_key,
    )
    cacheable = len(versions_key) == len(indexes)
    vocabulary = _VOCABULARIES.get(key) if cacheable else None
    if vocabulary is None:
        vocabulary = BUILTIN
        for entries in declared:
            vocabulary = vocabulary.merge(Vocabulary(entries))
        for index in indexes.values():
            vocabulary = vocabulary.merge(Vocabulary(index.entities))
        if cacheable:
            _VOCABULARIES.put(key, vocabulary)
    return vocabulary


_VOCABULARIES: Lru[tuple[Vocabulary, tuple[str, ...], tuple[VersionKey, ...]], Vocabulary] = Lru(16)


def search_remote(
    version: KnowledgeVersion, *, query: str, top_k: int, context: TrustedContext
) -> list[RetrievedItem]:
    """One signed call to a PUBLISHED REMOTE version; raises RemoteKnowledgeError."""
    if top_k <= 0 or not query.strip() or version.status != KnowledgeVersion.Status.PUBLISHED:
        return []
    items = call_remote(version, query=query, top_k=top_k, context=context)
    count = len(items)
    return Retrieved(
        [
            RetrievedItem(
                version=version,
                document=None,
                chunk=None,
                title=item.title,
                content=item.content,
                source_ref=remote_source_ref(item),
                digest=item.digest,
                score=(count - position) / count,
                remote_item_id=item.id,
                remote_item_version=item.version,
            )
            for position, item in enumerate(items)
        ],
        getattr(items, "refused", ()),
    )


def managed_source_ref(chunk: Chunk, document: Document) -> dict[str, Any]:
    return {
        "type": "document",
        "id": document.key,
        "version": document.source_version or snippet_digest(chunk.text),
        "page": chunk.page,
        "locator": {"start": chunk.start, "end": chunk.end},
    }


def remote_source_ref(item: RemoteItem) -> dict[str, Any]:
    ref: dict[str, Any] = {"type": "remote", "id": item.id, "version": item.source_version}
    if item.page is not None:
        ref["page"] = item.page
    if item.locator is not None:
        ref["locator"] = dict(item.locator)
    if item.uri:
        ref["uri"] = item.uri
    return ref


def _managed_item(chunk: Chunk, by_pk: dict[int, KnowledgeVersion], score: float) -> RetrievedItem:
    document = chunk.document
    return RetrievedItem(
        # The query only returns chunks of these versions: the caller's instances
        # (knowledge already loaded) stand in for a lazy load per item.
        version=by_pk[document.version_id],
        document=document,
        chunk=chunk,
        title=document.title,
        content=chunk.text,
        source_ref=managed_source_ref(chunk, document),
        digest=snippet_digest(chunk.text),
        score=score,
    )


def _fold(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()
