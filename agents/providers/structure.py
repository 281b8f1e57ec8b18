"""Reading excerpts as structure, without a model (the extractive provider's toolkit).

Pure functions, no database. An excerpt is cut into *units* at its real boundaries:
headings (never glued to the text after them), list items (a lead-in line and its items
stay together, whatever their markers: 1. / （一） / ① / 首先，… / items joined by ；),
tables as ingestion writes them (``a | b | c`` rows under their header), sentences (at
。！？) and, inside a sentence, clauses (at ；). Questions are read in
``agents.providers.reading``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from agents.providers.grammar import (
    AGAINST_LAST_YEAR,
    FALL,
    FALL_COLLOQUIAL,
    ON_EARLIER,
    RATE_OF_CHANGE,
    RISE,
    RISE_COLLOQUIAL,
    UNSIGNED_CHANGE,
    words,
    words_re,
)
from agents.providers.reading import cn_number, coverage, fold, is_han
from agents.providers.table_lines import caption_row, is_data_row, line_cells
from knowledge.figures import BASE_UNITS
from knowledge.periods import periods_in
from knowledge.text import SECTION_HEADING

_HEADING = SECTION_HEADING
_ITEM = re.compile(r"^\s*(?:\d+(?:[、)）]|\.(?!\d))|[（(]\d+[)）]|[①-⑳]|[-•·*●○■□▪◆◇►▶])\s*")
# The marker a line begins with, by kind: an item of a list is marked like its neighbours.
# 一、 and （一） also number a report's sections: such a line is an item only when a
# lead-in (…如下：) or an item of its kind stands before it, or one of its kind follows.
_MARKER = re.compile(
    r"^\s*(?:(?P<num>\d{1,4})(?:[、)）]|\.(?!\d))|[（(](?P<pnum>\d{1,3})[)）]"
    r"|(?P<cn>[一二三四五六七八九十]{1,3})、|[（(](?P<pcn>[一二三四五六七八九十]{1,3})[)）]"
    r"|(?P<circled>[①-⑳])|(?P<bullet>[-•·*●○■□▪◆◇►▶])"
    # ordinals written as words, before a comma or a colon: 首先，… 其次，… 最后，…; 第一，…
    r"|(?P<word>(?:第[一二三四五六七八九十]{1,3}|首先|其次|再次|其[一二三四五六]|最后)(?=\s*[，,、：:])))"
)
# Markers that also begin other lines (a report's sections 一、, a sentence's 首先，): an
# item only beside a lead-in or an item of its kind.
_SECTION_MARKERS = ("cn", "pcn", "word")
# The ordinal of a word marker: 首先 1, 其次 2, 再次 3, 最后 after any (0).
_WORD_ORDINALS = {"首先": 1, "其次": 2, "再次": 3, "最后": 0}
# An enumeration written inline: 一、…；二、…, （一）…（二）…, ①…②…, 1. … 2. …, (1)…(2)…,
# each marker at the start of the line or after a punctuation mark or space.
_INLINE_MARKER = re.compile(
    r"(?:(?:^|(?<=[：:；;。，,\s]))"
    r"(?:(?P<cn>[一二三四五六七八九十]{1,3}、)|(?P<num>\d{1,2}(?:[、)）]|\.(?!\d))))"
    # a bracketed or circled number marks itself: it needs no punctuation before it
    r"|(?P<paren>[（(](?:[一二三四五六七八九十]{1,3}|\d{1,2})[)）])|(?P<circled>[①-⑳])"
    r"|(?:^|(?<=[：:；;。，,\s]))"
    r"(?P<word>(?:第[一二三四五六七八九十]{1,3}|首先|其次|再次|其[一二三四五六]|最后)(?=\s*[，,、：:])))"
)
_SENTENCE = re.compile(r"[^。！？!?]+[。！？!?]*")


@dataclass
class Unit:
    """A piece of an excerpt cut at a real boundary."""

    text: str
    kind: str  # "sentence" | "list" | "heading" | "header" / "row" (a table's, cells in clauses)
    heading: str = ""
    clauses: list[str] = field(default_factory=list)
    # A row whose header another excerpt of its document holds (a table split across two
    # chunks): that excerpt's citation id.
    header_from: str = ""
    # A row's header as written when it is not ``heading`` (a two-line header).
    header_text: str = ""
    # A borrowed header's caption (青屿价值精选混合 A): what the rows of its table are.
    caption: str = ""


def is_item(line: str) -> bool:
    """A list item line (1. …, （1）…, - …)."""
    return bool(_ITEM.match(line))


def without_markers(text: str) -> str:
    """``text`` with the list marker each line begins with left out (2. 创新药… → 创新药…):
    an item's number counts nothing."""
    return "\n".join(_ITEM.sub("", line, count=1) for line in text.split("\n"))


