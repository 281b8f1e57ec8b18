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

import math
import re
import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from django.contrib.postgres.search import SearchQuery, SearchRank, SearchVectorField
from django.db import connection
from django.db.models import BigIntegerField, Q, QuerySet
from django.db.models.expressions import Expression, RawSQL
from django.db.models.functions import Cast
from guardian.utils import get_group_obj_perms_model, get_user_obj_perms_model

from knowledge.context import TrustedContext
from knowledge.models import Chunk, Document, Knowledge, KnowledgeVersion
from knowledge.remote import RefusedItem, RemoteItem, call_remote
from knowledge.text import search_tokens, snippet_digest

# A query is searched by its first distinct tokens only: enough for any real
# question (a 128-character Chinese sentence), and it keeps the OR on SQLite
# far below its expression-depth limit.
MAX_QUERY_TOKENS = 128
# Loaded with each hit but not needed by it: the token column and the whole
# document text (a chunk's own text and locator are what a citation needs).
_NOT_NEEDED = ("search_text", "document__text")


class StoredSearchVector(Expression):
    """The chunk's generated ``search_vector`` column (PostgreSQL only, migration
    0004; the model does not declare it), on the query's own chunk table alias."""

    output_field = SearchVectorField()

    def as_sql(self, compiler, connection):
        alias = compiler.quote_name(compiler.query.get_initial_alias())
        return f"{alias}.{connection.ops.quote_name('search_vector')}", []


# The most results one search may ask for: the tool, the providers' configs and steps
# all take this bound from here.
MAX_TOP_K = 20


@dataclass(frozen=True)
class RetrievedItem:
    version: KnowledgeVersion
    document: Document | None  # None for REMOTE
    chunk: Chunk | None  # None for REMOTE
    title: str
    content: str  # exactly what the model is given (1..16,384 UTF-16 units)
    source_ref: dict  # public {type, id, version?, page?, locator?, uri?}
    digest: str  # snippet_digest(content)
    score: float  # relative to the best hit of the same source (1.0)
    remote_item_id: str = ""
    # As the remote reported it, possibly empty; source_ref["version"] holds the
    # version citations bind to (this, or the digest when the source gave none).
    remote_item_version: str = ""


def select_versions(agent_version, query: str) -> list[KnowledgeVersion]:
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
    owner,
    app,
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
    versions = [v for v in versions if v.pk in usable]
    managed = [v for v in versions if v.knowledge.type != Knowledge.Type.REMOTE]
    remote = [v for v in versions if v.knowledge.type == Knowledge.Type.REMOTE]
    results: list[RetrievedItem] = []
    refused: list[RefusedItem] = []
    if managed:
        results.extend(search_managed(managed, query=query, top_k=top_k, owner=owner))
    for version in remote:
        found = search_remote(version, query=query, top_k=top_k, context=context)
        results.extend(found)
        refused.extend(getattr(found, "refused", ()))
    # sorted() is stable: equal scores keep managed first, then remotes in the
    # order given, each in its own rank order.
    return Retrieved(sorted(results, key=lambda item: -item.score)[:top_k], refused)


class Retrieved(list):
    """Retrieved items, best first; ``refused`` lists the REMOTE items left out
    at the storage boundary (the engine reports each as a tool error)."""

    def __init__(self, items=(), refused=()) -> None:
        super().__init__(items)
        self.refused: tuple[RefusedItem, ...] = tuple(refused)


def search_managed(
    versions: Sequence[KnowledgeVersion], *, query: str, top_k: int, owner
) -> list[RetrievedItem]:
    """Chunks of the given PUBLISHED versions that the owner may read, best first.

    One query on PostgreSQL (full-text over CJK bigrams, GIN index; the staged search
    below: the same answer as ranking every match), two on SQLite (token filter, then
    the winners); never one per result.
    """
    tokens = list(dict.fromkeys(search_tokens(query)))[:MAX_QUERY_TOKENS]
    if not tokens or top_k <= 0 or not versions:
        return []
    by_pk = {version.pk: version for version in versions}
    # The ACL is part of the query (a subquery), so top_k is taken among readable
    # chunks only — never "best k, then drop the forbidden ones".
    documents = readable_documents(owner, versions).filter(
        version__status=KnowledgeVersion.Status.PUBLISHED
    )
    if connection.vendor == "postgresql":
        scored = _search_postgresql(documents, tokens, top_k)
    else:
        scored = _search_portable(Chunk.objects.filter(document__in=documents), tokens, top_k)
    if not scored:
        return []
    best = scored[0][1] or 1.0
    return [_managed_item(chunk, by_pk, score / best) for chunk, score in scored]


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


