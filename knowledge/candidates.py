"""The candidates of a managed search: which chunks the database hands ``knowledge.ranking``
to score, in at most two statements (``top_chunks``), each holding the access rules —
the document ACL decided per row in the statement (``Readable``), PUBLISHED and the
searched versions. Stage 1 reads the chunks holding one of the rarest tokens; stage 2
only those whose tokens' bounds can still reach the first stage's k-th score
(``reaching``, ``narrowest``). Exactly the exhaustive ranking (tests/knowledge/test_ranking.py)."""

from __future__ import annotations

import functools
import heapq
import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import AnonymousUser, User
from django.core.exceptions import EmptyResultSet
from django.db import connection
from django.db.models import BooleanField, Case, ExpressionWrapper, F, Q, QuerySet, When

from knowledge.models import Chunk, Document, KnowledgeVersion, readable_documents
from knowledge.ranking import Bm25, Lru
from knowledge.token_queries import Condition, condition_q, tsquery, tsquery_literal

# The most tokens the second stage's condition names (it repeats tokens) before it
# falls back to "one of the rarest".
MAX_CONDITION_TOKENS = 128
# A token held by more than this share of the chunks, or by more than this many, is
# never named to the GIN index (``_asked``).
COMMON_SHARE = 0.5
COMMON_POSTINGS = 250_000
# A narrowed first stage (``narrowing``) reads the chunks of its rare tokens whose
# other tokens' bounds can add this share of what they can add together.
NARROWING_SHARE = 0.5
# A candidate: (chunk id, search_text, search_marks, document id, ordinal).
Row = tuple[int, str, str, int, int]
# A scored candidate, best first when sorted: (−score, document id, ordinal, chunk id).
Scored = tuple[float, int, int, int]


class Readable:
    """The documents of ``versions`` that ``owner`` may read, of PUBLISHED versions (the
    document ACL, ``readable_documents``), as the candidates' statements take it: a
    QuerySet on SQLite, a subquery on PostgreSQL. The subquery's SQL depends only on
    the owner's id, whether they are active or a superuser, and the versions, so it is
    compiled once per process for them (the ORM's compiling cost more than planning the
    statement); every statement still evaluates it, nothing it decides is kept."""

    def __init__(
        self,
        owner: User | AnonymousUser | None,
        versions: Sequence[KnowledgeVersion],
        left_out: Sequence[int] = (),
    ) -> None:
        self.owner = owner
        self.versions = list(versions)
        # Documents this search does not read (reports of another period than the one
        # asked: knowledge.retrieval), left out before the ACL judges a row.
        self.left_out = list(left_out)

    @functools.cached_property
    def documents(self) -> QuerySet[Document]:
        return readable_documents(self.owner, self.versions).filter(
            version__status=KnowledgeVersion.Status.PUBLISHED
        )

    def sql(self) -> tuple[str, tuple[Any, ...]]:
        owner = self.owner
        key = (
            connection.vendor,
            getattr(owner, "pk", None),
            bool(getattr(owner, "is_active", False)),
            bool(getattr(owner, "is_superuser", False)),
            tuple(version.pk for version in self.versions),
        )
        found = ACL_SQL.get(key)
        if found is None:
            found = _acl_sql(self.documents)
            ACL_SQL.put(key, found)
        return found


ACL_SQL: Lru[tuple[Any, ...], tuple[str, tuple[Any, ...]]] = Lru(1024)


@dataclass(frozen=True)
class Ranked:
    chunks: list[tuple[int, float]]  # (chunk id, score), best first
    refused: int  # chunks holding the rarest token that the document ACL kept out


