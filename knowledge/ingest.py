"""Ingestion: documents given as pages of text become chunks with exact UTF-16 locators."""

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date
from decimal import Decimal

from knowledge.figures import anchor_value
from knowledge.models import Chunk, Document, Fact, KnowledgeVersion
from knowledge.text import (
    MAX_CHUNK_UTF16,
    PAGE_SEPARATOR,
    SECTION_HEADING,
    search_marks,
    search_tokens,
    snippet_digest,
    utf16_len,
)

# A chunk aims at a few paragraphs: big enough to carry a claim with its
# context, small enough that a citation points at something a person can read.
TARGET_CHUNK_UTF16 = 600
_PARAGRAPH_BREAK = re.compile(r"\n\s*\n")


@dataclass(frozen=True)
class FactInput:
    key: str
    value: Decimal
    unit: str = ""
    as_of: date | None = None
    label: str = ""  # how a person reads the fact, e.g. 营业收入同比增长
    page: int | None = None  # 1-based page that states it; None: found in the text


class FactNotStated(ValueError):
    """A declared fact whose value no chunk of its document states (or not on its page).

    ``index`` is the fact's position in the list given, ``field`` the input to correct
    (``value``, or ``page`` when a page was given): the manifest names that key path.
    """

    def __init__(self, index: int, key: str, field: str, message: str) -> None:
        self.index, self.key, self.field = index, key, field
        super().__init__(message)


@dataclass(frozen=True)
class Span:
    page: int
    start: int  # code point offsets in the document text
    end: int


def _paragraph_spans(page_text: str, offset: int) -> Iterable[tuple[int, int]]:
    """Non-blank paragraphs of a page as (start, end) code point offsets, trimmed."""
    pos = 0
    for match in [*_PARAGRAPH_BREAK.finditer(page_text), None]:
        end = match.start() if match else len(page_text)
        piece = page_text[pos:end]
        stripped = piece.strip()
        if stripped:
            lead = len(piece) - len(piece.lstrip())
            yield offset + pos + lead, offset + pos + lead + len(stripped)
        if match:
            pos = match.end()


def _split_long(text: str, start: int, end: int, limit: int) -> Iterable[tuple[int, int]]:
    """Cut an over-long paragraph at sentence ends (or hard) so each piece fits."""
    while utf16_len(text[start:end]) > limit:
        cut = start
        budget = 0
        last_sentence = None
        for i in range(start, end):
            budget += 2 if ord(text[i]) > 0xFFFF else 1
            if budget > limit:
                break
            cut = i + 1
            if text[i] in "。！？.!?；;\n":
                last_sentence = i + 1
        cut = last_sentence if last_sentence and last_sentence > start else cut
        piece = text[start:cut]
        yield start + (len(piece) - len(piece.lstrip())), cut - (len(piece) - len(piece.rstrip()))
        start = cut
        while start < end and text[start].isspace():
            start += 1
    if start < end:
        yield start, end


def paragraph_at(text: str, page_start: int, position: int) -> int:
    """The 1-based paragraph of a page at ``position``: paragraphs are its non-blank lines."""
    return 1 + sum(1 for line in text[page_start:position].split("\n")[:-1] if line.strip())


def chunk_spans(
    pages: Sequence[str], *, target: int = TARGET_CHUNK_UTF16
) -> tuple[str, list[Span]]:
    text = PAGE_SEPARATOR.join(pages)
    spans: list[Span] = []
    offset = 0
    for number, page_text in enumerate(pages, start=1):
        current: tuple[int, int] | None = None
        last = (0, 0)  # the span of the current chunk's last paragraph
        for p_start, p_end in _paragraph_spans(page_text, offset):
            for start, end in _split_long(text, p_start, p_end, MAX_CHUNK_UTF16):
                if current and utf16_len(text[current[0] : end]) <= target:
                    current, last = (current[0], end), (start, end)
                    continue
                if current and last[0] > current[0] and _is_heading(text[last[0] : last[1]]):
                    # A heading goes with what it heads, not at the end of the chunk before.
                    before = text[current[0] : last[0]].rstrip()
                    spans.append(Span(number, current[0], current[0] + len(before)))
                    current = (last[0], end)
                else:
                    if current:
                        spans.append(Span(number, *current))
                    current = (start, end)
                last = (start, end)
        if current:
            spans.append(Span(number, *current))
        offset += len(page_text) + len(PAGE_SEPARATOR)
    return text, spans