def is_section_heading(line: str) -> bool:
    """A numbered section heading (第三节 …, 二、…, §2 …, # …), not a table's caption."""
    return bool(_HEADING.match(line))


# A section's number by its place in a chapter (4.3 报告期内…预警说明): a heading here, and
# a figure that counts nothing to the reader (selection.quantities_in).
SECTION_NUMBER = r"\d{1,2}(?:\.\d{1,2}){1,3}"
_DECIMAL_SECTION = re.compile(rf"^{SECTION_NUMBER}\s*(?=[^\W\d_])")


def _is_heading(line: str) -> bool:
    if _HEADING.match(line):
        return len(line) <= 40 and "。" not in line
    if _DECIMAL_SECTION.match(line):
        # (a heading is never an answer of its own: the paragraph under it is)
        return len(line) <= 40 and not re.search(r"[。；，：:,;！？!?|]", line)
    return len(line) <= 24 and not re.search(r"[。；，：:,;！？!?]", line)


def inline_items(line: str) -> tuple[str, list[str]] | None:
    """(lead-in, items) of a line that enumerates inline — two or more markers of one kind
    (一、 二、, ① ②, 1. 2., （1）（2）) — or a lead-in ending with a colon followed by two
    or more items joined by ；. None for any other line."""
    marks = list(_INLINE_MARKER.finditer(line))
    if marks:
        kind = marks[0].lastgroup
        marks = [m for m in marks if m.lastgroup == kind]
    if len(marks) >= 2:
        lead = line[: marks[0].start()].strip()
        bounds = [m.start() for m in marks] + [len(line)]
        items = [
            line[a:b].strip().rstrip("；;，,") for a, b in zip(bounds, bounds[1:], strict=False)
        ]
        return lead, [i for i in items if i]
    colon = max(line.find("："), line.find(":"))
    if colon > 0:
        # a sentence's end inside the enumeration ends an item too (…同比增长 21.77%。其中 Q3
        # 单季实现营收…: two sentences, never one item)
        parts = [p.strip().rstrip("。") for p in re.split(r"[；;]|(?<=。)", line[colon + 1 :])]
        parts = [p for p in parts if p]
        if len(parts) >= 2:
            return line[: colon + 1].strip(), parts
    return None


# A line ending in a clause mark has not ended its sentence (a PDF's text sets a
# paragraph in lines): the next line continues it.
_CONTINUED = ("，", "、", "；", ",", ";")


def marker(line: str) -> tuple[str, int] | None:
    """(kind, ordinal) of the list marker ``line`` begins with — ``num`` 1. 1、 1), ``pnum``
    (1), ``cn`` 一、, ``pcn`` （一）, ``circled`` ①, ``bullet`` - • ● (ordinal 0) — or None."""
    match = _MARKER.match(line) or _MARKER.match(fold(line))  # ① folds to 1
    if match is None:
        return None
    kind = match.lastgroup or "bullet"
    value = match.group(kind)
    if kind in ("num", "pnum"):
        return kind, int(value)
    if kind == "word":
        if value in _WORD_ORDINALS:
            return kind, _WORD_ORDINALS[value]
        return kind, cn_number(value.lstrip("第其"))
    if kind in _SECTION_MARKERS:
        return kind, cn_number(value)
    if kind == "circled":
        return kind, ord(value) - ord("①") + 1
    return kind, 0


def _starts_item(line: str) -> bool:
    return bool(_ITEM.match(line)) or (marker(line) or ("", 0))[0] in _SECTION_MARKERS


# A page's text width holds at least this many characters: a shorter line that ends with no
# punctuation mark is a title (1、汇率风险), not a line the layout broke.
_MIN_TEXT_WIDTH = 20