def top_chunks(documents: Readable, versions: Sequence[int], scorer: Bm25, top_k: int) -> Ranked:
    """(chunk id, score) of the top_k chunks of ``documents`` (the readable documents of
    the versions ``versions``) by ``scorer``, best first: exactly the exhaustive ranking;
    and how many chunks holding the rarest token the ACL kept out (a count, for the
    run's search record).

    Stage 1 reads the chunks holding one of the rarest tokens R1 (their document
    frequencies summing to at most ``Bm25.first_stage_budget``) and scores them: the k-th
    score θ is a floor the final k-th can only raise. A chunk holding none of a set R
    scores strictly below ``outside(R)``; when ``outside(R1) ≤ θ`` the answer is final.
    Else stage 2 reads the chunks holding none of R1 but one of R2, the rarest tokens
    needed for ``outside(R2) ≤ θ`` (every token when θ is 0), and the answer is final.
    When even R1 is held by more chunks than the budget, stage 1 reads only those of
    them whose other tokens can reach a need τ (``narrowing``), and stage 2 also the
    chunks of R1 outside that read which can still reach θ. At most two statements,
    each driven by the GIN index on PostgreSQL."""
    if not scorer.weights:
        return Ranked([], 0)
    order = scorer.order
    first = scorer.first_stage(top_k)
    narrow = narrowing(scorer, first)
    rows, refused, narrowed = first_rows(
        documents, versions, first, order[0], narrow[0] if narrow else None, top_k
    )
    best = _scored(rows, scorer, top_k, [])
    floor = -best[-1][0] if len(best) == top_k else 0.0
    held = sum(scorer.bound(t) for t in first)
    if narrow and narrowed and floor - held < narrow[1]:
        # A chunk of R1 outside the narrowed read may reach θ: every token's condition,
        # less what stage 1 read.
        condition = _reaching_any(order, scorer, floor)
        if condition is not None:
            read = ("&", [("|", list(first)), narrow[0]])
            rows = candidate_rows(documents, versions, condition, read)
            best = _scored(rows, scorer, top_k, best)
    elif len(first) < len(order) and scorer.outside(first) > floor:
        condition = _reaching_any(order[len(first) :], scorer, floor)
        if condition is not None:
            rows = candidate_rows(documents, versions, condition, first)
            best = _scored(rows, scorer, top_k, best)
    return Ranked([(pk, -negative) for negative, _, _, pk in best], refused)


def narrowing(scorer: Bm25, first: list[str]) -> tuple[Condition, float] | None:
    """What stage 1 asks of the chunks of ``first`` besides, when they are more than
    ``Bm25.first_stage_budget`` (a common rarest word: at 1,000,000 chunks one held by
    6,197 chunks read 6,197 rows for a top 8; narrowed, 877, and the search took 90 ms
    instead of 176), and the need τ it stands for: the other tokens' condition to reach
    ``NARROWING_SHARE`` of what they can add together. Any subset of chunks gives a
    valid floor; those holding the rare word and much of the rest set it. None when the
    first stage's chunks are few, or nothing else is asked, or on SQLite (it reads
    every chunk's text whatever the condition)."""
    if connection.vendor != "postgresql":
        return None
    if sum(scorer.frequencies[t] for t in first) <= scorer.first_stage_budget():
        return None
    rest = scorer.order[len(first) :]
    need = NARROWING_SHARE * sum(scorer.bound(t) for t in rest)
    condition = _asked(rest, scorer, need)
    if condition is None or isinstance(condition, bool):
        return None
    return condition, need


def _reaching_any(tokens: list[str], scorer: Bm25, floor: float) -> Condition | None:
    """Which of ``tokens`` a chunk must hold to reach ``floor`` with them (``_asked``),
    or when that is too many ways, one of the rarest until the rest sum to ≤ the floor
    (MaxScore; every token when the floor is 0). None when none can."""
    condition = _asked(tokens, scorer, floor)
    if condition is False:
        return None
    if condition is None or condition is True:
        bounds = [scorer.bound(t) for t in tokens]
        taken = 0
        while taken < len(tokens) and sum(bounds[taken:]) > floor:
            taken += 1
        return ("|", tokens[:taken]) if taken else None
    return condition


def _asked(tokens: list[str], scorer: Bm25, need: float) -> Condition | bool | None:
    """``narrowest`` over ``tokens``, of which a token held by more than ``COMMON_SHARE``
    of the chunks or ``COMMON_POSTINGS`` chunks is taken as held (its bound off the
    need): it parts few chunks from the rest, and the GIN index walks its long posting
    list for every condition naming it (at 100,000 chunks, a second stage naming two
    such tokens, of 57,035 and 96,828 chunks, read 766 rows in 12.8 ms; taking them as
    held, 768 rows in 3.1 ms; at 1,000,000, a second stage naming three tokens of
    490,602 chunks read 290 rows in 102 ms, taking them as held 528 in 36 ms)."""
    most = min(COMMON_SHARE * scorer.chunks, COMMON_POSTINGS)
    common = {t for t in tokens if scorer.frequencies[t] > most}
    free = sum(scorer.bound(t) for t in tokens if t in common)
    asked = [t for t in tokens if t not in common]
    return narrowest(asked, [scorer.bound(t) for t in asked], need - free)


