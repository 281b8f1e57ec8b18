"""Tables as an excerpt's lines hold them (the extractive provider's toolkit): rows written
``a | b | c`` by ingestion (DOCX, Markdown), and a typeset table as a PDF's text layer lays
it out — its cells one line, separated by spaces, a header cell or a row label wrapped onto
the next line, a figure glued to its label. ``line_cells`` gives each line's cells (or
none: prose); ``agents.providers.structure`` cuts an excerpt into units with it.
"""

from __future__ import annotations

import re

from agents.providers.grammar import FALL, RATE_OF_CHANGE, RISE, UNSIGNED_CHANGE, words
from agents.providers.reading import fold
from knowledge.figures import figures_in
from knowledge.text import SECTION_HEADING  # a section heading ends a table

# A table cell pypdf gives as a word of its own: a figure (30.1, 1,260, 90.5%).
# (twin of knowledge/files.py _NUMERIC_CELL, which leaves ‰ out: what ingestion rows stays so)
_FIGURE_CELL = re.compile(r"^[-+]?\d[\d,]*(?:\.\d+)?[%％‰]?$")
# Spaces between two CJK characters of one cell are the layout's (华 北, 仓库 出租率).
_LAYOUT_SPACE = re.compile(r"(?<=[^\x00-\x7f])\s+(?=[^\x00-\x7f])")


def _cell(text: str) -> str:
    return _LAYOUT_SPACE.sub("", text.strip())


def _words(line: str) -> list[str]:
    """A PDF line's space-separated words, a lone % joined to the figure before it."""
    words: list[str] = []
    for word in line.split():
        if words and word in ("%", "％", "‰") and _FIGURE_CELL.match(words[-1]):
            words[-1] += word
        else:
            words.append(word)
    return words


_GLUED = re.compile(r"^(.*[^\d,.+\-\s])([-+]?\d[\d,]*(?:\.\d+)?[%％]?)$")


def _continued_row(line: str, width: int, rows: list[list[str]]) -> list[str] | None:
    """A row of the table just above, as pypdf lays it out, its cells split by spaces —
    ingestion leaves such a row spaced when a cell holds a space (华 北 15.6 86.1%; 澜港集团
    有限公司 国有法人 7.65 449,055,000 质押 200,000,000): a line read as a row (``_row_words``)
    whose words fit the table's ``width`` cells as its ``rows`` hold them (``_row_cells``).
    None for any other line."""
    words = _words(line)
    glued = _GLUED.match(words[0]) if words and len(words) == width - 1 else None
    if glued:
        # the label set against its first figure (…收入和支出-58.12 -96.42)
        words = [glued.group(1), glued.group(2), *words[1:]]
    if width < 3 or len(words) <= width - 1 or not _row_words(line, words):
        return None
    cells = _row_cells(words, rows, width)
    # (every column holding what the rows above hold there: 表 3 分区域仓储网络 is no row)
    kinds = _kinds(rows, width) if rows else [set(), *[{True}] * (width - 1)]
    return cells if cells is not None and _fits(cells, kinds) else None


def _row_words(line: str, words: list[str]) -> bool:
    """Whether a line's words read as a table's row: a label that is no value, then values
    in at least half the cells after it, and no sentence's punctuation."""
    return (
        len(words) >= 3
        and not _is_value(words[0])
        and 2 * sum(map(_is_value, words[1:])) >= len(words) - 1
        # (a figure's comma is no sentence's, nor a statement's row label's lead 减： / 其中：)
        and not re.search(r"[。！？；，：]", _ROW_LEAD.sub("", line.strip()))
    )


# How a financial statement leads a row's label (减：所得税影响额, 其中：营业成本, 加：…): its
# colon is the label's, no sentence's.
_ROW_LEAD = re.compile(r"^(?:减|加|其中)\s*[:：]")


# The words a name cannot end with: a modifier's 的, a conjunction awaiting what it joins.
_UNFINISHED = ("的", "及", "和", "与", "、")


