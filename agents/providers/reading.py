"""Reading questions without a model (the extractive provider's toolkit).

Pure functions, no database. Chinese has no spaces, so a question is cut into *terms* by
what the retrieved text itself contains: each run of the question is segmented greedily
into the longest pieces that occur in the excerpts, titles or fact labels (or in the small
lexicon of report abbreviations below); what occurs nowhere is an *unknown* term. What a
text *states* of a term (``states``, ``covers``) is decided here too; excerpts are cut into
units in ``agents.providers.structure``.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass, replace
from functools import cache

from agents.providers.abbreviations import abbreviated, word_starts
from agents.providers.grammar import (
    ACT_ASKED,
    ADDRESSER,
    AMONG_KIND,
    ASKS_DAY,
    ASKS_FIGURE,
    ASKS_SHARE,
    BEATEN_BY,
    CHANGE,
    COMPARED_WITH,
    COMPARES,
    COUNT,
    COUNT_HEADS,
    COUNTS,
    DOCUMENT_POINTERS,
    DOCUMENT_WORD,
    DOCUMENT_WORDS,
    EACH,
    EACH_SEGMENT,
    EACH_YEAR,
    EDGE_FUNCTION,
    ENUMERATES,
    FALL,
    FALL_COLLOQUIAL,
    FALL_RATE,
    FOLLOW_UP_LEAD,
    FORECASTER,
    GIVER,
    INTENTION,
    JUDGEMENT,
    LEAD_FUNCTION,
    LIGHT_HEADS,
    LIGHT_MODIFIERS,
    MEASURE,
    MONEY_OF_ACT,
    ON_EARLIER,
    OUTPERFORMED,
    PARTICLES,
    PREDICATE_AFTER,
    PREDICATE_BEFORE,
    PREDICATE_ONLY,
    PRIOR_PERIOD,
    PURPOSE,
    QUANTITATIVE,
    QUESTION_WORDS_LONGEST,
    RATE_OF_CHANGE,
    RELATIVE_HEADS,
    RELATIVE_TO,
    RISE,
    RISE_COLLOQUIAL,
    RISE_RATE,
    SCALE_ASKED,
    SEGMENT_OF,
    SHARE_WORDS,
    SUPERLATIVE,
    TIME,
    TOP_COUNT,
    UNSIGNED_CHANGE,
    WARNING,
    WHICH,
    WHO_OR_WHICH,
    YEAR,
    YEAR_BACK,
    words,
    words_re,
)
from knowledge.figures import figures_in, in_base_unit
from knowledge.periods import periods_in
from knowledge.vocabulary import BUILTIN

# The longest piece a question or phrase is matched by (a term, a figure's label): a
# 10,000-character question is read in linear time, not cubic.
MAX_PIECE = 32


def counted(text: str) -> str:
    return COUNT.sub("前N", text)


def _lexicon() -> dict[str, tuple[str, ...]]:
    """Each term of the domain vocabulary (knowledge/vocabulary.py, one home for synonyms,
    abbreviations and period aliases) with what a text may print for it: itself or any of
    its expansions."""
    lexicon = {}
    for term in BUILTIN.entries():
        expansions = sorted(BUILTIN.expand(term))
        # an ASCII word is written in capitals too (EPS, P/E); a period alias (q3, h1) is
        # read by knowledge/periods.py
        spellings = [term, term.upper()] if term.isascii() else [term]
        if term.isascii() and periods_in(term):
            continue
        printed = [x for e in [term, *expansions] for x in (e, e.upper())]
        for spelling in spellings:
            lexicon[spelling] = tuple(dict.fromkeys(counted(e) for e in printed))
    return lexicon


LEXICON = _lexicon()
# Each spelling of a term of the vocabulary with all the term's spellings (归属于上市公司股东的
# 净利润 → 归母净利润, 归属于母公司股东的净利润…): one figure however a report names it.
SPELLINGS: dict[str, set[str]] = {}
for _term, _printed in LEXICON.items():
    for _spelling in _printed:
        SPELLINGS.setdefault(_spelling, set()).update(_printed)


@cache
def _short_forms() -> dict[str, tuple[str, ...]]:
    """Each term of the vocabulary with the words of the vocabulary that are its short forms
    (营业收入 → 营收: ``abbreviations``' rule, the first character of each word kept) — not
    a wider word it expands to (收入 is no short form of 营业收入). Read once, when first
    asked (the rule segments each term)."""
    forms: dict[str, list[str]] = {}
    for short, printed in LEXICON.items():
        for full in printed:
            if len(short) >= 2 and full != short and abbreviated(short, full) == full:
                forms.setdefault(full, []).append(short)
    return {full: tuple(shorts) for full, shorts in forms.items()}


def written_short(phrase: str, text: str) -> bool:
    """Whether ``text`` writes a short form of ``phrase`` (a note's 营收 for the 营业收入
    asked) — not as the start of a ratio's name (营收率)."""
    return any(
        re.search(re.escape(short) + "(?!率)", text) for short in _short_forms().get(phrase, ())
    )


def spelled_otherwise(phrase: str, text: str) -> bool:
    """Whether ``text`` writes another spelling of the vocabulary's figure ``phrase`` is a
    spelling of (归属于母公司股东的净利润 for 归属于上市公司股东的净利润)."""
    return any(s in text for s in SPELLINGS.get(phrase, ()))


# Each term of the vocabulary with the longer terms that end with it after a modifier of
# their own (归母净利润 → 扣非归母净利润).
MODIFIED = {
    term: tuple(k for k in LEXICON if len(k) > len(term) and k.endswith(term)) for term in LEXICON
}
# A share as a report writes it: 占营业收入的 39.9%, or a whole's N% (不超过本次发行前公司
# 总股本的 30%).
_SHARE = re.compile(
    r"占[^，。；,;\n]{0,24}?\d+(?:\.\d+)?\s*[%％]|[^\W\d_]的\s*\d+(?:\.\d+)?\s*[%％]"
)
# A change asked (变化了多少) is stated by the direction it took (下降 4.2%); a direction
# asked (增长多少) by a signed change (a column 本报告期比上年同期增减). A text states a
# change in a word of two characters (a lone 升 of a text may be 升级's); a question may
# ask it in one (升了多少).
_CHANGE_STATED = words_re(RISE, FALL, UNSIGNED_CHANGE)
_SIGNED_CHANGE = words_re(UNSIGNED_CHANGE)
# A direction asked is stated by another word of the same sense (下滑 by 下降 4.5%; the
# colloquial 涨了多少 by 上涨 5.2% or 增长 7.85%, 降了多少 and 跌幅 by 下降 3.2% — never by a
# change the other way), or by a signed change.
_UP = (*RISE, *RISE_COLLOQUIAL, *RISE_RATE)
_DOWN = (*FALL, *FALL_COLLOQUIAL, *FALL_RATE)
_DIRECTIONS = (*_UP, *_DOWN)
_IN_YUAN = re.compile(r"\d\s*[万亿千百]*元")
# A broker's table marks a forecast year with E (2026E EPS, 2027E PE): the column is a
# forecast, as 预测 / 预计 / 预期 ask one.
_FORECAST_YEAR = re.compile(r"(?<!\d)(?:19|20)\d{2}[Ee](?![A-Za-z])")


def _share_written(figures: bool) -> re.Pattern[str]:
    """The whole a share is written of before its percent, as ``whole`` (占营业收入的 39.9%,
    占基金资产净值 8.9%). ``figures``: whether the whole may hold figures of its own (约占…
    公司股本总额 25,000.00 万股的 2.00%) — the whole a share is taken of reads with them; but
    a whole written with its amount states that amount, which a text without its shares'
    wholes keeps."""
    inside = r"[^，。；,;\n%％]" if figures else r"[^，。；,;\n%％\d]"
    return re.compile(rf"占(?P<whole>{inside}{{1,40}}?)的?(?=\s*[-+]?\d+(?:\.\d+)?\s*[%％])")


SHARE_WRITTEN = _share_written(figures=True)
_SHARE_OF = _share_written(figures=False)
_ENUMERATION = re.compile(
    r"[^\s、；;，,。]、[^\s、；;，,。]|[；;]\s*\S|[^\s]\s*(?:与|和|及|以及)\s*[^\s]"
)

_CN_DIGITS = {c: i for i, c in enumerate("一二三四五六七八九十", start=1)}
_TITLE_TAIL = re.compile(r"\s*(?:(?:19|20|１９|２０)\d{2}|（|\().*$")


def fold(text: str) -> str:
    return unicodedata.normalize("NFKC", text)


def coverage(term: str, text: str) -> float:
    """How much of ``term`` ``text`` states, 0..1: the share of its characters inside pieces
    (≥ 2 characters, or an abbreviation's expansion) that ``text`` contains."""
    if not term:
        return 0.0
    if term in text:
        return 1.0
    term, text = counted(term), counted(text)
    return sum(_mask(term, text)) / len(term) if term else 0.0


def _mask(term: str, text: str) -> list[bool]:
    """Which characters of ``term`` lie inside pieces ``text`` states."""
    covered = [False] * len(term)
    for key, expansions in LEXICON.items():
        at = term.find(key)
        if len(key) == 1 and at != len(term) - 1:
            # a one-character word (赚, 卖: a colloquial verb) names its figure as the head
            # asked (赚了多少, 环氧树脂卖了多少); before other characters it is part of another
            # name (已赚保费 is the earned premium, not 净利润)
            continue
        stated = any(e in text for e in expansions)
        if not stated and "占比" in expansions:
            # A share is written as 占…的 N%: "占营业收入的 39.9%" states 占比 / 比重.
            stated = bool(_SHARE.search(text))
        if at >= 0 and stated:
            covered[at : at + len(key)] = [True] * len(key)
    for full in _short_forms():
        # a term of the vocabulary is stated by its short form (a note's Q3 单季实现营收
        # 12.86 亿元 states the 营业收入 asked)
        at = term.find(full)
        if at >= 0 and written_short(full, text):
            covered[at : at + len(full)] = [True] * len(full)
    for asked, stated in (
        (("占比",), bool(_SHARE.search(text))),
        (_UP, any(w in text for w in RISE)),
        (_DOWN, any(w in text for w in FALL)),
        (UNSIGNED_CHANGE, bool(_CHANGE_STATED.search(text))),
        (_DIRECTIONS, bool(_SIGNED_CHANGE.search(text))),
        # 金额 asked is stated by an amount in yuan (其中海外订单 12.3 亿元)
        (("金额",), bool(_IN_YUAN.search(text))),
        # 预测 asked is stated by a year marked forecast (2026E EPS（元）: the note's forecast)
        (("预测", "预计", "预期"), bool(_FORECAST_YEAR.search(text))),
    ):
        for word in asked:
            at = term.find(word)
            if at >= 0 and stated:
                covered[at : at + len(word)] = [True] * len(word)
    i = 0
    pieces: dict[int, int] = {}  # where a stated piece ends → where it starts
    while i < len(term):
        for j in range(min(len(term), i + MAX_PIECE), i + 1, -1):
            if term[i:j] in text:
                covered[i:j] = [True] * (j - i)
                pieces[j] = i
                i = j
                break
        else:
            i += 1
    # A letter or digit standing alone (a share class: C份额 over 青屿价值精选混合 C) is a
    # piece of its own.
    for at, char in enumerate(term):
        alone = rf"(?<![A-Za-z0-9]){re.escape(char)}(?![A-Za-z0-9])"
        if not covered[at] and char.isascii() and char.isalnum() and re.search(alone, text):
            covered[at] = True
    # A head written short (里程碑款 for 里程碑付款, 研发费 for 研发费用's 研发费): the last
    # character, alone uncovered, ends a word the text writes right after the covered piece
    # before it (one or two characters between).
    end = len(term) - 1
    if end >= 2 and not covered[end] and end in pieces:
        before = re.escape(term[pieces[end] : end])
        if re.search(before + r"[^\s\d，。；、,.;|]{1,2}" + re.escape(term[end]), text):
            covered[end] = True
    if not all(covered) and _stated_short(term, text):
        return [True] * len(term)
    return covered


def _stated_short(term: str, text: str) -> bool:
    """Whether ``term`` is a short form of a figure's name ``text`` writes (扣非净利 of
    扣除非经常性损益后的净利润 5.9 亿元: ``abbreviations``) — of three characters or more,
    not a word of the vocabulary (营收 is 营业收入, never 营业外收入: the vocabulary
    decides), and the name a figure's: a report shortens the names of its measures, not
    its sentences (拟授予 is no short form of 拟向激励对象授予限制性股票)."""
    if len(term) < 3 or term in LEXICON:
        return False
    full = abbreviated(term, text)
    return bool(full) and bool(re.search(re.escape(full) + _BEFORE_FIGURE, text))


# What may stand between a figure's name and the figure (为, 约, a colon, a table's bar).
_BEFORE_FIGURE = r"\s*(?:为|是|达|约|共|合计)?\s*[:：|]?\s*[-+－]?\d"


def stated_characters(term: str, text: str) -> list[bool]:
    """Which characters of ``term`` pieces of ``text`` state (top-N counts in one form)."""
    return _mask(counted(term), counted(text))


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
    which: bool = False  # asks which ones (哪些, 哪几): a list of things
    asks_figure: bool = False  # asks for a number (多少, 多大, 几个)
    margin: bool = False  # asks by how much one thing beat another (跑赢基准多少)
    figures_asked: int = 1  # clauses asking a figure each (营收预计多少，上年同期是多少: 2)
    asks_share: bool = False  # asks for a share (占, 比例, 比重)
    prior: bool = False  # asks the year-ago period's own figure (去年同期呢), not a change
    each: bool = False  # asks for every one (各产品, 分别): a whole column or enumeration
    extreme: int = 0  # a superlative: 1 the highest (最高), -1 the lowest (最低)
    top: int = 1  # how many of the extreme rows it asks (最多的三位 → 3)
    compares: bool = False  # compares two things (哪个高, 比…高多少, 相差)
    counts: bool = False  # asks how many things (几项, 多少个): a list's items answer
    ordinal: int = 0  # picks one item of a ranked list (第一大重仓股 → 1)
    ordinal_text: str = ""  # as written (第一大)
    judged: tuple[str, ...] = ()  # runs of a yes/no sentence the rest of the question evidences
    runs: tuple[str, ...] = ()  # the question between particles, question words and times
    doers: tuple[str, ...] = ()  # runs that name who did the act asked of (董事会批了多少…)
    periods: frozenset[str] = frozenset()  # the periods it names, canonical (periods_in)
    unit: str = ""  # the base unit of the figure asked (多少股 → 股, 多少万元 → 元)
    scale: str = ""  # the scale the figure is asked in (多少亿 → 亿: grammar.SCALE_ASKED)
    who_or_which: bool = False  # asks who or which one (谁, 哪位: grammar.WHO_OR_WHICH)
    asks_day: bool = False  # asks the day of something (哪天: grammar.ASKS_DAY)
    # the kind asked among (三家银行, 哪家银行: grammar.AMONG_KIND) — a term after a count or
    # a which that a retrieved document's name ends with (澜州银行): no entity, no topic
    kinds: tuple[str, ...] = ()


def _runs(
    question: str, corpus: str = "", picks: list[re.Match[str]] | None = None
) -> tuple[list[str], list[str]]:
    """The question between particles, question words and times, and its times. ``picks``:
    its ordinals that pick an item (``_ordinal_picks`` of the folded question), when read."""
    # 第一大重仓股 is an item of the 前N list; 第二个风险 of the list of 风险
    text = fold(question)
    if picks is None:
        picks = _ordinal_picks(text, corpus)
    for m in reversed(picks):
        pick = f"前{m.group('n')}{m.group('kind')}" if m.group("kind") in "大名位" else "|"
        text = text[: m.start()] + pick + text[m.end() :]
    text = _NAMED_AND.sub(
        lambda m: m.group(0) if m.group(0) not in corpus else m.group(0).replace("及", _AND), text
    )
    text = EACH_YEAR.sub("|", text)  # (各年度: each row of years, no period of its own)
    times = [m.group(0).strip() for m in TIME.finditer(text)]
    text = TIME.sub("|", text)
    # A report warning its readers (公司提醒投资者注意) mentions what is asked.
    text = WARNING.sub("|", text)
    text = EACH_SEGMENT.sub(r"\g<kind>|", text)
    text = SEGMENT_OF.sub(r"\1", text)
    # Counts with their measure word first (哪几块, 前三大), then question words.
    text = MEASURE.sub("|", text)
    text = SUPERLATIVE.sub("|", text)
    text = COMPARED_WITH.sub(lambda m: f"|{m.group('other')}|", text)
    text = RELATIVE_TO.sub(lambda m: f"|{m.group('other')}|", text)
    for word in QUESTION_WORDS_LONGEST:
        text = _cut_question_word(text, word, corpus)
    text = _without_intention(text, corpus)
    runs: list[str] = []
    current: list[str] = []
    for char in text:
        if char in PARTICLES or char == "|":
            if current:
                runs.append("".join(current))
            current = []
        else:
            current.append(char)
    if current:
        runs.append("".join(current))
    return [run.replace(_AND, "及") for run in runs], times


def _without_intention(text: str, corpus: str) -> str:
    """``text`` (its question words cut) with an intention before the act asked cut out
    (钱|准备|投|哪几个项目), like 打算: 准备 followed by nothing but a verb of the grammar
    (投, 用于, 花) before the question word. Where the excerpts write it glued to the
    character before or after it (减值准备, 准备金), or something else follows it (坏账准备
    余额), it is a noun, and stays asked."""
    out, at = [], 0
    while (found := text.find(INTENTION, at)) >= 0:
        end = found + len(INTENTION)
        verb = re.match(r"[^|]*", text[end:])[0]  # type: ignore[index]
        verb = next((verb[:i] for i, c in enumerate(verb) if c in PARTICLES), verb)
        glued = (found > 0 and text[found - 1 : end] in corpus) or text[found : end + 1] in corpus
        acting = bool(verb) and not PREDICATE_AFTER.sub("", verb)
        out += [text[at:found], "|" if acting and not glued else INTENTION]
        at = end
    return "".join([*out, text[at:]])


def _money_of_act(question: str, corpus: str) -> str:
    """``question`` with the money an act brought (募来的钱, 融到的钱) written as the trade
    writes it, the act's 资 (募资 → 募集资金, 融资, 筹资), where the vocabulary or the
    excerpts write that word; else as asked."""

    def swap(match: re.Match[str]) -> str:
        word = f"{match['verb']}资"
        return word if word in LEXICON or word in corpus else match[0]

    swapped = MONEY_OF_ACT.sub(swap, fold(question))
    return swapped if swapped != fold(question) else question


# The vocabulary's figures a report names in full, as a phrase of its own words (归属于母公司
# 股东的净利润, 经营活动产生的现金流量净额), each with the term it is printed for: the term with
# the fewest spellings among those that print it directly (归母净利润, not 归母净利).
_IN_FULL: dict[str, str] = {}
for _term, _direct in BUILTIN.entries().items():
    for _spelling in _direct:
        if "的" in _spelling and _spelling not in LEXICON and _term in LEXICON:
            _held = _IN_FULL.get(_spelling)
            if _held is None or len(LEXICON[_term]) < len(LEXICON[_held]):
                _IN_FULL[_spelling] = _term


def _figure_named_in_full(question: str, corpus: str) -> str:
    """``question`` with a figure asked by one of its full names the excerpts do not print
    (归属于母公司股东的净利润 over a bank's 归属于本行股东的净利润) read as the vocabulary's
    term for it (归母净利润), whose spellings the excerpts may print; the 的 of a name is
    not a particle between a modifier and a head. Else as asked."""
    folded = fold(question)
    for spelling, term in _IN_FULL.items():
        printed = any(s in corpus for s in LEXICON[term])
        if spelling in folded and spelling not in corpus and printed:
            folded = folded.replace(spelling, term)
    return folded if folded != fold(question) else question


# Names joined as one subject (A和B, A、B): what follows the last one is asked of each.
_NAMES_JOINED = re.compile(r"\s*(?:以及|和|与|及|跟|同|、)\s*")


# A question, then another subject alone with 呢 (远川冷链资产负债率多少？北港冷链呢): the second
# clause asks what the first does, of its subject.
_AND_THAT_ONE = re.compile(
    r"^(?P<first>[^？?。；;]+?)\s*[？?，,；;。]\s*(?:那么?)?(?P<other>[^\W\d_]{2,})呢[？?]?\s*$"
)


def _asked_alike_of_another(question: str, names: tuple[str, ...]) -> str:
    """``question`` with a second clause that names only another document's entity and 呢
    (远川冷链资产负债率多少？北港冷链呢) written as one question of both (远川冷链和北港冷链
    资产负债率多少): 呢 after a subject alone asks again what was just asked, of it. The
    first clause must open with an entity's name, the second must name another entity (a
    name a document's begins): 净利润呢 asks another thing of the same subject. Else as
    asked."""
    found = _AND_THAT_ONE.match(fold(question))
    if found is None:
        return question
    first, other = found["first"], found["other"]
    folded = [fold(n) for n in names]
    if not any(n.startswith(other) for n in folded):
        return question
    subject = next(
        (
            first[:end]
            for end in range(len(first) - 1, 1, -1)
            if any(n.startswith(first[:end]) for n in folded)
        ),
        "",
    )
    if not subject or subject == other or other.startswith(subject):
        return question
    return f"{subject}和{other}{first[len(subject) :]}"


# A name a section heading may be: the heading's first run of two to twelve letters.
SECTION_NAME = r"[^\W\d_]{2,12}"


def section_heading(name: str = SECTION_NAME, *, alone: bool = True) -> re.Pattern[str]:
    """A heading (read with ``match``) of a section on a name — ``name``, a pattern, by default
    any — before the colon saying what the section says of it (## 溪南银行：零售转型见效) or,
    ``alone``, before a parenthesis or alone (## 澜州银行（买入）; ## 溪口银行, its table below).
    A name alone titles a section as well, but among a note's sections only a headline after
    it says the section is on a member (## 风险提示 is none): ``alone=False`` asks for one."""
    says = r"[：:]\s*\S" + (r"|[：:（(]|$" if alone else "")
    return re.compile(rf"[#\s]*(?P<name>{name})\s*(?:{says})")


_SECTION_HEADING = section_heading()


def _shared_head_apart(question: str, corpus: str, names: tuple[str, ...]) -> str:
    """``question`` with a head shared by names coordinated before it and glued to the last
    one (澜州银行和溪南银行拨备覆盖率) written apart by 的, as the question would write it with
    的 (澜州银行和溪南银行的拨备覆盖率): coordination joins things of one kind, so what is
    joined to a document's entity name is a name of the same class — the excerpts' piece
    that begins the phrase after the conjunction and ends with the entity's class character
    (银行, 农商行 share 行); the rest is the head asked of both. The entity's name last
    (溪南银行和澜州银行拨备覆盖率) is read alike: the name before the conjunction, of its class,
    joins it, and what follows the entity's name is the head. A note's section headed by a
    name and what it says of it (## 溪口银行：息差低位) names an entity as a document's title
    does: its name is one of ``names``. Else as asked. (A name is read within 40 characters
    of its conjunction: linear in the question's length.)"""
    folded = fold(question)
    headings = (_SECTION_HEADING.match(line) for line in corpus.split("\n") if line[:1] == "#")
    subjects = [h["name"] for h in headings if h and h["name"] not in names]
    for name in (*names, *subjects):
        for joined in re.finditer(
            r"(?P<other>[^\W\d_]{2,40})" + _NAMES_JOINED.pattern + re.escape(name), folded
        ):
            after = folded[joined.end() :]
            other = joined["other"]
            # (the other name as the excerpts write it: the longest tail of the run before the
            # conjunction that they do, of the entity's class)
            other = next((other[i:] for i in range(len(other) - 1) if other[i:] in corpus), "")
            glued = re.match(r"[^\W\d_]{2}", after) is not None and not after.startswith("的")
            if glued and other and other[-1] == name[-1] and other not in names:
                return folded[: joined.end()] + "的" + after
    for name in (*names, *subjects):
        for joined in re.finditer(re.escape(name) + _NAMES_JOINED.pattern, folded):
            at = joined.end()
            run = re.compile(r"[^\W\d_]{1,40}").match(folded, at)
            if run is None:
                continue
            words = run[0]
            other = next(
                (
                    words[:end]
                    for end in range(len(words) - 2, 1, -1)
                    if words[end - 1] == name[-1] and words[:end] in corpus and words[end] != "的"
                ),
                "",
            )
            if other and other not in names:
                return folded[: at + len(other)] + "的" + folded[at + len(other) :]
    return question


def _cut_question_word(text: str, word: str, corpus: str) -> str:
    """``text`` with ``word`` (a question word) cut out — except inside a name the excerpts
    write, two Chinese characters on each side (比较 of 业绩比较基准 is part of that name)."""
    out, at = [], 0
    while (found := text.find(word, at)) >= 0:
        around = text[found - 2 : found + len(word) + 2] if found >= 2 else ""
        edges = around[:2] + around[-2:]
        inside = len(around) == len(word) + 4 and all(map(is_han, edges)) and around in corpus
        out += [text[at:found], word if inside else "|"]
        at = found + len(word)
    return "".join([*out, text[at:]])


# 及 inside a name the excerpts write whole (手续费及佣金净收入, 现金及现金等价物) is part of
# the name, not a conjunction of two things asked.
_NAMED_AND = re.compile(r"[^\W\d_]{2}及[^\W\d_]{2}")
_AND = "\ue000"


def _segment(run: str, corpus: str, names: tuple[str, ...] = ()) -> list[tuple[str, bool]]:
    """The pieces of ``run`` the corpus states: (piece, known), greedy longest pieces left
    to right. A document's entity name is a piece of its own (北辰医药|核心产品, not
    北辰医药核心产品 because a text once wrote them together). A piece that only begins an
    entity's name and leaves what follows it unread (远川冷|库面积: 远川冷 the start of
    远川冷链) is the name's short form cut shorter, the characters it took beginning the
    term after it (远川|冷库|面积), when that leaves fewer characters unread."""
    pieces = _greedy_pieces(run, corpus, names)
    at = 0
    for k, (piece, known) in enumerate(pieces):
        after = pieces[k + 1] if k + 1 < len(pieces) else None
        if (
            known
            and after is not None
            and not after[1]
            and piece not in LEXICON
            and any(n.startswith(piece) and len(n) > len(piece) for n in names)
        ):
            rest = pieces[k + 1 :]
            unread = sum(len(p) for p, seen in rest if not seen)
            for short in range(len(piece) - 1, 1, -1):
                again = _greedy_pieces(run[at + short :], corpus, names)
                if sum(len(p) for p, seen in again if not seen) < unread:
                    return [*pieces[:k], (piece[:short], True), *again]
        at += len(piece)
    return pieces


def _greedy_pieces(run: str, corpus: str, names: tuple[str, ...]) -> list[tuple[str, bool]]:
    """Greedy longest pieces of ``run`` the corpus states, left to right."""
    pieces: list[tuple[str, bool]] = []
    i = 0
    unknown: list[str] = []
    while i < len(run):
        match = next((len(n) for n in names if run.startswith(n, i)), 0)
        for j in range(min(len(run), i + MAX_PIECE), i + 1, -1):
            if match:
                break
            piece = run[i:j]
            if piece in corpus or piece in LEXICON:
                match = j - i
                break
        # a word of the vocabulary is a term however short (卖 → 营业收入, 销量)
        match = match or int(run[i] in LEXICON)
        if match >= 2 or (match and run[i : i + match] in LEXICON):
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


def _without_act_verb(
    run: str, question: str, corpus: str, names: tuple[str, ...]
) -> tuple[str, bool]:
    """``run`` without the verb of an act the question asks an amount of, when no excerpt
    writes that verb (董事会批|了多少闲置募集资金…), and whether it was cut: the verb is the
    asker's word for the act, what is measured is the thing named after the question word,
    and what is left before the verb names the act's doer. A run with nothing measured
    after it (产了多少？, 批了多少亿元？) keeps its verb — it is all the question says —
    unless the excerpts write that act on the thing before it."""
    at = question.find(run)
    measured = ACT_ASKED.match(question, at + len(run)) if at >= 0 else None
    pieces = _segment(run, corpus, names)
    if measured is None or len(pieces) < 2 or pieces[-1][1]:
        return run, False
    verb, thing = pieces[-1][0], measured["measured"].removeprefix("的")
    if verb in EDGE_FUNCTION:
        return run, False  # a coverb (收益率从|多少降到了多少: from), no act of its own
    if len(thing) >= 2 and not unit_of(thing):
        return run[: -len(verb)], True
    # The thing measured put before the act (干线线路开了多少条): the verb is stated where
    # the excerpts write the act on that thing, the word it begins right before it
    # (开通干线线路) — 产了多少 over 环氧树脂销量 is not.
    if re.search(re.escape(verb) + r"[^\W\d_]?" + re.escape(pieces[-2][0]), corpus):
        return run[: -len(verb)], False
    return run, False


def _speaker_apart(
    run: str, doer: bool, corpus: str, names: tuple[str, ...]
) -> list[tuple[str, bool]]:
    """``run`` parted from who says what is asked (海岳证券|预测泊川…归母净利润): a name the
    excerpts write, not the entity's, before a verb of forecasting or judging is the
    document's author — a note names its broker once, in its byline, and writes the forecast
    as 我们…预测 — so the document must name it, the answering unit need not (a doer)."""
    match = FORECASTER.match(run)
    if doer or match is None:
        return [(run, doer)]
    who = match["who"]
    pieces = _segment(who, corpus, names)
    if any(not known for _, known in pieces) or any(who in n or n in who for n in names):
        return [(run, doer)]
    if any(p in LEXICON or any(len(p) >= 3 and n.startswith(p) for n in names) for p, _ in pieces):
        # (what is forecast, not who forecasts: a figure of the vocabulary — 全年营收预计… —
        # or the document's entity by its name's start as a reader writes it, 岑溪光电 of
        # 岑溪光电科技…, before its figure: 岑溪光电营收预计… is the notice's own forecast)
        return [(run, doer)]
    # (the verb apart from what is forecast: 预测|溪南银行 is not one phrase that 我们预测
    # and another bank's 银行 state together; a verb no excerpt writes, 海岳预计…, is the
    # asker's word for the note's forecast — a note prints its forecasts as 预测 or as a
    # table's 2027E — and names nothing the excerpts must state)
    verb, rest = run[len(who) : match.end()], run[match.end() :]
    return [(who, True), *([(verb, False)] if verb in corpus else []), (rest, False)]


def _author_apart(
    run: str, doer: bool, question: str, corpus: str, names: tuple[str, ...]
) -> list[tuple[str, bool]]:
    """``run`` parted from the author of the document asked of: a name the excerpts write,
    not a document's entity, before a coverb of giving (岚峰|给溪南银行的目标价: the note
    gives it) or before 对 and the company judged (海岳|对泊川…的预测) in a question asking a
    judgement (a lender's 向公司提供的借款 is none), before a word for a document (岚峰|城商行报告), right before a word
    pointing to one (岚峰证券|这篇城商行中报综述) or before the 的 of one (海岳证券|的泊川点评) is
    who wrote the document. A note names its
    broker once, in its byline, so the document must name it and the answering unit need
    not (a doer, like who forecasts)."""
    if doer:
        return [(run, doer)]
    who = ""
    judged = JUDGEMENT.search(question) is not None
    if judged and (giving := GIVER.match(run)):
        who = giving["who"]  # (岚峰|给溪南银行的目标价; not 控股股东|向公司提供的借款)
    elif (
        judged
        and (addressing := ADDRESSER.match(run))
        and any(len(n) >= 2 and run[addressing.end() :][:2] == n[:2] for n in names)
    ):
        who = addressing["who"]  # (海岳|对泊川…的预测: the note's broker judges 泊川)
    elif (document := DOCUMENT_WORDS.search(run)) and document.start() >= 2:
        before = run[: document.start()]
        at = min((i for n in names if (i := before.find(n)) >= 0), default=len(before))
        who = before[:at]
    elif any(f"{run}{pointer}" in question for pointer in DOCUMENT_POINTERS):
        who = run
    elif re.search(re.escape(run) + r"的[^\W\d_]{0,12}?" + DOCUMENT_WORD, question):
        who = run  # (海岳证券|的泊川点评: a document's owner before its 的, as before 那篇)
    pieces = _segment(who, corpus, names) if len(who) >= 2 else []
    if not pieces or any(not known for _, known in pieces):
        return [(run, doer)]
    if any(who in n or n in who for n in names):
        return [(run, doer)]
    rest = run[len(who) :]
    return [(who, True), *([(rest, False)] if rest else [])]


def authors(question: Question) -> tuple[str, ...]:
    """The doers a question names as who wrote the document it points to (海岳证券|那篇泊川
    点评): the document names them in its byline and its disclaimer, not in what it says —
    they rank no excerpt. (Not a forecaster read from a figure's verb, 营收|预计.)"""
    return tuple(
        d for d in question.doers if any(f"{d}{p}" in question.text for p in DOCUMENT_POINTERS)
    )


def _grammar_only(piece: str) -> bool:
    """A piece that is only a linking verb (拿到, 进入) or where a holding is (手上): it
    names nothing the excerpts must mention."""
    return piece in PREDICATE_ONLY or not PREDICATE_AFTER.sub("", piece)


# A name with a gloss in brackets right after it (北向资金（香港中央结算）): the run of
# characters before the bracket and the bracket's words.
_GLOSSED = re.compile(r"(?P<name>[^\W\d_]{2,40})[（(](?P<gloss>[^\W\d_]{2,20})[）)]")


_ENDS_ASKING = re.compile(r"(?:多少|几|多大|多高|多长|多久|是什么|是谁)$")


def _glossed(question: str, corpus: str, names: tuple[str, ...]) -> str:
    """``question`` with a name the excerpts do not write replaced by the gloss in brackets
    after it that they do (北向资金（香港中央结算）持有…多少股 asks of 香港中央结算): the gloss
    names the same thing the way the document does. A document's entity name before it
    stays (泊川智能北向资金（…）); a bracket the excerpts do not write, or a unit, is left as
    asked. (A name is read within 40 characters of its bracket: linear in the question's
    length.)"""

    def swap(match: re.Match[str]) -> str:
        name, gloss = match["name"], match["gloss"]
        if unit_of(gloss) or _ENDS_ASKING.search(name):
            # (a bracket after a question word, 各多少（百万元）, or a unit, 营业收入（万元）,
            # is the answer's form, no name's gloss)
            return match[0]
        lead = next((n for n in names if name.startswith(n) and len(name) > len(n)), "")
        if fold(gloss) not in corpus or fold(name[len(lead) :]) in corpus:
            return match[0]
        return lead + gloss

    return _GLOSSED.sub(swap, question)


# The kind of the items a which-question asks, written after its question word and measure
# word (前三大重仓是哪几只股票: 股票).
_KIND_AFTER_WHICH = re.compile(
    r"(?P<verb>是|有|为)(?P<which>哪几|哪些|哪)(?P<measure>[只家个项条位种类款名])?"
    r"(?P<kind>[^\W\d_]{1,4}?)(?=[？?。，,]|$|呢|啊)"
)
# What the items are, right before the verb: a phrase's head is within its last characters.
_ITEMS_BEFORE = re.compile(r"[^\W\d_]{2,12}$")


def _kind_joined(question: str, corpus: str) -> str:
    """``question`` with the items' kind written after its question word joined to what it
    asks them of, as its head (前三大重仓是哪几只股票 → 前三大重仓股票是哪几只): 股票 names
    what the 前三大重仓 are. Only where the joined phrase — or its short form, the kind's first
    character (重仓股) — ends a word of the vocabulary or a phrase the excerpts write; else
    as asked. (Anchored at the question word and read back a bounded stretch: linear in the
    question's length.)"""
    for match in reversed(list(_KIND_AFTER_WHICH.finditer(question))):
        items = _ITEMS_BEFORE.search(question, max(0, match.start() - 12), match.start())
        if items is None:
            continue
        topic, kind = items[0], match["kind"]
        for start in range(len(topic) - 1):
            head = topic[start:]
            if any(j in LEXICON or fold(j) in corpus for j in (head + kind, head + kind[0])):
                which = match["which"] + (match["measure"] or "")
                rewritten = f"{topic}{kind}{match['verb']}{which}"
                question = question[: items.start()] + rewritten + question[match.end() :]
                break
    return question


def _name_abbreviated(question: str, names: tuple[str, ...]) -> str:
    """``question`` with an entity's name written short — its start, then a short form of
    the rest (星河稳健债基: 星河稳健, then 债基 for 收益债券基金's 债券基金) — written in
    full: the short form ends where the name does (``abbreviations``)."""
    for name in names:
        if name not in question:
            question = _in_full(question, name)
    return question


def _in_full(question: str, name: str) -> str:
    """(The name's longest start the question writes: what follows it is either a short
    form of the rest, or not the name's — 星河医疗健康混合基金's 基金 is the name's word.)"""
    cut = next((c for c in range(len(name) - 1, 1, -1) if name[:c] in question), 0)
    if not cut:
        return question
    at = question.find(name[:cut])
    rest = name[cut:]
    after = question[at + cut : at + cut + len(rest)]
    for size in range(len(after), 1, -1):
        term = abbreviated(after[:size], rest)
        if term and rest.endswith(term):
            return question[:at] + name + question[at + cut + size :]
    return question


def read_question(question: str, corpus: str, names: tuple[str, ...] = ()) -> Question:
    """The terms of ``question`` as the retrieved ``corpus`` (texts, titles, labels) knows
    them; ``names``: the retrieved documents' entity names, each a term of its own."""
    names = tuple(sorted({fold(n) for n in names if len(n) >= 2}, key=len, reverse=True))
    question = _glossed(question, fold(corpus), names)
    question = _name_abbreviated(question, names)
    question = _kind_joined(question, fold(corpus))
    question = share_class(question, corpus)
    question = _money_of_act(question, fold(corpus))
    question = _figure_named_in_full(question, fold(corpus))
    question = _asked_alike_of_another(question, names)
    question = _shared_head_apart(question, fold(corpus), names)
    stripped = fold(question).strip()
    follow_up = stripped.startswith(FOLLOW_UP_LEAD) or stripped.rstrip("？?。 ").endswith("呢")
    # The ordinals that pick an item, read once: they cut the runs and name the ordinal.
    picks = _ordinal_picks(fold(question), fold(corpus))
    runs, times = _runs(question, fold(corpus), picks)
    judged = _judged_runs(stripped)
    acts = [_without_act_verb(run, stripped, corpus, names) for run in runs]
    acts = [part for run, doer in acts for part in _speaker_apart(run, doer, corpus, names)]
    acts = [
        part for run, doer in acts for part in _author_apart(run, doer, stripped, corpus, names)
    ]
    runs = [run for run, _ in acts]
    terms, unknown = [], []
    for run in runs:
        for lead in FOLLOW_UP_LEAD:
            if run.startswith(lead) and len(run) > len(lead):
                run = run[len(lead) :]
                break
        for piece, known in _segment(run, corpus, names):
            if known:
                terms.append(piece)
            elif len(piece) >= 2 and not _grammar_only(piece):
                unknown.append(piece)
    return Question(
        text=question,
        terms=tuple(dict.fromkeys(terms)),
        unknown=tuple(dict.fromkeys(unknown)),
        times=tuple(dict.fromkeys(times)),
        years=tuple(dict.fromkeys(YEAR.findall(" ".join(times)))),
        follow_up=follow_up,
        enumerates=bool(ENUMERATES.search(stripped)) or bool(picks),
        quantitative=bool(QUANTITATIVE.search(stripped)),
        which=bool(WHICH.search(stripped)),
        asks_figure=bool(ASKS_FIGURE.search(stripped)),
        margin=bool(BEATEN_BY.search(stripped)),
        figures_asked=_figures_asked(stripped),
        # (a share class's 份额 — C份额 — names the class, no share asked of a whole)
        asks_share=bool(ASKS_SHARE.search(class_letter(stripped))),
        prior=bool(PRIOR_PERIOD.search(stripped) or YEAR_BACK.search(stripped))
        and not CHANGE.search(stripped),
        each=bool(EACH.search(stripped)),
        extreme=_extreme(stripped),
        top=_top(stripped),
        compares=bool(COMPARES.search(stripped)),
        counts=bool(COUNTS.search(stripped)),
        ordinal=_ordinal(picks[0]) if picks else 0,
        ordinal_text=picks[0].group(0) if picks else "",
        judged=judged,
        runs=tuple(runs),
        doers=tuple(run for run, doer in acts if doer),
        periods=periods_in(stripped) | ({"YOY"} if YEAR_BACK.search(stripped) else set()),
        unit=_asked_unit(stripped),
        scale=scale["scale"] if (scale := SCALE_ASKED.search(stripped)) else "",
        who_or_which=bool(WHO_OR_WHICH.search(question)),
        asks_day=bool(ASKS_DAY.search(stripped)),
        kinds=tuple(
            t
            for t in dict.fromkeys(terms)
            if len(t) >= 2
            and any(n.endswith(t) and n != t for n in names)
            and re.search(AMONG_KIND + re.escape(t), stripped)
        ),
    )


# A share class asked by its letter with 类 (C类, A类份额): the fund's 份额 of that class.
_SHARE_CLASS = re.compile(r"(?<![A-Za-z])(?P<letter>[A-Za-z])\s*类(?:份额)?")


def share_class(question: str, corpus: str) -> str:
    """``question`` with a share class asked as a letter and 类 (青屿价值精选C类, A类和C类)
    written as a fund's report names the class's 份额 — C份额, read by the letter the report
    writes standing alone (青屿价值精选混合 C) — when the excerpts write 份额 and never the
    letter with 类 (a rating of A 类 is written so, and stays as asked)."""
    text = fold(question)
    written = re.sub(r"\s+", "", fold(corpus))
    if "份额" not in written:
        return question
    return _SHARE_CLASS.sub(
        lambda m: m[0] if f"{m['letter']}类" in written else f"{m['letter']}份额", text
    )


# A share class's word after its letter (A份额): the letter names the class.
_CLASS_WORD = re.compile(r"(?<![A-Za-z])([A-Za-z])份额")


def class_letter(phrase: str) -> str:
    """``phrase`` with a share class named by its letter alone (A份额过去一年 → A过去一年):
    a fund's report names the class by the letter after its name (青屿价值精选混合 A) over
    a table of its own, so its 份额 names no column."""
    return _CLASS_WORD.sub(r"\1", phrase)


def classes_asked(question: str) -> list[str]:
    """The share classes ``question`` names by a letter and 份额 (青屿价值精选C份额…, and
    C类, which ``share_class`` writes so): each asks its own table, as the letter standing
    apart does (青屿价值精选 C …) — though, its 份额 read away, the letter stays glued to
    the words after it (C过去一年…) and is no phrase of its own."""
    return list(dict.fromkeys(_CLASS_WORD.findall(fold(question))))


_LETTER = re.compile(r"(?<![A-Za-z])[A-Za-z](?![A-Za-z])")


def is_class_letter(phrase: str) -> bool:
    """Whether ``phrase`` is a share class asked by its letter alone (C of C类呢？)."""
    return len(phrase) == 1 and phrase.isascii() and phrase.isalpha()


def without_class(phrase: str) -> str:
    """``phrase`` without the share class it names by its letter (A近一年 → 近一年)."""
    return _LETTER.sub("", phrase)


def as_asked(phrase: str, question: str) -> str:
    """``phrase`` with a share class it names by its letter written as the question wrote
    it (A过去五年净值增长率 → A份额过去五年净值增长率): how a non-answer names it."""
    text = fold(question)
    for match in _LETTER.finditer(phrase):
        letter = match.group(0)
        written = next((f"{letter}{w}" for w in ("类", "份额") if f"{letter}{w}" in text), "")
        if written:
            return phrase[: match.start()] + written + phrase[match.end() :]
    return phrase


_ASKED_UNIT = re.compile(r"(?:多少|几)(?P<rest>[^\s，。？?！!、；;]{1,4})")


def unit_of(text: str) -> str:
    """The base unit ``text`` is, whole (万元 → 元, 股, 个月), or "". A scale of a scale
    (百万元, a bank's tables; 千万元) is a scale too."""
    if text[:1] in ("百", "千") and text[1:2] in ("万", "亿"):
        text = text[1:]
    figures = figures_in(f"1{text}")
    if len(figures) != 1 or figures[0].end != len(text) + 1 or not figures[0].unit:
        return ""
    return in_base_unit(figures[0].value, figures[0].unit)[1]


def _asked_unit(question: str) -> str:
    """The unit a question asks its figure in (多少股, 多少万元, 几个月): the answer's form —
    not a count's measure word (几个项目, 哪几类: the things counted)."""
    for match in _ASKED_UNIT.finditer(question):
        if COUNTS.match(question, match.start()):
            continue
        rest = match.group("rest")
        for end in range(len(rest), 0, -1):
            if unit := unit_of(rest[:end]):
                return unit
    return ""


_SENTENCES = re.compile(r"[^?？!！。]+[?？!！。]*")
_CLAUSES = re.compile(r"[，,；;?？!！。]")


def _figures_asked(question: str) -> int:
    """How many figures the question asks: each clause with a question word of its own asks
    one (营收预计多少，上年同期是多少 asks two, 营收预计多少 one) — an answer quoting one
    leaves the other unanswered. A later clause asking only with 呢 (营收预计多少？上年同期呢)
    asks what the clause before it asked, of what it names: a figure again."""
    count, asked = 0, False
    for clause in _CLAUSES.split(fold(question)):
        elliptical = asked and clause.strip().endswith("呢")
        asked = bool(ASKS_FIGURE.search(clause)) or elliptical
        count += asked
    return max(1, count)


# A yes/no sentence: one ending with 吗, or asking a verb and its negation (利润是不是下滑了,
# 有没有超额收益, 是否跑赢基准, 下滑了没有).
_YES_NO = re.compile(r"吗$|是不是|是否|有没有|会不会|算不算|能不能|了没有?$")


def _judged_runs(question: str) -> tuple[str, ...]:
    """The runs of a yes/no sentence (跑赢基准了吗？) that another sentence of the question
    asks the figures of (净值增长率和基准收益率各是多少？): the reader quotes the figures and
    leaves the judgement to the reader — the yes/no sentence is no phrase of the floor."""
    sentences = [s.strip() for s in _SENTENCES.findall(fold(question)) if s.strip()]
    if len(sentences) < 2:
        return ()
    yes_no = [s for s in sentences if _YES_NO.search(s.rstrip("?？!！。 "))]
    asking = [s for s in sentences if s not in yes_no and ASKS_FIGURE.search(s)]
    if not yes_no or not asking:
        return ()
    return tuple(run for s in yes_no for run in _runs(s)[0])


# One item of a ranked list (第一大重仓股, 第二名客户): read as the list (前N…), then the item.
# (条 counts a list's items as 项 does: 第二条原因, 第三条风险)
_ORDINAL_PICK = re.compile(
    r"第(?P<n>[一二三四五六七八九十]{1,3}|\d{1,2})(?P<kind>大|名|位|个|项|条|只|家)"
)


def _ordinal_picks(question: str, corpus: str) -> list[re.Match[str]]:
    """The ordinals of ``question`` that pick an item of a list or a ranked table. One of a
    sequence (个, 项, …) that the excerpts write with the words after it (第一个解除限售期,
    a table row's label) is part of that name, and picks nothing."""
    return [
        m
        for m in _ORDINAL_PICK.finditer(question)
        if m.group("kind") in "大名位" or not _written_on(question, m.end(), m.group(0), corpus)
    ]


def _written_on(question: str, end: int, ordinal: str, corpus: str) -> bool:
    following = question[end : end + 2]
    return len(following) == 2 and not set(following) & PARTICLES and ordinal + following in corpus


def _ordinal(match: re.Match[str]) -> int:
    n = match.group("n")
    return int(n) if n.isdigit() else cn_number(n)


def _top(question: str) -> int:
    match = TOP_COUNT.search(question)
    if match is None:
        return 1
    n = match.group("n") or match.group("first")
    return int(n) if n.isdigit() else cn_number(n.replace("两", "二"))


def _extreme(question: str) -> int:
    match = SUPERLATIVE.search(question)
    if match is None:
        top = TOP_COUNT.search(question)
        return 1 if top and top.group("first") else 0
    return 1 if match.group("high") else -1


# A name followed by a coverb of giving or addressing (X给…, X向…), before two characters more.
DATIVE_AFTER_TERM = re.compile(r"([^|]{2,}?)[给向](?=[^|]{2})")


def topic_phrases(question: Question, entity_terms: list[str] | tuple[str, ...]) -> list[str]:
    """What the question asks about its entity: each run of the question with the entity's
    names cut out and grammar characters trimmed from the edges (北辰医药的董事长是谁 →
    董事长; 创新药板块收入在北辰医药营收中占多大比重 → 创新药板块收入, 营收, 比重)."""
    out: list[str] = []
    sources: list[str] = []  # phrases naming a document
    # A generic name inside a fuller one (基金 in 星河稳健收益债券基金) is not cut out:
    # 基金经理 stays what is asked.
    folded = {fold(t) for t in entity_terms}
    names = sorted((t for t in folded if not any(t != o and t in o for o in folded)), key=len)[::-1]
    # the class words the names asked of end with (基金 of 青松沪深300指数基金)
    written = fold(question.text)
    classes = {n[-k:] for n in names if n in written for k in (2, 1) if len(n) > k}
    for run in question.runs:
        if run in question.judged or run in question.doers:
            continue
        for lead in FOLLOW_UP_LEAD:
            if run.startswith(lead) and len(run) > len(lead):
                run = run[len(lead) :]
                break
        for name in names:
            run = run.replace(name, "|")
        # A dative coverb after a name the excerpts write joins two participants, not one
        # thing's words (岚峰证券给云岭农商行什么评级 asks of 岚峰证券 and 云岭农商行).
        run = DATIVE_AFTER_TERM.sub(lambda m: m[1] + "|" if m[1] in question.terms else m[0], run)
        run = _purpose_cut(run, question.terms)
        run = _locative_cut(run, question.terms)
        for piece in run.split("|"):
            piece = PREDICATE_AFTER.sub("", PREDICATE_BEFORE.sub("", piece))
            if question.asks_figure:
                piece = OUTPERFORMED.sub("", piece)
            if question.compares and len(piece) > 2 and piece[-1] in "高大低小多少快慢":
                piece = piece[:-1]  # the comparative of 哪个占比高: 占比 is asked
            kept = (*question.terms, *SHARE_WORDS)
            # the coverb of an instrument before a thing the excerpts write (用闲置募集资金
            # 做现金管理: what is used is the thing, 用 no word of it)
            for verb in _INSTRUMENT:
                rest = piece[len(verb) :]
                if piece.startswith(verb) and any(len(t) >= 2 and rest.startswith(t) for t in kept):
                    piece = rest
                    break
            # A piece the excerpts write as it is keeps its edges (在研管线 is not 研管线).
            while piece and piece[0] in EDGE_FUNCTION | LEAD_FUNCTION and piece not in kept:
                piece = piece[1:]
            while piece and piece[-1] in EDGE_FUNCTION and piece not in kept:
                piece = piece[:-1]
            piece = PREDICATE_AFTER.sub("", piece)
            # a breakdown asked (按产品分有哪几类, 按地区划分) is written as a table's column of
            # its kind: 分产品, 分地区
            piece = _BREAKDOWN.sub(r"分\1", piece)
            if piece.endswith("占") and len(piece) > 2:
                piece = piece[:-1]  # the verb of a share (海外收入占多大比例), even where a
                # text writes the phrase on (海外收入占比)
            # A word the vocabulary writes with the asked entity's class word before it
            # (基金规模, 基金经理) is that word when asked of such an entity: 青松300指数基金
            # 二季度末规模 asks its 基金规模, as 这只基金的规模 does.
            if piece not in LEXICON:
                piece = next((c + piece for c in classes if c + piece in LEXICON), piece)
            # A word of the vocabulary (主要产品, 基金规模) keeps its modifier and its head.
            lexical = piece in LEXICON
            for light in LIGHT_MODIFIERS:
                if piece.startswith(light) and len(piece) - len(light) >= 2 and not lexical:
                    piece = piece[len(light) :]
            # A one-character head (风险点 asks the 风险) is part of a name the excerpts
            # write whole (速冻面点, a product).
            whole = piece in question.terms
            for light in LIGHT_HEADS:
                if len(light) == 1 and whole:
                    continue
                if light in COUNT_HEADS and any(t.endswith(light) for t in question.terms):
                    continue  # (限制性股票数量, 获授…数量: a column's name, as written)
                if piece.endswith(light) and len(piece) - len(light) >= 2 and not lexical:
                    piece = piece[: -len(light)]
                    break
            if piece in LIGHT_MODIFIERS or piece in RELATIVE_HEADS:
                continue  # 主要 alone (主要做什么业务) ranks, it names nothing
            if piece in question.kinds:
                continue  # the kind counted (三家银行的目标价): each row's label names one
                # (云岭农商行 | …), and the floor asks what is asked of each
            if unit_of(piece) and not lexical:
                continue  # the unit asked (是多少万元) is the answer's form, not its topic
            if DOCUMENT_WORDS.search(piece) and len(piece) >= 2 or _picked_among(piece, written):
                sources.append(piece)  # where to look (海岳证券研报里), not what is asked
                continue
            # a share class is asked by its letter (C份额 → C: the report writes
            # 青屿价值精选混合 C), however short
            classed = class_letter(piece)
            # (a letter standing apart, 青屿价值精选 C 成立以来…, is a share class asked too)
            named = len(piece) >= 2 or lexical or classed != piece or is_class_letter(piece)
            if named and classed not in out:
                out.append(classed)
    asked = [piece for piece in out if piece not in PREDICATE_ONLY]
    # (a question that asks of nothing but a document, 发布了什么公告, asks the document)
    asked = asked or out or sources
    # An expense over revenue asked in words (研发费用占营收的比例) is its ratio (研发费用率:
    # the vocabulary's 费用率 is 占营业收入); the share word after it asks nothing more.
    ratios = [_EXPENSE_SHARE.sub(r"\1率", piece) for piece in asked]
    if ratios != asked:
        return [r for r in ratios if r not in SHARE_WORDS]
    return asked


def _picked_among(piece: str, question: str) -> bool:
    """Whether ``piece`` names the things a which-question picks among (前十大股东里哪些是…):
    where to look, as a document is — what is asked is the property that follows."""
    return (
        len(piece) >= 3
        and re.search(re.escape(piece) + r"[里中内](?:有)?(?:哪|谁)", question) is not None
    )


_INSTRUMENT = ("使用", "利用", "运用", "动用", "用", "拿")


_BREAKDOWN = re.compile(r"^按照?([^\W\d_]{2,4}?)(?:划分|分类|细分|分)$")


def _purpose_cut(run: str, terms: tuple[str, ...]) -> str:
    """``run`` cut at a verb of purpose before a term the excerpts write (闲置募集资金|做|
    现金管理): the thing and what it is used for are two things, each stated on its own —
    not one phrase of the two glued by the verb (做市商 is no use of anything)."""
    for match in reversed(list(PURPOSE.finditer(run))):
        rest = run[match.end() :]
        if match.start() > 0 and any(len(t) >= 2 and rest.startswith(t) for t in terms):
            run = f"{run[: match.start()]}|{rest}"
    return run


# A postposition of place (激励计划里, 投资资产中, 名单内) between two terms.
_LOCATIVE = re.compile(r"[里中内]")


def _locative_cut(run: str, terms: tuple[str, ...]) -> str:
    """``run`` cut at a postposition of place between two terms the excerpts write
    (激励计划|里|祁远航获授): where to look and what is asked there are two things, each
    stated on its own — not one phrase of the two glued (集团内部收入 is not cut: 部收入
    begins no term)."""
    for match in reversed(list(_LOCATIVE.finditer(run))):
        before, rest = run[: match.start()], run[match.end() :]
        named = any(len(t) >= 2 and before.endswith(t) for t in terms)
        if named and len(rest) >= 2 and any(len(t) >= 2 and rest.startswith(t) for t in terms):
            run = f"{before}|{rest}"
    return run


def doer_phrases(question: Question, entity_terms: list[str] | tuple[str, ...]) -> list[str]:
    """Who did the act asked of (董事会 of 董事会批了多少…), as topic phrases: a report
    leaves the doer out of the clause that states the amount (同意公司使用…3.5 亿元…) and
    names it once for the document, so its excerpts must state it, not the answering unit."""
    return topic_phrases(replace(question, runs=question.doers, doers=()), entity_terms)


def qualified_before(
    phrases: tuple[str, ...], before: list[str] | tuple[str, ...], corpus: str
) -> tuple[str, ...]:
    """A follow-up's ``phrases`` read against the phrases asked ``before``: one that the
    excerpts write right before an earlier phrase (核心一级 of 核心一级资本充足率, after
    …并表口径的资本充足率多少？) is a qualifier of that thing, not a thing of its own — it
    asks the qualified thing with the rest asked before (核心一级资本充足率, 并表). Else
    ``phrases`` as they are."""
    written = re.sub(r"\s+", "", fold(corpus))
    for phrase in phrases:
        head = next(
            (
                b
                for b in before
                if len(b) >= 2 and phrase not in b and b not in phrase and phrase + b in written
            ),
            "",
        )
        if head:
            others = [p for p in phrases if p != phrase]
            rest = [b for b in before if b != head and b not in others]
            return (*others, phrase + head, *rest)
    return phrases


def sibling_swapped(
    phrases: tuple[str, ...],
    before: list[str] | tuple[str, ...],
    terms: tuple[str, ...],
    corpus: str,
) -> tuple[str, ...]:
    """A follow-up's one thing (信用债呢？) read against the phrases asked before (利率债占
    净值): where an earlier phrase holds a term the excerpts write coordinated with it
    (其中利率债 41.3%、信用债 48.9% — what one list joins is of one kind), the follow-up asks
    the same of its own thing: the earlier phrases with that term swapped (信用债占净值).
    Else ()."""
    if len(phrases) != 1:
        return ()
    (phrase,) = phrases
    written = re.sub(r"\s+", "", fold(corpus))
    for term in sorted((fold(t) for t in terms), key=len, reverse=True):
        if len(term) < 2 or term == phrase or term in phrase or phrase in term:
            continue
        if not any(term in b and b != term for b in before):
            continue
        apart = r"[^，。；、\n]{0,16}[、，；]"
        if re.search(re.escape(term) + apart + re.escape(phrase), written) or re.search(
            re.escape(phrase) + apart + re.escape(term), written
        ):
            return tuple(b.replace(term, phrase, 1) for b in before)
    return ()


_LATIN_BY_HAN = re.compile(r"[A-Za-z][\u4e00-\u9fff]|[\u4e00-\u9fff][A-Za-z]")
_TYPESET_SPACE = re.compile(
    r"(?<=[A-Za-z])[ \t]+(?=[\u4e00-\u9fff])|(?<=[\u4e00-\u9fff])[ \t]+(?=[A-Za-z])"
)


def states(phrase: str, text: str) -> bool:
    """Does ``text`` state ``phrase`` — verbatim, through a declared synonym (LEXICON), or by
    pieces covering at least 60 % of it, its head included? A Chinese phrase ends with its
    head: one whose last character no stated piece covers names another thing (董事长 is
    not stated by 董事会, 换手率 not by 换手, 电池产能 not by 电池销量)."""
    phrase, text = counted(phrase), counted(text)
    if _LATIN_BY_HAN.search(phrase):
        # a space between a letter and a Chinese character is typesetting (A 股 is A股)
        text = _TYPESET_SPACE.sub("", text)
    text = without_ratios_of(phrase, text)
    if not phrase or phrase in text:
        return True
    if any(e in text for e in LEXICON.get(phrase, ())):
        # a word of the vocabulary stated by what a report prints for it (经营分部 by 分部,
        # however the report's 分部经营情况 orders its pieces)
        return True
    if not phrase.endswith("率"):
        # and so of the phrase's last word, stated in pieces (消费电子毛利 is not stated by a
        # row 消费电子's 毛利率 column)
        for at in range(1, len(phrase) - 1):
            text = text.replace(f"{phrase[at:]}率", "|")
    mask = _mask(phrase, text)
    if sum(mask) / len(phrase) < 0.6:
        return False
    if not mask[0] and all(mask[1:]) and contrasted(phrase, text):
        return False
    if any(exact_character(c) and not m for c, m in zip(phrase, mask, strict=True)):
        return False  # a number or a letter is exact: 过去一年 is not 过去五年, A份额 not C份额
    if _outside(phrase, text):
        return False
    return mask[-1] and not _swapped(phrase, text) and not inner_replaced(phrase, mask, text)


def without_ratios_of(phrase: str, text: str) -> str:
    """``text`` without the ratios it writes of ``phrase``: 研发费用率 is a ratio, not the
    研发费用 it is of — the longer word's head is 率."""
    if phrase and not phrase.endswith("率"):
        return text.replace(f"{phrase}率", "|")
    return text


def _outside(phrase: str, text: str) -> bool:
    """Whether ``text`` writes ``phrase`` only with 外 inside it: X外Y is the Y outside X
    (营业外收入, non-operating income, is not the 营业收入 asked; 表外 not 表内)."""
    return any(f"{phrase[:i]}外{phrase[i:]}" in text for i in range(1, len(phrase)))


def inner_replaced(phrase: str, mask: list[bool], text: str) -> bool:
    """Whether ``text`` writes ``phrase`` whole but for one unstated run of Chinese
    characters inside it, as many others in its place: that word names another thing
    (各项存款余额 is not 各项贷款余额, 期末基金份额净值 not 期末基金资产净值) — the mirror
    of the head rule and of ``contrasted`` for the middle of a word. So is one unstated
    character that begins a word ending the phrase where the text writes that word's head
    only after other Chinese characters (第五届董事会副董事长 over 经董事长提名: the deputy
    is another post) — not the last character of the word before (年初至今研发费用: 至今),
    nor one the text writes after the head instead (基金总份额 is 基金份额总额)."""
    for at, end in unstated_runs(mask):
        run = phrase[at:end]
        if at > 0 and end < len(phrase) and all(map(is_han, run)):
            han = rf"[\u4e00-\u9fff]{{{len(run)}}}"
            if re.search(rf"{re.escape(phrase[:at])}{han}{re.escape(phrase[end:])}", text):
                return True
            head = phrase[end:]
            # (a grammar character, 占 of 首次授予占拟授予总量, modifies nothing)
            modifier = len(run) == 1 and run not in EDGE_FUNCTION and len(head) >= 2
            modifier = modifier and f"{head}{run}" not in text and contrasted(phrase[at:], text)
            # (the dictionary's words, read last: the rule's rare case)
            if modifier and at in word_starts(phrase):
                return True
    return False


def unstated_runs(mask: list[bool]) -> Iterator[tuple[int, int]]:
    """The (start, end) of each run of characters ``mask`` marks unstated."""
    at = 0
    while at < len(mask):
        if mask[at]:
            at += 1
            continue
        end = at
        while end < len(mask) and not mask[end]:
            end += 1
        yield at, end
        at = end


_NUMERALS = frozenset("0123456789一二两三四五六七八九十百千")


def exact_character(character: str) -> bool:
    return character in _NUMERALS or (character.isascii() and character.isalnum())


# An average's modifier (月均, 人均, 日均, 年均, 户均): written before its head or after it.
_AVERAGE = re.compile(r"[月日年人户]均")


def _swapped(phrase: str, text: str) -> bool:
    """Whether ``text`` writes two pieces of ``phrase`` only in the other order, side by
    side (发行对象 over 向特定对象发行: 对象发行 is another word, the issue to the objects)
    and never in the phrase's order within a sentence."""
    pieces = []
    i = 0
    while i < len(phrase):
        j = next((j for j in range(len(phrase), i + 1, -1) if phrase[i:j] in text), 0)
        if j:
            pieces.append(phrase[i:j])
        i = j or i + 1
    for first, second in zip(pieces, pieces[1:], strict=False):
        if _AVERAGE.fullmatch(first):
            continue  # 月均代理人 is written 代理人月均人数: an average stands either side
        swapped = re.escape(second) + r"[^\s，。；、,;|]{0,2}" + re.escape(first)
        in_order = re.escape(first) + r"[^。；;！？!?\n]*" + re.escape(second)
        if re.search(swapped, text) and not re.search(in_order, text):
            return True
    return False


def contrasted(phrase: str, text: str) -> bool:
    """Whether ``text`` writes all of ``phrase`` but its first character only after another
    Chinese character: the word it writes has another modifier of one character, which
    names another thing (毛利率 is not 净利率, 净资产 not 总资产) — the head rule's mirror."""
    rest = phrase[1:]
    at = text.find(rest)
    if at < 0:
        return False  # the rest is stated in pieces: no one word to compare
    while at >= 0:
        if at == 0 or not is_han(text[at - 1]):
            return False
        at = text.find(rest, at + 1)
    return True


def is_han(character: str) -> bool:
    """Whether ``character`` is a Chinese character (the CJK Unified Ideographs block; an
    empty string is not)."""
    return "\u4e00" <= character <= "\u9fff"


_EXPENSE_SHARE = re.compile(r"^(.{1,8}费用)占(?:营收|营业收入|收入)的?(?:比例|比重|占比)?$")


# What a figure is of another (its change, its share) — a follow-up asking only this
# (同比增长多少？) asks it of the earlier question's topic.
_ATTRIBUTE = re.compile(
    words(ON_EARLIER, RISE, FALL, UNSIGNED_CHANGE, RATE_OF_CHANGE, SHARE_WORDS) + "+"
)


def is_attribute(phrase: str) -> bool:
    return bool(_ATTRIBUTE.fullmatch(fold(phrase)))


# A share of a named whole asked with nothing it is of (占营收比例呢？, 在营业收入中占比多少):
# the whole after 占 or 在…中 — what a share is taken of, never the part.
_SHARE_OF_A_WHOLE = re.compile(
    r"(?:占(?P<whole>(?!比|多)[^\W\d_呢吗么]{2,10}?)|在(?P<within>[^\W\d_]{2,10}?)(?:中|里|当中))"
    r"的?(?:" + "|".join(SHARE_WORDS) + r")?"
    r"(?:是|为|有)?(?:多少|几成|多大|多高)?(?:的?(?:比例|比重|占比))?(?:呢|吗)?[？?。]*"
)


def share_asked_alone(question: str) -> str:
    """The whole of a share ``question`` asks with nothing it is of (占营收比例呢？ → 营收),
    or "": as 占比呢？ does, it asks the share of what the conversation is on."""
    text = re.sub(r"\s+", "", fold(question))
    for lead in FOLLOW_UP_LEAD:
        if text.startswith(lead):
            text = text[len(lead) :]
            break
    match = _SHARE_OF_A_WHOLE.fullmatch(text)
    return (match["whole"] or match["within"]) if match else ""


def leading_unstated(phrase: str, text: str) -> int:
    """How many characters at the start of ``phrase`` no piece of ``text`` states: the
    modifier a phrase names its thing by (西北区域仓储面积 over a row of 华东)."""
    mask = _mask(counted(phrase), counted(text))
    return next((i for i, stated in enumerate(mask) if stated), len(mask))


def without_share_wholes(text: str) -> str:
    """``text`` with the wholes its shares are taken of left out (占员工总数的 18.2% →
    18.2%): the share states a part, not the whole."""
    return _SHARE_OF.sub("", text)


def enumerates(text: str) -> bool:
    """Whether a sentence names several things: items joined by 、 or ；, or by 与 / 和 / 及."""
    return bool(_ENUMERATION.search(text))


# -- documents and entities ---------------------------------------------------------------


def entity_of(title: str) -> str:
    """Who a document is about, from its title: the title before its date or bracket."""
    name = _TITLE_TAIL.sub("", title).strip()
    return name or title.strip()


def without_headline(title: str) -> str:
    """A title without the headline a note puts after its name (泊川智能 2026 年三季报点评：
    订单高增，海外交付放量 → …三季报点评): what the note says is not what a sentence under it
    states. A colon after a name alone (海川物流：海川冷链物流股份有限公司…) is kept whole."""
    colon = _COLON.search(title)
    if colon and DOCUMENT_WORDS.search(title[: colon.start()].rstrip()):
        return title[: colon.start()]
    return title


_COLON = re.compile(r"[:：]")
# A section heading that names its subject before a colon and a claim after it (## 云岭农商行：
# 息差低位，资产质量有待观察).
_NAME_AND_CLAIM = re.compile(r"^(?P<name>[#\s]*[^\W\d_]{2,16})\s*[:：]\s*[^\W\d_]")


def without_claim(heading: str) -> str:
    """A heading without the headline after its colon (## 云岭农商行：息差低位 → ## 云岭农商行,
    # 城商行 2026 年中报综述：息差降幅收窄 → …中报综述): what a note claims of the section is
    not what a sentence under it states, so it is not the sentence's context."""
    cut = without_headline(heading)
    if cut != heading:
        return cut
    match = _NAME_AND_CLAIM.match(heading)
    return match.group("name") if match else heading


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


def cn_number(numeral: str) -> int:
    """一 → 1, 十 → 10, 十二 → 12, 二十三 → 23."""
    if "十" not in numeral:
        return _CN_DIGITS.get(numeral[-1], 0)
    tens, _, ones = numeral.partition("十")
    return 10 * (_CN_DIGITS.get(tens, 1) if tens else 1) + _CN_DIGITS.get(ones, 0)