def readable_documents(owner, versions: Sequence[KnowledgeVersion]) -> QuerySet[Document]:
    """Documents of the given versions the owner may read, as one lazy query.

    Mirrors ``user_may_read_document`` (the preview's check): the document must
    belong to the owner's tenant; unrestricted documents are readable by every user
    of it, restricted ones need ``knowledge.read_document`` on the document, held
    by the user or one of their groups — or an active superuser, as Django's
    has_perm grants. Inactive users hold no object permissions.
    """
    if owner is None or owner.pk is None:
        return Document.objects.none()
    documents = Document.objects.filter(
        version__in=[version.pk for version in versions],
        version__knowledge__tenant__users__user_id=owner.pk,
    )
    if not owner.is_active:
        return documents.filter(restricted=False)
    if owner.is_superuser:
        return documents
    permission = {
        "permission__codename": "read_document",
        "permission__content_type__app_label": "knowledge",
        "content_type__app_label": "knowledge",
        "content_type__model": "document",
    }
    # guardian stores object_pk as text; cast it (as guardian does) rather than
    # casting every document id.
    by_user = (
        get_user_obj_perms_model()
        ._default_manager.filter(user_id=owner.pk, **permission)
        .annotate(document_id=Cast("object_pk", BigIntegerField()))
        .values("document_id")
    )
    by_group = (
        get_group_obj_perms_model()
        ._default_manager.filter(group__user=owner.pk, **permission)
        .annotate(document_id=Cast("object_pk", BigIntegerField()))
        .values("document_id")
    )
    return documents.filter(Q(restricted=False) | Q(pk__in=by_user) | Q(pk__in=by_group))


def managed_source_ref(chunk: Chunk, document: Document) -> dict:
    return {
        "type": "document",
        "id": document.key,
        "version": document.source_version or snippet_digest(chunk.text),
        "page": chunk.page,
        "locator": {"start": chunk.start, "end": chunk.end},
    }


def remote_source_ref(item: RemoteItem) -> dict:
    ref: dict = {"type": "remote", "id": item.id, "version": item.source_version}
    if item.page is not None:
        ref["page"] = item.page
    if item.locator is not None:
        ref["locator"] = dict(item.locator)
    if item.uri:
        ref["uri"] = item.uri
    return ref


def _managed_item(chunk: Chunk, by_pk: dict, score: float) -> RetrievedItem:
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


def _search_postgresql(
    documents: QuerySet[Document], tokens: list[str], top_k: int
) -> list[tuple[Chunk, float]]:
    # The stored vector of migration 0004 (GIN-indexed): exactly
    # to_tsvector('simple', COALESCE(search_text, '')), generated by PostgreSQL, so
    # neither the match nor the rank parses a chunk's text again. Every token is
    # quoted for to_tsquery, so punctuation in a query cannot break or widen it.
    vector = StoredSearchVector()
    any_token = " | ".join(_tsquery_literal(t) for t in tokens)
    query = SearchQuery(any_token, search_type="raw", config="simple")
    # Only the ids: the chunk rows, their documents and the rank are read once, below.
    staged, params = staged_search_sql(documents, tokens, top_k)
    ids = RawSQL("SELECT id FROM (" + staged + ") st", params)  # noqa: S608, S611
    rows = (
        Chunk.objects.filter(pk__in=ids)
        .alias(search=vector)
        .annotate(rank=SearchRank(vector, query))
        .select_related("document")
        .defer(*_NOT_NEEDED)
        .order_by("-rank", "document_id", "ordinal")[:top_k]
    )
    return [(chunk, float(chunk.rank)) for chunk in rows]


# The staged search (PostgreSQL). The answer is the old one exactly: the top_k of ALL
# chunks matching ANY token, by ts_rank against the OR of every token, then document,
# then ordinal. What changes is how many chunks are ranked to find it.
#
# ts_rank (normalization 0) of an OR query of n distinct lexemes is (1/n) times the sum,
# over the lexemes a chunk holds, of resj/1.64493 where resj = Σ w/j² over its positions;
# with the unweighted stored vector (weight D, w = 0.1) each term adds less than w (at
# most 256 positions: 0.0998). So a chunk that holds none of a set R of the tokens ranks
# below |C|·w/n, C the other tokens. A stage matches only R (the question's rarest
# tokens, by the planner's statistics of search_vector), ranks those chunks with the
# full OR query and keeps its top_k; when it has top_k and the k-th rank is at least
# |C|·w/n, no chunk outside R can enter the top_k and the stage's answer is final. If
# not, a wider R, and at last the plain OR search. The statistics only choose R: a wrong
# estimate costs time, never a different answer. The bound needs every token to be one
# distinct lexeme of the query: else only the last stage runs. docs/performance.md
# ("Fewer matches") has the plans and figures; tests/knowledge/test_staged_search.py
# compares the answer with the plain OR search.
_TERM_WEIGHT = 0.1  # ts_rank's default weight of D, the stored vector's only weight
# A stage's tokens: the rarest first while the estimated share of the table's chunks
# holding one of them (a sum of the statistics' frequencies) stays within its budget;
# always at least the rarest token.
_STAGE_BUDGETS = (0.01, 0.05, 0.25)