def _is_heading(paragraph: str) -> bool:
    """A paragraph that is a numbered section heading alone: one short line, no sentence."""
    return (
        "\n" not in paragraph
        and len(paragraph) <= 40
        and bool(SECTION_HEADING.match(paragraph))
        and paragraph[-1] not in "。！？；;.!?"
    )


def ingest_document(
    version: KnowledgeVersion,
    *,
    key: str,
    title: str,
    pages: Sequence[str],
    source_version: str = "",
    restricted: bool = False,
    facts: Sequence[FactInput] = (),
) -> Document:
    """Create a document of a DRAFT version with its chunks and facts.

    Every fact is bound to the chunk that states it (``knowledge.figures``):
    on its ``page`` when given, else anywhere in the document. A fact no chunk states
    raises ``FactNotStated`` — nothing is written that a citation could not show.
    """
    text, spans = chunk_spans(pages)
    document = Document.objects.create(
        version=version,
        key=key,
        title=title,
        source_version=source_version,
        text=text,
        page_count=len(pages),
        restricted=restricted,
    )
    page_starts = [0]
    for page in pages[:-1]:
        page_starts.append(page_starts[-1] + len(page) + len(PAGE_SEPARATOR))
    chunks = []
    for ordinal, span in enumerate(spans):
        chunk_text = text[span.start : span.end]
        start16 = utf16_len(text[: span.start])
        tokens = search_tokens(chunk_text + " " + title)
        chunks.append(
            Chunk(
                document=document,
                ordinal=ordinal,
                page=span.page,
                paragraph=paragraph_at(text, page_starts[span.page - 1], span.start),
                start=start16,
                end=start16 + utf16_len(chunk_text),
                text=chunk_text,
                digest=snippet_digest(chunk_text),
                search_text=" ".join(tokens),
                search_marks=search_marks(tokens),
            )
        )
    anchors = [_anchor(index, fact, chunks, len(pages)) for index, fact in enumerate(facts)]
    Chunk.objects.bulk_create(chunks)
    Fact.objects.bulk_create(
        Fact(
            document=document,
            chunk=chunks[anchor],
            key=f.key,
            value=f.value,
            unit=f.unit,
            as_of=f.as_of,
            label=f.label,
        )
        for f, anchor in zip(facts, anchors, strict=True)
    )
    return document


def _anchor(index: int, fact: FactInput, chunks: Sequence[Chunk], page_count: int) -> int:
    """The position in ``chunks`` of the chunk stating ``fact``, or FactNotStated."""
    written = f"{format(fact.value.normalize(), 'f')}{fact.unit}"
    if fact.page is not None and not 1 <= fact.page <= page_count:
        raise FactNotStated(
            index,
            fact.key,
            "page",
            f"page {fact.page} does not exist (the document has {page_count})",
        )
    anchor = anchor_value(
        [(c.page, c.text) for c in chunks],
        fact.value,
        fact.unit,
        label=fact.label or fact.key,
        page=fact.page,
    )
    if anchor is not None:
        return anchor.index
    if fact.page is not None:
        field, where = "page", f"page {fact.page}"
    else:
        field, where = "value", "the document"
    raise FactNotStated(
        index,
        fact.key,
        field,
        f"{written} is not written in {where}; a fact must be stated by the text that cites it "
        "(write the value as the text does, e.g. 61.2 and %, or give the page that states it)",
    )