def _joined_lines(content: str) -> list[str]:
    """The excerpt's lines, a sentence set over several lines joined back into one: a line
    ending in ，、； goes on in the next line unless that one is blank, a table row, a list
    item or a numbered heading — a list item's own line included (1. 燃油价格波动，/ 推高成本；).
    A list item broken where no punctuation mark stands (…可能推高 / 生产成本。) goes on too
    when its line fills the text's width — as long as the excerpt's longest line, at least
    _MIN_TEXT_WIDTH characters: the layout broke it, a title (1、汇率风险) is shorter."""
    raws = [raw.strip() for raw in content.split("\n")]
    width = max((len(r) for r in raws if " | " not in r), default=0)
    prose_width = max((len(r) for r in raws if " | " not in r and not _LAYOUT.search(r)), default=0)
    lines: list[str] = []
    carry = False
    in_item = False
    for at, line in enumerate(raws):
        if _lone_marker(line) and not _numbers_next(line, raws[at + 1 : at + 2]):
            continue  # a number standing alone (一、) numbers no text: no heading, no item
        starts_anew = not line or " | " in line or _starts_item(line) or bool(_HEADING.match(line))
        # …（1）A；/（2）B；（3）C: one enumeration over two lines
        starts_anew = starts_anew and not (carry and line and _goes_on_inline(lines[-1], line))
        if carry and not starts_anew:
            lines[-1] += line
        else:
            lines.append(line)
            in_item = bool(line) and _starts_item(line)
        folded = fold(lines[-1])
        carry = bool(line) and " | " not in line and folded.endswith(tuple(map(fold, _CONTINUED)))
        # (a sentence cannot end with a modifier's 的: …交易均价的 / 80%。 is one sentence)
        carry = carry or (bool(line) and " | " not in line and folded.endswith("的"))
        full = len(line) >= max(_MIN_TEXT_WIDTH, 0.9 * width)
        if in_item and full and not re.search(r"[。！？!?；;，,、：:.）)]$", folded):
            carry = True
        # A sentence of prose the layout broke mid-phrase (…实业集团有限公司的持股比例 /
        # 为 31.73%，…): a line of sentences, as wide as the text's widest line of prose, that
        # ends with a word's character, no punctuation mark, goes on in the next.
        prose = len(line) >= max(_MIN_TEXT_WIDTH, 0.9 * prose_width)
        # (figures set apart by a space, 11.86 12.20 下降 0.34 个百分点, are a typeset
        # table's cells: a row, no prose, whatever comma its label holds)
        cells = _SPACED_FIGURES.search(line) is not None
        if prose and _SAID.search(line) and is_han(folded[-1:]) and not _LAYOUT.search(line):
            carry = carry or not cells
    return lines


# A line of sentences (a clause's or a sentence's mark inside it), and a layout's spaces
# (a running header, a spaced table's row): no prose.
_SAID = re.compile(r"[，。；,;]")
_SPACED_FIGURES = re.compile(r"\d[%％]?\s+[-+]?\d")
_LAYOUT = re.compile(r"\S\s{2,}\S")


def _lone_marker(line: str) -> bool:
    """A line that is a list or section marker and nothing else (一、, （二）, 3.)."""
    match = _MARKER.match(fold(line))
    return match is not None and not fold(line)[match.end() :].strip()


def _numbers_next(marker_line: str, following: list[str]) -> bool:
    """Whether a lone marker ending in 、 (1、) numbers the text on the line after it, a
    layout's break (1、 / 汇率风险…): that line is read on from it, unless it is blank, a
    table row, an item or a heading of its own."""
    nxt = following[0] if following else ""
    if not nxt or not fold(marker_line).endswith(tuple(map(fold, _CONTINUED))):
        return False
    return not (" | " in nxt or _starts_item(nxt) or _HEADING.match(nxt))


def _goes_on_inline(before: str, line: str) -> bool:
    """Whether ``line`` begins with the next marker of an enumeration written inline in
    ``before`` — a bracketed or circled number, which marks itself: （2） after …（1）…；."""
    mark = marker(line)
    if mark is None or mark[0] not in ("pnum", "pcn", "circled") or not 2 <= mark[1] <= 10:
        return False
    previous = {
        "pnum": rf"[（(]{mark[1] - 1}[)）]",
        "pcn": rf"[（(]{_CN_NUMERALS[mark[1] - 1]}[)）]",
        "circled": chr(ord("①") + mark[1] - 2),
    }[mark[0]]
    # (an enumeration begun inside a line: items one a line each have a line of their own)
    return bool(re.search(previous, before)) and not _starts_item(before)


_CN_NUMERALS = ["", *"一二三四五六七八九十"]


def _item_lines(lines: list[str]) -> list[bool]:
    """Which lines are list items: a line marked 1. / (1) / ① / • always; one marked 一、 or
    （一） — how reports number sections too — when the line before it (blanks skipped) is a
    lead-in ending with a colon or an item of its kind, or the line after it is one of its
    kind. 一、冷链网络 followed by its text stays a heading."""
    marks = [marker(line) if line else None for line in lines]
    shown = [i for i, line in enumerate(lines) if line]
    items = [False] * len(lines)
    for at, i in enumerate(shown):
        mark = marks[i]
        if mark is None:
            continue
        if mark[0] not in _SECTION_MARKERS:
            items[i] = bool(_ITEM.match(lines[i]))
            continue
        before = shown[at - 1] if at > 0 else None
        after = shown[at + 1] if at + 1 < len(shown) else None
        led = before is not None and (
            fold(lines[before]).endswith(":") or (items[before] and _same_kind(marks[before], mark))
        )
        followed = after is not None and _same_kind(marks[after], mark)
        items[i] = led or followed
    return items


# A page's furniture: its number (第 2 页 共 4 页, — 12 —) or a running header set apart by
# a layout's spaces.
_PAGE_FURNITURE = re.compile(r"第\s*\d+\s*页|^[\W\d_]*$|\S\s{2,}\S")

