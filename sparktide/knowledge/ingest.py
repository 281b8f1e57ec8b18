"""Ingestion: documents given as pages of text become chunks with exact UTF-16 locators."""

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date
from decimal import Decimal

from sparktide.knowledge.models import Chunk, Document, Fact, KnowledgeVersion
from sparktide.knowledge.text import (
    MAX_CHUNK_UTF16,
    PAGE_SEPARATOR,
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


def chunk_spans(
    pages: Sequence[str], *, target: int = TARGET_CHUNK_UTF16
) -> tuple[str, list[Span]]:
    text = PAGE_SEPARATOR.join(pages)
    spans: list[Span] = []
    offset = 0
    for number, page_text in enumerate(pages, start=1):
        current: tuple[int, int] | None = None
        for p_start, p_end in _paragraph_spans(page_text, offset):
            for start, end in _split_long(text, p_start, p_end, MAX_CHUNK_UTF16):
                if current and utf16_len(text[current[0] : end]) <= target:
                    current = (current[0], end)
                    continue
                if current:
                    spans.append(Span(number, *current))
                current = (start, end)
        if current:
            spans.append(Span(number, *current))
        offset += len(page_text) + len(PAGE_SEPARATOR)
    return text, spans


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
    """Create a document of a DRAFT version with its chunks and facts."""
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
    chunks = []
    for ordinal, span in enumerate(spans):
        chunk_text = text[span.start : span.end]
        start16 = utf16_len(text[: span.start])
        chunks.append(
            Chunk(
                document=document,
                ordinal=ordinal,
                page=span.page,
                start=start16,
                end=start16 + utf16_len(chunk_text),
                text=chunk_text,
                digest=snippet_digest(chunk_text),
                search_text=" ".join(search_tokens(chunk_text + " " + title)),
            )
        )
    Chunk.objects.bulk_create(chunks)
    Fact.objects.bulk_create(
        Fact(document=document, key=f.key, value=f.value, unit=f.unit, as_of=f.as_of, label=f.label)
        for f in facts
    )
    return document