# One statement; %(name)s are parameters, {docs} the documents' statement (compiled by
# the ORM, its own parameters), {tokens} one (pos, token, literal) row per token, {i} a
# stage's number. The documents are read once (st_docs) and every stage refers to them:
# written out in each stage, the ACL subqueries were planned five times, 13 of the
# statement's 18 ms of planning at 1k chunks ("Fifth round"). A stage first takes the
# ids matching its tokens from the GIN index alone (st_m: a MATERIALIZED CTE, so the
# planner cannot start from the version's documents and read all their chunks) and
# ranks the readable ones in that same pass: a second scan of the chunks by id to rank
# them read every ranked row twice.
# A stage runs only if its estimated matches in the whole table (the GIN index holds
# every version) are fewer than the searched chunks: else reading the version's own
# chunks, the plain OR search, is cheaper, and a small version in a large table keeps
# its plan.
_STAGED_HEAD = """
WITH st_docs(doc_id) AS MATERIALIZED ({docs}),
st_tok(pos, token, lit) AS (VALUES {tokens}),
st_mce AS ({frequencies}),
st_est AS (
    SELECT t.pos, t.token, t.lit,
        COALESCE(m.freq, (SELECT min(freq) FROM st_mce), 0) AS freq
    FROM st_tok t LEFT JOIN st_mce m ON m.elem = t.token
),
st_cum AS (
    SELECT token, lit, row_number() OVER w AS rn, sum(freq) OVER w AS cum
    FROM st_est WINDOW w AS (ORDER BY freq, pos)
),
st_plan AS (
    SELECT count(*) AS n, 0 AS rest0,
        length(to_tsvector('simple', string_agg(token, ' '))) = count(*)
            AND numnode(to_tsquery('simple', %(any)s)) = 2 * count(*) - 1 AS exact,
        -- The searched chunks (at least one a page) and the table's, to weigh a stage.
        (SELECT COALESCE(sum(d.page_count), 0) FROM knowledge_document d
            WHERE d.id IN (SELECT doc_id FROM st_docs)) AS size,
        (SELECT reltuples FROM pg_catalog.pg_class WHERE oid = 'knowledge_chunk'::regclass) AS rows
        {plan}
    FROM st_cum
)"""
# The most common lexemes of search_vector and their frequencies (a share of the
# table's rows), as the planner's statistics have them (the last ANALYZE).
_STAGED_FREQUENCIES = """
    SELECT e.elem, e.freq FROM pg_catalog.pg_stats s,
        unnest(s.most_common_elems::text::text[], s.most_common_elem_freqs) AS e(elem, freq)
    WHERE s.schemaname = current_schema() AND s.tablename = 'knowledge_chunk'
        AND s.attname = 'search_vector' AND NOT s.inherited AND e.elem IS NOT NULL
"""
_STAGED_PLAN = """,
        to_tsquery('simple', string_agg(lit, ' | ') FILTER (WHERE rn = 1 OR cum <= %(b{i})s)) AS q{i},
        count(*) FILTER (WHERE NOT (rn = 1 OR cum <= %(b{i})s)) AS rest{i},
        max(cum) FILTER (WHERE rn = 1 OR cum <= %(b{i})s) AS share{i}"""