# A line that is only a form's furniture, no heading and no text of its own: a page's
# number standing alone (第 2 页 共 5 页), or a filing's tick boxes answering the heading
# above them (√适用 □不适用, □是 √否) — the heading goes on over the text after it.
_FORM_LINE = re.compile(
    r"^(?:第\s*\d+\s*页(?:\s*[,，]?\s*共\s*\d+\s*页)?"
    r"|(?:[√□☑☐✓✔■]\s*[^\s√□☑☐✓✔■]{1,4}\s*)+)$"
)


def _names_another_table(unit: Unit) -> bool:
    """Whether ``unit``, right before a table's header written again, is the caption of
    another table of the same columns (青屿价值精选混合 A's table, then 青屿价值精选混合 C
    over the same header) — not a page's furniture between two parts of one table."""
    text = unit.text.strip()
    return (
        unit.kind == "heading"
        and is_caption(text)
        and sum(map(is_han, text)) >= 2
        and not _PAGE_FURNITURE.search(text)
    )


def is_caption(text: str) -> bool:
    """A line that names what follows it (a table's or a list's title): it ends with no
    punctuation mark, as a sentence or a clause does."""
    return bool(text) and not re.search(r"[。！？!?；;，,、.]$", fold(text).rstrip())


def _same_kind(one: tuple[str, int] | None, other: tuple[str, int] | None) -> bool:
    return one is not None and other is not None and one[0] == other[0]


def units(content: str) -> list[Unit]:
    """The excerpt as headings, lists (lead-in plus items) and sentences, in order. Items
    of one list are kept together even when text stands between them: item n joins the
    list whose last item is n − 1 of the same kind (1、风险一 / its paragraph / 2、风险二),
    unless a heading came in between."""
    out: list[Unit] = []
    heading = ""
    # The heading in force before the latest heading line, and — while a table's rows go
    # on under its caption — (caption, that heading): a caption heads its rows only.
    before = ""
    captioned: tuple[str, str] | None = None
    header: list[str] = []  # the current table's header row (ingestion writes a | b | c)
    lines = _joined_lines(content)
    item_lines = _item_lines(lines)
    table_cells, spaced_headers = line_cells(lines)
    header_lines: list[list[str]] = []  # the current header as written (one or two lines)
    named_at = 0  # the column that names the rows when the first numbers them (序号)
    last_item: dict[int, tuple[str, int]] = {}  # a list unit's id → its last item's marker
    # The latest item line's list and marker, and a nested list's outer list (by id).
    latest: tuple[Unit, tuple[str, int]] | None = None
    outer: dict[int, Unit] = {}
    for at, (line, is_item_line, cells) in enumerate(
        zip(lines, item_lines, table_cells, strict=True)
    ):
        if not line or (cells is None and _FORM_LINE.match(line)):
            continue
        if not is_item_line:
            latest = None
        if cells is None and captioned and out and out[-1].kind in ("row", "header"):
            # the table has ended: the text after it is the section's, not its caption's
            if heading == captioned[0]:
                heading = captioned[1]
            captioned = None
        if cells == []:
            # the rest of a row label wrapped over two lines, read and quoted with its row
            if out and out[-1].kind == "row":
                out[-1].text += "\n" + line
            continue
        if cells is not None:
            starts = not header or (out and out[-1].kind not in ("row", "header"))
            starts = starts or at in spaced_headers
            if cells in header_lines and not (out and _names_another_table(out[-1])):
                continue  # the header again, after a page break: no row
            caption = caption_row(cells) if starts else ""
            if caption:
                # A title row above the header (a merged cell): the table's caption.
                captioned = (caption, heading)
                heading = caption
                out.append(Unit(caption, "heading", heading))
                continue
            if starts and not (
                # rows going on after a page's footer, under the header they had
                header and len(cells) == len(header) and is_data_row(cells)
            ):
                named_at = named_column(cells)
                header = label_first(cells, named_at)
                header_lines = [cells]
                if captioned is None and _captions_table(out, heading):
                    captioned = (heading, before)
                out.append(Unit(line, "header", _table_caption(out, heading), header))
            elif out[-1].kind == "header" and _second_header(cells, header):
                # A two-line header (本报告期 / 金额 | 同比): each column is named by both
                # lines, a merged or empty upper cell by the one before it (a DOCX cell
                # merged across columns repeats its text in each: 本期末 | 本期末).
                header = _merged_header(header, cells)
                header_lines.append(cells)
                out[-1].text += "\n" + line
                out[-1].clauses = header
            elif not cells[0] and not any(re.search(r"\d", c) for c in cells):
                # a header over the same label column, inside the table (| 本报告期末 | …)
                header, named_at = cells, 0
                header_lines = [cells]
                out.append(Unit(line, "header", heading, cells))
            else:
                headed = out[-1].text if out[-1].kind == "header" else ""
                lines_of = headed or next(
                    (u.header_text for u in reversed(out) if u.kind == "row"), ""
                )
                if named_at and len(cells) == len(header) and _SEQUENCE.match(cells[0]):
                    cells = label_first(cells, named_at)
                    lines_of = lines_of or " | ".join(header_lines[0])
                out.append(Unit(line, "row", " | ".join(header), cells, header_text=lines_of))
            continue
        if line.startswith("**") and _HEADING.match(line):
            # a line of nothing but a bold phrase (**风险提示**：) heads what follows: no
            # bullet (its *), no lead-in of a list of its own (its colon)
            latest = None
            before, heading = heading, line
            out.append(Unit(line, "heading", heading))
            continue
        inline = inline_items(line)
        if is_item_line and inline is None:
            mark = marker(line) or ("bullet", 0)
            nested = _nested_in(latest, mark)
            if nested is not None:
                # A list inside an item (1. 市场风险 / （1）… （2）…): the item leads it in,
                # and its lines are the outer lists' too.
                lead = nested.clauses[-1] if nested.clauses else nested.text
                target = Unit(f"{lead}\n{line}", "list", heading, [line])
                out.append(target)
                outer[id(target)] = nested
                _into_outer(nested, line, outer)
            else:
                found = _list_for(out, mark, last_item)
                if found is not None:
                    if last_item.get(id(found)) == (mark[0], mark[1] - 1):
                        _into_outer(outer.get(id(found)), line, outer)
                    found.text += "\n" + line
                    found.clauses.append(line)
                    target = found
                else:
                    target = Unit(line, "list", heading, [line])
                    out.append(target)
            last_item[id(target)] = mark
            latest = (target, mark)
            continue
        latest = None
        if inline is not None:
            lead, items = inline
            # A lead-in that is a heading (第四节 风险提示。) heads the list, never an answer.
            head = lead.rstrip("。.：: ")
            if head and _HEADING.match(head) and _is_heading(head):
                before, heading = heading, head
                out.append(Unit(head, "heading", heading))
            text = "\n".join([lead.rstrip("。."), *items] if lead else items)
            out.append(Unit(text, "list", heading, items))
            continue
        if _is_heading(line):
            before, heading = heading, line
            out.append(Unit(line, "heading", heading))
            continue
        sentences = [s.strip() for s in _SENTENCE.findall(line) if s.strip()]
        for sentence in sentences:
            clauses = [c for c in re.split(r"(?<=；)", sentence) if c.strip()]
            out.append(Unit(sentence, "sentence", heading, clauses))
        # A lead-in ending with a colon takes the items that follow.
        if out and out[-1].kind == "sentence" and line.endswith(("：", ":")):
            out[-1].kind = "list"
            out[-1].clauses = []
    return out


