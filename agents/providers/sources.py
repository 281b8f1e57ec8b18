"""The retrieved excerpts as the extractive provider reads them: each a *source* (its
entity and short name from the title, its units; a split table's rows given the header of
another excerpt of the same document), and the *reading* of a question over them. Which
unit answers is ``agents.providers.selection``'s.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from agents.providers.reading import (
    Question,
    contrasted,
    covers,
    entity_of,
    fold,
    is_han,
    short_name,
)
from agents.providers.structure import Unit, label_first, named_column, units
from agents.providers.table_lines import is_data_row


@dataclass
class Source:
    """One retrieved excerpt as the provider reads it."""

    id: str
    title: str
    entity: str
    name: str  # short entity name
    content: str
    units: list[Unit]
    handles: list[dict[str, Any]]
    rank: int
    # What a document whose title names no one is, as its text names it (2026 年度业绩预告 on
    # the line after its issuer's full name): _named_in_text.
    kind: str = ""


def read_sources(
    results: list[dict[str, Any]], also: list[dict[str, Any]] | None = None
) -> list[Source]:
    """The excerpts as sources, best first; ``also``: other excerpts retrieved in this run
    (an earlier search's), read only for a split table's header."""
    seen: set[str] = set()
    out = []
    for rank, r in enumerate(results):
        if r["id"] in seen:
            continue
        seen.add(r["id"])
        entity = entity_of(r.get("title") or "")
        out.append(
            Source(
                id=r["id"],
                title=r.get("title") or "",
                entity=entity,
                name=short_name(entity),
                content=r.get("content") or "",
                units=units(r.get("content") or ""),
                handles=list(r.get("handles") or []),
                rank=rank,
            )
        )
    _named_in_text(out)
    spans = {r["id"]: _span(r) for r in [*results, *(also or [])]}
    _borrow_headers(out, read_sources(also) if also else [], spans)
    _carry_headings(out, spans)
    return out


def _span(result: dict[str, Any]) -> tuple[str, int, int] | None:
    """(document, start, end) of an excerpt in its document's text, when its search says."""
    ref = result.get("sourceRef") or {}
    where = ref.get("locator") or {}
    if not ref.get("id") or not isinstance(where.get("start"), int):
        return None
    return str(ref["id"]), where["start"], int(where.get("end") or 0)


def _carry_headings(sources: list[Source], spans: dict[str, tuple[str, int, int] | None]) -> None:
    """A section cut across two chunks: an excerpt whose text starts before any heading of
    its own, right where another retrieved excerpt of its document ends (a blank line
    between), reads its first units under the heading that excerpt ends with
    (## 澜州银行：… closing one chunk, its 净息差 1.71% opening the next)."""
    by_id = {s.id: s for s in sources}
    for source in sources:
        here = spans.get(source.id)
        if here is None or not source.units or source.units[0].kind == "heading":
            continue
        before = next(
            (
                by_id[i]
                for i, span in spans.items()
                if span and i in by_id and span[0] == here[0] and 0 <= here[1] - span[2] <= 2
            ),
            None,
        )
        if before is None or not before.units or before.units[-1].kind != "heading":
            continue
        heading = before.units[-1].text
        for unit in source.units:
            if unit.kind == "heading":
                break
            if not unit.heading:
                unit.heading = heading


# How a filing names its issuer in its text: 证券简称：赤霞新材, and a line of its full name.
_SHORT_NAME = re.compile(r"证券简称\s*[:：]\s*(?P<name>[^\s:：]{2,12})")
_FULL_NAME = re.compile(r"^\s*(?P<name>\S{2,30}?(?:股份有限公司|有限责任公司|有限公司))\s*$", re.M)
# The line that follows it, naming what the document is (2026 年度业绩预告, 关于…的公告).
_KIND_LINE = re.compile(r"\s*(?P<kind>[^\n:：|]{2,40}?)\s*$", re.M)


def _named_in_text(sources: list[Source]) -> None:
    """A document whose title names no one (a file's key, chixia-board-2026-09) is about
    the issuer its text names — 证券简称：X and the line of its full name, read from any
    retrieved excerpt of that document — for every excerpt of it."""
    for title in {s.title for s in sources if not any(map(is_han, s.title))}:
        same = [s for s in sources if s.title == title]
        text = "\n".join(s.content for s in same)
        short = _SHORT_NAME.search(text)
        full = _FULL_NAME.search(text)
        if not (short or full):
            continue
        entity = full["name"] if full else short["name"]  # type: ignore[index]
        name = short["name"] if short else short_name(entity)
        # (the line after the full name says what the document is — 2026 年度业绩预告 — as a
        # title would: 业绩预告的公告编号 asks this notice's)
        kind = _KIND_LINE.match(text, full.end() + 1) if full else None
        document = kind["kind"] if kind and any(map(is_han, kind["kind"])) else ""
        for source in same:
            source.entity, source.name, source.kind = entity, name, document


def _borrow_headers(
    sources: list[Source],
    others: list[Source],
    spans: dict[str, tuple[str, int, int] | None],
) -> None:
    """A table split across two chunks: an excerpt that begins with rows and no header (its
    first table line is data) takes the header of its document's excerpt (among any
    retrieved, ``others`` too: an earlier search's) that holds a header of as many cells —
    the table its excerpt ends with first, where the chunk was cut — quoted with that
    excerpt's citation. A table goes on forward only: where the excerpts' places in their
    document are known (``spans``), the header is the nearest one before the rows, never
    one after them (the investment table of page 3 does not head page 1's rows). No such
    excerpt, no header: the rows name nothing."""
    headers = [
        (s, u)
        for s in [*sources, *others]
        for u in s.units
        if u.kind == "header" and not is_data_row(u.clauses)
    ]
    # the nearest excerpt before first, then the header whose table runs to its excerpt's end
    headers.sort(key=lambda sh: (-_end(spans.get(sh[0].id)), not _ends_excerpt(*sh)))
    for source in sources:
        first = next((u for u in source.units if u.kind in ("header", "row")), None)
        if first is None or first.kind != "header" or not is_data_row(first.clauses):
            continue
        here = spans.get(source.id)
        owner = next(
            (
                (s, h)
                for s, h in headers
                if s.id != source.id
                and s.title == source.title
                and len(h.clauses) == len(first.clauses)
                and _before(spans.get(s.id), here)
            ),
            None,
        )
        if owner is None:
            continue
        other, header = owner
        joined = " | ".join(first.clauses)
        # (a header whose first column numbers the rows names them by another: so do its rows)
        named_at = named_column([c.strip() for c in header.text.split("\n")[0].split(" | ")])
        for unit in source.units:
            if unit is first or (unit.kind == "row" and unit.heading == joined):
                unit.kind, unit.header_from = "row", other.id
                unit.heading, unit.header_text = " | ".join(header.clauses), header.text
                unit.caption = header.heading
                unit.clauses = label_first(unit.clauses, named_at)


def _end(span: tuple[str, int, int] | None) -> int:
    return span[2] if span else -1


def _before(there: tuple[str, int, int] | None, here: tuple[str, int, int] | None) -> bool:
    """Whether an excerpt at ``there`` ends before one at ``here`` starts (unknown: yes)."""
    if there is None or here is None:
        return True
    return there[0] == here[0] and there[2] <= here[1]


def _ends_excerpt(source: Source, header: Unit) -> bool:
    """Whether the table under ``header`` is the last thing its excerpt holds."""
    after = source.units[source.units.index(header) + 1 :]
    return all(u.kind == "row" for u in after)


def corpus_of(sources: list[Source]) -> str:
    parts = []
    for s in sources:
        parts += [s.title, s.name, s.content, *(h.get("label") or "" for h in s.handles)]
    return fold("\n".join(parts))


def source_names(source: Source, term: str) -> bool:
    """Whether ``term`` names the document's entity: the title's subject (before its date or
    bracket), not a word of its headline (海外 in 三季报点评：订单高增，海外交付放量) — nor a
    name that differs from it by a modifier of one character (云岭农商行 does not name a
    note about 城商行: 农商行 is another word)."""
    name, term = fold(source.name), fold(term)
    if term in fold(source.entity) or name in term:
        return True
    return covers(name, term) and not contrasted(name, term)


def entity_terms_of(question: Question, sources: list[Source]) -> list[str]:
    """The question's terms that name a retrieved document's entity — not a term after a
    count or a which with its measure word (三家银行, 哪家银行): the kind asked among, which
    a document's name ending with it (澜州银行) is one of, not the entity asked of."""
    return [
        t
        for t in question.terms
        if len(t) >= 2 and t not in question.kinds and any(source_names(s, t) for s in sources)
    ]


@dataclass
class Pick:
    source: Source
    unit: Unit
    score: float


@dataclass
class Reading:
    question: Question
    entity_terms: list[str]
    topic: list[str]  # the other terms: what is asked about the entity
    sources: list[Source]  # relevant excerpts, best first
    resolved_from: str = ""  # the earlier question an elliptical follow-up was read against
    phrases: tuple[str, ...] = ()  # what is asked, as written (topic_phrases): the floor
    of: tuple[str, ...] = ()  # what a follow-up asking only an attribute asks it of
    # Read once per question, when what they depend on is settled (selection.asked_apart,
    # selection.relevant_figures, best_units, best_units_each): the things asked side by
    # side, each as its phrases; the declared figures relevant to it, best first; the units
    # that answer, best first; and, when it decides, what answers each thing asked apart.
    apart: tuple[tuple[str, ...], ...] = ()
    figures: list[tuple[float, Source, dict[str, Any]]] = field(default_factory=list)
    picks: list[Pick] = field(default_factory=list)
    each: list[Pick | None] = field(default_factory=list)
    # (clauses each asking their own thing answered each by its own unit: asked_in_clauses)
    clauses_apart: bool = False
    # The members of a kind a superlative is asked over (三家银行中谁…最低), each with its
    # section's unit and figure of the measure (comparison.members_compared), and the
    # kind's measure word (家).
    members: list[tuple[str, Any, Any, Any]] = field(default_factory=list)
    counter: str = ""