_STAGED_STAGE = """,
st_m{i} AS MATERIALIZED (
    SELECT c.id, c.document_id, c.ordinal,
        CASE WHEN c.document_id IN (SELECT doc_id FROM st_docs)
            THEN ts_rank(c.search_vector, to_tsquery('simple'::regconfig, %(any)s)) END AS rank
    FROM knowledge_chunk c
    WHERE c.search_vector @@ (SELECT q{i} FROM st_plan)
),
st_s{i} AS MATERIALIZED (
    SELECT m.id, m.rank FROM st_m{i} m WHERE m.rank IS NOT NULL
    ORDER BY m.rank DESC, m.document_id, m.ordinal LIMIT %(k)s
),
st_ok{i} AS (
    SELECT p.exact AND (p.rest{i} < p.rest{previous} OR {i} = 1)
        AND p.share{i} * p.rows < p.size AND (p.rest{i} = 0 OR (
        SELECT count(*) = %(k)s AND min(rank) >= p.rest{i} * %(w)s / p.n FROM st_s{i}
    )) AS ok FROM st_plan p
)"""
_STAGED_ANSWER = """
SELECT id, {i} AS stage FROM st_s{i} WHERE {earlier} (SELECT ok FROM st_ok{i})
UNION ALL"""
_STAGED_LAST = """
SELECT id, {i} FROM (
    SELECT c.id FROM knowledge_chunk c
    WHERE c.search_vector @@ to_tsquery('simple'::regconfig, %(any)s)
        AND c.document_id IN (SELECT doc_id FROM st_docs)
    ORDER BY ts_rank(c.search_vector, to_tsquery('simple'::regconfig, %(any)s)) DESC,
        c.document_id, c.ordinal
    LIMIT %(k)s
) st_all WHERE {earlier} TRUE
"""
_STAGED_NOT_FINAL = "NOT (SELECT ok FROM st_ok{j}) AND "
_STAGED_PART = re.compile(r"%\((\w+)\)s|\{(docs|tokens)\}")


def _staged_template(stages: int) -> str:
    """The statement for that many stages, then the plain OR search (stage stages+1).
    A stage's answer is read only if no earlier one was final, and PostgreSQL runs a
    stage only when its answer is read: a final stage leaves the wider ones unrun."""
    numbers = range(1, stages + 1)
    head = _STAGED_HEAD.replace("{frequencies}", _STAGED_FREQUENCIES)
    sql = head.replace("{plan}", "".join(_STAGED_PLAN.replace("{i}", str(i)) for i in numbers))
    for i in numbers:
        sql += _STAGED_STAGE.replace("{i}", str(i)).replace("{previous}", str(i - 1))
    for i in [*numbers, stages + 1]:
        earlier = "".join(_STAGED_NOT_FINAL.replace("{j}", str(j)) for j in range(1, i))
        part = _STAGED_ANSWER if i <= stages else _STAGED_LAST
        sql += part.replace("{i}", str(i)).replace("{earlier}", earlier)
    return sql


def staged_search_sql(
    documents: QuerySet[Document], tokens: list[str], top_k: int
) -> tuple[str, list]:
    """The staged search's statement and parameters: rows (chunk id, stage), the stage
    (1 … len(_STAGE_BUDGETS), or one more = the plain OR search) whose answer was final."""
    any_token = " | ".join(_tsquery_literal(t) for t in tokens)
    docs_sql, docs_params = documents.values("pk").query.sql_with_params()
    named = {"any": any_token, "k": top_k, "w": _TERM_WEIGHT}
    named.update({f"b{i}": budget for i, budget in enumerate(_STAGE_BUDGETS, 1)})
    token_params = [p for i, t in enumerate(tokens) for p in (i, t, _tsquery_literal(t))]
    params: list = []

    def expand(match: re.Match) -> str:
        if match[1]:
            params.append(named[match[1]])
            return "%s"
        if match[2] == "docs":
            params.extend(docs_params)
            return docs_sql
        params.extend(token_params)
        return ", ".join(["(%s, %s, %s)"] * len(tokens))

    return _STAGED_PART.sub(expand, _staged_template(len(_STAGE_BUDGETS))), params


def _search_portable(
    candidates: QuerySet[Chunk], tokens: list[str], top_k: int
) -> list[tuple[Chunk, float]]:
    # The database narrows by substring (a superset: "ab" is inside "abc"); the
    # exact token comparison and the score happen here.
    any_token = Q()
    for token in tokens:
        any_token |= Q(search_text__contains=token)
    wanted = set(tokens)
    scored: list[tuple[float, int, int, int]] = []
    for pk, search_text, document_id, ordinal in candidates.filter(any_token).values_list(
        "pk", "search_text", "document_id", "ordinal"
    ):
        counts = Counter(t for t in search_text.split() if t in wanted)
        if counts:
            # Like ts_rank in spirit: every matched token counts, repeats add less.
            score = sum(1.0 + math.log(n) for n in counts.values()) / len(tokens)
            scored.append((-score, document_id, ordinal, pk))
    scored.sort()
    winners = scored[:top_k]
    chunks = (
        Chunk.objects.select_related("document")
        .defer(*_NOT_NEEDED)
        .in_bulk([pk for *_, pk in winners])
    )
    return [(chunks[pk], -negative) for negative, _, _, pk in winners]


def _tsquery_literal(token: str) -> str:
    return "'" + token.replace("\\", "\\\\").replace("'", "''") + "'"


def _fold(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()