# A line that states a table's unit or currency (单位：股, 币种：人民币): no caption.
_UNIT_LINE = re.compile(r"^\s*(?:金额)?(?:单位|币种)\s*[:：]")


def _captions_table(out: list[Unit], heading: str) -> bool:
    """Whether ``heading``, the line right before a table's header (or before the line
    stating its unit), is the table's caption (表 3 各业务收入及毛利率) rather than a
    numbered section (（二）资产质量, 5.1 报告期末基金资产组合情况): a caption names the rows
    under it, never the prose written after the table — 储能变流器业务…收入同比增长 18.5%
    under 表 3 各业务收入及毛利率 states no 毛利率."""
    if out and out[-1].kind == "sentence" and _UNIT_LINE.match(out[-1].text):
        out = out[:-1]
    return bool(
        out
        and out[-1].kind == "heading"
        and out[-1].text == heading
        and not is_section_heading(heading)
        and not _DECIMAL_SECTION.match(heading)
    )


def _table_caption(out: list[Unit], heading: str) -> str:
    """What a table's rows are: a caption right before it (前 10 名股东持股情况, no closing
    punctuation), else the heading — with the line stating its unit (单位：股) after it,
    which states the figures' unit but does not name the rows."""
    unit = ""
    if out and out[-1].kind == "sentence" and _UNIT_LINE.match(out[-1].text):
        out, unit = out[:-1], out[-1].text
    titled = out and out[-1].kind == "sentence" and is_caption(out[-1].text)
    caption = out[-1].text if titled else heading
    if out and out[-1].kind in ("sentence", "list") and not titled:
        # A lead-in ending with a colon (…，各年度业绩考核目标如下：, read as a list's while
        # no item follows) names the rows of the table it introduces by its last clause.
        lead_in = _LEAD_IN.search(fold(out[-1].text).rstrip())
        caption = "\n".join(filter(None, [lead_in and lead_in["clause"], heading]))
    return "\n".join(filter(None, [caption, unit]))