def _wrapped_label(lines: list[str], at: int, row: list[str]) -> bool:
    """Whether ``lines[at]`` — one label, no figure, no sentence — is the rest of the label
    of ``row``, the table line above it, that a PDF's layout wrapped (归属于本行普通股股东的 /
    每股净资产（元）): that label cannot end where it does, or the table goes on after it."""
    line = lines[at]
    if (
        len(_words(line)) != 1
        or re.search(r"[\d。！？；，：:]", line)
        or SECTION_HEADING.match(line)
    ):
        return False
    after = next((text for text in lines[at + 1 :] if text), "")
    return row[0].endswith(_UNFINISHED) or " | " in after and is_data_row(after.split(" | "))


def _headless_rows(lines: list[str], start: int) -> dict[int, list[str]]:
    """The rows an excerpt begins with when its table's header is in another chunk (a
    table cut by the chunker, its rows left spaced by ingestion): ({line index: cells}),
    two lines or more read as rows from ``start`` on — after one line that is not, a page's
    running header above a table going on — as wide as most of them; a row of more words
    is fitted (``_row_cells``), and the first that fits no cell ends them. The first of
    them stands where the header would: the reader takes the header of its document's
    excerpt that ends with a table as wide."""
    run: dict[int, list[str]] = {}
    for at in range(start, len(lines)):
        line, words = lines[at], _words(lines[at])
        if not line and len(run) <= 1:
            run = {}  # a line set apart above the rows
            continue
        if at == start and not _row_words(line, words) and _header_words(line) is None:
            continue  # one line above the rows, neither a row nor a header
        if " | " in line or not _row_words(line, words):
            break
        run[at] = words
    if len(run) < 2:
        return {}
    counts = [len(words) for words in run.values()]
    width = max(sorted(set(counts)), key=counts.count)
    exact = [words for words in run.values() if len(words) == width]
    found: dict[int, list[str]] = {}
    for at, words in run.items():
        cells = _row_cells(words, exact, width)
        if cells is None and not found:
            continue  # (a running header read as a row: 澜州银行… 2026 年半年度报告摘要)
        if cells is None:
            break
        found[at] = cells
    return found if len(found) >= 2 else {}


def line_cells(lines: list[str]) -> tuple[list[list[str] | None], set[int]]:
    """Each line's table cells, or None: the rows ingestion writes (a | b | c), and a PDF
    table's lines pypdf gives with spaces (``_spaced_table``) — rows right after a table's
    lines that ingestion left spaced (``_continued_row``), and the rows an excerpt begins
    with, its table's header in another chunk (``_headless_rows``), too. A line that goes
    on a row's label (a label wrapped over two lines) has no cells of its own: []. And the
    lines a spaced table's reading found to be headers."""
    out: list[list[str] | None] = [None] * len(lines)
    headers: set[int] = set()
    width = 0  # the current table's width: its first line's cells
    rows: list[list[str]] = []  # the current table's rows, as wide
    headless = _headless_rows(lines, next((i for i, line in enumerate(lines) if line), 0))
    for at, cells in headless.items():
        out[at] = cells
    i = max(headless, default=-1) + 1
    while i < len(lines):
        line = lines[i]
        if not line:
            i += 1
            continue  # ingestion sets a table's rows a blank line apart
        if " | " in line and not _labelled_values(line):
            # (a line that begins with | begins with an empty cell: | 本报告期末 | …; one
            # that ends with | ends with one: 主要财务指标 | 报告期（…） |, a title cell over
            # two columns whose second DOCX leaves empty)
            cells = [c.strip().strip("|").strip() for c in f" {line} ".split(" | ")]
            previous = next((out[j] for j in range(i - 1, -1, -1) if lines[j]), None)
            if previous is None or not width:
                width, rows = len(cells), []
            elif len(cells) == width:
                rows.append(cells)
            out[i] = cells
            i += 1
            continue
        row = _continued_row(line, width, rows) if width else None
        if row is not None:
            out[i] = row
            i += 1
            continue
        above = next((out[j] for j in range(i - 1, -1, -1) if lines[j]), None)
        if width and above and rows and above is rows[-1] and _wrapped_label(lines, i, above):
            above[0] += _cell(line)  # the row label wrapped onto a line of its own
            out[i] = []
            i += 1
            continue
        width = 0
        table, heads = _spaced_table(lines, i)
        for at, cells in table.items():
            out[at] = cells
        headers |= heads
        i = max(table, default=i) + 1
    return out, headers


