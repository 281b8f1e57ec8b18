"""Reading questions and excerpts without a model (the extractive provider's toolkit).

Pure functions, no database. Chinese has no spaces, so a question is cut into *terms* by
what the retrieved text itself contains: each run of the question is segmented greedily
into the longest pieces that occur in the excerpts, titles or fact labels (or in the small
lexicon of report abbreviations below); what occurs nowhere is an *unknown* term. Excerpts
are cut into *units* at their real boundaries: headings (never glued to the text after
them), list items (a lead-in line and its items stay together), sentences (at 。！？) and,
inside a sentence, clauses (at ；).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

# Question words and particles: they carry no subject.
_QUESTION_WORDS = (
    "是多少",
    "有多少",
    "为多少",
    "多少",
    "是什么",
    "有哪些",
    "是哪些",
    "哪些",
    "哪个",
    "哪家",
    "什么",
    "怎么样",
    "怎样",
    "如何",
    "请问",
    "介绍一下",
    "说说",
    "一下",
    "分别",
    "情况",
    "具体",
)
# Single characters that separate terms when they stand between them.
_PARTICLES = set("的了吗呢吧呀么和与及或、，。？?！!：:；;（）()「」“”\"' \t\n")
# Leading words of an elliptical follow-up.
_FOLLOW_UP_LEAD = ("那么", "那", "还有", "另外", "再看", "再问", "同期")
# Time qualifiers: they rank sentences; a year must also be found.
_TIME = re.compile(
    r"(?:(?:19|20)\d{2}\s*年?(?:度)?)"
    r"|(?:前三季度|第?[一二三四1-4]\s*季度|[Qq][1-4]|上半年|下半年|全年|年初至报告期末|报告期末|本报告期|报告期内|期末)"
)
_YEAR = re.compile(r"(?:19|20)\d{2}")
_ENUMERATES = re.compile(r"哪些|分别|名单|列表|前[\d一二三四五六七八九十]+[名大]")
_QUANTITATIVE = re.compile(r"多少|几|比例|占比|[率额]|规模|金额")
# Abbreviations readers use for what reports spell out.
LEXICON = {
    "营收": ("营业收入",),
    "收入": ("营业收入",),
    "归母净利润": ("归属于上市公司股东的净利润", "归母净利润"),
    "扣非净利润": ("扣除非经常性损益后的净利润",),
    "净利": ("净利润",),
    "仓位": ("仓位", "占比"),
    "重仓股": ("前五名股票", "重仓股", "第一大重仓股"),
    "净值增长": ("净值增长率",),
    "研发投入": ("研发费用", "研发投入"),
    "现金流": ("现金流量净额", "现金流"),
    "风险": ("风险提示", "风险"),
    "比例": ("比例", "占比", "占基金资产净值"),
    "持有": ("持有", "持仓"),
}

_HEADING = re.compile(
    r"^(?:第[一二三四五六七八九十百\d]+[节章部分]|§\s*\d+|[一二三四五六七八九十]+、|#+\s)"
)
_ITEM = re.compile(r"^\s*(?:\d+[.、)）]|[（(]\d+[)）]|[-•·*])\s*")
_SENTENCE = re.compile(r"[^。！？!?]+[。！？!?]*")
_TITLE_TAIL = re.compile(r"\s*(?:(?:19|20|１９|２０)\d{2}|（|\().*$")


def fold(text: str) -> str:
    return unicodedata.normalize("NFKC", text)


def longest_common(a: str, b: str) -> int:
    """Length of the longest common substring of ``a`` and ``b``."""
    if not a or not b:
        return 0
    best = 0
    previous = [0] * (len(b) + 1)
    for ca in a:
        current = [0] * (len(b) + 1)
        for j, cb in enumerate(b, start=1):
            if ca == cb:
                current[j] = previous[j - 1] + 1
                if current[j] > best:
                    best = current[j]
        previous = current
    return best


def coverage(term: str, text: str) -> float:
    """How much of ``term`` ``text`` states, 0..1: the share of its characters inside pieces
    (≥ 2 characters, or an abbreviation's expansion) that ``text`` contains."""
    if not term:
        return 0.0
    if term in text:
        return 1.0
    covered = [False] * len(term)
    for key, expansions in LEXICON.items():
        at = term.find(key)
        if at >= 0 and any(e in text for e in expansions):
            covered[at : at + len(key)] = [True] * len(key)
    i = 0
    while i < len(term):
        for j in range(len(term), i + 1, -1):
            if term[i:j] in text:
                covered[i:j] = [True] * (j - i)
                i = j
                break
        else:
            i += 1
    return sum(covered) / len(term)


def covers(term: str, text: str) -> bool:
    return coverage(term, text) >= 0.6


# -- questions -------------------------------------------------------------------------


@dataclass(frozen=True)
class Question:
    text: str
    terms: tuple[str, ...]  # pieces the retrieved text knows, in question order
    unknown: tuple[str, ...]  # pieces it does not know (≥ 2 characters)
    times: tuple[str, ...]  # time qualifiers as written
    years: tuple[str, ...]
    follow_up: bool  # reads as an elliptical follow-up (那净利润呢？)
    enumerates: bool = False  # asks for a list (有哪些, 前五大…)
    quantitative: bool = False  # asks for a figure (多少, 比例, …率)


def _runs(question: str) -> tuple[list[str], list[str]]:
    text = fold(question)
    times = [m.group(0).strip() for m in _TIME.finditer(text)]
    text = _TIME.sub("|", text)
    for word in _QUESTION_WORDS:
        text = text.replace(word, "|")
    runs: list[str] = []
    current: list[str] = []
    for char in text:
        if char in _PARTICLES or char == "|":
            if current:
                runs.append("".join(current))
            current = []
        else:
            current.append(char)
    if current:
        runs.append("".join(current))
    return runs, times


def _segment(run: str, corpus: str) -> list[tuple[str, bool]]:
    """Greedy longest pieces of ``run`` the corpus states: (piece, known)."""
    pieces: list[tuple[str, bool]] = []
    i = 0
    unknown: list[str] = []
    while i < len(run):
        match = 0
        for j in range(len(run), i + 1, -1):
            piece = run[i:j]
            if piece in corpus or piece in LEXICON:
                match = j - i
                break
        if match >= 2:
            if unknown:
                pieces.append(("".join(unknown), False))
                unknown = []
            pieces.append((run[i : i + match], True))
            i += match
        else:
            unknown.append(run[i])
            i += 1
    if unknown:
        pieces.append(("".join(unknown), False))
    return pieces


def read_question(question: str, corpus: str) -> Question:
    """The terms of ``question`` as the retrieved ``corpus`` (texts, titles, labels) knows them."""
    stripped = fold(question).strip()
    follow_up = stripped.startswith(_FOLLOW_UP_LEAD) or stripped.rstrip("？?。 ").endswith("呢")
    runs, times = _runs(question)
    terms, unknown = [], []
    for run in runs:
        for lead in _FOLLOW_UP_LEAD:
            if run.startswith(lead) and len(run) > len(lead):
                run = run[len(lead) :]
                break
        for piece, known in _segment(run, corpus):
            if known:
                terms.append(piece)
            elif len(piece) >= 2:
                unknown.append(piece)
    return Question(
        text=question,
        terms=tuple(dict.fromkeys(terms)),
        unknown=tuple(dict.fromkeys(unknown)),
        times=tuple(dict.fromkeys(times)),
        years=tuple(dict.fromkeys(_YEAR.findall(" ".join(times)))),
        follow_up=follow_up,
        enumerates=bool(_ENUMERATES.search(stripped)),
        quantitative=bool(_QUANTITATIVE.search(stripped)),
    )


# -- documents and entities ---------------------------------------------------------------


def entity_of(title: str) -> str:
    """Who a document is about, from its title: the title before its date or bracket."""
    name = _TITLE_TAIL.sub("", title).strip()
    return name or title.strip()


def short_name(entity: str) -> str:
    """How a reader names the entity: 北辰医药 for 北辰医药股份有限公司."""
    for tail, replacement in (
        ("股份有限公司", ""),
        ("有限责任公司", ""),
        ("有限公司", ""),
        ("型证券投资基金", "基金"),
        ("证券投资基金", "基金"),
    ):
        if entity.endswith(tail) and len(entity) > len(tail) + 1:
            return entity[: -len(tail)] + replacement
    return entity


# -- excerpts -----------------------------------------------------------------------------


@dataclass
class Unit:
    """A piece of an excerpt cut at a real boundary."""

    text: str
    kind: str  # "sentence" | "list" | "heading"
    heading: str = ""
    clauses: list[str] = field(default_factory=list)


def is_item(line: str) -> bool:
    """A list item line (1. …, （1）…, - …)."""
    return bool(_ITEM.match(line))


def _is_heading(line: str) -> bool:
    if _HEADING.match(line):
        return len(line) <= 40 and "。" not in line
    return len(line) <= 24 and not re.search(r"[。；，：:,;！？!?]", line)


def units(content: str) -> list[Unit]:
    """The excerpt as headings, lists (lead-in plus items) and sentences, in order."""
    out: list[Unit] = []
    heading = ""
    for raw in content.split("\n"):
        line = raw.strip()
        if not line:
            continue
        if _ITEM.match(line):
            previous = out[-1] if out else None
            if previous is not None and previous.kind == "list":
                previous.text += "\n" + line
                previous.clauses.append(line)
            else:
                out.append(Unit(line, "list", heading, [line]))
            continue
        if _is_heading(line):
            heading = line
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
