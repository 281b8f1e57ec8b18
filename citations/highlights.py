"""What to highlight in a previewed excerpt, and where in its document it is.

The preview (citations/preview.py) adds two optional fields computed here, never from the
client (docs/preview.md):

- ``highlights``: ``[{start, end}]`` UTF-16 ranges of ``content`` — what the run's answer
  said right before this citation's markers, found in the excerpt: the sentences or clauses
  it quotes (found verbatim) and the figures it writes (found by value,
  ``knowledge.figures``: ``48.6亿元`` highlights ``48.6 亿元``) — never inside a title
  or heading line of the excerpt (``heading_ranges``: the document's title, a Markdown
  heading, a short line standing alone above the text), where a year or a section
  number the answer also writes would otherwise light up a fragment such as
  ``2026 年第`` or ``3 投资``.
- ``location``: ``{page, paragraph}`` — the page of the excerpt and the paragraph (a
  non-blank line of that page, 1-based) where the first highlight, or the excerpt, begins.

The answer text read is the current revision of each block that binds this citation
(publication/passages.py, registered by inversion); only ranges inside the excerpt leave
this module, never the answer's own text.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from citations.models import CitationReference
from knowledge.figures import figures_in, same_figure, spans_to_utf16

MAX_HIGHLIGHTS = 20
# Pieces of a quoted passage: cut at clause and sentence punctuation and at quotes/labels.
_PIECES = re.compile(r"[\n，。；！？,;!?「」“”：:（）()]|\*\*|^\s*[-*]\s")
_MIN_PIECE = 4
_GAP = re.compile(r"^[\s，。；！？,;!?、]*$")
# A heading by its shape: a short line with no clause or sentence punctuation.
_HEADING_MAX = 40
_CLAUSE = re.compile(r"[，。；！？,;!?：:、]")
_MARKDOWN_HEADING = re.compile(r"^#{1,6}\s")


# Where the answer's text comes from: Publication's store, which stands above this
# module. Publication registers its reader of cited passages when the app is ready
# (publication/apps.py); until then nothing is highlighted.
PassageSource = Callable[[CitationReference], list[str]]
# Annotations that read the same passages in the reference's own query (one round
# trip fewer); the source then uses what they read.
PassageAnnotations = Callable[[], dict[str, Any]]
_passage_source: PassageSource | None = None
_passage_annotations: PassageAnnotations | None = None


def register_passage_source(
    source: PassageSource, annotations: PassageAnnotations | None = None
) -> None:
    global _passage_source, _passage_annotations
    _passage_source = source
    _passage_annotations = annotations


def passage_annotations() -> dict[str, Any]:
    """What to annotate on the reference's query so ``cited_passages`` needs no query."""
    return _passage_annotations() if _passage_annotations is not None else {}


def cited_passages(reference: CitationReference) -> list[str]:
    """The text the current answer wrote right before each marker of ``reference``."""
    return _passage_source(reference) if _passage_source is not None else []


def heading_ranges(content: str, title: str = "") -> list[tuple[int, int]]:
    """Code point ranges of the excerpt's title and heading lines, by the document's
    structure (no list of words): a line that is the document's ``title`` (a running
    header or the title page), a Markdown heading (``#``, as knowledge/files.py writes
    headings of Markdown and DOCX files), or a short line without clause punctuation that
    stands alone — other lines follow it in the excerpt and neither line next to it has the
    same shape (consecutive such lines are a table or a list, whose rows are content). A
    single-line excerpt is content."""
    lines: list[tuple[int, int, str]] = []
    position = 0
    for line in content.split("\n"):
        lines.append((position, position + len(line), line.strip()))
        position += len(line) + 1
    text_lines = [line for line in lines if line[2]]
    if len(text_lines) < 2:
        return []
    title = " ".join(title.split())

    def short(index: int) -> bool:
        if not 0 <= index < len(lines):
            return False
        text = lines[index][2]
        return bool(text) and len(text) <= _HEADING_MAX and not _CLAUSE.search(text)

    last_text = max(i for i, line in enumerate(lines) if line[2])
    ranges = []
    for index, (start, end, text) in enumerate(lines):
        if not text:
            continue
        alone = short(index) and index < last_text and not short(index - 1) and not short(index + 1)
        if (title and " ".join(text.split()) == title) or _MARKDOWN_HEADING.match(text) or alone:
            ranges.append((start, end))
    return ranges


def highlight_spans(content: str, passages: list[str], *, title: str = "") -> list[tuple[int, int]]:
    """Code point ranges of ``content`` that the passages quote or whose figures they write,
    outside its title and heading lines (``heading_ranges``)."""
    headings = heading_ranges(content, title)
    spans: list[tuple[int, int]] = []
    for passage in passages:
        for piece in _PIECES.split(passage):
            piece = piece.strip()
            if len(piece) < _MIN_PIECE:
                continue
            at = content.find(piece)
            while at >= 0 and _inside(headings, at, at + len(piece)):
                at = content.find(piece, at + 1)
            if at >= 0:
                spans.append((at, at + len(piece)))
        stated = figures_in(content)
        for figure in figures_in(passage):
            spans += [
                (f.start, f.end)
                for f in stated
                if same_figure(figure.value, figure.unit, f.value, f.unit)
            ]
    spans = [(start, end) for start, end in spans if not _inside(headings, start, end)]
    return _merge(content, spans)[:MAX_HIGHLIGHTS]


def cited_paragraph(paragraph: int, content: str, spans: list[tuple[int, int]]) -> int:
    """Which paragraph of its page a citation is at — the one rule the preview's
    ``location`` and 运行详情's event log both show: the paragraph (a non-blank line of the
    page, 1-based) where the first highlight begins, else where the excerpt begins.
    ``paragraph``: where the excerpt (its chunk) begins; ``spans``: ``highlight_spans``."""
    before = content[: spans[0][0]] if spans else ""
    return paragraph + sum(1 for line in before.split("\n")[:-1] if line.strip())


def paragraph_of(paragraph: int, content: str, passages: list[str], *, title: str = "") -> int:
    """``cited_paragraph`` of an excerpt the answer's ``passages`` cite."""
    return cited_paragraph(paragraph, content, highlight_spans(content, passages, title=title))


def _inside(headings: list[tuple[int, int]], start: int, end: int) -> bool:
    """Does ``start``–``end`` touch one of the heading lines?"""
    return any(start < h_end and h_start < end for h_start, h_end in headings)


def _merge(content: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[list[int]] = []
    for start, end in sorted(spans):
        # An overlapping or touching span leaves an empty gap, which _GAP matches too.
        if merged and _GAP.match(content[merged[-1][1] : start]):
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return [(s, e) for s, e in merged]


def highlights_and_location(
    reference: CitationReference, content: str, *, paragraph: int | None
) -> dict[str, Any]:
    """``{"highlights": […], "location": {…}}`` — each only when known."""
    spans = highlight_spans(content, cited_passages(reference), title=reference.title)
    out: dict[str, Any] = {}
    if spans:
        out["highlights"] = spans_to_utf16(content, spans)
    page = (reference.source_ref or {}).get("page")
    location: dict[str, Any] = {}
    if isinstance(page, int):
        location["page"] = page
    if paragraph is not None:
        location["paragraph"] = cited_paragraph(paragraph, content, spans)
    if location:
        out["location"] = location
    return out