def reaching(tokens: list[str], bounds: list[float], floor: float) -> Condition | bool | None:
    """Which of ``tokens`` (bounds descending) a chunk must hold for their bounds to sum
    to ``floor``: (t₁ & reaching(rest, floor − b₁)) | reaching(rest, floor). False when
    none can; None when the floor is 0 or it would name more than
    ``MAX_CONDITION_TOKENS`` tokens. A chunk outside it scores below the floor."""
    if floor <= 0:
        return None
    suffix = list(itertools.accumulate(reversed(bounds)))[::-1] + [0.0]
    size = 0

    def build(i: int, need: float) -> Condition | bool:
        nonlocal size
        if need <= 0:
            return True
        if suffix[i] < need:
            return False
        taken = build(i + 1, need - bounds[i])
        left: Condition | bool = False
        if taken is not False:
            size += 1
            if size > MAX_CONDITION_TOKENS:
                raise OverflowError
            left = tokens[i] if taken is True else ("&", [tokens[i], taken])
        right = build(i + 1, need)
        if left is False or right is True:
            return right
        if right is False:
            return left
        return ("|", [left, right])

    try:
        # Slightly below the floor: the bounds already exceed any real score.
        return build(0, floor * (1 - 1e-9))
    except OverflowError:
        return None


def narrowest(tokens: list[str], bounds: list[float], floor: float) -> Condition | bool | None:
    """``reaching`` over as many of ``tokens`` as ``MAX_CONDITION_TOKENS`` allows: those
    of the largest bounds, the others taken as held by every chunk (their bounds come
    off the floor) — a wider condition, never a narrower one. None when the floor is 0
    or even the largest bound alone would name too many tokens."""
    if floor <= 0:
        return None
    ranked = sorted(zip(bounds, tokens, strict=True), key=lambda pair: -pair[0])
    free = 0.0
    for m in range(len(ranked), 0, -1):
        need = floor - free
        if need <= 0:
            return None
        condition = reaching([t for _, t in ranked[:m]], [b for b, _ in ranked[:m]], need)
        if condition is not None:
            return condition
        free += ranked[m - 1][0]
    return None


def _scored(rows: Iterable[Row], scorer: Bm25, top_k: int, best: list[Scored]) -> list[Scored]:
    """The ``top_k`` best of ``best`` and ``rows``, best first, in the exhaustive
    ranking's order (score, then document and ordinal). A row whose ceiling (what its
    tokens and marks allow: ``Bm25.reaches``) is below the k-th score found so far cannot
    enter, not even by a tie: it is not scored."""
    # The k best so far, worst on top: (score, −document id, −ordinal, −chunk id).
    kept = [(-negative, -document_id, -ordinal, -pk) for negative, document_id, ordinal, pk in best]
    heapq.heapify(kept)
    for pk, search_text, marks, document_id, ordinal in rows:
        if len(kept) == top_k and not scorer.reaches(search_text, marks, kept[0][0]):
            continue
        score = scorer.score(search_text)
        if score <= 0:
            continue
        entry = (score, -document_id, -ordinal, -pk)
        if len(kept) < top_k:
            heapq.heappush(kept, entry)
        elif entry > kept[0]:
            heapq.heapreplace(kept, entry)
    return sorted((-score, -document_id, -ordinal, -pk) for score, document_id, ordinal, pk in kept)


