"""Mechanical text handling of Publication: cleanup, value rendering, bounded display.

Pure functions, no database. ``clean_text`` removes control characters and
unifies line endings; ``render_content`` renders ``[[num:…]]`` handles to their
values (or an explicit "value unavailable" marker, never a guess) and, beyond
``MAX_DISPLAY_CHARS`` display characters, keeps a readable prefix marked
truncated. Markers and rendered values are atoms: a cut never falls inside one.

Display characters are Unicode code points of the stored text after rendering
(markers count as written): a conservative measure of what a client displays.
"""

import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any

from citations.markers import ANY_MARKER, NUM_MARKER

MAX_DISPLAY_CHARS = 60_000
TRUNCATION_NOTE = "\n\n〔内容过长，已截断〕"
VALUE_UNAVAILABLE = "〔数值不可用〕"

# Line breaks of every convention become "\n".
_LINE_BREAKS = re.compile("\r\n|\r|\u2028|\u2029|\x85")
# C0 (but tab and newline), DEL, C1, zero-width space, bidirectional embedding
# and isolate controls (they can make displayed text read differently from the
# stored text), BOM and interlinear annotation controls. ZWJ/ZWNJ stay: emoji
# sequences and some scripts need them.
_CONTROL = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x84\x86-\x9f"
    "\u200b\u202a-\u202e\u2066-\u2069\ufeff\ufff9-\ufffb]"
)
# A lone surrogate cannot be encoded as UTF-8 (PostgreSQL would refuse the row).
_SURROGATE = re.compile("[\ud800-\udfff]")
# How far a cut backs off a run of digits it would split (a literal number cut
# short reads as a different number).
_NUMBER_BACKOFF = 64


def clean_text(text: str) -> str:
    text = _SURROGATE.sub("\ufffd", text)
    text = _LINE_BREAKS.sub("\n", text)
    return _CONTROL.sub("", text)


def _attaches(char: str) -> bool:
    """Does ``char`` belong to the grapheme of the character before it?"""
    code = ord(char)
    return (
        unicodedata.category(char) in ("Mn", "Mc", "Me")
        or char == "\u200d"
        or 0xFE00 <= code <= 0xFE0F
        or 0x1F3FB <= code <= 0x1F3FF
        or 0xE0020 <= code <= 0xE007F
    )


def _numeric(char: str) -> bool:
    return char.isdigit() or char in ".,%‰"


def safe_cut(text: str, limit: int) -> int:
    """The largest index ≤ ``limit`` that splits neither a grapheme nor a number."""
    cut = max(0, min(limit, len(text)))
    while 0 < cut < len(text) and (_attaches(text[cut]) or text[cut - 1] == "\u200d"):
        cut -= 1
    if 0 < cut < len(text) and _numeric(text[cut - 1]) and _numeric(text[cut]):
        start = cut
        while start > 0 and _numeric(text[start - 1]) and cut - start < _NUMBER_BACKOFF:
            start -= 1
        cut = start
    return cut


@dataclass
class _Piece:
    text: str
    atom: bool
    handle: str | None = None


def _pieces(text: str, values: dict[str, str]) -> list[_Piece]:
    pieces: list[_Piece] = []
    position = 0
    for marker in ANY_MARKER.finditer(text):
        if marker.start() > position:
            pieces.append(_Piece(text[position : marker.start()], atom=False))
        num = NUM_MARKER.fullmatch(marker.group(0))
        if num:
            handle = num.group(1)
            pieces.append(_Piece(values.get(handle, VALUE_UNAVAILABLE), atom=True, handle=handle))
        else:
            pieces.append(_Piece(marker.group(0), atom=True))
        position = marker.end()
    if position < len(text):
        pieces.append(_Piece(text[position:], atom=False))
    return pieces


@dataclass
class Rendered:
    content: dict[str, Any]
    truncated: bool = False
    # Handles whose rendering survived in the stored content, in order.
    handles: list[str] = field(default_factory=list)


class _Budget:
    def __init__(self, limit: int) -> None:
        self.left = limit
        self.exhausted = False
        self.handles: list[str] = []

    def take(self, pieces: list[_Piece]) -> str:
        """As many whole atoms and safely cut text as the budget allows."""
        out = []
        for piece in pieces:
            if self.exhausted:
                break
            if len(piece.text) <= self.left:
                out.append(piece.text)
                self.left -= len(piece.text)
                if piece.handle is not None:
                    self.handles.append(piece.handle)
                continue
            if not piece.atom:
                kept = piece.text[: safe_cut(piece.text, self.left)]
                out.append(kept)
                self.left -= len(kept)
            self.exhausted = True
        return "".join(out)


def render_text(
    text: str, values: dict[str, str], *, limit: int = MAX_DISPLAY_CHARS
) -> tuple[str, bool, list[str]]:
    """Render handles; beyond ``limit`` keep a prefix (note included) marked truncated."""
    if len(text) <= limit and "[[num:" not in text:
        # Nothing to render and nothing to cut: the pieces would join to ``text`` itself.
        return text, False, []
    pieces = _pieces(text, values)
    if sum(len(p.text) for p in pieces) <= limit:
        return "".join(p.text for p in pieces), False, [p.handle for p in pieces if p.handle]
    budget = _Budget(max(0, limit - len(TRUNCATION_NOTE)))
    prefix = budget.take(pieces).rstrip()
    return prefix + TRUNCATION_NOTE, True, budget.handles


def render_content(
    content: dict[str, Any], values: dict[str, str], *, limit: int = MAX_DISPLAY_CHARS
) -> Rendered:
    if content["type"] == "text":
        text, truncated, handles = render_text(content["text"], values, limit=limit)
        return Rendered({"type": "text", "text": text}, truncated, handles)
    columns = [_pieces(c, values) for c in content["columns"]]
    rows = [[_pieces(c, values) for c in row] for row in content["rows"]]
    total = sum(len(p.text) for cell in columns for p in cell) + sum(
        len(p.text) for row in rows for cell in row for p in cell
    )
    if total <= limit:
        budget = _Budget(total)
        return Rendered(
            {
                "type": "table",
                "columns": [budget.take(c) for c in columns],
                "rows": [[budget.take(c) for c in row] for row in rows],
            },
            False,
            budget.handles,
        )
    # A table keeps its columns and the rows that fit; the row where the budget
    # runs out keeps its cells' safe prefixes, later rows are dropped. The
    # ``truncated`` flag marks it (a note inside a cell would read as data).
    budget = _Budget(limit)
    kept_columns = [budget.take(c) for c in columns]
    kept_rows = []
    for row in rows:
        if budget.exhausted:
            break
        kept_rows.append([budget.take(c) for c in row])
    return Rendered(
        {"type": "table", "columns": kept_columns, "rows": kept_rows}, True, budget.handles
    )


def body_texts(content: object) -> list[str]:
    """The strings of a block body in reading order: its text, or a table's columns then
    cells. Anything else reads as no text (markers in it are never found)."""
    if not isinstance(content, dict):
        return []
    if content.get("type") == "table":
        columns = content.get("columns") or []
        rows = content.get("rows") or []
        return [*(str(c) for c in columns), *(str(c) for row in rows for c in row)]
    return [str(content.get("text", ""))]
