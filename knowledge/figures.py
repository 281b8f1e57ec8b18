"""Figures in text: where a declared value is written, and which chunk states a fact.

One home for the rule "this text states this value", used by ingestion (a fact is bound
to the chunk that states it), by the citation preview (what to highlight) and by the
extractive provider (which sentence carries a figure).

A value is *stated* where a number equal to it is written — compared as decimals, so
``61.2`` matches ``61.20`` and ``16.0`` matches ``16`` — followed by the fact's unit
(spaces between them allowed, full-width forms folded: ``６.２ 亿元``, ``18.4％``). A number
glued to other digits (``2061.2``, ``61.25``) is not that value.

Scales are converted, here and nowhere else (:func:`in_base_unit`): a unit is an optional
scale — 万亿 (10¹²), 亿 (10⁸), 万 (10⁴), 千 (10³) — and a base unit (元, 股, …), so
``6.2亿元`` is stated by ``62,000万元`` and by ``620,000,000元``. The base unit must be the
same (``6.2亿元`` is not ``6.2亿股``), and a percentage is never scaled.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from knowledge.text import search_tokens

# Digits with optional thousands separators and decimals; \d covers full-width digits.
_NUMBER = re.compile(r"(?<![\d.,])(\d{1,3}(?:,\d{3})+|\d+)(?:[.．](\d+))?(?![\d])")
_SPACES = " \t\u00a0\u3000"
# A unit's scale prefix, longest first (万亿 before 万 and 亿).
SCALES: dict[str, Decimal] = {
    "万亿": Decimal("1e12"),
    "亿": Decimal("1e8"),
    "万": Decimal("1e4"),
    "千": Decimal("1e3"),
}
_SCALE = re.compile("|".join(SCALES))
# What a number's unit may be (after an optional scale): a currency, a measure of
# quantity, a physical measure, or a measure word counting things. A character that is
# none of these is not a unit: "2026 年第三季度" is a date, "5 家公司" counts 家, "1. 澄湖"
# is a number with no unit. A fact may declare a unit of its own (figures_in's ``units``).
BASE_UNITS: tuple[str, ...] = (
    # currencies
    "人民币元",
    "美元",
    "港元",
    "港币",
    "欧元",
    "日元",
    "英镑",
    "元",
    # physical measures (longest first where one begins another)
    "平方公里",
    "平方千米",
    "平方米",
    "立方米",
    "千米",
    "公里",
    "米",
    "千瓦时",
    "兆瓦时",
    "吉瓦时",
    "千瓦",
    "兆瓦",
    "吉瓦",
    "瓦",
    "GWh",
    "MWh",
    "kWh",
    "GW",
    "MW",
    "kW",
    "公斤",
    "千克",
    "克",
    "吨",
    "桶",
    "公顷",
    "亩",
    "升",
    # durations (a year only where the number is not itself a year, below)
    "个月",
    "小时",
    "分钟",
    "年",
    "天",
    "周",
    # counts
    "股",
    "份",
    "人",
    "名",
    "位",
    "户",
    "家",
    "只",
    "个",
    "项",
    "条",
    "台",
    "辆",
    "艘",
    "架",
    "件",
    "套",
    "张",
    "座",
    "所",
    "间",
    "笔",
    "次",
    "款",
    "种",
    "类",
    "批",
    "倍",
    "手",
    "元/股",
)
_PERCENT_UNIT = r"[%％‰]|个百分点|个基点|基点|bp\b"
_UNIT = re.compile(
    _PERCENT_UNIT
    + r"|(?:"
    + "|".join(SCALES)
    + r")?(?:"
    + "|".join(re.escape(u) for u in sorted(BASE_UNITS, key=len, reverse=True))
    + r")|"
    + "|".join(SCALES)
)
# A year (four digits, 19xx or 20xx, no decimals) followed by 年 is a date; so are a
# month (1–12) followed by 月 and a day (1–31) followed by 日: dates are not figures.
_YEAR_DIGITS = re.compile(r"(?:19|20)\d{2}")
_DATE_AFTER = {"年": (_YEAR_DIGITS, None), "月": (None, 12), "日": (None, 31)}
_PERCENT = ("%", "‰", "个百分点")
# What ends a sentence or clause for context scoring.
_SENTENCE_END = "。！？!?；;\n"


@dataclass(frozen=True)
class Figure:
    value: Decimal
    start: int  # code point offsets in the text searched, number and unit included
    end: int
    unit: str  # the unit as written right after the number (folded), possibly ""
    date: bool = False  # a part of a date (2026 年, 7 月, 30 日): no quantity (is_date)


def _fold(text: str) -> str:
    return unicodedata.normalize("NFKC", text)


def parse_decimal(text: str) -> Decimal | None:
    try:
        return Decimal(_fold(text).replace(",", ""))
    except InvalidOperation:
        return None


def in_base_unit(value: Decimal, unit: str) -> tuple[Decimal, str]:
    """``value`` in ``unit`` as (value in the base unit, base unit): ``(6.2, "亿元")`` is
    ``(620000000, "元")``. A unit without a scale prefix is its own base."""
    unit = _fold(unit.strip())
    prefix = _SCALE.match(unit)
    if prefix is None:
        return value, unit
    return value * SCALES[prefix.group(0)], unit[prefix.end() :]


def same_figure(value: Decimal, unit: str, other_value: Decimal, other_unit: str) -> bool:
    """Whether two written figures are the same quantity (units as :func:`figures_in`
    reads them): a percentage only equals a percentage of the same sign; a figure without
    a unit equals the same number; otherwise the values in their base unit are equal and
    the base units agree (one is empty — a bare scale, ``62,000万`` — or they are equal)."""
    unit, other_unit = _fold(unit), _fold(other_unit)
    if unit.startswith(_PERCENT) or other_unit.startswith(_PERCENT):
        return value == other_value and unit[:1] == other_unit[:1]
    if not unit or not other_unit:
        return value == other_value
    base_value, base = in_base_unit(value, unit)
    other_base_value, other_base = in_base_unit(other_value, other_unit)
    return base_value == other_base_value and (not base or not other_base or base == other_base)


def is_date(number: str, following: str) -> bool:
    """Whether ``number`` (as written) followed by ``following`` is part of a date, not a
    figure: a year written 19xx/20xx followed by 年, a month 1–12 followed by 月, a day
    1–31 followed by 日 (``2026 年 7 月 30 日``; ``3.6 年`` and ``3 个月`` are durations)."""
    number = _fold(number)
    rule = _DATE_AFTER.get(following[:1])
    if rule is None or "." in number or "," in number:
        return False
    pattern, highest = rule
    if pattern is not None:
        return bool(pattern.fullmatch(number))
    return highest is not None and number.isdigit() and 1 <= int(number) <= highest


def figures_in(text: str, units: Iterable[str] = ()) -> list[Figure]:
    """Every figure written in ``text`` — a number with the unit written after it, if
    that is a unit (a percent, a scale, a known unit of :data:`BASE_UNITS` or one of
    ``units``, a fact's declared units). A part of a date is returned with ``date`` set
    and its 年 / 月 / 日 as unit (:func:`is_date`): it states when, not how much."""
    declared = sorted((_fold(u) for u in units if u and u.strip()), key=len, reverse=True)
    found = []
    for match in _NUMBER.finditer(text):
        number = match.group(1) + ("." + match.group(2) if match.group(2) else "")
        value = parse_decimal(number)
        if value is None:
            continue
        end = match.end()
        after = end
        while after < len(text) and text[after] in _SPACES:
            after += 1
        if is_date(match.group(0), text[after : after + 1]):
            found.append(Figure(value, match.start(), after + 1, text[after], date=True))
            continue
        unit = next((u for u in declared if _fold(text[after : after + len(u)]) == u), None) or (
            (m := _UNIT.match(_fold(text[after : after + 8]))) and m.group(0)
        )
        if unit:
            found.append(Figure(value, match.start(), after + len(unit), unit))
        else:
            found.append(Figure(value, match.start(), end, ""))
    return found


def value_spans(text: str, value: Decimal, unit: str = "") -> list[tuple[int, int]]:
    """Where ``text`` states ``value`` in ``unit`` (code point offsets, number and unit),
    in any scale of the same base unit (:func:`in_base_unit`). Without a unit, where the
    number is written, whatever follows it."""
    unit = _fold(unit.strip())
    wanted, base = in_base_unit(value, unit)
    percent = unit.startswith(_PERCENT)
    spans = []
    for match in _NUMBER.finditer(text):
        number = match.group(1) + ("." + match.group(2) if match.group(2) else "")
        written = parse_decimal(number)
        if written is None:
            continue
        end = match.end()
        if not unit:
            if written == value:
                spans.append((match.start(), end))
            continue
        after = end
        while after < len(text) and text[after] in _SPACES:
            after += 1
        prefix = None if percent else _SCALE.match(_fold(text[after : after + 2]))
        scale = Decimal(1)
        if prefix is not None:
            scale = SCALES[prefix.group(0)]
            after += prefix.end()
        if written * scale != wanted or _fold(text[after : after + len(base)]) != base:
            continue
        spans.append((match.start(), after + len(base)))
    return spans


def sentence_around(text: str, start: int, end: int) -> tuple[int, int]:
    """The sentence (or clause list up to a sentence end) containing ``text[start:end]``."""
    left = start
    while left > 0 and text[left - 1] not in _SENTENCE_END:
        left -= 1
    right = end
    while right < len(text) and text[right] not in _SENTENCE_END:
        right += 1
    if right < len(text) and text[right] != "\n":
        right += 1
    while left < right and text[left].isspace():
        left += 1
    return left, right


def _context_score(text: str, span: tuple[int, int], label: str) -> int:
    wanted = set(search_tokens(label))
    if not wanted:
        return 0
    left, right = sentence_around(text, *span)
    # Words right before the figure name it best ("净利润 6.2 亿元"): count them twice.
    near = text[max(left, span[0] - 12) : span[0]]
    return len(wanted & set(search_tokens(text[left:right]))) + len(
        wanted & set(search_tokens(near))
    )


@dataclass(frozen=True)
class Anchor:
    index: int  # position of the chosen chunk in the sequence given
    start: int  # code point offsets of the statement in that chunk's text
    end: int


def anchor_value(
    chunks: Sequence[tuple[int, str]],
    value: Decimal,
    unit: str = "",
    *,
    label: str = "",
    page: int | None = None,
) -> Anchor | None:
    """The chunk that states ``value`` — ``chunks`` are (page, text) in document order.

    With ``page``, only chunks of that page are candidates. When the value is written
    in several places, the occurrence whose sentence shares most words with ``label``
    wins; on a tie, the first in document order. None when no chunk states it.
    """
    best: tuple[int, int, int, int] | None = None  # (-score, index, start, end)
    for index, (chunk_page, text) in enumerate(chunks):
        if page is not None and chunk_page != page:
            continue
        for span in value_spans(text, value, unit):
            candidate = (-_context_score(text, span, label), index, *span)
            if best is None or candidate < best:
                best = candidate
    if best is None:
        return None
    return Anchor(best[1], best[2], best[3])


def spans_to_utf16(text: str, spans: Iterable[tuple[int, int]]) -> list[dict[str, int]]:
    """Code point spans as UTF-16 ``{start, end}`` ranges (what clients index with)."""
    out = []
    for start, end in spans:
        start16 = len(text[:start].encode("utf-16-le")) // 2
        out.append(
            {"start": start16, "end": start16 + len(text[start:end].encode("utf-16-le")) // 2}
        )
    return out