def candidate_rows(
    documents: Readable,
    versions: Sequence[int],
    holding: Condition | list[str],
    without: Condition | list[str],
) -> list[Row]:
    """``Row``s of the chunks of ``versions`` that meet ``holding`` (a list: one of its
    tokens) and not ``without`` (a list: hold none of its tokens), of the readable
    documents ``documents``. One statement; the document ACL is part of it."""
    if connection.vendor != "postgresql":
        chunks = _matching(versions, holding, without, documents.left_out).filter(
            document__in=documents.documents
        )
        return list(
            chunks.values_list("pk", "search_text", "search_marks", "document_id", "ordinal")
        )
    judged, params = _judged_sql(documents, versions, holding, without)
    sql = f"SELECT j.id, j.search_text, j.search_marks, j.document_id, j.ordinal FROM {judged} WHERE j.readable"  # noqa: S608 -- the ACL
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return list(cursor.fetchall())


def first_rows(
    documents: Readable,
    versions: Sequence[int],
    tokens: list[str],
    rarest: str,
    narrow: Condition | None = None,
    top_k: int = 0,
) -> tuple[list[Row], int, bool]:
    """``candidate_rows`` of the chunks holding one of ``tokens``, how many chunks of
    the other documents hold ``rarest``, and whether the read was narrowed: the ACL
    decides each row in the statement, and of a row it refuses only the count leaves
    the database, never its text. One statement (the stage-1 candidates and the search
    record's refused count).

    With ``narrow`` (PostgreSQL), only the chunks that also meet it — unless fewer than
    ``top_k`` of them are readable (no floor): then, in the same statement, the others
    too, and the read is not narrowed. The refused count is then of the chunks read."""
    if connection.vendor != "postgresql":
        chunks = _matching(versions, tokens, [], documents.left_out).annotate(
            readable=ExpressionWrapper(
                Q(document__in=documents.documents), output_field=BooleanField()
            ),
            rare=ExpressionWrapper(Q(search_text__contains=rarest), output_field=BooleanField()),
        )
        text = Case(When(readable=True, then=F("search_text")), default=None)
        marks = Case(When(readable=True, then=F("search_marks")), default=None)
        found: list[Any] = list(
            chunks.values_list("pk", text, marks, "document_id", "ordinal", "readable", "rare")
        )
        narrowed = False
    else:
        found, narrowed = _first_rows_sql(documents, versions, tokens, rarest, narrow, top_k)
    rows = [
        (pk, text, marks, document_id, ordinal)
        for pk, text, marks, document_id, ordinal, ok, _ in found
        if ok
    ]
    refused = sum(1 for *_, ok, rare in found if not ok and rare)
    return rows, refused, narrowed


def _first_rows_sql(
    documents: Readable,
    versions: Sequence[int],
    tokens: list[str],
    rarest: str,
    narrow: Condition | None,
    top_k: int,
) -> tuple[list[tuple[Any, ...]], bool]:
    """``first_rows``' statement on PostgreSQL: its rows (a refused row's text and marks
    NULL; the rarest token tested on refused rows only) and whether it was narrowed."""
    columns = (
        "j.id, CASE WHEN j.readable THEN j.search_text END,"
        " CASE WHEN j.readable THEN j.search_marks END, j.document_id, j.ordinal, j.readable,"
        " NOT j.readable AND j.search_vector @@ to_tsquery('simple'::regconfig, %s)"
    )
    if narrow is None:
        judged, params = _judged_sql(documents, versions, tokens, [])
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT {columns} FROM {judged}", [tsquery_literal(rarest), *params])  # noqa: S608 -- the ACL
            return list(cursor.fetchall()), False
    # The narrowed read, kept (MATERIALIZED) and counted: only when fewer than k of
    # its rows are readable is the rest of the rare tokens' chunks read.
    holding: Condition = ("|", list(tokens))
    narrowed, narrowed_params = _judged_sql(documents, versions, ("&", [holding, narrow]), [])
    others, others_params = _judged_sql(documents, versions, holding, narrow)
    sql = (
        f"WITH n AS MATERIALIZED (SELECT {columns} FROM {narrowed})"  # noqa: S608 -- the ACL
        " SELECT *, true FROM n"
        f" UNION ALL SELECT {columns}, false FROM {others}"
        " WHERE (SELECT count(*) FROM n WHERE n.readable) < %s"
    )
    literal = tsquery_literal(rarest)
    with connection.cursor() as cursor:
        cursor.execute(sql, [literal, *narrowed_params, literal, *others_params, top_k])
        found = cursor.fetchall()
    return [row[:-1] for row in found], all(row[-1] for row in found)