def _labelled_values(line: str) -> bool:
    """A line of ``label：value`` pairs set apart by | (总股本：3.956 亿股 | 总市值：118.13
    亿元): each cell names its own figure, as a sentence's clauses do — not a table's row,
    whose cells a header names."""
    cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
    return len(cells) >= 2 and all(_LABELLED.match(c) for c in cells)


# (a label holds a word, 近 12 个月最高/最低价; not a clock's 10:30)
_LABELLED = re.compile(r"^(?=[^:：|]*[^\W\d_])[^:：|]{2,}[:：]\s*\S")


# A value cell of a PDF table: a figure, or a cell that states none (不适用, —).
NO_VALUE = ("不适用", "—", "-", "--", "/")


def _is_value(word: str) -> bool:
    return bool(re.search(r"\d", word)) or word in NO_VALUE


def _spaced_table(lines: list[str], start: int) -> tuple[dict[int, list[str]], set[int]]:
    """A PDF table as pypdf lays it out, one line a row, its cells split by spaces — as
    ingestion leaves it when a cell holds a space, so that rows have more words than the
    header has cells: ({line index: cells}, its header lines), or ({}, set()) when
    ``lines[start]`` opens no table.

    The header is a line of three labels or more (no figure, no sentence's punctuation),
    its cells merged down to its rows' width when a cell holds a space; a header cell
    wrapped onto the next line (a line of fewer labels) is completed by the word whose
    first character makes a word the document writes elsewhere with the cell's last
    (本报告期比上年同 / 期增减… → 同期). Each following line with a value after its first
    word is a row: as many words as the header has cells, or more — the extra words one
    cell, the first whose columns then hold what the rows of as many words hold there (a
    figure under a figure, a label under a label): the row label first (泊川智能 2025 年
    员工持股计划), else the last cell (质押 12,000,000); a row that fits no cell so stays
    prose (a page's footer). A line of one label alone is the rest of the row label above
    it; a line of two labels or more, a new header — over the same label column when its
    rows have one word more (本报告期末 上年度末 …)."""
    header = _header_words(lines[start])
    if header is None:
        return {}, set()
    found: dict[int, list[str]] = {start: header}
    segments: list[tuple[int, list[int]]] = [(start, [])]  # (header line, its row lines)
    words_of: dict[int, list[str]] = {}
    previous = start
    for at in range(start + 1, len(lines)):
        words = _words(lines[at])
        if not words:
            continue
        head, rows = segments[-1]
        width = len(found[head])
        if SECTION_HEADING.match(lines[at].strip()):
            break  # a section's heading ends the table
        label_only = not re.search(r"[。！？!?；;，,：:]", fold(lines[at]))
        if 2 * sum(map(_is_value, words[1:])) >= min(width, len(words)) - 1 > 0:
            # (a row: at least half its cells after the label values, and no sentence)
            # (punctuation inside a label's brackets is the label's, not a sentence's:
            # 加权平均净资产收益率（年化，%）)
            if re.search(r"[。！？；，]", _BRACKETED.sub("", lines[at])):
                break
            if not rows and head != start and len(words) == width + 1:
                found[head] = ["", *found[head]]  # a header over the same label column
            elif not rows and len(words) < width and head == start:
                fitted = _fitted_header(found[head], len(words))
                if fitted is None:
                    break
                found[head] = fitted
            elif len(words) < len(found[head]):
                break
            words_of[at] = words
            rows.append(at)
            previous = at
            continue
        spanned = _spanned_header(found[head], words) if label_only and not rows else None
        if spanned is not None and previous == start:
            found[head], found[at], previous = spanned, [], at
            continue
        if not rows and previous == start and len(words) < width and label_only:
            text = "\n".join(lines[:start] + lines[start + 1 :])  # the document elsewhere
            completed = _completed_header(found[head], words, text)
            if completed is None:
                break
            found[head], found[at], previous = completed, [], at
            continue
        if rows and previous == rows[-1] and len(words) == 1 and label_only:
            words_of[rows[-1]][0] += words[0]  # the row label wrapped
            found[at], previous = [], at
            continue
        if rows and len(words) >= 2 and label_only:
            found[at] = [_cell(w) for w in words]
            segments.append((at, []))
            previous = at
            continue
        break
    for head, rows in segments:
        width = len(found[head])
        exact = [words_of[r] for r in rows if len(words_of[r]) == width]
        for at in rows:
            cells = _row_cells(words_of[at], exact, width)
            if cells is not None:
                found[at] = cells
    if not _rows_in(found):
        return {}, set()
    return found, {head for head, _ in segments}