_LEAD_IN = re.compile(r"(?P<clause>[^。！？!?；;，,：:]+)[：:]$")


def _into_outer(unit: Unit | None, line: str, outer: dict[int, Unit]) -> None:
    """Add an inner list's ``line`` to ``unit`` and every list it is itself inside of."""
    while unit is not None:
        unit.text += "\n" + line
        unit = outer.get(id(unit))


def _nested_in(latest: tuple[Unit, tuple[str, int]] | None, mark: tuple[str, int]) -> Unit | None:
    """The list an item marked ``mark`` opens a list inside of: its first item (1, （1）, ①)
    right after an item of another kind — the outer list — else None."""
    if latest is None or mark[1] != 1:
        return None
    unit, previous = latest
    if previous[0] == mark[0] or previous[0] == "bullet" or mark[0] == "bullet":
        return None
    return unit


def _second_header(cells: list[str], header: list[str]) -> bool:
    """A table line right after the header, as wide, with no number in any cell but the
    first: the header's second line."""
    return len(cells) == len(header) and not any(re.search(r"\d", c) for c in cells[1:])


def _merged_header(top: list[str], bottom: list[str]) -> list[str]:
    merged, above = [], ""
    for upper, lower in zip(top, bottom, strict=True):
        above = upper or above
        merged.append(f"{above}{lower}" if lower and lower != above else above or lower)
    return merged


def _list_for(
    out: list[Unit], mark: tuple[str, int], last_item: dict[int, tuple[str, int]]
) -> Unit | None:
    """The list an item marked ``mark`` continues: the unit just before it when that is a
    lead-in or a list of its kind, else the latest list of its kind whose last item is the
    one before this (n − 1), with no heading since; None to start a new list."""
    if out and out[-1].kind == "sentence" and not mark[1] > 1 and is_caption(out[-1].text):
        # A caption (前五名股票投资明细) stands before its list as its lead-in.
        out[-1].kind = "list"
        out[-1].clauses = []
        return out[-1]
    if out and out[-1].kind == "list":
        previous = last_item.get(id(out[-1]))
        if previous is None and not out[-1].clauses:
            return out[-1]  # a lead-in (…如下：)
        if previous is not None and previous[0] == mark[0]:
            return out[-1]
    if mark[1] < 2:
        return None
    for unit in reversed(out):
        if unit.kind == "heading":
            return None
        previous = last_item.get(id(unit))
        if previous is not None and previous == (mark[0], mark[1] - 1):
            return unit
    return None


# A header cell made of references to other columns by their markers (①－③, ②-④: a fund
# report's excess over its benchmark), and a column's marker after its name (份额净值增长率①).
_REFERENCES = re.compile(r"\s*[①-⑳](?:\s*[－+＋×÷/\-]\s*[①-⑳])+\s*")
_MINUS = frozenset("－-")
_MARKED = re.compile(r"([①-⑳])\s*$")


def header_cells(heading: str) -> list[str]:
    """A table's header cells as read: a cell of references to other columns by their
    markers (①－③ over 份额净值增长率① … 业绩比较基准收益率③) is read with what those
    columns name, joined as it joins them (①－③ 份额净值增长率－业绩比较基准收益率): the
    fund's growth less its benchmark's. Quoted as written, elsewhere."""
    cells = heading.split(" | ")
    named = {
        m.group(1): _MARKED.sub("", c).strip()
        for c in cells
        if (m := _MARKED.search(c)) and not _REFERENCES.fullmatch(c)
    }

    def read(cell: str) -> str:
        references = re.findall("[①-⑳]", cell)
        if not _REFERENCES.fullmatch(cell) or not all(r in named for r in references):
            return cell
        return f"{cell} " + re.sub("[①-⑳]", lambda m: named[m.group(0)], cell.strip())

    return [read(c) for c in cells]


def row_cell(row: Unit, phrases: list[str] | tuple[str, ...]) -> int:
    """The column of a table ``row`` (its header in ``row.heading``) the phrases ask for:
    the header cell stating most of them, never the row label; -1 when none does. Of
    two cells stating as much, one holding a figure (持股数量 142,416,000, not 股东性质
    境内非国有法人 for 多少股), then the one writing the fewest words the question does not
    (并表 asks 本期末并表, not 本期末非并表: a header cell is matched as a whole term)."""
    header = header_cells(row.heading)
    if 1 < len(row.clauses) < len(header):
        # A row with fewer cells than its header: which column lost its cell is unknown,
        # so no cell is read as a column's by its place (溪口银行 | 1.52% under 公司 |
        # 拨备覆盖率 | 净息差 states no 拨备覆盖率).
        return -1
    label = fold(row.clauses[0]) if row.clauses else ""
    best, best_key = -1, (0.0, 0)
    # (a change asked — 手续费及佣金净收入涨了多少 — is the change column's, never a level's)
    changes = change_columns(row) if asks_change(row, phrases) else []
    for index, cell in enumerate(header[1 : len(row.clauses)], start=1):
        if changes and index not in changes:
            continue
        score = sum(_states_column(p, cell, label) for p in phrases)
        if score and re.search(r"\d", row.clauses[index]):
            score += 0.001
        if any(re.search(rf"[（(][^）)]*{re.escape(p)}[^）)]*[）)]", cell) for p in phrases if p):
            score += 0.002  # the unit asked, as a column writes it (数量（股）, not 股票代码)
        key = (score, -_unstated(fold(cell), phrases))
        if score and (best < 0 or key > best_key):
            best, best_key = index, key
    return best


