"""Files in: plain text, Markdown, PDF with a text layer and DOCX become pages for
``ingest_document`` (docs/ingest.md).

Reading a file only produces pages of text; chunking stays the ingestion's
(knowledge/ingest.py), which merges paragraphs and never cuts one
except at a sentence end. So this module lays the text out in paragraphs that
must stay whole: a Markdown or DOCX heading is a paragraph of its own (kept
with its ``#`` marks, so the structure is in the text people read), and every
table row is a paragraph of its own (cells joined by `` | ``), never split.

- ``.txt``: one page, or one page per form feed (``\\f``).
- ``.md`` / ``.markdown``: one page (form feeds as for text); headings kept.
- ``.pdf``: one page per PDF page, from its text layer (pypdf). A PDF whose
  pages have no text at all (a scan) is refused: there is no OCR.
- ``.docx``: python-docx, paragraphs and tables in document order; a hard page
  break starts a new page; headings become ``#`` lines by level.
"""

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from foundation.text_boundary import first_unstorable
from knowledge.ingest import FactInput, ingest_document
from knowledge.models import Document, KnowledgeVersion

KINDS = {".txt": "text", ".text": "text", ".md": "markdown", ".markdown": "markdown"}
KINDS |= {".pdf": "pdf", ".docx": "docx"}
_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t#]*$")
_TABLE_RULE = re.compile(r"^\|?[ \t:|-]+\|[ \t:|-]*$")  # | --- | :-: |


class UnreadableFile(ValueError):
    """The file cannot become pages of text; the message says why and what to do."""


@dataclass(frozen=True)
class ParsedFile:
    title: str
    pages: list[str]
    kind: str


def kind_of(name: str) -> str:
    suffix = Path(name).suffix.lower()
    if suffix not in KINDS:
        allowed = ", ".join(sorted(KINDS))
        raise UnreadableFile(f"{name}: unsupported file type {suffix or '(none)'}; use {allowed}")
    return KINDS[suffix]


def read_file(path: Path | str) -> ParsedFile:
    path = Path(path)
    try:
        with path.open("rb") as stream:
            return read_stream(stream, path.name)
    except OSError as exc:
        raise UnreadableFile(f"{path}: cannot read the file ({exc.strerror or exc})")


def read_stream(stream: BinaryIO, name: str) -> ParsedFile:
    kind = kind_of(name)
    reader = {"text": _text, "markdown": _markdown, "pdf": _pdf, "docx": _docx}[kind]
    title, pages = reader(stream, name)
    pages = [_tidy(page) for page in pages] or [""]
    _refuse_unstorable(name, kind, [title, *pages])
    if not any(page.strip() for page in pages):
        if kind == "pdf":
            raise UnreadableFile(
                f"{name}: no page of this PDF has a text layer (a scanned document?). "
                "SparkTide does not run OCR: give a PDF with text, or its text as .txt/.md."
            )
        raise UnreadableFile(f"{name}: the file has no text")
    return ParsedFile(title=title or Path(name).stem, pages=pages, kind=kind)


def _refuse_unstorable(name: str, kind: str, texts: list[str]) -> None:
    """Text the database cannot hold (NUL, a lone surrogate) is refused here, before
    anything is written, instead of ending the ingestion in a ``DataError``.

    A PDF whose text layer reads as characters separated by NUL is a font without a
    usable map to Unicode (a CJK font embedded as two-byte codes, read one byte at a
    time): removing the NULs would leave other characters than the page shows, so the
    file is refused, not guessed at."""
    for number, text in enumerate(texts):
        char = first_unstorable(text)
        if char is None:
            continue
        where = "its title" if number == 0 else f"page {number}"
        what = "NUL (U+0000)" if char == "\x00" else f"a lone surrogate (U+{ord(char):04X})"
        if kind == "pdf":
            raise UnreadableFile(
                f"{name}: the PDF's text layer cannot be read ({where} holds {what}: its "
                "font does not map its characters to text). Give a PDF whose text copies "
                "out correctly, or its text as .txt/.md."
            )
        raise UnreadableFile(f"{name}: {where} holds {what}, which cannot be stored")


def _decode(stream: BinaryIO, name: str) -> str:
    raw = stream.read()
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise UnreadableFile(f"{name}: not UTF-8 text")


def _tidy(page: str) -> str:
    """Line endings unified, trailing spaces and runs of blank lines collapsed."""
    lines = [line.rstrip() for line in page.replace("\r\n", "\n").replace("\r", "\n").split("\n")]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip("\n")


def _text(stream: BinaryIO, name: str) -> tuple[str, list[str]]:
    return "", _decode(stream, name).split("\f")


def _markdown(stream: BinaryIO, name: str) -> tuple[str, list[str]]:
    title = ""
    pages = []
    for page in _decode(stream, name).split("\f"):
        out: list[str] = []
        fence = False
        for line in page.replace("\r\n", "\n").split("\n"):
            if line.lstrip().startswith(("```", "~~~")):
                fence = not fence
                out.append(line)
                continue
            heading = None if fence else _HEADING.match(line.strip())
            if heading:
                title = title or (heading.group(2) if len(heading.group(1)) == 1 else "")
                out += ["", f"{heading.group(1)} {heading.group(2)}", ""]
            elif not fence and line.strip().startswith("|") and line.strip().endswith("|"):
                if not _TABLE_RULE.match(line.strip()):
                    cells = [c.strip() for c in line.strip().strip("|").split("|")]
                    out += ["", " | ".join(cells), ""]  # a row is a paragraph: kept whole
            else:
                out.append(line)
        pages.append("\n".join(out))
    return title, pages