_BRACKETED = re.compile(r"（[^（）]*）|\([^()]*\)")


def _fitted_header(cells: list[str], width: int) -> list[str] | None:
    """A header of more cells than its rows, a cell set with a space: the shortest two
    neighbours merged until as many."""
    cells = list(cells)
    while len(cells) > width >= 2:
        at = min(range(len(cells) - 1), key=lambda i: len(cells[i]) + len(cells[i + 1]))
        cells[at : at + 2] = [cells[at] + cells[at + 1]]
    return cells if len(cells) == width else None


def _rows_in(found: dict[int, list[str]]) -> bool:
    """Whether a spaced table read has a row: a line of cells with a value."""
    return any(len(c) > 1 and any(map(_is_value, c[1:])) for c in found.values())


# A period written as a header cell: a year with its months (2026 年 1—6 月), or a year.
_PERIOD_CELL = re.compile(
    r"(?:19|20)\d{2}\s*年(?:\s*(?:1[0-2]|[1-9])\s*[—－\-–～~至]\s*(?:1[0-2]|[1-9])\s*月)?(?:末|度)?"
)


def _header_words(line: str) -> list[str] | None:
    """A line's words as a header's cells (a bracketed unit joined to the word before it),
    or None: fewer than three, a figure among them, or a sentence's punctuation."""
    if re.search(r"[。！？!?；;，,：:]", fold(line)):
        return None
    cells: list[str] = []
    # (a period is a column's name, not a figure: 2026 年 1—6 月 is one cell)
    for word in _PERIOD_CELL.sub(lambda m: re.sub(r"\s+", "", m.group(0)), line).split():
        if cells and _open_bracket(cells[-1]):
            cells[-1] += word  # a bracket is one cell to its close (本期末（2026 年 6 月 30 日）)
            continue
        if _is_value(word) and not re.search(r"[（(]", word) and not _PERIOD_CELL.fullmatch(word):
            return None
        if cells and word[0] in "（(":
            cells[-1] += word
        else:
            cells.append(word)
    return [_cell(c) for c in cells] if len(cells) >= 3 else None


def _open_bracket(text: str) -> bool:
    return text.count("（") + text.count("(") > text.count("）") + text.count(")")


def _spanned_header(header: list[str], words: list[str]) -> list[str] | None:
    """A header whose cells after the label each span columns of the line under it
    (本期末 | 上年末 over 并表 非并表 并表 非并表; ``_spans``): one header, each column named
    by its upper cell and its own (本期末并表), or None when the lower line does not divide
    so."""
    upper = header[1:]
    if len(words) <= len(upper):
        return None
    groups = _spans(words, len(upper))
    if groups is None:
        return None
    return [header[0], *(f"{upper[g]}{_cell(w)}" for g, group in enumerate(groups) for w in group)]


def _spans(words: list[str], count: int) -> list[list[str]] | None:
    """The lower line's labels cut into ``count`` spans, one under each upper cell: as many
    each when they divide evenly; else each span begins where the labels start over, at
    the first one again (金额 占比 增减 | 金额 占比 under 本期末 | 上年末). None otherwise."""
    if len(words) % count == 0:
        span = len(words) // count
        return [words[i : i + span] for i in range(0, len(words), span)]
    starts = [i for i, word in enumerate(words) if word == words[0]]
    if len(starts) != count:
        return None
    return [words[a:b] for a, b in zip(starts, [*starts[1:], len(words)], strict=True)]


def _completed_header(header: list[str], words: list[str], text: str) -> list[str] | None:
    """The header with each word of its wrapped line joined to the cell it completes, in
    order: the first cell whose last character and the word's first make a word ``text``
    writes. None when a word completes none."""
    cells = list(header)
    at = 1
    for word in words:
        while at < len(cells) and cells[at][-1:] + word[:1] not in text:
            at += 1
        if at == len(cells):
            return _completing_the_last(header, words)
        cells[at] += _cell(word)
        at += 1
    return cells