# A phrase asking its thing's change: the question glued a direction or a change to it
# (手续费及佣金净收入涨了多少, 营业收入增长多少, 同比变化) — at its end, where a lone 升 / 降
# is a move too. Not a rate's noun (净利润增长率, 增速): a table may hold that as a row or a
# column of its own, which the phrase's words find.
_CHANGE_ASKED = words_re(RISE, FALL, UNSIGNED_CHANGE, RISE_COLLOQUIAL, FALL_COLLOQUIAL, suffix="$")
# A header cell of a change: 本期比上年同期增减(%), 同比, 变动, 涨跌幅, 增长率. Wider than a
# phrase asking one: a header names its change by the rate's noun (增速, 幅度) or by the
# period it is on (同比, 比上年) as often as by a direction, and often unsigned (增减, 涨跌)
# where prose writes the direction (上涨 5.2%).
_CHANGE_COLUMN = re.compile(
    words(UNSIGNED_CHANGE, RISE, FALL, ON_EARLIER, RATE_OF_CHANGE) + "|" + AGAINST_LAST_YEAR
)


# A name's unit in brackets at its end (营业收入（百万元）), with the spaces around it.
_UNIT_AFTER = re.compile(r"^\s+|\s*(?:[（(][^（）()]*[）)])?\s*$")


def without_unit(name: str) -> str:
    """A row label or a header cell without its unit in brackets (营业收入（百万元） →
    营业收入): the thing it names."""
    return _UNIT_AFTER.sub("", name)


def cells_asked(row: Unit, phrases: list[str] | tuple[str, ...]) -> list[int]:
    """The columns of ``row`` the phrases ask for: each column a phrase names by its whole
    header cell, its unit aside, when two or more are so named (本期末 and 上年末 over
    本期末 | 上年末 | 本期末比上年末增减(%): both cells asked, not a third writing the two
    words) — else the one ``row_cell`` reads, if any."""
    header = [without_unit(fold(c)) for c in row.heading.split(" | ")]
    named: list[int] = []
    for phrase in map(fold, phrases):
        for index, cell in enumerate(header[1 : len(row.clauses)], start=1):
            if cell and cell == phrase and index not in named:
                named.append(index)
    if len(named) >= 2:
        return named
    column = row_cell(row, phrases)
    return [column] if column > 0 else []


def asks_change(row: Unit, phrases: list[str] | tuple[str, ...]) -> bool:
    """Whether a phrase asks a change of ``row``'s item — one the row's label does not write
    as part of its own name (现金及现金等价物净增加额 is a level)."""
    label = fold(row.clauses[0]) if row.clauses else ""
    for phrase in phrases:
        match = _CHANGE_ASKED.search(fold(phrase))
        if match and match.group() not in label:
            return True
    return False


def difference_columns(row: Unit) -> list[int]:
    """The columns of ``row``'s table whose header cell is a difference of two others, by
    their marks (①－③: the fund's growth less its benchmark's), or names one (超额收益,
    差额): what a margin asked (跑赢基准多少) is read from."""
    header = row.heading.split(" | ")
    return [
        i
        for i, cell in enumerate(header[1 : len(row.clauses)], start=1)
        if _is_difference(cell) or re.search("超额|差额|差值", cell)
    ]


def _is_difference(cell: str) -> bool:
    """A header cell of references joined by minus signs only (①－③)."""
    operators = set(re.sub(r"[①-⑳\s]", "", cell))
    return bool(_REFERENCES.fullmatch(cell)) and operators <= _MINUS


def change_columns(row: Unit) -> list[int]:
    """The columns of ``row``'s table whose header cell states a change."""
    header = row.heading.split(" | ")
    return [
        i
        for i, cell in enumerate(header[1 : len(row.clauses)], start=1)
        if _CHANGE_COLUMN.search(fold(cell))
    ]