def _matching(
    versions: Sequence[int],
    holding: Condition | list[str],
    without: Condition | list[str],
    left_out: list[int],
) -> QuerySet[Chunk]:
    # SQLite: a substring filter (a superset; the score counts exact tokens). What a
    # stage excludes is the same superset the stage before read.
    chunks = Chunk.objects.filter(document__version__in=versions).filter(condition_q(holding))
    if left_out:
        chunks = chunks.exclude(document_id__in=left_out)
    return chunks.exclude(condition_q(without)) if without else chunks


def _fenced_sql(
    versions: Sequence[int],
    holding: Condition | list[str],
    without: Condition | list[str],
    left_out: list[int],
) -> tuple[str, list[Any]]:
    """``(SELECT … FROM knowledge_chunk …) c``: the chunks of ``versions`` that meet the
    condition, and its parameters.

    The matching chunks of the versions are found first, in a subquery the planner
    keeps apart (OFFSET 0), by one scan of the GIN index on (version, vector)
    (migration 0013): the versions and the tokens are both its keys, so a small version
    in a large database reads its own matches only. Through its documents the planner
    walked a 10k-chunk version's 100 documents and filtered their chunks' vectors (18
    ms of a 5 ms statement). ``bigint[]``: a list of small ints is sent as ``smallint[]``,
    which the index's ``bigint`` key cannot take (it became a filter). Only then the ACL
    judges them (``_judged_sql``: the readable documents hashed once). Joined, the
    planner misjudges how many documents the ACL keeps (a handful, it thinks): it
    filtered every chunk of the version by its vector, or probed the ACL once per
    candidate."""
    query = tsquery(holding)
    if without:
        query = f"{query} & !{tsquery(without)}"
    params: list[Any] = [list(versions), query]
    # Documents left out: a hashed NOT IN (each row looked up once, however many ids).
    leaving = ""
    if left_out:
        leaving = " AND document_id NOT IN (SELECT unnest(%s::bigint[]))"
        params.append(left_out)
    sql = (
        "(SELECT id, search_text, search_marks, search_vector, document_id, ordinal"  # noqa: S608 -- fixed clauses; ids are parameters
        " FROM knowledge_chunk"
        " WHERE version_id = ANY(%s::bigint[])"
        " AND search_vector @@ to_tsquery('simple'::regconfig, %s)"
        f"{leaving} OFFSET 0) c"
    )
    return sql, params


def _judged_sql(
    documents: Readable,
    versions: Sequence[int],
    holding: Condition | list[str],
    without: Condition | list[str],
) -> tuple[str, list[Any]]:
    """``(SELECT …, readable FROM <_fenced_sql> …) j``: each matching chunk with whether
    the ACL lets the owner read its document, and the parameters.

    ``document_id IN (<the readable documents>)`` in the select list of a subquery kept
    apart (OFFSET 0) is a hashed SubPlan: the ACL's documents are read once into a hash
    table, each row looked up in it. As ``= ANY(ARRAY(…))`` each row scanned the whole
    array: at 1,000,000 chunks (10,000 documents) 11,606 rows of a second stage took
    252 ms instead of 32. Joined, the planner, which cannot estimate a GIN match of many
    tokens, probed the ACL once per row."""
    fenced, params = _fenced_sql(versions, holding, without, documents.left_out)
    acl_sql, acl_params = documents.sql()
    sql = (
        "(SELECT c.id, c.search_text, c.search_marks, c.search_vector, c.document_id, c.ordinal,"  # noqa: S608 -- the ACL
        f" c.document_id IN ({acl_sql}) AS readable FROM {fenced} OFFSET 0) j"
    )
    return sql, [*acl_params, *params]


def _acl_sql(documents: QuerySet[Document]) -> tuple[str, tuple[Any, ...]]:
    """The readable documents' ids, a subquery, and its parameters."""
    try:
        return documents.values("pk").query.sql_with_params()
    except EmptyResultSet:  # none(): an inactive owner reads no document
        return "SELECT NULL::bigint WHERE false", ()