# How a header's last cell ends: with a unit in brackets or a percent, or with the words of
# an unsigned change or its rate (本期比上年同期增减, 变动幅度, 涨跌幅) — not a direction,
# which a row's own words may end with too.
_HEADER_END = re.compile(r"[%％)）]$|" + words(UNSIGNED_CHANGE, RATE_OF_CHANGE) + "$")


def _completing_the_last(header: list[str], words: list[str]) -> list[str] | None:
    """With no word the document writes elsewhere, a wrapped line completes the header's
    last cells, in order — a header wraps its widest, last columns (本期比上年同 / 期增减(%))
    — when its words end as a unit or a change does (%, 增减, 幅度); else None."""
    if len(words) >= len(header) or not _HEADER_END.search(words[-1]):
        return None
    cells = list(header)
    for offset, word in enumerate(words):
        cells[len(cells) - len(words) + offset] += _cell(word)
    return cells


def _row_cells(words: list[str], rows: list[list[str]], width: int) -> list[str] | None:
    """A row's words as ``width`` cells: as they are when as many, else the extra words
    one cell — the label, else the last — where every column then holds what the table's
    rows hold there; else, beside rows to compare with, the label's and the last cell's
    (泊川智能 2025 年员工持股计划 … 质押 1,000,000). None when no cells do."""
    if len(words) == width:
        return [_cell(words[0]), *words[1:]]
    if len(words) < width:
        return None
    extra = len(words) - width
    kinds = _kinds(rows, width)
    # with no row of as many words to compare with, the label is the cell set with spaces
    # — unless that puts a figure in it: then the last (不良贷款率 1.04 1.07 下降 0.03 个百分点)
    for at in (0, width - 1, *range(width - 2, 0, -1)) if rows else (0, width - 1):
        cells = [*words[:at], " ".join(words[at : at + extra + 1]), *words[at + extra + 1 :]]
        if not rows and any(map(_is_figure, cells[0].split())):
            continue
        if _fits(cells, kinds):
            return [_cell(cells[0]), *cells[1:]]
    for taken in range(1, extra if rows else 0):  # the label takes ``taken`` extra words
        last = len(words) - (extra - taken) - 1
        cells = [" ".join(words[: taken + 1]), *words[taken + 1 : last], " ".join(words[last:])]
        if _fits(cells, kinds):
            return [_cell(cells[0]), *cells[1:]]
    return None


def _kinds(rows: list[list[str]], width: int) -> list[set[bool]]:
    """What each column of a table's rows holds: figures ({True}), words ({False}), both."""
    return [{_is_figure(r[k]) for r in rows if len(r) == width and r[k]} for k in range(width)]


def _fits(cells: list[str], kinds: list[set[bool]]) -> bool:
    """Whether each cell is what its column holds (a figure under figures)."""
    return all(
        len(kind) != 1 or _is_figure(c) in kind for c, kind in zip(cells, kinds, strict=True)
    )


def _is_figure(cell: str) -> bool:
    return bool(_FIGURE_CELL.match(cell) or _CHANGE_CELL.match(cell)) or cell in NO_VALUE


# A change column's cell written in words beside its signed figures (下降 0.44 个百分点 under
# 本期比上年同期增减(%), beside 3.95): a figure of that column, as a report's rows of ratios
# print their changes.
_CHANGE_CELL = re.compile(rf"^{words(RISE, FALL)}\s*\d[\d,]*(?:\.\d+)?\s*(?:个百分点|[%％])?$")


def is_data_row(cells: list[str]) -> bool:
    """A table line whose cells after the first are mostly quantities (a bare year, 2025,
    names a column): a row, not a header."""
    valued = [
        c
        for c in cells[1:]
        if (found := figures_in(c)) and not found[0].date and not _YEAR_CELL.match(c.strip())
    ]
    return len(cells) >= 3 and 2 * len(valued) >= len(cells) - 1


_YEAR_CELL = re.compile(r"^(?:19|20)\d{2}$")


def caption_row(cells: list[str]) -> str:
    """The text of a table's first line that is its title, not its header: one text in
    every cell (a merged cell, as DOCX repeats it) or in one cell alone — else ""."""
    written = {c for c in cells if c}
    return next(iter(written)) if len(written) == 1 and len(cells) >= 2 else ""
