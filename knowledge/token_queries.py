"""How a set of search tokens is asked of each database: a tsquery over the GIN-indexed
``search_vector`` on PostgreSQL, a substring filter of ``search_text`` on SQLite (a
superset: "ab" is inside "abc"; the score counts exact tokens). Every token is quoted, so
punctuation in a question can neither break nor widen a tsquery."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from django.db import connection
from django.db.models import Q

from knowledge.models import Chunk

# A condition on the tokens a chunk holds: a token, ("&", [conditions]), ("|", [...]).
Condition = str | tuple[str, list[Any]]


def chunk_texts(versions: Sequence[int], tokens: list[str]) -> Iterable[str]:
    """The ``search_text`` of every chunk of ``versions`` holding one of ``tokens`` (on
    SQLite a superset: a substring filter), whoever may read it — statistics, as the
    document frequencies are. One statement."""
    if connection.vendor != "postgresql":
        chunks = Chunk.objects.filter(document__version__in=versions).filter(contains_any(tokens))
        return chunks.values_list("search_text", flat=True).iterator(chunk_size=2000)
    sql = (
        "SELECT search_text FROM knowledge_chunk"
        " WHERE version_id = ANY(%s::bigint[])"
        " AND search_vector @@ to_tsquery('simple'::regconfig, %s)"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [list(versions), tsquery(tokens)])
        return [row[0] for row in cursor.fetchall()]


def tsquery(condition: Condition | list[str]) -> str:
    if isinstance(condition, list):
        condition = ("|", condition)
    if isinstance(condition, str):
        return tsquery_literal(condition)
    operator, parts = condition
    return "(" + f" {operator} ".join(tsquery(part) for part in parts) + ")"


def condition_q(condition: Condition | list[str]) -> Q:
    # A substring is a superset ("ab" is inside "abc"), of any and/or of tokens too.
    if isinstance(condition, list):
        return contains_any(condition)
    if isinstance(condition, str):
        return Q(search_text__contains=condition)
    operator, parts = condition
    combined = condition_q(parts[0])
    for part in parts[1:]:
        combined = combined & condition_q(part) if operator == "&" else combined | condition_q(part)
    return combined


def contains_any(tokens: list[str]) -> Q:
    # A substring is a superset ("ab" is inside "abc"); the score counts exact tokens.
    contains_any = Q()
    for token in tokens:
        contains_any |= Q(search_text__contains=token)
    return contains_any


def tsquery_literal(token: str) -> str:
    return "'" + token.replace("\\", "\\\\").replace("'", "''") + "'"
