"""Periods: the one canonical form of what a question asks about and what a report covers.

``periods_in(text)`` reads the periods a text names: a year (``2026``), a report period
(``FY`` 年度 / 年报 / 全年, ``H1`` 上半年 / 半年度 / 中报 / 中期 — an interim dividend, not a
中期票据 —, ``H2``, ``Q1``–``Q4`` 第三季度 / 三季报 / Q3, ``YTD`` 前三季度 / 年初至报告期末; a
statement's months, 1—9 月 → YTD, 7—9 月 → Q3; a quarter's or a month's end, 三季度末 / 6月末),
``YOY`` (上年同期 / 同比 / 比上年 / YoY, a statement's 上期发生额 column), ``POP``, a change on
the period just before (环比 / 较上季度: a 同比 change states none), and ``BOY``, a change
since the year's start (比年初 / 较上年末). The extractive reader
requires the unit that answers to state every period a question names; retrieval ranks a
document whose title names another period after the others (``other_period``).
"""

from __future__ import annotations

import re
import unicodedata

# The words of a period, as one pattern (the extractive reader cuts them out of a
# question's topic with the relative times it reads besides: agents/providers/grammar.py).
PERIOD_WORDS = (
    # a statement's months (2026 年 1—9 月, 7-9月): the period they make up
    r"(?P<months>(?<!\d)(?P<first>1[0-2]|[1-9])\s*(?:—|－|-|–|～|~|至)\s*(?P<last>1[0-2]|[1-9])\s*月)"
    r"|(?P<ytd>前三季度|年初至报告期末)"
    # a quarter's or a half's end (三季度末, Q3末, 上半年末: the balance on its last day)
    r"|(?:第?(?P<q>[一二三四1-4])\s*季度|(?P<qr>[一三])季报|[Qq](?P<qq>[1-4]))末?"
    r"|(?P<h1>上半年|半年度|半年报|中报|中期(?:报告)?(?!票据)|[Hh]1)末?"
    # a month's end (6月末, 九月底): the balance date of the report period ending then
    r"|(?<![\d—－\-–～~至])(?P<end>12|[369]|十二|[三六九])\s*月\s*(?:末|底)"
    # a year's end after the year (2025年末, 2025 年底): the balance date of that year's
    # annual report
    r"|(?:(?<=\d{4}年)|(?<=\d{4} 年))(?P<yearend>[末底])(?!期)"
    r"|(?P<h2>下半年|[Hh]2)"
    # a balance's change since the year's start (比年初, 较上年末, a column 比上年末增减)
    r"|(?P<boy>(?:比|较)(?:年初|上年度?末))"
    # a change on the period just before (环比, 较上季度, 比上月): not the year before's
    r"|(?P<pop>环比|(?:比|较)上一?个?(?:季度|季|月))"
    # (a statement's comparative column, 上期发生额 / 上期金额, is the year before's same period)
    # (YoY, year over year, as an analyst abbreviates 同比)
    r"|(?P<yoy>上年同期|去年同期|同比|(?:比|较)(?:上年|去年)(?:同期)?(?!度?末|年?底)|上期(?=发生额|金额)"
    r"|(?<![A-Za-z])[Yy][Oo][Yy](?![A-Za-z]))"
    # 年度 after a year or alone; 半年度 is H1 (matched first, at its own start). The end of
    # the year before (上年度末) is the balance date a report of any period compares its own
    # period end with (a column 上年度末): it names no annual report.
    r"|(?P<fy>年度报告|年报|全年|年度(?!(?<=[上去]年度)末))"
    r"|(?P<year>(?:19|20)\d{2})"
)
_PERIOD = re.compile(PERIOD_WORDS)
_QUARTER = {"一": "1", "二": "2", "三": "3", "四": "4"}
# A month's end → the report period whose balance date it is (6月末 is a half-year report's
# 本期末, 12月末 an annual report's).
_MONTH_ENDS = {"3": "Q1", "三": "Q1", "6": "H1", "六": "H1", "9": "Q3", "九": "Q3"}
_MONTH_ENDS |= {"12": "FY", "十二": "FY"}
# (first month, last month) → the period they make up; a range from January is cumulative.
_MONTHS = {
    (1, 3): "Q1",
    (4, 6): "Q2",
    (7, 9): "Q3",
    (10, 12): "Q4",
    (1, 6): "H1",
    (7, 12): "H2",
    (1, 9): "YTD",
    (1, 12): "FY",
}
# The periods a report is issued for.
PARTS = frozenset({"FY", "H1", "H2", "Q1", "Q2", "Q3", "Q4", "YTD"})
# What a report of a period states besides its own: an annual report its fourth quarter
# and its second half (分季度主要财务数据), a third-quarter report the year to date.
_COVERS = {"FY": frozenset({"FY", "Q4", "H2"}), "Q3": frozenset({"Q3", "YTD"})}


def periods_in(text: str) -> frozenset[str]:
    """The periods ``text`` names, canonical: ``2026``, ``FY``, ``H1``, ``Q3``, ``YTD``, ``YOY``,
    ``POP``."""
    found = set()
    for match in _PERIOD.finditer(unicodedata.normalize("NFKC", text)):
        kind = match.lastgroup
        if match.group("months"):
            span = (int(match.group("first")), int(match.group("last")))
            if span in _MONTHS:
                found.add(_MONTHS[span])
        elif kind in ("q", "qq", "qr"):
            quarter = match.group(kind)
            found.add("Q" + _QUARTER.get(quarter, quarter))
        elif kind == "end":
            found.add(_MONTH_ENDS[match.group("end")])
        elif kind == "yearend":
            found.add("FY")
        elif kind == "year":
            found.add(match.group("year"))
        elif kind is not None:
            found.add(kind.upper())
    return frozenset(found)


def other_period(asked: frozenset[str], titled: frozenset[str]) -> bool:
    """Whether a document whose title names ``titled`` is about another period than the
    one a question names (``asked``, both from ``periods_in``): a year the question names
    that the title does not, or a report period it does not cover. A title naming no
    year or no report period says nothing of it (an announcement, a plan)."""
    asked_years = {p for p in asked if p.isdigit()}
    titled_years = {p for p in titled if p.isdigit()}
    if asked_years and titled_years and not asked_years & titled_years:
        return True
    asked_parts = asked & PARTS
    covered = set().union(*(_COVERS.get(p, {p}) for p in titled & PARTS))
    return bool(asked_parts and covered and not asked_parts & covered)