def _states_column(phrase: str, cell: str, label: str) -> float:
    """How much a header ``cell`` states of ``phrase``: its coverage, or the period it
    names (中报 is 2026 年 1—6 月, knowledge/periods.py), or — a phrase that glues the
    row's label to a column's word (澜港集团质押 over the row 澜港集团有限公司) — the
    coverage of what the label leaves of it (质押 → 质押或冻结). A measure asked (多少股)
    weighs half a thing asked, and a column whose bracket writes another unit (持股比例(%))
    does not state it."""
    folded = fold(cell)
    if phrase in BASE_UNITS:
        unit = re.search(r"[（(]([^）)]*)[）)]\s*$", folded)
        return 0.0 if unit and phrase not in unit.group(1) else 0.5 * coverage(phrase, folded)
    if phrase[-1:] in ("末", "底") and not re.search(rf"(?<![上去]){re.escape(phrase)}", folded):
        # a balance's date (年末) is not the one before it a cell writes (上年末占比)
        folded = folded.replace(phrase, "")
    rest = _beyond_label(phrase, label)
    return max(
        coverage(phrase, folded),
        coverage(rest, folded) if rest else 0.0,
        _same_period(phrase, cell),
    )


def _beyond_label(phrase: str, label: str) -> str:
    """What ``phrase`` says after its longest leading piece (two characters or more) the
    row's ``label`` writes, when two characters or more remain; else ""."""
    lead = max((k for k in range(2, len(phrase) - 1) if phrase[:k] in label), default=0)
    return phrase[lead:] if lead else ""


def _unstated(cell: str, phrases: list[str] | tuple[str, ...]) -> int:
    """How many of a header cell's characters (word characters, outside brackets) none of
    the phrases writes."""
    text = re.sub(r"[（(][^）)]*[）)]", "", cell)
    for phrase in sorted(phrases, key=len, reverse=True):
        if len(phrase) >= 2:
            text = text.replace(fold(phrase), "")
    return len(re.findall(r"\w", text))


def _same_period(phrase: str, cell: str) -> float:
    """1.0 when ``phrase`` names periods and ``cell`` names them all, else 0.0. The quarter
    alone (单季, 当季) is the reporting period's own column (本报告期, 本期: a quarterly
    report's three months), not the year to date's nor a change's."""
    if QUARTER_ALONE.fullmatch(phrase):
        folded = fold(cell).strip()
        return 1.0 if _REPORTING_PERIOD.match(folded) and not periods_in(folded) else 0.0
    asked = periods_in(phrase)
    return 1.0 if asked and asked <= periods_in(cell) else 0.0


QUARTER_ALONE = re.compile(r"单季度?|当季度?")
_REPORTING_PERIOD = re.compile(r"本(?:报告)?期(?!末)")
# What states the quarter alone: 单季, 本报告期 (a quarterly report's three months), or a
# quarter named (第三季度, Q3, 7—9 月) — 前三季度 is the year to date.
_QUARTER_STATED = re.compile(r"单季|当季|本季度|本(?:报告)?期(?!末)")
_QUARTERS = frozenset({"Q1", "Q2", "Q3", "Q4"})


def states_quarter_alone(text: str) -> bool:
    """Whether ``text`` (a unit with its heading, or a column's header) states a quarter
    alone, not the year to date a quarterly report states besides."""
    folded = fold(text)
    return bool(_QUARTER_STATED.search(folded) or periods_in(folded) & _QUARTERS)


def labels_named(labels: list[str], text: str) -> list[str]:
    """The row labels ``text`` names, each where no longer one named covers it: 一级资本充足率
    names that row, not 资本充足率's, whose label it merely contains (一级资本充足率和资本充足率
    names both)."""
    named = set()
    for label in sorted(set(labels), key=len, reverse=True):
        if len(label) >= 2 and label in text:
            named.add(label)
            text = text.replace(label, "\n")
    return [label for label in labels if label in named]


# A table's first column that numbers its rows (序号 | 股票代码 | 股票名称 | …): its rows are
# named by the column of names, not by their number.
_SEQUENCE_HEADER = re.compile(r"^(?:序号|编号|排名|No\.?)$", re.I)
_SEQUENCE = re.compile(r"^\s*\d{0,3}\s*$")
_NAME_HEADER = re.compile(r"名称|简称|项目|名字|姓名")


def named_column(header: list[str]) -> int:
    """The column that names the rows of a table numbered by its first (股票名称 after 序号),
    or 0: the first column names them."""
    if not header or not _SEQUENCE_HEADER.match(fold(header[0]).strip()):
        return 0
    return next((i for i, c in enumerate(header[1:], start=1) if _NAME_HEADER.search(c)), 0)


def label_first(cells: list[str], at: int) -> list[str]:
    """``cells`` with the naming column first (云溪半导体 | 1 | 688512 | …), as the reader
    reads a row by its label; as they are when ``at`` is 0."""
    if not at or at >= len(cells):
        return cells
    return [cells[at], *cells[:at], *cells[at + 1 :]]