def _pdf(stream: BinaryIO, name: str) -> tuple[str, list[str]]:
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    try:
        reader = PdfReader(stream)
        if reader.is_encrypted:
            raise UnreadableFile(f"{name}: the PDF is encrypted; give an unencrypted copy")
        pages = [_pdf_tables(page.extract_text() or "") for page in reader.pages]
        title = (reader.metadata.title or "") if reader.metadata else ""
    except (PdfReadError, ValueError, KeyError) as exc:
        if isinstance(exc, UnreadableFile):
            raise
        raise UnreadableFile(f"{name}: not a readable PDF ({exc})")
    if not pages:
        raise UnreadableFile(f"{name}: the PDF has no pages")
    return str(title).strip(), pages


# Twin of agents/providers/table_lines.py _FIGURE_CELL (‰ too); this one picks ingestion's rows.
_NUMERIC_CELL = re.compile(r"^[-+]?\d[\d,]*(?:\.\d+)?[%％]?$")


def _pdf_tables(text: str) -> str:
    """A typeset table as pypdf gives it — one line a row, cells split by spaces — written
    as rows of `` | ``-joined cells, each its own paragraph, like a Markdown or DOCX table:
    a line of ≥ 3 labels followed by lines of as many cells, at least half of those after
    the row label figures; a row's last cell may be several words after its figures (a
    change written 下降 1.3 个百分点). Any other line (prose with spaces around its figures)
    is left as it is."""
    lines = text.split("\n")
    cells = [line.split() for line in lines]
    out: list[str] = []
    i = 0

    def numeric(row: list[str]) -> int:
        return sum(1 for cell in row[1:] if _NUMERIC_CELL.match(cell))

    def fitted(row: list[str], width: int) -> list[str] | None:
        # A last cell of words around a figure (变动: 下降 1.3 个百分点) after two figures or
        # more is one cell; not a row of more figures than the header has cells.
        if (
            width >= 4
            and len(row) > width
            and all(_NUMERIC_CELL.match(cell) for cell in row[1 : width - 1])
            and not _NUMERIC_CELL.match(row[width - 1])
        ):
            return [*row[: width - 1], " ".join(row[width - 1 :])]
        return row if len(row) == width else None

    while i < len(lines):
        width = len(cells[i])
        rows = [cells[i]]
        # A header of labels, then rows whose cells after the row label are mostly figures.
        while width >= 3 and numeric(cells[i]) == 0 and i + len(rows) < len(lines):
            row = fitted(cells[i + len(rows)], width)
            if row is None or 2 * numeric(row) < width - 1:
                break
            rows.append(row)
        if len(rows) >= 2:
            for row in rows:
                out += ["", " | ".join(row), ""]
            i += len(rows)
            continue
        out.append(lines[i])
        i += 1
    return "\n".join(out)


_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"


def _docx(stream: BinaryIO, name: str) -> tuple[str, list[str]]:
    import docx
    from docx.table import Table
    from docx.text.paragraph import Paragraph

    try:
        document = docx.Document(stream)
    except Exception as exc:  # python-docx raises several types for a broken package
        raise UnreadableFile(f"{name}: not a readable DOCX ({type(exc).__name__})")
    pages: list[list[str]] = [[]]
    title = (document.core_properties.title or "").strip()
    for block in document.iter_inner_content():
        if isinstance(block, Table):
            for row in block.rows:
                cells = [" ".join(cell.text.split()) for cell in row.cells]
                pages[-1].append(" | ".join(cells))
            continue
        assert isinstance(block, Paragraph)
        style = (block.style.name if block.style is not None else "") or ""
        level = _heading_level(style)
        # Text and hard page breaks in document order.
        parts = [""]
        for node in block._p.iter():
            if node.tag == f"{_W}t":
                parts[-1] += node.text or ""
            elif node.tag == f"{_W}tab":
                parts[-1] += "\t"
            elif node.tag == f"{_W}br" and node.get(f"{_W}type") == "page":
                parts.append("")
        for i, part in enumerate(parts):
            if i:
                pages.append([])
            text = part.strip()
            if not text:
                continue
            if level:
                title = title or (text if level == 1 else "")
                text = f"{'#' * level} {text}"
            pages[-1].append(text)
    return title, ["\n\n".join(paragraphs) for paragraphs in pages]


def _heading_level(style: str) -> int:
    if style == "Title":
        return 1
    match = re.fullmatch(r"Heading (\d)", style)
    return min(int(match.group(1)), 6) if match else 0


def ingest_file(
    version: KnowledgeVersion,
    parsed: ParsedFile,
    *,
    key: str,
    title: str = "",
    source_version: str = "",
    restricted: bool = False,
    facts: Sequence[FactInput] = (),
    progress: Callable[[str], None] = lambda line: None,
) -> Document:
    """Ingest a parsed file into a DRAFT version (the models refuse any other)."""
    for number, page in enumerate(parsed.pages, start=1):
        progress(f"  page {number}/{len(parsed.pages)}: {len(page):,} characters")
    document = ingest_document(
        version,
        key=key,
        title=title or parsed.title,
        pages=parsed.pages,
        source_version=source_version,
        restricted=restricted,
        facts=facts,
    )
    progress(f"  {document.chunks.count()} chunks")
    return document
