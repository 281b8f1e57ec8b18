"""What the extractive provider reads out of the retrieved excerpts (their sources and the
question's reading over them: ``agents.providers.sources``): which sentence, list, table
row or figure answers it — scored from the excerpts' structure and the
question's terms (docs/extractive-provider.md). No database and no model; the provider
(agents/providers/extractive.py) turns these into answer blocks.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import replace
from functools import lru_cache
from typing import Any

from agents.providers.grammar import (
    ASKS_FIGURE,
    CAUSE,
    CHANGE,
    FALL,
    FALL_COLLOQUIAL,
    ON_EARLIER,
    PRIOR_PERIOD,
    QUANTITATIVE,
    QUESTION_WORDS,
    RATE_OF_CHANGE,
    RISE,
    RISE_COLLOQUIAL,
    SEGMENT_HEADS,
    SHARE_WORDS,
    SPREAD_CHANGE,
    UNSIGNED_CHANGE,
    WHO_OR_WHICH,
    WRITES_DATE,
    YEAR,
    words,
    words_re,
)
from agents.providers.reading import (
    LEXICON,
    MODIFIED,
    SHARE_WRITTEN,
    Question,
    authors,
    class_letter,
    classes_asked,
    cn_number,
    contrasted,
    counted,
    coverage,
    covers,
    enumerates,
    exact_character,
    fold,
    inner_replaced,
    is_attribute,
    is_class_letter,
    is_han,
    leading_unstated,
    section_heading,
    short_name,
    spelled_otherwise,
    stated_characters,
    states,
    unit_of,
    unstated_runs,
    without_claim,
    without_headline,
    without_ratios_of,
    without_share_wholes,
)
from agents.providers.sources import (
    Pick,
    Reading,
    Source,
    source_names,
)
from agents.providers.structure import (
    QUARTER_ALONE,
    SECTION_NUMBER,
    Unit,
    asks_change,
    change_columns,
    difference_columns,
    header_cells,
    is_item,
    is_section_heading,
    labels_named,
    marker,
    row_cell,
    states_quarter_alone,
    without_markers,
    without_unit,
)
from agents.providers.table_lines import NO_VALUE
from knowledge.figures import Figure, figures_in, in_base_unit
from knowledge.periods import PARTS, other_period, periods_in
from knowledge.text import search_tokens


def states_question(
    reading: Reading, text: str, context: str, heading: str = "", labels: str = ""
) -> bool:
    """The floor on the thing asked: ``text`` (with its heading or table header, and the
    document's title for the period) states every phrase the question asks about and
    every period it names. Not the entity alone: 基金简称 does not answer 基金经理. Nor a
    unit whose section ``heading`` — a row whose table's ``labels`` — names a sibling of a
    qualifier asked (``sibling_named``)."""
    said = fold(f"{text}\n{context}")
    if not reading.question.asks_share:
        said = without_share_wholes(said)
    for name in entity_names(reading):
        # The entity's own name states nothing asked about it (债券 in 星河稳健收益债券).
        said = said.replace(name, "|")
    said = without_modified_terms(reading, said)
    said = without_changes_of_terms(reading, said)
    said, joined = without_coordinated_qualifiers(reading.question, said)
    # (a qualifier written only in a union must be stated alone, however much of its
    # phrase the rest covers: 自有冷藏车辆 is not 自有及合作冷藏车辆's)
    phrases = (*reading.phrases, *(fold(t) for t in reading.of), *joined)
    if not all(
        states(p, said)
        and not foreign_modifier(reading, p, said)
        and not sibling_named(p, said, fold(heading), fold(labels))
        for p in phrases
    ):
        return False
    if labels and not all(
        _one_label_states(p, fold(text), fold(context), labels, phrases) for p in phrases
    ):
        return False
    # the part a share is asked of (海外收入占比) is stated as the part, not as the whole
    # another share is taken of (研发费用…占营业收入的 8.13% has no 海外收入)
    asked = fold(reading.question.text)
    parts = [part for part in map(_share_part, phrases) if part]
    parts = [part for part in parts if not _governed_by_share_verb(part, asked)]
    if parts and not all(states(part, without_share_wholes(said)) for part in parts):
        return False
    # and the whole it is asked of, when the question names one (现金红利占净利润比例: a
    # share of 净利润, which 每股分配比例…0.35 元 does not state)
    if not all(_of_the_whole_asked(whole, said) for whole in map(_share_whole, phrases) if whole):
        return False
    return reading.question.periods <= periods_in(said)


def _governed_by_share_verb(part: str, asked: str) -> bool:
    """Whether the question writes ``part`` after the verb 占 in one clause: what 占
    governs is the whole (占营收比例), a holder's name between them or not
    (东岳生物占星河医疗健康基金净值比例: the fund's 净值 is the whole, not the part)."""
    return re.search(rf"占(?!比)[^，。；,;？?！!]{{0,16}}?{re.escape(part)}", asked) is not None


# A share phrase asked, X占Y的比例 (前五大客户销售额占营收比例, 首次授予占总股本比例,
# 海外收入占比): the part X before the verb 占 — the words after it name the whole Y the
# share is taken of.
_SHARE_ASKED = re.compile(r"(?P<part>.+?)??(?:占(?P<whole>.{2,}?))?的?(?:占比|比例|比重)")


def _share_whole(phrase: str) -> str:
    """The whole a share phrase is asked of (首次授予占总股本比例 → 总股本), or ""."""
    match = _SHARE_ASKED.fullmatch(phrase)
    return (match["whole"] or "") if match else ""


def _of_the_whole_asked(whole: str, said: str) -> bool:
    """A share asked of a whole (占总股本比例) is answered by a share of that whole: where
    ``said`` writes shares with their wholes (占…拟授予总量的 86.67%), one of them is of
    the whole asked (股本总额 is 总股本); else the whole is stated at all (a column 占基金
    资产净值比例（%）) — a share of another whole, or an amount per share (每股分配比例：
    每股现金红利 0.35 元), is not the share asked."""
    written = [m["whole"] for m in SHARE_WRITTEN.finditer(said)]
    if written:
        return any(states(whole, w) for w in written)
    return states(whole, said)


def _one_label_states(
    phrase: str, text: str, context: str, labels: str, asked: tuple[str, ...] = ()
) -> bool:
    """A phrase is stated within one row's label: by the row ``text`` with its header and
    caption (``context``), or by one other row's label with them (汽车电子和消费电子的
    毛利率: each names its own row) — never by pieces of two rows (每股净资产 is neither
    基本每股收益's 每股 nor 加权平均净资产收益率's 净资产)."""
    others = {line for line in fold(labels).split("\n") if line.strip()}
    around = "\n".join(line for line in context.split("\n") if line not in others)
    if states(phrase, f"{text}\n{around}"):
        return True
    return any(
        states(phrase, f"{around}\n{line}") and not _modifies(phrase, line, asked)
        for line in others
        if set(line) & set(phrase)
    )


# A figure after an adjustment that names what it leaves out (扣除非经常性损益后的, 剔除…
# 影响后的, 扣非): ``{}`` is the figure adjusted.
_ADJUSTED = r"(?:扣除|剔除)[^，。；,;：:\n\d|]{{1,16}}?的\s*{0}|扣非[^\W\d_|]{{0,4}}?{0}"

# A figure per head of what is counted (人均, 户均): ``{0}`` is the figure divided.
_PER_HEAD = r"[^\W\d_年月日周季平]均{0}"
_CHANGE_WORD = words_re(RISE, FALL, UNSIGNED_CHANGE)


def without_modified_terms(reading: Reading, said: str) -> str:
    """``said`` without the longer terms of the vocabulary that end with a term asked
    (扣非归母净利润 for 归母净利润) where the documents also write that term on its own: they
    name two figures, and the longer one does not state the one asked. So of a figure
    after an adjustment (扣除非经常性损益后的净利润, 剔除汇兑影响后的营业收入, 扣非净利润):
    an adjusted figure is another figure than the one it adjusts, where the documents also
    write that one unadjusted (归属于上市公司股东的净利润 4.7 亿元 for 净利润)."""
    written = ""
    for phrase in reading.phrases:
        if not written:
            written = fold("\n".join(s.content for s in reading.sources))
        # (unless the question asks the adjusted one: 扣除非经常性损益后的净利润是多少)
        adjusted = re.compile(_ADJUSTED.format(re.escape(phrase))) if len(phrase) >= 2 else None
        if (
            adjusted
            and adjusted.search(said)
            and not adjusted.search(fold(reading.question.text))
            and phrase in adjusted.sub("|", written)
        ):
            said = adjusted.sub("|", said)
        # A figure per head (人均新业务价值, 户均存款: X均Y is Y over the Xs counted, an
        # average — not a span of time's, 年均) is not the figure it divides, asked alone.
        # (of the phrase's head: 人均新业务价值 for 澄远人寿新业务价值; a figure asked — the
        # adverb 均 before a verb, 充足率均满足 or 收入均增长, is "all", not "per")
        tails = [phrase[at:] for at in range(len(phrase) - 1)]
        heads = (
            "|".join(re.escape(t) for t in tails if not _CHANGE_WORD.match(t))
            if reading.question.asks_figure
            else ""
        )
        shared = re.compile(_PER_HEAD.format(f"(?:{heads})")) if heads else None
        if shared and not shared.search(fold(reading.question.text)):
            said = shared.sub("|", said)
        longer = MODIFIED.get(phrase, ())
        if not longer:
            continue
        alone = written
        for term in longer:
            alone = alone.replace(term, "|")
        if phrase in alone:
            for term in longer:
                said = said.replace(term, "|")
    return said


def without_changes_of_terms(reading: Reading, said: str) -> str:
    """``said`` without the rates of change it names on a term asked (份额净值增长率 for
    份额净值, 营收增速 for 营收) when the question asks no change: a Chinese noun ends with its
    head, and the growth of a thing is not the thing — a level asked (份额净值是多少, in 元)
    is not answered by its growth in %. A question asking a change (净值涨了多少) is."""
    if CHANGE.search(fold(reading.question.text)):
        return said
    for phrase in reading.phrases:
        if len(phrase) >= 2 and not phrase.endswith(RATE_OF_CHANGE):
            said = re.sub(f"{re.escape(phrase)}{words(RATE_OF_CHANGE)}", "|", said)
    return said


# Conjunctions joining two qualifiers of one head (自有及合作冷藏车辆).
_JOINED = r"(?:以及|及|和|与|或|、)"


def without_coordinated_qualifiers(question: Question, said: str) -> tuple[str, list[str]]:
    """``said`` with each qualifier the question names that it writes coordinated with
    another before a head the question also names taken out (自有及合作冷藏车辆 3,245 台 →
    冷藏车辆 3,245 台), and those qualifiers: the figure is the union's, which states
    neither qualifier alone — 自有 asked is not 自有及合作. A question that writes the
    coordination asks the union."""
    asked = fold(question.text)
    terms = [fold(t) for t in question.terms if len(t) >= 2]
    joined = []
    for qualifier in terms:
        if re.search(f"{_JOINED}{re.escape(qualifier)}|{re.escape(qualifier)}{_JOINED}", asked):
            continue
        for head in terms:
            if qualifier in head or head in qualifier:
                continue
            q, h = re.escape(qualifier), re.escape(head)
            union = rf"(?:{q}{_JOINED}[^\W\d_]{{1,4}}?|[^\W\d_]{{1,4}}?{_JOINED}{q})(?={h})"
            said, count = re.subn(union, "|", said)
            if count:
                joined.append(qualifier)
    return said, joined


def _share_part(phrase: str) -> str:
    """The part a share phrase is asked of (海外收入占比 → 海外收入; 前五大客户销售额占营收比例
    → 前五大客户销售额, the words before the verb 占 — those after it name the whole), or "":
    a share word inside a word of the vocabulary is that word's (汀州实业持股比例 → 汀州实业,
    the holder whose 持股比例 is asked)."""
    word = max((k for k in LEXICON if phrase.endswith(k) and len(k) > 2), key=len, default="")
    if word and _SHARE_ASKED.fullmatch(word):
        rest = phrase[: -len(word)].removesuffix("的")
        return rest if len(rest) >= 2 else ""
    match = _SHARE_ASKED.fullmatch(phrase)
    part = (match["part"] or "") if match else ""
    return part if len(part) >= 2 else ""


_GENERIC_TAIL = re.compile(r"(?:基金|公司|集团)$")


def entity_names(reading: Reading) -> list[str]:
    """How the question's entity is written: its terms, its documents' names, and those
    without a generic tail (星河稳健收益债券 for 星河稳健收益债券基金), longest first."""
    names = {fold(t) for t in reading.entity_terms}
    for source in reading.sources:
        if any(source_names(source, t) for t in reading.entity_terms):
            names |= {fold(source.name), fold(source.entity)}
    names |= {_GENERIC_TAIL.sub("", n) for n in names}
    return sorted((n for n in names if len(n) >= 4), key=len, reverse=True)


def foreign_modifier(reading: Reading, phrase: str, said: str) -> bool:
    """Whether ``phrase`` has a qualifier (two Chinese characters or more) that ``said`` does
    not state: one at its start that none of the entity's excerpts writes names something
    the documents do not have (东北区域冷链仓储面积 over a report without 东北, 整体… over a
    region's figure); one anywhere that they write elsewhere, joined to the stated piece
    beside it as the question writes them, names the other thing they tell apart (澄远财险
    over 澄远人寿's sentence, 柳川农商行 over the sector's 农商行) — "most of the characters"
    is not the thing asked. A word they write only apart (业务 of 汽车电子业务毛利率) is not."""
    phrase = counted(fold(phrase))
    if spelled_otherwise(phrase, said):
        return False  # the vocabulary's one figure, however spelled
    mask = stated_characters(phrase, said)
    written = ""
    for at, end in unstated_runs(mask):
        run = phrase[at:end]
        if len(run) >= 2:
            written = written or counted(
                fold("\n".join(f"{s.title}\n{s.content}" for s in reading.sources))
            )
            if at == 0 and (run not in written or phrase[: end + 1] in written):
                return True
            # (one at its start that the documents write as the qualifier of figures of its
            # own names that part — 非车险 of 非车险保费收入 —, which a unit not stating it,
            # the whole's 综合成本率, does not answer)
            if at == 0 and re.search(re.escape(run) + r"[\u4e00-\u9fff]{2,}\s*[\d|:：]", written):
                return True
            # the word the question writes — the run after the stated piece it qualifies —
            # is one the documents write elsewhere
            start = at
            while start > 0 and mask[start - 1]:
                start -= 1
            segment_head = re.fullmatch(SEGMENT_HEADS, run)
            # (the run's first two characters or more will do where the rest of it begins the
            # next word: 澄远财险车险保费收入 over the group's 原保险保费收入 — 澄远 the title's,
            # 险保费收入 the row's — writes 澄远财险, then 车险保费收入)
            joined = any(phrase[start:k] in written for k in range(at + 2, end + 1))
            if at and all(map(is_han, run)) and not segment_head and joined:
                return True
            # or the run before the stated piece it qualifies (储能业务海外收入占比 over 储能业务
            # 收入占…: 海外收入 is written elsewhere, the part of a whole)
            stop = end
            while stop < len(phrase) and mask[stop] and is_han(phrase[stop]):
                stop += 1
            qualifies = at and stop - end >= 2 and all(map(is_han, run)) and not segment_head
            if qualifies and phrase[at:stop] in written:
                return True
    return False


def sibling_named(phrase: str, said: str, heading: str, labels: str = "") -> bool:
    """Whether a qualifier of ``phrase`` that ``said`` does not state (two characters or
    more) has a sibling in the section's ``heading``: a word of as many characters in its
    place — ending with the same head (寿险 for 财险: 澄远财险13个月保单继续率 under （一）寿险
    业务), or followed by the character the phrase goes on with (松江农商行 for 柳川农商行
    under ## 松江农商行); or among a row's table's ``labels``, a whole label of the name the
    phrase has before the qualifier and a word in its place (澄远人寿 and 澄远财险 the rows,
    澄远资管 asked) — so the section or the table is about other segments or holders than
    the one asked, whatever else of the phrase it states."""
    if not heading and not labels:
        return False
    phrase = counted(fold(phrase))
    if spelled_otherwise(phrase, said):
        return False  # the vocabulary's one figure, however spelled (归属于母公司股东的净利润)
    mask = stated_characters(phrase, said)
    for at, end in unstated_runs(mask):
        run, after = phrase[at:end], phrase[end : end + 1]
        # (a one-character qualifier at the start too, of a segment — a word the heading
        # writes ending with a segment's head — named after another qualifier there: 寿险
        # 业务… under （二）财产险业务 — 财产险 and 寿险 are the segments told apart)
        stop = end
        while stop < len(phrase) and mask[stop] and is_han(phrase[stop]):
            stop += 1
        written = next((k for k in range(stop, end + 1, -1) if phrase[end:k] in heading), 0)
        segment = written and re.search(f"(?:{SEGMENT_HEADS})$", phrase[end:written])
        if at == 0 and end == 1 and is_han(run) and segment:
            piece = re.escape(phrase[end:written])
            if any(
                m.group(1) != run for m in re.finditer(rf"([\u4e00-\u9fff]{{1,2}}){piece}", heading)
            ):
                return True
        if end - at >= 2 and all(map(is_han, run)):
            han = f"[\u4e00-\u9fff]{{{len(run) - 1}}}"
            same_head = f"{han}{re.escape(run[-1])}"
            before_next = f"{han}[\u4e00-\u9fff](?={re.escape(after)})" if is_han(after) else ""
            start = at
            while start > 0 and mask[start - 1] and is_han(phrase[start - 1]):
                start -= 1
            # (a whole line — a row's label — of the stated name before the run and a word
            # in the run's place: 澄远人寿 for 澄远资管)
            named = (
                f"(?m:^{re.escape(phrase[start:at])}[\u4e00-\u9fff]{han}$)" if start < at else ""
            )
            for pattern, where in ((same_head, heading), (before_next, heading), (named, labels)):
                if pattern and any(
                    m.group(0) not in (run, phrase[start:end]) for m in re.finditer(pattern, where)
                ):
                    return True
    return False


def is_about(source: Source, entity_terms: list[str]) -> bool:
    """Whether ``source`` is about an entity the question names: its name or title covers a
    name asked — not one that writes all of it but its first character after another
    (岩岚冷链物流 is not 海岚冷链: another modifier names another company, ``contrasted``)."""
    if not entity_terms:
        return True
    return any(
        covers(t, text) and (fold(t) in text or not contrasted(fold(t), text))
        for t in entity_terms
        for text in (fold(source.name), fold(source.title))
    )


def named_otherwise(question: str, source: Source, entity_terms: list[str]) -> bool:
    """Whether the question writes the name of ``source``'s entity with another first
    character: the document's name writes the term asked after one character (岩 of
    岩岚冷链物流) and the question writes another Chinese character there (海岚冷链) — a
    name the documents do not write, another company's (``contrasted``), even with no
    document of that company retrieved for is_about to tell apart."""
    text = fold(question)
    for term in entity_terms:
        t = fold(term)
        at = text.find(t)
        if len(t) < 2 or at < 1 or not is_han(text[at - 1]):
            continue
        names = [fold(source.name), fold(source.entity), fold(without_headline(source.title))]
        if any(n.startswith(text[at - 1] + t) or n.startswith(t) for n in names):
            continue
        if all(n.find(t) == 1 for n in names if t in n) and any(t in n for n in names):
            return True
    return False


def section_about(source: Source, entity_terms: list[str]) -> Source | None:
    """The sections of ``source`` headed by the name of the entity asked of (a broker's
    note on several banks: ## 澜州银行：规模扩张领先，拨备充足), as an excerpt of their own
    named by it, or None: a note's section on a company is about that company, its other
    sections are not — and so is a table's row labelled by the name (a valuation table of
    the banks covered: 澜州银行 | 601962 | 买入 | 7.20 | …), read with its table's header;
    the table's other rows are not."""
    for term in entity_terms:
        name = fold(term)
        named = section_heading(re.escape(name))
        kept = [u for u in source.units if u.kind != "row" and named.match(fold(u.heading))]
        rows = [u for u in source.units if u.kind == "row" and _labelled(u, name)]
        if len(name) >= 2 and (kept or rows):
            units = [
                u for u in source.units if u in kept or u in rows or (rows and u.kind == "header")
            ]
            return replace(source, units=units, name=term, entity=term)
    return None


# A section heading naming its member before a headline (## 溪南银行：零售转型见效).
_MEMBER_SECTION = section_heading(alone=False)


def member_sections(sources: list[Source]) -> list[tuple[str, list[tuple[Source, Unit]]]]:
    """The members a document writes a section of each (a broker's note on three banks: ##
    澜州银行：…, ## 溪南银行：…, ## 云岭农商行：…), each with the units under its heading in
    the retrieved excerpts of that document, in the document's order — for the first
    document (best first) holding two or more such sections; else []."""
    for title in dict.fromkeys(s.title for s in sources):
        sections: dict[str, list[tuple[Source, Unit]]] = {}
        for source in (s for s in sources if s.title == title):
            for unit in source.units:
                if unit.kind == "heading":
                    match = _MEMBER_SECTION.match(fold(unit.text))
                    if match:
                        sections.setdefault(match["name"], [])
                    continue
                match = _MEMBER_SECTION.match(fold(unit.heading))
                if match and unit.kind in ("sentence", "list"):
                    sections.setdefault(match["name"], []).append((source, unit))
        if len(sections) >= 2:
            return list(sections.items())
    return []


def rows_alike(sources: list[Source], name: str, other: str) -> bool:
    """Whether an excerpt labels rows of its table by both ``name`` and ``other`` (溪南银行 |
    … and 澜州银行 | … of a valuation table): what one table's rows are named by is of one
    kind, so a follow-up naming one (澜州银行呢？) asks in the other's place."""
    name, other = fold(name), fold(other)
    for source in sources:
        rows = [u for u in source.units if u.kind == "row"]
        if any(_labelled(u, name) for u in rows) and any(_labelled(u, other) for u in rows):
            return True
    return False


def _labelled(row: Unit, name: str) -> bool:
    """Whether ``row``'s label is ``name`` (its first cell, as written)."""
    return bool(row.clauses) and fold(row.clauses[0]).strip() == name


def unit_score(unit: Unit, reading: Reading, source: Source) -> float:
    if unit.kind in ("heading", "header"):
        return 0.0
    text = fold(unit.text)
    if not reading.question.asks_share:
        # as the floor reads it: the whole a share is taken of is not what the unit states
        # (其中首次授予 520.00 万股，占本激励计划拟授予总量的 86.67% is not the plan's total)
        text = without_share_wholes(text)
    context = fold(unit.heading)
    if unit.kind == "row":
        text += "\n" + fold(unit.clauses[0])  # its label, wrapped over two lines or not
        context += "\n" + fold(table_caption(source, unit))  # what its rows are (前十名股票)
        # Rows the question names together answer together: each states the others' labels.
        named = named_rows(reading, source, unit)
        if unit in named:
            text += "\n" + "\n".join(fold(r.clauses[0]) for r in named)
    # Another entity the question names is asked about here (持有北辰医药的比例).
    others = [t for t in reading.entity_terms if not source_names(source, t)]
    topic = [*reading.topic, *others] or list(reading.of) or list(reading.entity_terms)
    score = 0.0
    headed = owned = False  # terms stated only with the section's heading, by the unit
    for term in topic:
        c = coverage(term, text)
        if c >= 0.6:
            score += 2.0 * c
            owned = True
        elif (
            unit.kind not in ("list", "row")
            and is_section_heading(unit.heading)
            and coverage(term, f"{text}\n{context}") >= 0.6
        ):
            # part in the sentence, part in its section's heading (二、业务结构 → 冷链仓储收入
            # 31.4 亿元) — not a table's caption, which speaks of the table; a heading naming
            # two things (一、股权激励方式及股票来源) is about each where a sentence under it
            # writes the term itself (股票来源为…), not of its other sentences
            said_apart = any(
                u.heading == unit.heading and u is not unit and coverage(term, fold(u.text)) >= 0.6
                for u in source.units
            )
            weight = 0.5 if said_apart else 1.5
            score += weight * coverage(term, f"{text}\n{context}")
            headed = True
        elif coverage(term, context) >= 0.6:
            # A list is read under its heading (第四节 风险提示 → its items), a table row
            # under its header.
            score += 2.0 * coverage(term, context) if unit.kind in ("list", "row") else 0.5
        elif coverage(term, fold(source.title)) >= 0.6:
            score += 0.5  # what the whole document is about (定增 of a placement plan)
    if score == 0.0:
        return 0.0
    if headed and not owned and section_leads(source).get(unit.heading) == unit.text:
        # What a section is about, asked in its heading's words alone (（八）审议通过《关于调整
        # 公司组织架构的议案》 → 组织架构怎么调整), is said first under it: its lead (同意设立…),
        # not the formula closing every section alike (表决结果：同意 9 票…).
        score += 0.25
    for term in reading.of:
        # the earlier question's topic, which the follow-up asks an attribute of: a row's
        # label, a sentence's words before its first figure — what the figure is of, not a
        # cause after it (基本每股收益…增长 20.00%，主要系…净利润增加所致)
        label = fold(unit.clauses[0]) if unit.kind == "row" and unit.clauses else _subject(text)
        score += 1.0 * coverage(term, label) if coverage(term, label) >= 0.6 else 0.0
    # A row's period is its column's header (本报告期, 年初至报告期末).
    timed = f"{text}\n{context}" if unit.kind == "row" else text
    if unit.kind == "row":
        # (a column of the year before, 上年末, is of the year before the title's: year_before)
        before = year_before(unit.heading, source.title)
        asked_years = {p for p in reading.question.periods if p.isdigit()}
        if asked_years and asked_years <= periods_in(before):
            timed += "\n" + before
    for time in reading.question.times:
        if coverage(fold(time), timed) >= 0.6:
            score += 0.5
    # A sentence that writes a period of its own the question does not ask (年初至报告期末
    # over 本报告期 of a Q3 report) is another period's figure (a year, 同比 aside).
    asked = {p for p in reading.question.periods if p in PARTS}
    own = {p for p in periods_in(text) if p in PARTS}
    if unit.kind != "row" and asked and own and not own & asked:
        score -= 0.5
    # A few shared words break ties between sentences that both name the topic.
    # (not the document's author, 海岳证券那篇泊川点评: the note names it in its disclaimer)
    asked_text = reading.question.text
    for doer in authors(reading.question):
        asked_text = asked_text.replace(doer, " ")
    wanted = _tokens(asked_text)
    said = f"{unit.heading} {unit.text}" if unit.kind in ("list", "row") else unit.text
    score += min(0.5, 0.1 * len(wanted & set(search_tokens(said))))
    if unit.kind == "list":
        enumerated = reading.question.enumerates or heading_asked(reading, unit)
        score += 1.0 if enumerated else -0.5
        # The fuller enumeration of a topic answers "which" better.
        score += 0.1 * min(len(unit.clauses), 5) if enumerated else 0.0
        # The top N asked (前十大股东有哪些) are N things: a list of fewer items (a note on
        # them, 上述股东关联关系的说明：…) is not that list.
        if enumerated and len(unit.clauses) < top_asked(reading.question.text):
            score -= 1.5
        # A list answers for its lead-in (or, with none, its heading): the list inside an
        # item (1. 市场风险 / （1）…) answers 市场风险有哪些, the outer list (主要风险如下：)
        # 主要风险有哪些.
        if enumerated and all(coverage(t, list_lead(unit)) >= 0.6 for t in topic):
            score += 0.5
    if reading.question.quantitative and quantities_in(unit.text):
        score += 0.5
        # The figure the topic names: the term right before the number (营业收入 75.2 亿元),
        # not inside another word before it (出口收入占比 35.0%).
        # (a row's label names its figures: 研发费用 | 21,730 | …)
        label = fold(unit.clauses[0]) if unit.kind == "row" and unit.clauses else ""
        if any(names_figure(term, unit.text) for term in topic) or (
            label and any(coverage(term, label) >= 0.6 for term in topic)
        ):
            score += 0.5
    if _in_the_scale_asked(reading, unit):
        score += 0.5  # 多少亿: 128.46 亿元 as asked, over a table of 百万元
    definition = unit.kind in ("sentence", "clause") and not reading.question.quantitative
    if definition and any(defines(t, unit.text) for t in topic):
        score += 0.5  # what a thing is: the sentence that says 核心产品为…
    if unit.kind == "row" and is_total(unit):
        score += 0.25  # the whole, unless the question names a row
    enumerating = reading.question.which or reading.question.each
    if unit.kind == "sentence" and enumerating and enumerates(unit.text):
        score += 1.0  # a sentence that names several things answers "which ones" whole
        return score
    if unit.kind == "list" and (reading.question.enumerates or heading_asked(reading, unit)):
        return score  # a whole enumeration is not penalized for its length
    if unit.kind == "row":
        return score - 0.002 * len(unit.clauses[0] if unit.clauses else "")  # one record
    return score - 0.002 * len(unit.text)


# A top N named by its rank (前十大股东, 前五名客户, 前 3 位).
_TOP_NAMED = re.compile(r"前\s*([\d两一二三四五六七八九十]{1,2})\s*[大名位]")


def top_asked(question: str) -> int:
    """How many things a top N the question names asks (前十大股东 → 10); 1 for none."""
    match = _TOP_NAMED.search(fold(question))
    if match is None:
        return 1
    n = match.group(1)
    return int(n) if n.isdigit() else cn_number(n.replace("两", "二"))


def _in_the_scale_asked(reading: Reading, unit: Unit) -> bool:
    """The unit states a figure in the scale the question asks it in (多少亿 → 128.46 亿元):
    the answer in the form wanted, not one to convert (a table's 12,846.30 in 百万元)."""
    scale = reading.question.scale
    return bool(scale) and any(f.unit.startswith(scale) for f in quantities_in(unit.text))


def _subject(text: str) -> str:
    """A sentence's words before its first quantity (all of it when it has none)."""
    figures = quantities_in(without_markers(text))
    if not figures:
        return text
    return without_markers(text)[: figures[0].start]


@lru_cache(maxsize=64)
def _tokens(question: str) -> frozenset[str]:
    """A question's search tokens, read once however many units are scored."""
    return frozenset(search_tokens(question))


_NAMED = r"\s*(?:为|是|达|达到|约|：|:)?\s*[-+]?\d"


def names_figure(term: str, text: str) -> bool:
    """Whether ``term`` (or a word the vocabulary prints for it) is written right before a
    number in ``text``: the term names that figure."""
    words = {fold(term), *LEXICON.get(fold(term), ())}
    return any(re.search(re.escape(w) + _NAMED, text) for w in words if w)


def defines(term: str, text: str) -> bool:
    """Whether ``text`` says what ``term`` is, or who: the term followed by 为 / 是 / a
    colon, or closing what someone is made (选举韩知远先生为公司第五届董事会董事长) — not a
    word of an adverbial (经董事长提名，…)."""
    words = {fold(term), *LEXICON.get(fold(term), ())}
    return any(
        re.search(re.escape(w) + r"\s*(?:为|是|：|:)", text)
        or re.search(
            r"(?:为|担任|出任)[^，。；,;]{0,12}?" + re.escape(w) + r"(?:[，。；,;]|$)", text
        )
        for w in words
        if w
    )


# A section's number opening a line before its title (4.3 报告期内基金持有人数或…说明).
_SECTION_NUMBER = re.compile(rf"^[ \t]*({SECTION_NUMBER})[ \t]+(?=[^\W\d_])", re.MULTILINE)


def quantities_in(text: str) -> list[Figure]:
    """The figures ``text`` writes that are quantities: dates (2026 年, 7 月) are not, nor a
    section's number (4.3 报告期内…: it numbers, it counts nothing)."""
    numbers = {m.start(1) for m in _SECTION_NUMBER.finditer(text)}
    return [f for f in figures_in(text) if not f.date and not (f.start in numbers and not f.unit)]


_SPACES = re.compile(r"\s+")


def _names_an_item(reading: Reading, items: list[str]) -> bool:
    """Whether the question names one of a list's ``items`` by its label, the words before
    its first comma or colon (2、研发中心建设项目，…拟使用募集资金…: 研发中心建设项目)."""
    asked = fold(reading.question.text)
    for item in items:
        label = re.split(r"[，,：:；;。]", without_markers(fold(item)), maxsplit=1)[0]
        if len(label) >= 2 and coverage(label, asked) >= 0.6:
            return True
    return False


def list_lead(unit: Unit) -> str:
    """What a list is of: its lead-in (主要风险如下：), or, with none, its heading (第四节
    风险提示)."""
    first = unit.text.split("\n", 1)[0]
    return fold(unit.heading if unit.clauses and first == unit.clauses[0] else first)


def heading_asked(reading: Reading, unit: Unit) -> bool:
    """Whether the question asks for what a list's lead-in or heading names, and nothing of
    one item: no figure, no one of them (谁, 哪个, 第二大), only the thing named — as a noun
    phrase (帮我查一下北辰医药三季报的风险提示, 募集资金的投向) or with 是什么 (业绩预增的
    原因是什么). A heading names its section, so the section, the whole list, is asked, as
    哪些 would ask it."""
    question = reading.question
    if not unit.clauses:
        return False  # a lead-in with no items of its own (…目标如下：): a table follows it
    if question.asks_figure or question.quantitative or question.ordinal:
        return False
    if question.who_or_which or question.compares or question.extreme:
        return False
    if question.follow_up or reading.resolved_from:
        return False  # (营收呢？ asks what the question before asked: a figure)
    topic = reading.topic
    lead = list_lead(unit)
    if not topic or not all(coverage(t, f"{fold(unit.heading)}\n{lead}") >= 0.6 for t in topic):
        return False
    # A list is of what its lead-in says (本次募集资金拟投资于以下项目：), the heading over it
    # naming its section (第五节 募集资金投向); a list under 四、利润分配 whose lead-in writes
    # 募集资金 is not the 分红方案 asked.
    return lead == fold(unit.heading) or any(coverage(t, lead) >= 0.6 for t in topic)


def candidate_units(source: Source, reading: Reading) -> list[Unit]:
    """A list is one answer to "which ones"; otherwise each item stands on its own."""
    out = []
    title = _SPACES.sub("", fold(source.title))
    for unit in source.units:
        if _SPACES.sub("", fold(unit.text)) == title:
            # the document's title line names the document, it answers nothing — nor
            # does a page's running header, the title set apart by a layout's spaces
            continue
        # (a list answers whole what asks several of its items: which ones, or two figures;
        # and what counts them, 业绩变动原因有几条: its items are what is counted)
        question = reading.question
        whole = question.enumerates or question.figures_asked > 1 or question.counts
        if unit.kind == "list" and not whole and not heading_asked(reading, unit):
            lines = unit.text.split("\n")
            items = unit.clauses or lines[1:]
            lead_in = lines[0] if lines[0] not in items and not is_item(lines[0]) else ""
            context = f"{unit.heading} {lead_in}".strip()
            if quantities_in(lead_in):
                # A lead-in writing a figure of its own (募集资金总额不超过 120,000.00 万元，
                # …拟投资于以下项目：) is a sentence that answers by itself.
                out.append(Unit(lead_in, "sentence", unit.heading, [lead_in]))
                if not reading.question.ordinal and not _names_an_item(reading, items):
                    # (the whole's own figure answers what names none of its parts: 募集资金
                    # 总额 asked is the lead-in's 120,000.00 万元, not the first project's)
                    continue
            for line in items:
                out.append(Unit(line, "sentence", context, [line]))
            continue
        classes = listed_alike(source, unit) if unit.kind == "row" else []
        if classes and not unit.header_from:
            # quoted under the row naming what each of its items is of (below)
            header = unit.header_text or unit.heading
            unit = replace(unit, header_text="\n".join([header, *(r.text for r in classes)]))
        out.append(unit)
        if unit.kind == "header" and reading.question.which:
            out += table_as_list(source, unit, reading)
        if unit.kind == "row" and unit.header_from and reading.question.which:
            out += split_table_as_list(source, unit, reading)
        if unit.kind == "heading" and whole:
            out += sibling_headings(source, unit, reading)
        if unit.kind == "sentence" and len(unit.clauses) > 1:
            # A clause of a long sentence answers on its own (…；扣非净利润 5.9 亿元…；) —
            # unless the heading over it is what is asked: its clauses are then the items of
            # a list (风险提示 / 下游需求不及预期；新品导入低于预期；…), asked whole.
            clauses = Unit("\n".join(unit.clauses), "list", unit.heading, unit.clauses)
            if not heading_asked(reading, clauses):
                out += [Unit(c.strip(), "clause", unit.heading, [c]) for c in unit.clauses]
    return out


def table_as_list(source: Source, header: Unit, reading: Reading) -> list[Unit]:
    """A table read as the list of its rows, for a question that asks which ones (前五名客户
    是哪些, 有哪些产品): its caption and header lead in, every member row is an item
    — quoted whole, or by its label alone when the table is wider than MAX_QUOTED_CELLS;
    a kind the rows' own cells state (哪些是国有法人) keeps the rows of that kind."""
    # its rows, a page's footer between them or not
    at = source.units.index(header)
    joined = " | ".join(header.clauses)
    rows = [u for u in source.units[at + 1 :] if u.kind == "row" and u.heading == joined]
    rows = [u for u in rows if is_member(u)]
    if len(rows) < 2:
        return []
    return [_rows_listed(header, of_the_kind_asked(reading, source, header, rows, True))]


def _rows_listed(header: Unit, rows: list[Unit]) -> Unit:
    wide = len(header.clauses) > MAX_QUOTED_CELLS
    items = [r.clauses[0] if wide else r.text for r in rows]
    lead = header.clauses[0] if wide else header.text
    return Unit("\n".join([lead, *items]), "list", f"{header.heading}\n{header.text}", items)


def of_the_kind_asked(
    reading: Reading, source: Source, row: Unit, rows: list[Unit], listed: bool = False
) -> list[Unit]:
    """The rows of ``rows`` of the kind the question asks, when a phrase no header cell
    speaks to, nor the caption, title or section heading, names an item of their own cells
    (高管 over 职务 cells 董事、总经理; 国有法人 over 股东性质 cells — not 境内非国有法人,
    another kind): ``rows`` when no phrase names a kind. A row is of every kind asked; in a
    table ``listed`` whole (which ones: 董事和高管都有谁) of any of them, and with no row of
    any, the table is listed whole as before."""
    header = row.kind == "header"
    cells = [fold(c) for c in (row.clauses if header else row.heading.split(" | "))]
    # (a header is read under its section's heading: 三、激励对象的范围及分配 says what every
    # row is, 激励对象 — no kind of some of them)
    said = fold(f"{table_caption(source, row)}\n{source.title}\n{row.heading if header else ''}")
    kinds = [p for p in reading.phrases if not any(_touched(p, cells)) and not states(p, said)]
    of_kind = [
        candidate
        for candidate in rows
        if (any if listed else all)(
            any(
                _names_item(p, i)
                for c in candidate.clauses[1:]
                for i in _ITEM_SEPARATORS.split(fold(c))
            )
            for p in kinds
        )
    ]
    return (of_kind or rows) if listed else of_kind


def split_table_as_list(source: Source, row: Unit, reading: Reading) -> list[Unit]:
    """A table cut across two chunks read as one list (前三大股东是谁 over a table whose third
    row opens the next chunk), from the excerpt whose first row is ``row``: the header's
    excerpt's header and rows, cited to it, then this excerpt's rows — [] for a later row
    or when that excerpt was not retrieved. A kind asked keeps its rows of both parts."""
    rows = [u for u in source.units if u.kind == "row" and u.header_from == row.header_from]
    owner = next((s for s in reading.sources if s.id == row.header_from), None)
    if rows[0] is not row or owner is None:
        return []
    header = next(
        (u for u in owner.units if u.kind == "header" and " | ".join(u.clauses) == row.heading),
        None,
    )
    if header is None:
        return []
    at = owner.units.index(header)
    earlier = [u for u in owner.units[at + 1 :] if u.kind == "row" and u.heading == row.heading]
    earlier = [u for u in earlier if is_member(u)]
    later = [r for r in rows if is_member(r)]
    if len(earlier) < 2:
        return []
    kept = of_the_kind_asked(reading, owner, header, [*earlier, *later], True)
    before = _rows_listed(header, [r for r in earlier if r in kept])
    items = [r.text for r in later if r in kept]
    text = f"{before.text} [[cite:{owner.id}]]\n" + "\n".join(items)
    return [Unit(text, "list", before.heading, [*before.clauses, *items])]


# The markers that number a section's sibling headings (（一）…（八）, 一、…): of a kind.
_SIBLING_MARKERS = ("cn", "pcn", "num", "pnum")


def sibling_headings(source: Source, last: Unit, reading: Reading) -> list[Unit]:
    """The sibling headings of one section read as one list (（一）审议通过《…议案》 …
    （八）…: the resolutions a board passed), for a question that asks which ones or how
    many, from the excerpt holding ``last``, the run's last heading: its siblings numbered
    1 to n, each once, in the retrieved excerpts of its document — each excerpt's cited
    where its headings end — and closed by a heading of another kind after ``last`` (三、
    备查文件), so no sibling is missing, and each naming what is asked (议案): a document's
    outline (一、本期业绩预计情况 … 三、业绩变动原因说明) is no list of causes; else []. The
    section's own heading leads in."""
    mark = marker(last.text)
    if mark is None or mark[0] not in _SIBLING_MARKERS or mark[1] < 2:
        return []
    kind, n = mark
    at = source.units.index(last)
    later = [u for u in source.units[at + 1 :] if u.kind == "heading"]
    if not later or (marker(later[0].text) or ("", 0))[0] == kind:
        return []  # the last of the run, and a heading of another kind closes it
    found: dict[int, tuple[Source, Unit]] = {}
    parent = ""
    for other in [s for s in reading.sources if s.title == source.title]:
        for i, unit in enumerate(other.units):
            its = marker(unit.text) if unit.kind == "heading" else None
            if its is None or its[0] != kind or (other is source and i > at):
                continue
            if its[1] in found or its[1] > n:
                return []  # numbered twice, or beyond the closed run: another list
            found[its[1]] = (other, unit)
            before = other.units[i - 1] if i else None
            if its[1] == 1 and before is not None and before.kind == "heading":
                parent = before.text
    if sorted(found) != list(range(1, n + 1)):
        return []
    named = [fold(unit.text) for _, unit in found.values()]
    if not any(all(states(p, heading) for heading in named) for p in reading.phrases):
        return []
    lines = [parent] if parent else []
    items = []
    for number in range(1, n + 1):
        owner, unit = found[number]
        items.append(unit.text)
        lines.append(unit.text)
        following = found.get(number + 1)
        if following is not None and following[0] is not owner:
            lines[-1] += f" [[cite:{owner.id}]]"
    if found[n][0] is not source:
        return []
    return [Unit("\n".join(lines), "list", parent, items)]


# A table's total row: its label says it is the whole (合计), as a question may (整体).
TOTALS = ("合计", "总计", "总体", "整体", "全部", "全公司", "总数")


def carried_rows(
    sources: list[Source], question: str, earlier: list[str], asked: tuple[str, ...] = ()
) -> list[str]:
    """The table rows the latest earlier question naming one named (华南呢？) that a
    follow-up naming no row (出租率呢？, then 干线线路呢？) goes on asking about: their
    labels, or [] when it names a row itself. ``earlier``: latest first. A row goes on
    only where what the follow-up asks (``asked``, its phrases) is asked of it: its label,
    its table's header and caption state each (对应的PE呢？ asks nothing of a row of
    归属于母公司股东的净利润); a share class asked by its letter names a table, not a row."""
    labels = {
        fold(u.clauses[0]).strip()
        for s in sources
        for u in s.units
        if u.kind == "row" and u.clauses and not is_total(u)
    }
    labels = {label for label in labels if len(label) >= 2}
    # (a label inside a column's name the question writes is that column's word, not the
    # row: 业绩比较基准 of 业绩比较基准收益率③)
    cells = {
        _CELL_TAIL.sub("", fold(c))
        for s in sources
        for u in s.units
        if u.kind == "row"
        for c in u.heading.split(" | ")[1:]
    }
    columns = sorted((c for c in cells if len(c) >= 3), key=len, reverse=True)

    def unwritten(text: str) -> str:
        for column in columns:
            text = text.replace(column, "|")
        return text

    if any(_names_label(label, unwritten(fold(question))) for label in labels):
        return []

    def asked_of(label: str) -> bool:
        return any(
            all(
                is_class_letter(p) or states(p, f"{label}\n{u.heading}\n{u.caption}") for p in asked
            )
            for s in sources
            for u in s.units
            if u.kind == "row" and u.clauses and fold(u.clauses[0]).strip() == label
        )

    for text in map(lambda t: unwritten(fold(t)), earlier):
        named = [label for label in labels if _names_label(label, text) and asked_of(label)]
        if named:
            return sorted(named, key=lambda label: _names_label(label, text) - 1)
    return []


# A header cell's unit in brackets and its number (份额净值增长率①, 公允价值（元）).
_CELL_TAIL = re.compile(r"\s*(?:[（(][^）)]*[）)]|[\d①-⑳]+)\s*$")


def _names_label(label: str, text: str) -> int:
    """Where ``text`` names the row ``label``, plus one — as written, or by a word the
    vocabulary prints as it (近一年 names the row 过去一年) — or 0. A ratio of the label
    (研发费用率) does not name its row (研发费用)."""
    text = without_ratios_of(label, text)
    if label in text:
        return text.find(label) + 1
    for word, printed in LEXICON.items():
        if label in printed and word in text:
            return text.find(word) + 1
    return 0


def is_total(row: Unit) -> bool:
    return bool(row.clauses) and fold(row.clauses[0]).strip() in TOTALS


# A row that reconciles the members to the total (抵销及其他, 分部间抵销, 调节项): no member
# of what the table's rows are.
_RECONCILING = re.compile(r"^(?:分部间|内部)?(?:抵[销消]|调节)")
# A row that is a part of the row above it (其中：国债及地方政府债), not one more thing listed.
_PART_ROW = re.compile(r"^其中\s*[:：]?")


# A row that is the group's own figure, consolidated (集团合并, 合并口径, 本集团): the whole
# its subsidiaries' rows are parts of, as a total row is.
_CONSOLIDATED = re.compile(r"^(?:本?集团|本?公司)?合并(?:口径|报表|数)?$|^本?集团$|^本公司$")


def is_whole(row: Unit) -> bool:
    """A row that states the whole of what the table's rows are parts of: its total (合计)
    or the group's consolidated figure (集团合并)."""
    label = fold(row.clauses[0]).strip() if row.clauses else ""
    return is_total(row) or bool(_CONSOLIDATED.match(label))


def a_part_for_the_whole(reading: Reading, source: Source, row: Unit) -> bool:
    """Whether ``row`` is one of several parts of a table (its segments, regions, holders:
    the table's rows but its total, consolidated or reconciling ones, 抵销及其他 — retrieved
    here or in its split part) while the question names no row of it: what is asked of no
    part is asked of the whole (营业收入 of the group, not of 寿险; 持股比例 of the bank, not
    of its first holder), answered by the whole's row (合计, 集团合并) or not at all. A
    question asking for each part, the largest or a ranked one (各分部, 最高, 第一大), which
    ones or who, or what the table's caption says all its rows are, still reads the rows."""
    question = reading.question
    if is_whole(row) or question.each or question.extreme or question.ordinal:
        return False
    if question.which or question.enumerates or question.counts or question.who_or_which:
        return False  # (which ones, how many, who: the rows are what is asked for)
    if asks_the_table(reading, source, row):
        return False  # (the table whole: every row answers)
    rows = [*table_rows(source, row), *split_parts(reading, source, row)]
    labels = [fold(r.clauses[0]).strip() for r in rows if r.clauses]
    if len(rows) - sum(1 for r in rows if not is_member(r)) < 2:
        return False  # (one part alone is the table's only thing)
    return names_no_row(reading, source, row, labels)


def names_no_row(reading: Reading, source: Source, row: Unit, labels: list[str]) -> bool:
    """Whether the question names no row of ``row``'s table (``labels``, its rows' labels):
    none written, none its cells name, and no phrase says more than the table's columns,
    caption and title do — a phrase saying more names a row in the question's own words
    (产险板块 for 财产险), the row that answered it."""
    if labels_named(labels, fold(reading.question.text)) or _named_by_its_cells(reading, row):
        return False
    if reading.resolved_from and labels_named(labels, fold(reading.resolved_from)):
        return False  # (the question before named it: 同比呢？ after 营业收入…)
    if any(y in fold(" ".join(row.clauses)) for y in reading.question.years):
        return False  # (a year a row's cell writes names that row: 2028 年的业绩考核目标)
    # (a thing the conversation carries — whom 她 of 她获授多少万股 is, 财务总监 — that the
    # row's own cells state names the row)
    items = [item for cell in row.clauses[1:] for item in _ITEM_SEPARATORS.split(fold(cell))]
    carried = [fold(t) for t in reading.topic if not any(fold(t) in p for p in reading.phrases)]
    if any(_names_item(t, item) for t in carried for item in items):
        return False
    said = fold(f"{row.heading}\n{table_caption(source, row)}\n{source.title}")
    asked = (*reading.phrases, *(fold(t) for t in reading.of))
    return all(all(stated_characters(p, said)) for p in asked)


def asks_the_table(reading: Reading, source: Source, row: Unit) -> bool:
    """Whether the question asks for what the table is as a whole: it names no row, and
    what it asks is what the caption leading the table in says all its rows are (各年度业绩
    考核目标如下 over a row per year: 业绩考核目标是什么), not any one column's figure."""
    question = reading.question
    if not reading.phrases or question.extreme or question.ordinal:
        return False
    caption = fold(table_caption(source, row))
    cells = [fold(c) for c in header_cells(row.heading)]
    if not all(
        states(p, caption) and not any(states(p, c) for c in cells) for p in reading.phrases
    ):
        return False
    rows = [*table_rows(source, row), *split_parts(reading, source, row)]
    if any(y in fold(" ".join(r.clauses[1:])) for y in question.years for r in rows):
        return False  # (a year a row's cell writes names that row: 2028 年的业绩考核目标)
    labels = [fold(r.clauses[0]).strip() for r in rows if r.clauses]
    return names_no_row(reading, source, row, labels)


def is_member(row: Unit) -> bool:
    """A row that is one of the things the table lists — not its total, nor the row that
    reconciles them to it: 哪几个分部 lists 寿险, 财产险, 资管, not 抵销及其他."""
    label = fold(row.clauses[0]).strip() if row.clauses else ""
    return not is_total(row) and not _RECONCILING.match(label) and not _PART_ROW.match(label)


def _own_header(source: Source, row: Unit) -> int:
    """Where ``row``'s header lies among the excerpt's units: the nearest header of its
    columns before it (another table of the same columns under a caption of its own: a
    fund's A class, then its C class), or -1 (its header is another excerpt's)."""
    at = next((i for i, u in enumerate(source.units) if u is row), -1)
    for i in range(at - 1, -1, -1):
        unit = source.units[i]
        if unit.kind == "header" and " | ".join(unit.clauses) == row.heading:
            return i
    return -1


_ITEMS = re.compile(r"\s*/\s*")


def _items(row: Unit) -> int:
    """How many items the cells of ``row`` list, split by / (018462 / 018463: two)."""
    return max((len(_ITEMS.split(c.strip())) for c in row.clauses[1:]), default=1)


def listed_alike(source: Source, row: Unit) -> list[Unit]:
    """The rows before ``row`` in its table that list as many items split by / as it does:
    a fund's facts table gives one value per class (下属分级基金的交易代码 | 018462 /
    018463) in the order of the row naming the classes (下属分级基金的基金简称 | 青屿价值精选
    混合 A / 青屿价值精选混合 C), which says what each item is of."""
    count = _items(row) if row.clauses else 1
    if count < 2:
        return []
    rows = table_rows(source, row)
    before = rows[: next((i for i, r in enumerate(rows) if r is row), len(rows))]
    return [r for r in before if _items(r) == count]


def table_rows(source: Source, row: Unit) -> list[Unit]:
    """The rows of the table ``row`` belongs to (the rows under the same header; tables of
    the same columns — a fund's classes — answer together what names rows of each)."""
    return [u for u in source.units if u.kind == "row" and u.heading == row.heading]


def table_caption(source: Source, row: Unit) -> str:
    """The caption (or heading) written before ``row``'s table (前 10 名股东持股情况) — a
    borrowed header's, from its own excerpt."""
    begin = _own_header(source, row)
    headers = [u for u in source.units if u.kind == "header"]
    own = next((u.heading for u in headers if " | ".join(u.clauses) == row.heading), "")
    return row.caption or (source.units[begin].heading if begin >= 0 else own)


def ranked_row(reading: Reading, source: Source, row: Unit, ordinal: int) -> bool:
    """Whether ``row`` is the ``ordinal``-th row of a ranked table — one whose caption
    counts its rows as a top N (前 10 名股东持股情况): 第一大股东 is its first row. The
    rows of a part that borrowed its header (a table split over two excerpts) rank after
    those of the part it borrowed from; without that part retrieved, their ranks are
    unknown."""
    caption = table_caption(source, row)
    rows = [r for r in table_rows(source, row) if not is_total(r)]
    if row.header_from:
        lender = next((s for s in reading.sources if s.id == row.header_from), None)
        if lender is None:
            return False
        earlier = [
            r
            for r in split_parts(reading, source, row)
            if not is_total(r) and any(r is u for u in lender.units)
        ]
        rows = [*earlier, *rows]
    return "前N" in counted(fold(caption)) and 0 < ordinal <= len(rows) and rows[ordinal - 1] is row


def table_labels(source: Source, row: Unit) -> str:
    """The row labels of ``row``'s table and the caption (表 2 前五名客户) or heading written
    before it: what its rows are of."""
    return f"{row_labels(source, row)}\n{table_caption(source, row)}"


def row_labels(source: Source, row: Unit) -> str:
    return "\n".join(u.clauses[0] for u in table_rows(source, row) if u.clauses)


def split_parts(reading: Reading, source: Source, row: Unit) -> list[Unit]:
    """The rows of ``row``'s table that other retrieved excerpts of its document hold under
    the same header (a table split across two chunks: one of them borrowed its header)."""
    return [
        u
        for other in reading.sources
        if other is not source and other.title == source.title
        for u in table_rows(other, row)
        if u.header_from == source.id
        or (row.header_from and row.header_from in (u.header_from, other.id))
    ]


def row_owner(reading: Reading, row: Unit) -> Source | None:
    """The retrieved excerpt that holds ``row``."""
    return next((s for s in reading.sources if any(u is row for u in s.units)), None)


def named_rows(reading: Reading, source: Source, row: Unit) -> list[Unit]:
    """The rows of ``row``'s table whose labels the question names, in table order."""
    rows = [u for u in table_rows(source, row) if u.clauses]
    # (a share class asked by its letter — 岚汀稳进 A 过去一年… — names its own table of
    # the columns the classes share: the rows under its caption)
    letters = [fold(p) for p in reading.phrases if is_class_letter(p)]
    letters += [x for x in classes_asked(reading.question.text) if x not in letters]
    if letters:
        rows = [
            u
            for u in rows
            if all(
                re.search(rf"(?<![a-z]){re.escape(x)}(?![a-z])", fold(table_caption(source, u)))
                for x in letters
            )
        ]
    named = labels_named([fold(u.clauses[0]).strip() for u in rows], fold(reading.question.text))
    return [u for u in rows if fold(u.clauses[0]).strip() in named]


def answering_rows(reading: Reading, source: Source, row: Unit) -> list[Unit]:
    """The rows of ``row``'s table that answer together: those the question names (A和B的…),
    the row with the highest or lowest value of the column asked (哪个区域…最高), or every
    row but the total when it asks for each (各产品的毛利率); else ``row`` alone."""
    named = named_rows(reading, source, row)
    if len(named) >= 2 and row in named:
        return named
    question = reading.question
    if not named and asks_the_table(reading, source, row):
        # what the caption says every row is (业绩考核目标): every row, the table whole
        own = [r for r in table_rows(source, row) if is_member(r)]
        return [*own, *(r for r in split_parts(reading, source, row) if is_member(r))] or [row]
    if not (question.extreme or question.each) or named:
        return [row]
    rows = [r for r in table_rows(source, row) if is_member(r)]
    # (a table split over two excerpts has its rows in both: the rows of its other part,
    # under the same header in a retrieved excerpt of the document — before this part's when
    # this part borrowed the header, after them when it lent it; each row once: 各分部…分别
    # lists every row of both parts in the table's order, not the other part's twice)
    others = [r for r in split_parts(reading, source, row) if is_member(r)]
    rows = [*others, *rows] if row.header_from else [*rows, *others]
    label = fold(row.clauses[0]) if row.clauses else ""
    if question.each and any(states(p, label) for p in reading.phrases):
        # a kind several rows' labels state (各项费用: 销售费用, 管理费用…; 各解除限售期: 第一个
        # 解除限售期, … in both parts of a split table) asks each of them
        kind = [
            r
            for r in rows
            if r.clauses and any(states(p, fold(r.clauses[0])) for p in reading.phrases)
        ]
        if len(kind) >= 2 and row in kind:
            return kind
        return [row]  # its label is asked: each of its columns (本期和上年同期分别多少)
    column = row_cell(row, reading.phrases)
    # (the things ranked or listed, when a phrase no header cell speaks to names them — 高管
    # of 获授股数最多的三位高管 — are the rows whose own cells state it: 副总经理, not 骨干)
    of_kind = of_the_kind_asked(reading, source, row, rows)
    if question.each:
        # (every row of the kind asked — 高管 of 高管分别获授多少股: 董事、总经理, not 骨干 or
        # 预留部分 — when the rows' own cells name kinds)
        return of_kind or rows or [row]
    valued = []
    for candidate in of_kind or rows:
        cell = candidate.clauses[column] if 0 < column < len(candidate.clauses) else ""
        figures = quantities_in(cell) or figures_in(cell)
        if figures:
            valued.append((figures[0].value * question.extreme, candidate))
    if not valued:
        return [row]
    valued.sort(key=lambda v: -v[0])
    return [candidate for _, candidate in valued[: question.top]]


def row_answers(reading: Reading, row: Unit, labels: str = "", title: str = "") -> bool:
    """A row answers for its own label, or with the rows its table has that the question
    also names (汽车电子和消费电子的毛利率): a phrase that begins with a modifier neither
    the table's labels nor its header state (西北区域… over a table of 华东, 华中) names a
    row the table does not have — the whole (整体…) is the total row."""
    label = fold(row.clauses[0]) if row.clauses else ""
    if _named_by_its_cells(reading, row):
        return True
    said = fold(f"{label}\n{labels}\n{' | '.join(header_cells(row.heading))}")
    if is_total(row):
        said += "\n" + "\n".join(TOTALS)
    # (an item of the row's own cells names it too: 高管 of 董事、总经理 — not 副总经理 总经理)
    items = [item for cell in row.clauses[1:] for item in _ITEM_SEPARATORS.split(fold(cell))]
    if not all(
        leading_unstated(p, said) < 2 or any(_names_item(p, item) for item in items)
        for p in reading.phrases
    ):
        return False
    if any(_modifies(p, label, reading.phrases) for p in reading.phrases):
        return False
    # (a phrase that is another row's label whole, its unit in brackets aside, names that
    # row, not this one, unless the question names this row too: 预留部分的激励对象 is not
    # asked of 核心骨干（182 人）, 营业收入 not of 归母净利润（百万元）)
    others = {without_unit(fold(line)) for line in labels.split("\n")}
    others -= {without_unit(label)}
    if any(p in others for p in reading.phrases) and not any(
        states(p, label) for p in reading.phrases
    ):
        return False
    # (a label writing a phrase asked with another word inside it is another row's:
    # 期末基金份额净值 does not answer 期末基金资产净值, whatever the table's other labels say)
    if any(
        inner_replaced(q, stated_characters(q, label), label)
        for q in map(counted, reading.phrases)
        if not spelled_otherwise(q, label)
    ):
        return False
    # One cell answers: what the question asks of a column (a phrase a header cell states
    # part of) is stated by the row's label and one column's header, not by pieces of two
    # or of the caption (营收 from 营业收入, 增长 from 毛利率比上年增减); the rest names
    # rows (their labels, the caption: 前五名客户, the label column's header: 股票名称).
    header = header_cells(year_on_year(row.heading))
    # A column whose cell is the row's year (考核年度 | 2028 年) names the row, like its
    # label: its header asks no figure, its year is the row's period.
    dated = [
        i
        for i, cell in enumerate(row.clauses[1 : len(header)], start=1)
        if _YEAR_CELL.fullmatch(cell.strip())
    ]
    label = "\n".join([label, *(fold(f"{header[i]} {row.clauses[i]}") for i in dated)])
    columns = [i for i in range(1, min(len(header), len(row.clauses))) if i not in dated]
    cells = [fold(header[i]) for i in columns]
    # (a cell stating no value, 不适用, gives no figure of its column's period)
    valued = {fold(header[i]) for i in columns if row.clauses[i].strip() not in NO_VALUE}
    periods = reading.question.periods
    # (a top N the caption counts its rows by names the rows, not a column: 第二大股东持股
    # 比例 asks the column of 持股比例 of a row of 前 10 名股东; so does a phrase the label
    # writes whole, its ordinal included: 第二个归属期)
    ranked = counted(fold(labels))
    # (a phrase the document's title writes whole names the document, not a column: 激励计划
    # of 霁川软件…限制性股票激励计划（草案）摘要, however a header cell ends in 本计划…)
    named = fold(title)
    asked = [
        q
        for q in (class_letter(_beyond_rank(p, ranked)) for p in reading.phrases)
        if q
        and q not in fold(header[0])
        and counted(q) not in counted(label)
        and not (len(q) >= 2 and q in named)
    ]
    # (the part of a share asked that glues the row's label to another column's words —
    # 苏明蕙获授数量占…比例 — names the row and the figure the share column takes of its
    # whole: that column answers, the part's own column states the rest)
    asked = [q for q in asked if not _share_of_its_own_figure(reading, q, label, cells)]
    # (a phrase led by the label column's header — 分部营业收入 of 各分部营业收入, over 分部 |
    # 营业收入 — names the rows by what they are, and asks the column after it)
    # — and so does that header right after the row's label, naming the row by its name and
    # its kind (寿险分部营业收入: 寿险 | … under 分部 | 营业收入; 财产险分部净利润 is
    # 财产险's 净利润, whether of 分部净利润 or of 净利润同比变动)
    kind = fold(header[0]).strip()
    asked = [_without_kind(q, kind, label, cells) for q in asked]
    # what any header cell states of each phrase, read once (a table may be 500 wide)
    touched = {p: _touched(p, cells) for p in asked}

    def _column_periods(cell: str) -> frozenset[str]:
        # (a column of the year before is of its own year, not the title's: year_before)
        before = year_before(cell, title)
        if before:
            return periods_in(f"{label}\n{cell}\n{before}") | periods_in(labels) & PARTS
        return periods_in(f"{label}\n{labels}\n{cell}")

    def of_the_period(cell: str) -> bool:
        return (
            # the periods asked, by that column with the table's caption and title (前三季度
            # 同比: no column of 本报告期比上年同期增减 / 年初至报告期末 states both)
            periods <= _column_periods(cell)
            # (a column headed by a year alone — 2025A, 2026E — is that whole year's, whatever
            # part of a year the title names: 三季报点评's forecast table has no quarter)
            and not (periods & PARTS and _YEAR_ALONE.fullmatch(cell.strip()))
            # (the quarter alone asked — 单季 — is its own column's, not the title's)
            and (not asks_quarter_alone(reading.question) or states_quarter_alone(cell))
            # (a column naming a report period of its own is that period's, whatever the
            # title names: 年初至报告期末 of a third-quarter report does not answer 第三季度)
            and not (periods & PARTS and periods_in(cell) & PARTS - periods)
        )

    # Two clauses each asking a figure of one row (赤霞新材市值是多少，占净值比例多少): the
    # phrases of each clause are a cell of their own.
    return all(
        any(
            of_the_period(c)
            and (c in valued or not reading.question.asks_figure)
            and all(_one_cell_states(p, label, c, touched[p], labels) for p in group)
            for c in cells
        )
        for group in _by_clause(reading.question, asked)
    )


def _without_kind(phrase: str, kind: str, label: str, cells: list[str]) -> str:
    """``phrase`` without the label column's header ``kind`` where it names the rows: right
    after what the row's ``label`` states (寿险分部营业收入, 财产险分部净利润: the row's name
    and its kind), or at the phrase's start unless a column's header is the phrase
    (分部营业收入 of 各分部营业收入; 分部净利润 over a column of that name)."""
    at = phrase.find(kind) if len(kind) >= 2 else -1
    rest = phrase[at + len(kind) :] if at >= 0 else ""
    if at < 0 or len(rest) < 2:
        return phrase
    if at and not all(stated_characters(phrase[:at], label)):
        return phrase
    if not at and any(phrase in c for c in cells):
        return phrase
    return phrase[:at] + rest


# A column of the year before a report's own: its end (上年末, 上年度末) or its same period
# (上年同期, 去年同期); not a change on it (本期末比上年末增减).
_COLUMN_OF_YEAR_BEFORE = re.compile(r"(?:上一?|去)年(?P<end>度?末)?(?:同期)?")
_CHANGE_ON = re.compile(r"增减|变动|变化|比|较")


def year_before(header: str, title: str) -> str:
    """The periods a column of the year before is of, written out, in a report whose
    ``title`` names its own year (澜州银行…2026 年半年度报告摘要): its 上年末 is the end of
    2025 — 2025 年, and 年度 (``FY``: the balance date of that year's annual report), however
    the column writes its date (上年末（2025 年 12 月 31 日）) —, its 上年同期 is 2025 年's —
    as a question names them (2025年末资产总额). ``header`` is a column's cell or a table's
    header line; "" when it names only a change on the year before (本期末比上年末增减)."""
    years = {int(y) for y in YEAR.findall(fold(title))}
    if len(years) != 1:
        return ""
    dates = []
    for cell in fold(header).split("|"):
        match = _COLUMN_OF_YEAR_BEFORE.search(cell)
        if match and not _CHANGE_ON.search(cell):
            dates += [] if YEAR.search(cell) else [f"{max(years) - 1} 年"]
            dates += ["年度"] if match["end"] else []
    return "\n".join(dict.fromkeys(dates))


# A cell that is a year (2028 年, 2027 年度).
_YEAR_CELL = re.compile(r"(?:19|20)\d{2}\s*(?:年度?)?")


def asks_quarter_alone(question: Question) -> bool:
    """单季, 当季: the quarter alone, which a quarterly report's title does not state (its
    figures are the quarter's and the year to date's)."""
    return any(QUARTER_ALONE.fullmatch(fold(t)) for t in question.times)


_YEAR_ALONE = re.compile(r"(?:19|20)\d{2}\s*(?:[AEae]|年度?|年报)?")


def _by_clause(question: Question, phrases: list[str]) -> list[list[str]]:
    """``phrases`` grouped by the clause of ``question`` asking a figure that writes them,
    when it asks several (营收多少，同比增长多少); else one group. A phrase no such clause
    writes (a row carried from the question before) goes with every group."""
    if question.figures_asked < 2:
        return _coordinated_each(question, phrases) or [phrases]
    clauses = [c for c in _FIGURE_CLAUSES.split(fold(question.text)) if ASKS_FIGURE.search(c)]
    groups = [[p for p in phrases if fold(p) in c] for c in clauses]
    rest = [p for p in phrases if not any(p in g for g in groups)]
    return [[*g, *rest] for g in groups if g] or [phrases]


_FIGURE_CLAUSES = re.compile(r"[，,；;?？!！。]")


def _coordinated_each(question: Question, phrases: list[str]) -> list[list[str]]:
    """``phrases`` grouped by the things a question coordinates and asks each of (营收和净利润
    增速各要达到多少, A与B分别是多少): each is a figure of its own, with the phrases that name
    the row (第二个解除限售期); [] when it coordinates none or does not ask each."""
    if not question.each:
        return []
    text = fold(question.text)
    spots = sorted((text.find(p), p) for p in phrases if text.find(p) >= 0)
    members: list[str] = []
    for (a, p), (b, q) in zip(spots, spots[1:], strict=False):
        if COORDINATED.fullmatch(text[a + len(p) : b]):
            members += [p, q] if not members or members[-1] != p else [q]
        elif members:
            break
    rest = [p for p in phrases if p not in members]
    return [[m, *rest] for m in members]


def _share_of_its_own_figure(reading: Reading, phrase: str, label: str, cells: list[str]) -> bool:
    """Whether ``phrase`` is the part of a share asked (the question writes it before 占)
    made of the row's ``label`` and what one header cell states (苏明蕙获授数量 over 苏明蕙 |
    … | 获授的限制性股票数量（万股）): the row's own figure, whose share another column is."""
    if not reading.question.asks_share or f"{phrase}占" not in fold(reading.question.text):
        return False
    name = next((n for n in (label, short_name(label)) if n and phrase.startswith(n)), "")
    rest = phrase[len(name) :]
    return bool(name) and len(rest) >= 2 and any(states(rest, cell) for cell in cells)


# A table's column of the year before (上年, 上年同期, 上期 — not 上年末, a balance's date) and
# a column of the change (变动（%）, 增减, 变化) without a period of its own.
_YEAR_BEFORE_COLUMN = re.compile(r"^(?:上年|去年)(?:同期|度)?(?!末)|^上期(?!末)")
_CHANGE_HEADER = words_re(UNSIGNED_CHANGE)


def year_on_year(heading: str) -> str:
    """A table's header with its change column read as the change it is: beside a column
    of the year before (项目 | 本年 | 上年 | 变动（%）), 变动 is the change on that year —
    同比, as a question asks it (归母净利润同比增长多少). Else the header as it is."""
    cells = heading.split(" | ")
    if not any(_YEAR_BEFORE_COLUMN.match(fold(c).strip()) for c in cells[1:]):
        return heading
    return " | ".join(
        f"同比{c}" if i and _CHANGE_HEADER.search(c) and not periods_in(c) else c
        for i, c in enumerate(cells)
    )


def _named_by_its_cells(reading: Reading, row: Unit) -> bool:
    """A question asking who or which one is answered by the row whose own cells — not its
    label, not its header — state every phrase it asks: 苏明蕙 | 副总经理、财务总监 | 25.00
    answers 财务总监是谁. The row's label is the one asked for."""
    if not reading.phrases or not reading.question.who_or_which:
        return False
    items = [item for cell in row.clauses[1:] for item in _ITEM_SEPARATORS.split(fold(cell))]
    return all(any(_names_item(p, item) for item in items) for p in reading.phrases)


# What separates the items of one cell (董事、总经理).
_ITEM_SEPARATORS = re.compile(r"[、，,/；;]")


def _names_item(phrase: str, item: str) -> bool:
    """An item of a cell is what ``phrase`` names, not something it is part of: written
    inside the item, the phrase starts it (副总经理 is not 总经理)."""
    at = counted(item).find(counted(phrase))
    return at <= 0 and states(phrase, item)


def _beyond_rank(phrase: str, caption: str) -> str:
    """What ``phrase`` asks beyond the ranked rows a caption counts (前N股东持股比例 over
    前 10 名股东持股情况 → 持股比例; "" when nothing is left); a phrase naming no top N whole."""
    asked = counted(phrase)
    if not asked.startswith("前N"):
        return phrase
    if states(asked, caption):
        return ""  # 前N重仓股 over 前十名股票投资明细: the vocabulary's 前五名股票
    stated = next(k for k in range(len(asked), -1, -1) if asked[:k] in caption)
    rest = asked[stated:]
    return rest if len(rest) >= 2 else ""


def _touched(phrase: str, cells: list[str]) -> list[bool]:
    """Which characters of ``phrase`` some header cell states."""
    touched = [False] * len(counted(phrase))
    for cell in cells:
        touched = [t or m for t, m in zip(touched, stated_characters(phrase, cell), strict=True)]
    return touched


def _modifies(phrase: str, label: str, asked: tuple[str, ...] = ()) -> bool:
    """Whether a row ``label`` writes ``phrase`` as the modifier of a head of its own — three
    characters or more after it, a unit in brackets aside (员工 in 员工持股计划, 营业收入 in
    营业收入增长率): the row is that other thing's. An organization's legal form and generic
    tail are no head of their own: 泊川控股 names 泊川控股集团有限公司, the holder; nor is
    another phrase ``asked`` (归属于上市公司股东的所有者权益 asks the row writing it whole,
    its head 所有者权益 read as a phrase of its own)."""
    label = _GENERIC_TAIL.sub("", short_name(label))
    # (so does a label writing the phrase's head alone — its last word, two characters or
    # more — as a modifier: 净资产 of 每股净资产 in 加权平均净资产收益率)
    head = next((phrase[k:] for k in range(len(phrase) - 1) if phrase[k:] in label), "")
    at = label.find(head)
    if not head or at < 0:
        return False
    rest = re.sub(r"[（(][^）)]*[）)]|[\s\d%％]", "", label[at + len(head) :])
    return len(rest) >= 3 and not any(q != phrase and q in rest for q in asked)


def _one_cell_states(
    phrase: str, label: str, cell: str, touched: list[bool], table: str = ""
) -> bool:
    """``cell`` with the row's ``label`` states all of ``phrase`` that any header cell
    states part of (``touched``) — or no header cell speaks to it (it names rows)."""
    if not any(touched):
        return True
    phrase, touched = _without_table_head(counted(phrase), touched, counted(fold(table)))
    here = stated_characters(phrase, f"{label}\n{cell}")
    # (a letter or a number no header cell writes names the rows — the caption's
    # 青屿价值精选混合 A — which the floor has checked: A过去一年净值增长率; one the label
    # states stays, with the word it is part of: 近一年 of the row 过去一年)
    asked = "".join(
        c
        for c, t, h in zip(counted(phrase), touched, here, strict=True)
        if t or h or not exact_character(c)
    )
    return states(asked, f"{label}\n{cell}") and all(
        h or not t for h, t in zip(here, touched, strict=True)
    )


def _without_table_head(phrase: str, touched: list[bool], table: str) -> tuple[str, list[bool]]:
    """``phrase`` without a head no header cell speaks to that the table's caption states
    (``touched`` cut alike): the figures of a table led in by 各年度业绩考核目标如下 are all
    targets, so 净利润增长率目标 asks the cell of 净利润增长率."""
    size = next((k for k in range(len(phrase)) if touched[len(phrase) - 1 - k]), len(phrase))
    if size < 2 or size == len(phrase) or phrase[-size:] not in table:
        return phrase, touched
    return phrase[:-size], touched[:-size]


# A sentence about one segment of the business (仿制药板块…，但毛利率保持在 52%): its
# subject, at its start, ends with a segment's head word. A clause opening with a word of
# purpose or cause (为适应公司业务发展需要，同意设立…; 受…影响, 随着…) is an adverbial, not
# the subject: a head word inside it names no segment the sentence is about.
_SEGMENT_SUBJECT = re.compile(
    r"^(?:报告期内|本报告期|上半年|下半年|\d{4}\s*年)?[，,]?\s*"
    r"(?!为了?|受|由于|随着|鉴于|基于|根据|按照)"
    rf"(?P<segment>[^，。；,;\d\s]{{1,12}}?)(?:{SEGMENT_HEADS})"
)


# A clause that names a part of its own and a share of no whole (海外收入占比 62.0%): a
# segment's share would name the segment's total it is taken of, so the part is the
# company's, not the segment's.
_OWN_SHARE = re.compile(
    r"^(?:其中|而|另外|此外)?(?P<part>[^，,。；;\d\s]{2,12}?)(?:占比|比重|比例)"
    r"(?:为|达到?|约为?|是)?\s*\d"
)


def _of_a_segment(reading: Reading, text: str) -> bool:
    """The sentence speaks of a segment (创新药板块, 光伏逆变器业务) the question does not
    name: it answers for that part, not for the whole company asked about. The segment is
    the subject of the clauses after its own (仿制药板块受集采影响，收入…，但毛利率…: the
    elliptical subject carries on) — but once its clause has stated its figure
    (光伏逆变器业务毛利率为 28.6%), a later clause naming a part of its own and a share of no
    whole (，海外收入占比 62.0%) is the company's, and answers what it states."""
    folded = fold(text)
    match = _SEGMENT_SUBJECT.match(folded)
    if match is None:
        return False
    asked = "\n".join(fold(p) for p in (*reading.phrases, *reading.of))
    if coverage(match.group("segment"), asked) >= 0.6:
        return False
    if _inside_the_name_asked(reading, folded, match.end("segment"), match.end()):
        return False
    first, *later = re.split(r"[，,]", folded)
    if not quantities_in(first):
        return True  # the segment is the topic of every clause after it
    own = [c.strip() for c in later if _OWN_SHARE.match(c.strip())]
    phrases = (*reading.phrases, *reading.of)
    return not any(all(states(p, clause) for p in phrases) for clause in own)


def _inside_the_name_asked(reading: Reading, text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` lies inside the name of what is asked as ``text`` writes
    it: 业务 in 新业务价值 (NBV) is part of that name, not the head of a segment."""
    for phrase in (*reading.phrases, *reading.of):
        for written in (fold(phrase), *LEXICON.get(phrase, ())):
            at = text.find(written)
            while at >= 0:
                if at < end and at + len(written) > start:
                    return True
                at = text.find(written, at + 1)
    return False


def _amount_asked(reading: Reading) -> bool:
    """The question asks an amount of money (光伏逆变器收入多少, 多少亿), not a rate, a
    share or a change: a percent does not answer it."""
    question = reading.question
    phrases = (*reading.phrases, *reading.of)
    if question.asks_share or "YOY" in question.periods:
        return False
    if any(RATE.search(p) or is_attribute(p) for p in phrases):
        return False
    return bool(_AMOUNT_ASKED.search(fold(question.text))) or any(
        _AMOUNT_HEAD.search(p) for p in phrases
    )


# A label's unit in brackets right before its figure (股东总数（户）  23,418).
_LABELLED_UNIT = re.compile(r"[（(](?P<unit>[^（）()\d\s]{1,4})[）)]\s*(?=[-+]?\d)")

# A change on the year-ago period (较上年同期增长, 比去年同期下降): no figure of that period.
_CHANGE_ON_PRIOR = words_re(RISE, FALL, UNSIGNED_CHANGE, prefix=r"(?:上年|去年)同期(?:相比)?的?")


def _only_a_change(reading: Reading, unit: Unit) -> bool:
    """The unit gives no figure of the year-ago period, only changes on it: a sentence or
    clause that names that period only in a change (同比增长 15.64%, 较上年同期增长 8.7%), or
    a row whose cell asked sits in a column of changes (…比上年同期增减变动幅度(%):
    ``change_columns``)."""
    if unit.kind in ("sentence", "clause"):
        # (同比提升 1.28 个百分点, 较上年同期增长 8.7% are changes; 上年同期为 30.33% a figure)
        return not PRIOR_PERIOD.search(_CHANGE_ON_PRIOR.sub("", fold(unit.text)))
    if unit.kind == "row":
        column = row_cell(unit, (*reading.phrases, *reading.of, *reading.question.times))
        return column in change_columns(unit)
    return False


# The year before named in a question (去年, 上年同期, 上期, 同期的…呢): its figure is asked.
_YEAR_BEFORE = re.compile(r"上一?年|去年|上期|同期")


def _of_the_year_before(reading: Reading, unit: Unit) -> bool:
    """The question asks a figure of its own period, not of the year before nor a change on
    it, and the unit's words before its first figure name the year-ago period (上年同期为
    268,415.77 万元, 上年同期为盈利 27,274.12 万元): the figure it is compared with, not
    the one asked."""
    question = reading.question
    asked = fold(" ".join([question.text, *question.times]))
    if question.prior or "YOY" in question.periods or _YEAR_BEFORE.search(asked):
        return False
    if CHANGE.search(asked) or any(is_attribute(p) for p in (*reading.phrases, *reading.of)):
        return False
    subject = _subject(fold(unit.text))
    return subject != fold(unit.text) and bool(
        PRIOR_PERIOD.search(_CHANGE_ON_PRIOR.sub("", subject))
    )


# The balance asked at the year before's end (上年末应收账款, 去年年底…): a date of its own,
# which a sentence writes as such (上年度末为 16.05 亿元) — not as the base of a change
# (报告期末应收账款 18.42 亿元，较上年度末增长 14.8%: the figure is the period end's).
_YEAR_END_BEFORE = re.compile(r"^(?:上年度?末|上年年末|去年年?[底末]|上年底)$")
_WRITES_YEAR_END_BEFORE = re.compile(r"上年度?末|上年年末|去年年?[底末]|上年底|年初(?!至)")
_BASE_OF_A_CHANGE = re.compile(r"(?:比|较)(?:上年度?末|上年年末|去年年?[底末]|上年底|年初(?!至))")


# A state after an event the document plans (本次发行完成后, 重组完成后, 交易实施后): a pro forma
# figure, the answer only to a question that asks it after that event (发行后…持股比例).
_AFTER_EVENT = re.compile(r"(?:发行|定增|完成|实施|交易|重组|收购|转让|增资)(?:完成)?后")


def _after_an_event(text: str) -> bool:
    """``text`` writes a state after an event before its first figure (本次发行完成后…为
    31.73%), or — a question — asks one."""
    figures = quantities_in(without_markers(text))
    head = without_markers(text)[: figures[0].start] if figures else text
    return bool(_AFTER_EVENT.search(fold(head)))


def year_end_before_asked(reading: Reading) -> bool:
    """The question asks a balance at the year before's end, no change on it."""
    question = reading.question
    return any(_YEAR_END_BEFORE.match(fold(t)) for t in question.times) and not (
        question.periods & {"BOY", "YOY"}
    )


def writes_year_end_before(text: str) -> bool:
    """``text`` names the year before's end as a date of its own, not a change's base."""
    return bool(_WRITES_YEAR_END_BEFORE.search(_BASE_OF_A_CHANGE.sub("", fold(text))))


# A figure written as a change: right after a direction (同比增长 15.64%, 较上年同期提升约
# 2.3 个百分点), or in percentage points — 提升至 41.3% is the level reached.
_DIRECTION_BEFORE = words_re(
    RISE, FALL, UNSIGNED_CHANGE, SPREAD_CHANGE, suffix=r"(?:了|约|近|超过?|幅度为?|为|达)?\s*$"
)
# A question asking a change, a comparison or a share (增速, 同比, 较…, 变动, 涨了, 占比…):
# anything but a level. Broader than the words of a change: any character of one (增, 降,
# 涨, 掉, 较, 比: 掉了多少, 比上年) is enough, the words with none (提高, 提升, 回落, 收窄)
# too, and the colloquial moves of another kind (走高, 多了, 改善).
_NOT_A_LEVEL = re.compile(
    words(ON_EARLIER, RISE, FALL, SPREAD_CHANGE)
    + r"|[增减降升涨跌掉滑变幅较比]|走[高低]|多了|少了|改善|恶化"
)


def _is_change(text: str, figure: Figure) -> bool:
    return figure.unit.startswith("个百分点") or bool(
        _DIRECTION_BEFORE.search(text[: figure.start])
    )


# A phrase asking a change: a direction, the unsigned change or its rate anywhere in it
# (海外新签订单同比增长, 海外订单增速), a colloquial one at its end (海外订单涨).
_CHANGE_ASKED = re.compile(
    words(RISE, FALL, UNSIGNED_CHANGE, RATE_OF_CHANGE)
    + "|"
    + words(RISE_COLLOQUIAL, FALL_COLLOQUIAL)
    + "$"
)
_CLAUSE_END = re.compile(r"[，,；;。]")
_RUN_IN = re.compile(r"^\s*\*\*[^*]+\*\*\s*")


def _change_of_a_whole(reading: Reading, unit: Unit, context: str) -> bool:
    """The question asks a change (同比增长) of a thing it names with a qualifier (海外新签
    订单), and every change the sentence writes comes before the qualifier is named: a
    change is of what its sentence names up to it — 新签订单 41.6 亿元，同比增长 23.5%，其中
    海外订单 12.3 亿元 (or ，海外订单占比提升至 29.6%) gives the whole's growth, not the
    part's."""
    question = reading.question
    phrases = (*reading.phrases, *(fold(t) for t in reading.of))
    asked = "YOY" in question.periods or any(_CHANGE_ASKED.search(p) for p in phrases)
    if question.prior or not asked:
        return False
    # (a bold lead-in, **订单饱满，海外占比提升。**, is the paragraph's headline, no clause)
    text = fold(without_markers(_RUN_IN.sub("", unit.text)))
    # (the entity's own name states nothing asked about it: 公司 of 澜州银行股份有限公司 in
    # the title is no qualifier of 公司贷款 its sentence names only after the change)
    context = fold(context)
    for name in entity_names(reading):
        context = context.replace(name, "|")
    # (a cause asked is written after its change, 主要系…: what changed is the thing)
    things = [p for p in phrases if not is_attribute(p) and p not in CAUSE]
    changes = [f for f in quantities_in(text) if _is_change(text, f)]
    if not things or not changes:
        return False
    full = [stated_characters(p, f"{text}\n{context}") for p in things]
    befores, owns = [], []
    for change in changes:
        end = _CLAUSE_END.search(text, change.end)
        stop = end.start() if end else len(text)
        befores.append(f"{text[:stop]}\n{context}")
        # (nor of a thing whose qualifier its subject's clause does not name: 个人贷款
        # 1,218.56 亿元…；普惠型小微企业贷款余额 512.40 亿元，较上年末增长 14.2% — a clause
        # opening with its predicate, 较上年末增长, goes on the clause before it; a part
        # named there, 其中海外订单, takes its head from the whole before it)
        start = min(_subject_clause_start(text, change.start), _level_start(text, change))
        owns.append(f"{text[start:stop]}\n{context}")
    if not any(
        all(
            all(b or not f for b, f in zip(stated_characters(p, before), whole, strict=True))
            for p, whole in zip(things, full, strict=True)
        )
        for before in befores
    ):
        return True
    # (each thing asked, its own change: 营收增速和净利润增速 over 营业收入…同比增长 9.30%；
    # 归属于上市公司股东的净利润…同比下降 4.2%)
    return not all(
        not whole[0] or any(leading_unstated(p, own) == 0 for own in owns)
        for p, whole in zip(things, full, strict=True)
    )


def _subject_clause_start(text: str, at: int) -> int:
    """Where the clause naming the subject of the figure at ``at`` starts: its own clause,
    or, while a clause opens with its predicate (较上年末增长, 同比下降, 占…的, 为), the
    clause before it."""
    starts = [0, *(m.end() for m in _CLAUSE_BREAK.finditer(text, 0, at))]
    k = len(starts) - 1
    while k > 0 and _PREDICATE_FIRST.match(text, starts[k]):
        k -= 1
    return starts[k]


def _level_start(text: str, change: Figure) -> int:
    """Where the naming of the thing whose level the figure before ``change`` is starts:
    right after the figure before that level (…票据贴现 227.78 亿元；普惠型小微企业贷款余额
    512.40 亿元，较上年末增长 14.2%), or the text's start when no level comes before."""
    figures = [f for f in quantities_in(text) if f.end <= change.start]
    levels = [i for i, f in enumerate(figures) if not _is_change(text, f)]
    if not levels or levels[-1] == 0:
        return 0
    return figures[levels[-1] - 1].end


# Where a clause ends (not a thousands separator: 3,864.27).
_CLAUSE_BREAK = re.compile(r"[，；;。]|,(?!\d)")
# A clause opening with its predicate — a change, a comparison, a share or a copula — whose
# subject is the clause's before it.
_PREDICATE_FIRST = re.compile(
    r"\s*(?:并|且|但|而|也|亦|均)?\s*(?:"
    + words(ON_EARLIER, RISE, FALL, UNSIGNED_CHANGE, SPREAD_CHANGE, RATE_OF_CHANGE)
    + r"|较|比|与上|占|为|达到?)"
)


# A share's figure ending the clause before a change (占营业收入的 39.9%，较上年同期提升 …),
# with no figure between them.
_SHARE_BEFORE = re.compile(
    r"占[^，。；,;\d]{1,24}?的?\s*\d+(?:\.\d+)?\s*[%％]\s*[，,]\s*[^，。；,;\d]{0,16}$"
)


def _changes_of_a_share(reading: Reading, unit: Unit) -> bool:
    """The question asks a change of a thing (创新药板块收入同比增长多少), not of its share, and
    every change the sentence writes is in percentage points right after a share (创新药板块
    收入 19.4 亿元，占营业收入的 39.9%，较上年同期提升 5.2 个百分点): a change in points is a
    ratio's, and the clause before it ends with the share — the thing's own growth is not
    written."""
    question = reading.question
    phrases = (*reading.phrases, *(fold(t) for t in reading.of))
    asked = "YOY" in question.periods or any(_CHANGE_ASKED.search(p) for p in phrases)
    if question.prior or question.asks_share or not asked:
        return False
    text = fold(without_markers(_RUN_IN.sub("", unit.text)))
    changes = [f for f in quantities_in(text) if _is_change(text, f)]
    return bool(changes) and all(
        f.unit.startswith("个百分点") and _SHARE_BEFORE.search(text[: f.start]) for f in changes
    )


def _changes_only(reading: Reading, unit: Unit) -> bool:
    """The question asks a level (综合毛利率是多少, 毛利率分别多少) and every figure of the
    sentence is a change (综合毛利率较上年同期提升约 2.3 个百分点; 毛利率同比下降 1.11 个百分点):
    the level is not written."""
    question = reading.question
    asked = fold(question.text)
    if not question.asks_figure or _NOT_A_LEVEL.search(asked) or CHANGE.search(asked):
        return False
    # (a follow-up asks what the question before it asked: 那净利润呢？ after 营收同比增长多少？)
    if "YOY" in question.periods or question.follow_up or reading.resolved_from:
        return False
    if any(is_attribute(p) for p in (*reading.phrases, *reading.of)):
        return False
    text = fold(without_markers(unit.text))
    figures = quantities_in(text)
    return bool(figures) and all(_is_change(text, f) for f in figures)


def answers_form(reading: Reading, unit: Unit, labels: str = "", title: str = "") -> bool:
    """The unit has the form of an answer: a number when the question asks for one (多少),
    several things when it asks which ones (哪些)."""
    question = reading.question
    if unit.kind in ("sentence", "clause") and _of_a_segment(reading, unit.text):
        return False
    if (
        question.ordinal
        and unit.kind not in ("list", "row")
        and question.ordinal_text not in fold(unit.text)
        and (marker(unit.heading) or ("", 0))[1] != question.ordinal
    ):
        # 第一大客户 is an item of a list, or written as such (第一大重仓股); 第七项议案 the
        # section numbered （七）
        return False
    if question.ordinal_text.endswith(("大", "名")) and unit.kind == "list":
        # 第二大股东 ranks by size: an item of a ranked list — its items numbered (1. 2.) or
        # its lead-in counting a top N (前五名) — not the second clause of any list
        lead = unit.text.split(unit.clauses[0])[0] if unit.clauses else unit.text
        top_n = "前N" in counted(fold(lead))
        if not top_n and not any(marker(c) for c in unit.clauses):
            return False
    if question.prior and _only_a_change(reading, unit):
        return False  # 去年同期 asks that period's figure: 同比增长 15.64% is a change on it
    if unit.kind in ("sentence", "clause") and _of_the_year_before(reading, unit):
        return False  # 2026 年营收 asked: 上年同期为 268,415.77 万元 is the year before's
    if (
        unit.kind != "row"
        and _after_an_event(unit.text)
        and not _after_an_event(reading.question.text)
    ):
        return False  # 控股股东持股比例 asked: 本次发行完成后…持股比例为 31.73% is a pro forma
    if (
        unit.kind != "row"
        and year_end_before_asked(reading)
        and not writes_year_end_before(f"{unit.text}\n{unit.heading}")
    ):
        return False  # 上年末应收账款 asked: 报告期末…，较上年度末增长 14.8% is not it
    if (
        question.asks_figure
        and unit.kind in ("sentence", "clause")
        and _only_a_basis(reading, unit)
    ):
        return False  # 总股本多少: 以总股本为基数，每 10 股派发… gives no figure of it
    if unit.kind in ("sentence", "clause") and _changes_only(reading, unit):
        return False  # a level asked: 提升约 2.3 个百分点 is its change
    context = f"{unit.heading}\n{title}"  # (the title without a note's headline)
    if unit.kind in ("sentence", "clause") and _change_of_a_whole(reading, unit, context):
        return False  # 海外新签订单同比增长: 同比增长 23.5%，其中海外订单… is the whole's
    if unit.kind in ("sentence", "clause") and _changes_of_a_share(reading, unit):
        return False  # 收入同比增长: 占营业收入的 39.9%，较上年同期提升 5.2 个百分点 is the share's
    if question.asks_figure and unit.kind != "list" and _amount_asked(reading):
        figures = quantities_in(without_markers(unit.text))
        if figures and all(f.unit.startswith(("%", "％", "个百分点")) for f in figures):
            return False  # 光伏逆变器收入多少 is an amount: 毛利率 28.6% is not it
    if question.asks_figure and unit.kind in ("sentence", "clause") and _share_asked(reading):
        # a share asked (解除限售比例是多少) is a share: a sentence whose figures are amounts
        # (摊销的总费用约为 9,568.40 万元…按解除限售比例分期确认) does not state it, unless
        # the share's own name is printed before its figure (每股分配比例：每股现金红利 0.35 元)
        figures = quantities_in(without_markers(unit.text))
        if (
            figures
            and not any(f.unit.startswith(("%", "％", "‰")) for f in figures)
            and not any(_labels_figure(p, fold(unit.text)) for p in reading.phrases)
        ):
            return False
    if question.unit and unit.kind in ("sentence", "clause"):
        # the unit asked (多少股) is the answer's: 58,000.00 万元 does not answer it
        units = {in_base_unit(f.value, f.unit)[1] for f in quantities_in(unit.text)}
        # (a label's bracketed unit is its figure's: 股东总数（户）  23,418)
        units |= {unit_of(m["unit"]) for m in _LABELLED_UNIT.finditer(fold(unit.text))}
        if question.unit not in units:
            return False
    if question.asks_day and not WRITES_DATE.search(fold(unit.text)):
        # the day asked (股权登记日是哪天): a sentence that names the day but writes no date
        # (截至股权登记日下午…收市后) does not give it
        return False
    if unit.kind == "row" and asks_change(unit, reading.phrases) and not change_columns(unit):
        return False  # a change asked (涨了多少): a row of levels alone does not state it
    if unit.kind == "row" and question.asks_figure:
        # the cell asked (by the topic and the period its column names) states no value
        # (经营活动现金流量净额 本报告期：不适用): the document has no figure to give
        column = row_cell(unit, (*reading.phrases, *question.times))
        if 0 < column < len(unit.clauses) and unit.clauses[column] in NO_VALUE:
            return False
        # a margin asked (跑赢基准多少) is a difference's column (①－③), never the level of
        # what the thing is compared with (业绩比较基准收益率③)
        if question.margin and column not in difference_columns(unit):
            return False
    # a row's unit is its table's (营业收入（万元）): 多少吨 is not asked of it unless the
    # table writes 吨 (money aside, which a table's 单位 line states apart): its header, the
    # row, or its other labels and caption as a unit — 销量（吨）, 单位：吨 — not a word
    # (人员) nor another row's own count (核心骨干（182 人）)
    foreign_unit = question.unit and not question.unit.endswith("元")
    if (
        foreign_unit
        and unit.kind == "row"
        and question.unit not in f"{unit.heading}\n{unit.text}"
        and not _writes_unit(question.unit, labels)
    ):
        return False
    counting = question.counts and not question.enumerates  # (哪几块 asks which ones)
    if counting and unit.kind in ("sentence", "clause") and not _counts_it(reading, unit, labels):
        return False
    listed = unit.kind == "list" and (question.counts or question.enumerates)
    if question.asks_figure and question.each and not (question.which or question.counts):
        # (a figure asked of each, 每年的净利润增长率目标分别是多少, is a figure for each: a
        # note's items defining the terms give none)
        listed = False
    if question.asks_figure and not quantities_in(without_markers(unit.text)) and not listed:
        return False  # (a list answers "how many items" by its items)
    # (a top N of a table's rows, 占比前三的品种是哪些, is answered by its rows ranked)
    ranked = unit.kind == "row" and question.extreme and question.top > 1
    if question.which and unit.kind != "list" and not enumerates(unit.text) and not ranked:
        return False
    return unit.kind != "row" or row_answers(reading, unit, labels, title)


def _labels_figure(term: str, text: str) -> bool:
    """Whether ``term`` names a figure of ``text``: written right before it, or as the
    label of a line (每股分配比例：A 股每股现金红利 0.35 元)."""
    return names_figure(term, text) or bool(re.search(rf"{re.escape(term)}\s*[：:]", text))


def _share_asked(reading: Reading) -> bool:
    """Whether the question asks a share by its word (比例, 比重, 占比) — not a fund's
    份额, a count of units."""
    return any(w in fold(reading.question.text) for w in SHARE_WORDS)


def _only_a_basis(reading: Reading, unit: Unit) -> bool:
    """Whether a phrase asked is written only as the object of a preposition of basis (以…为
    基数, 按…计算) in a clause that writes no figure: the clause states a figure of something
    else, measured on that thing (以总股本为基数，向全体股东每 10 股派发现金红利 3.50 元 gives
    no 总股本) — a figure of the thing itself (以总股本 58,000 万股为基数) would be written
    inside its frame."""
    text = fold(unit.text)
    for phrase in reading.phrases:
        words = [w for w in {phrase, *LEXICON.get(phrase, ())} if w and w in text]
        spots = [m for w in words for m in re.finditer(re.escape(w), text)]
        if not spots:
            continue
        if all(_in_a_basis(text, m.start(), m.end()) for m in spots):
            return True
    return False


def _in_a_basis(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` stands as the object of 以/按/依/根据/基于 … 为/计 with
    no figure between the preposition and its closing verb."""
    clause_start = max(text.rfind(c, 0, start) for c in "，,；;。：:\n") + 1
    before = text[clause_start:start]
    opened = _BASIS_OPEN.search(before)
    if not opened:
        return False
    closed = _BASIS_CLOSE.match(text, end)
    return bool(closed) and not re.search(r"\d", before[opened.start() :])


# A preposition of basis opening its object (以, 按, 依据, 根据, 基于) and the verb closing
# the frame right after it (为基数, 为准, 计算, 计).
_BASIS_OPEN = re.compile(r"(?:以|按照?|依据|根据|基于)[^，,；;。\d]{0,6}$")
_BASIS_CLOSE = re.compile(r"\s*(?:为(?:基数|基础|准|依据)|计算|计)")


def _writes_unit(unit: str, text: str) -> bool:
    """Whether ``text`` writes ``unit`` as the unit of figures: in brackets, after a scale
    or not (产量（万吨）, 产能（万吨/年）), or on a 单位 line (单位：吨、%)."""
    for figure in reversed(quantities_in(text)):
        text = f"{text[: figure.start]}|{text[figure.end :]}"  # a count of its own: 182 人
    u = re.escape(unit)
    return bool(re.search(rf"[（(]\s*[万亿千百]?{u}[^（）()\n]*[）)]|单位[：:][^\n]*{u}", text))


_CLAUSES = re.compile(r"[^，,；;。]+")


def _counts_it(reading: Reading, unit: Unit, title: str) -> bool:
    """A count asked of a thing (独立董事有几位) is answered by a quantity whose clause, or a
    clause before it, names that thing — a count goes on from what was named before it
    (在研项目 64 项，其中 9 项处于三期临床阶段; 发行对象为特定投资者，不超过 35 名) — not by a
    count of another thing the sentence names the asked one after (会议应出席董事 9 人，…
    其中独立董事…出席: the 9 counts 董事), nor by a count under a heading that names it
    (表决结果：同意 9 票 under 《关于聘任公司副总经理…的议案》); the document's ``title``
    names what all of it is of (定增 of a placement plan). A sentence with no quantity is
    left to the form's other checks."""
    clauses = _CLAUSES.findall(fold(without_markers(unit.text)))
    if not any(quantities_in(c) for c in clauses):
        return True
    phrases = (*reading.phrases, *(fold(t) for t in reading.of))
    return any(
        quantities_in(clause)
        and all(states(p, "，".join([*clauses[: at + 1], fold(title)])) for p in phrases)
        for at, clause in enumerate(clauses)
    )


def best_units(reading: Reading) -> list[Pick]:
    picks = []
    # The report a question names by its kind (泊川智能三季报的风险提示), when retrieved, is
    # what answers: a note about it (…三季报点评) is another document, not the report.
    report_asked = any(is_named_report(reading.question, s) for s in reading.sources)
    for source in reading.sources:
        if report_asked and is_note_on_named_report(reading.question, source):
            continue
        framings = period_headings(source)
        leads = section_leads(source)
        for unit in candidate_units(source, reading):
            framing = framings.get(id(unit), "")
            if of_another_period(reading, framing):
                continue
            ordinal = reading.question.ordinal
            if unit.kind == "row" and ordinal and not ranked_row(reading, source, unit, ordinal):
                continue  # 第一大股东: the first row of a ranked table only
            if unit.kind != "row" and of_another_period(reading, without_report_names(unit.text)):
                # the report period a sentence names is its own, whatever its title names:
                # 第三季度 asked, a 三季报点评's 前三季度实现营收… states the year to date
                continue
            if (
                unit.kind in ("sentence", "clause")
                and reading.question.periods & PARTS
                and of_another_period(reading, _clause_period(source, unit))
            ):
                # (…前三季度实现营业收入…；归母净利润 3.76 亿元: the sentence's period goes on)
                continue
            holders = section_holders(source, leads.get(unit.heading, ""))
            if holders_apart(reading, holders) and not any(h in fold(unit.text) for h in holders):
                # 澄远保险 asked: a sentence whose subject its section's first one names
                # (澄远人寿) is not the group's; one naming the subsidiary shows whose it is
                continue
            context = (
                f"{' | '.join(header_cells(year_on_year(without_claim(unit.heading))))}\n"
                f"{framing}\n"
                f"{without_headline(source.title)}\n{source.kind}\n" + "\n".join(holders)
            )
            # a row is read with its table's labels and caption (表 2 前五名客户)
            labels = table_labels(source, unit) if unit.kind == "row" else ""
            if unit.kind == "row" and unit.header_text != unit.heading:
                labels += "\n" + unit.header_text  # (the row naming its items: listed_alike)
            if unit.kind == "row" and is_total(unit):
                context += "\n" + "\n".join(TOTALS)  # the total row states the whole
            # (a row's siblings are the other things its table's rows name: 澄远人寿, 澄远财险)
            heading = unit.heading if unit.kind != "row" else ""
            named = row_labels(source, unit) if unit.kind == "row" else ""
            if unit.kind == "row":
                # (a column of the year before, 上年末, is of the year before the title's)
                context += "\n" + year_before(unit.heading, source.title)
            if not states_question(reading, unit.text, f"{context}\n{labels}", heading, named):
                continue
            if (
                unit.kind != "row"
                and asks_quarter_alone(reading.question)
                and not states_quarter_alone(
                    f"{without_report_names(unit.text)}\n{unit.heading}\n{framing}"
                )
            ):
                continue  # 单季 over a Q3 report: the title's quarter is not the unit's
            title = without_headline(source.title)
            if not answers_form(reading, unit, f"{labels}\n{framing}\n{source.title}", title):
                continue
            if unit.kind == "row" and a_part_for_the_whole(reading, source, unit):
                continue  # 营业收入 of the group: not 寿险's row
            score = unit_score(unit, reading, source)
            if score > 0:
                score += 1.0 if is_named_report(reading.question, source) else 0.0
                picks.append(Pick(source, unit, score))
    picks.sort(key=lambda p: (-p.score, p.source.rank))
    return picks


def _clause_period(source: Source, clause: Unit) -> str:
    """The part of ``clause``'s sentence that names the report period it is of: itself, or
    — naming none — the nearest part before it, joined to it by ；, that names one (前三季度
    实现营业收入 35.29 亿元…；归母净利润 3.76 亿元… is the year to date's; …其中 Q3 单季实现
    营收…；归母净利润 1.42 亿元 the quarter's). "" when none does."""
    own = clause.clauses[0] if clause.clauses else clause.text
    if periods_in(without_report_names(own)) & PARTS:
        return ""  # (its own period, read as the unit's)
    whole = next(
        (u for u in source.units if u.kind in ("sentence", "list") and own in u.clauses[1:]),
        None,
    )
    if whole is None:
        return ""
    content = fold(source.content)
    parts = whole.clauses[: whole.clauses.index(own)]
    for part in reversed(parts):
        joined = fold(part).rstrip("；;")
        numbered = marker(part) or marker(own)
        if numbered or not re.search(re.escape(joined) + r"\s*[；;]", content):
            return ""  # (items of a list, each its own, not parts of one sentence)
        if periods_in(without_report_names(part)) & PARTS:
            return without_report_names(part)
    return ""


def period_headings(source: Source) -> dict[int, str]:
    """For each unit (by ``id``), the nearest heading above it that names a report period
    (合并利润表（节选） 2026 年 1—9 月), or "": the period what follows it states. One pass.
    A note's title written as its first heading frames it without its headline (# 城商行
    2026 年中报综述：息差降幅收窄 → …中报综述), like the title itself (``without_headline``)."""
    out: dict[int, str] = {}
    framing = ""
    for unit in source.units:
        out[id(unit)] = framing
        if unit.kind == "heading" and periods_in(unit.text) & PARTS:
            framing = without_claim(unit.text)
    return out


# A report named by its period (三季报, 第三季度报告, 半年报, 年报): the document, not a period
# of the sentence naming it.
_REPORT_NAME = re.compile(
    r"第?[一二三四1-4]季度报告|[一二三四1-4]季报|半年度报告|年度报告|半年报|中报|年报|季报"
)


def without_report_names(text: str) -> str:
    """``text`` without the reports it names by their period: 公司发布 2026 年三季报，前三季度
    实现营业收入… states the year to date, not the third quarter its report is named by."""
    return _REPORT_NAME.sub("|", fold(text))


def section_leads(source: Source) -> dict[str, str]:
    """For each heading, the first sentence or item under it: where a report names the
    section's subject once (（一）寿险业务: 2026 年，澄远人寿实现…) and its other sentences
    leave it out (个人代理人月均人数 48,216 人…). Text under no heading is no section."""
    first: dict[str, str] = {}
    for unit in source.units:
        if unit.kind in ("sentence", "list") and unit.heading.strip():
            first.setdefault(unit.heading, unit.text)
    return first


def section_holders(source: Source, lead: str) -> list[str]:
    """The holders a section's ``lead`` (``section_leads``) names as its subject — at the
    start of a clause — that share the document's name's first two characters but not its
    next two: its subsidiaries or segments (澄远人寿 and 澄远财险 in 澄远保险集团's report).
    The section's sentences state what that holder has, not what the document's entity has."""
    name = short_name(fold(source.entity))
    if len(name) < 4 or not all(map(is_han, name[:4])):
        return []
    pattern = rf"(?:^|[，,；;。：:])\s*({re.escape(name[:2])}[\u4e00-\u9fff]{{2}})"
    found = re.findall(pattern, fold(lead))
    return list(dict.fromkeys(h for h in found if h != name[:4]))


def section_subject(source: Source, unit: Unit) -> str:
    """The holder a sentence speaks of when its section's lead opens with it (（一）寿险业务:
    2026 年，澄远人寿实现…) and the sentence itself names none (新业务价值率为 23.6%): the
    answer's label names it beside the document's entity. "" for a row (its label names
    its item) or a section whose lead opens with no such holder (本公司及主要保险子公司…)."""
    if unit.kind == "row" or not unit.heading.strip():
        return ""
    lead = fold(section_leads(source).get(unit.heading, "")).strip()
    holders = section_holders(source, lead)
    if not holders or any(h in fold(unit.text) for h in holders):
        return ""
    opening = _LEAD_OPENING.match(lead)
    return next((h for h in holders if opening and lead[opening.end() :].startswith(h)), "")


# What a section's lead may say before its subject: when (2026 年，报告期内).
_LEAD_OPENING = re.compile(
    r"(?:(?:19|20)\d{2}\s*年度?|报告期内|本报告期|[上下]半年|本年度|全年)?\s*[，,]?\s*"
)


def holders_apart(reading: Reading, holders: list[str]) -> bool:
    """Whether the question names a holder of the same name's stem but none of the section's
    ``holders`` (``section_holders``): 澄远保险13个月保单继续率 over the 寿险 section, whose
    subject is 澄远人寿, asks the group's, which the section does not state."""
    if not holders:
        return False
    asked = fold(reading.question.text)
    return holders[0][:2] in asked and not any(h in asked for h in holders)


def of_another_period(reading: Reading, framing: str) -> bool:
    """Whether ``framing`` (``period_headings``) names a period that does not cover the one
    asked: a statement captioned 2026 年 1—9 月 in a third-quarter report states the year
    to date, not the quarter (单季营业成本 is not its 本期发生额), whatever the title says."""
    return bool(framing) and other_period(reading.question.periods, periods_in(framing) & PARTS)


def is_named_report(question: Question, source: Source) -> bool:
    """Whether ``source`` is the report the question names (三季报 → 第三季度报告): its
    title ends that name, not a note about it (…三季报点评 is the broker's, not the report)."""
    title = fold(source.title)
    for time in map(fold, question.times):
        for word in (time, *LEXICON.get(time, ())):
            if not word.endswith(("报", "报告")):
                continue
            at = title.find(word)
            if at >= 0 and not is_han(title[at + len(word) : at + len(word) + 1]):
                return True
    return False


def is_note_on_named_report(question: Question, source: Source) -> bool:
    """Whether ``source``'s title names the report the question names as what it is about,
    not as what it is (泊川智能 2026 年三季报点评 for 三季报): a note on the report — unless the
    question names the note too (三季报点评里…)."""
    title, asked = fold(without_headline(source.title)), fold(question.text)
    for time in map(fold, question.times):
        for word in (time, *LEXICON.get(time, ())):
            if not word.endswith(("报", "报告")):
                continue
            at, ask = title.find(word), asked.find(word)
            after = title[at + len(word) : at + len(word) + 1]
            named_too = ask >= 0 and asked[ask + len(word) :].startswith(after)
            if at >= 0 and is_han(after) and not named_too:
                return True
    return False


def _one_thing(reading: Reading) -> bool:
    """Whether the question's phrases are one thing named with a modifier, cut at the 的
    between them (经营活动产生的现金流量净额) or at a time (溪南银行|上半年|净息差, 海外新签
    订单|同比|增长: the holder or the thing, then what is measured of it in that time), or a
    part of a thing asked (冷藏车辆有多少是自有的, 冷藏车辆中自有的): not things asked side
    by side."""
    text = fold(reading.question.text)
    times = sorted({fold(t) for t in reading.question.times if t}, key=len, reverse=True)
    spots = sorted((text.find(p), p) for p in reading.phrases)
    return all(at >= 0 for at, _ in spots) and any(
        _RESTRICTS.fullmatch(gap) or (gap != text[a + len(p) : b].strip() and gap in ("", "的"))
        for (a, p), (b, _) in zip(spots, spots[1:], strict=False)
        for gap in [_without(text[a + len(p) : b], times).strip()]
    )


def _without(text: str, words: list[str]) -> str:
    for word in words:
        text = text.replace(word, "")
    return text


# Between a thing and what names its part: 的, 中 (冷藏车辆中自有的), a count and a copula
# (冷藏车辆有多少是自有的).
# (a superlative and its count between the measure and the things ranked by it:
# 获授股数最多的三位高管)
_RESTRICTS = re.compile(
    r"的|(?:当中|中|里)的?|(?:中|里)?有?(?:多少|几\w?)(?:是|为|属于)"
    r"|最[高大多快好低小少慢差]的?(?:[\d两二三四五六七八九十]{1,2}[位个只家项名种类])?的?"
)


# Names joined as one subject or object (A和B, A与B, A、B).
COORDINATED = re.compile(r"\s*(?:和|与|及|跟|同|、|以及)\s*")
# What stands between names coordinated and the head they share: 的 (A和B的目标价), or the
# question word of a comparison that asks of holders — 谁, 哪家: firms — with it (A和B谁的
# 不良率高, 哪家…): grammar asking the head of each. Things of one entity compared by 哪个
# (数控机床与工业机器人哪个毛利率更高) are compared as the things asked.
_SHARED_HEAD = re.compile(r"的?(?:谁|哪一?家)的?|的")


def asked_apart(reading: Reading) -> list[tuple[str, ...]]:
    """The things a question asks side by side, each as its phrases, in the question's
    order: 储能电池出货量和光伏逆变器毛利率 asks two; names coordinated before a shared head
    (岚峰证券给澜州银行和溪南银行的目标价, an entity among them or not) ask the head of
    each — (澜州银行, 目标价), (溪南银行, 目标价); one thing named with a modifier (经营活动产生的现金流量净额) is not asked
    apart: []."""
    phrases = reading.phrases
    text = fold(reading.question.text)
    # Share classes asked together by their letters (A 和 C 过去一年的…, A类和C类…) each ask
    # the rest of the question of their own table: (A, 过去一年, …), (C, 过去一年, …).
    letters = [p for p in phrases if is_class_letter(p)]
    letters += [x for x in classes_asked(text) if x not in letters]
    if len(letters) >= 2:
        rest = [
            p[1:] if p[0] in letters and is_han(p[1]) else p
            for p in map(class_letter, phrases)
            if not is_class_letter(p)
        ]
        return [(x, *rest) for x in letters]
    named = dict.fromkeys([*phrases, *(fold(t) for t in reading.entity_terms)])
    spots = sorted((text.find(p), p) for p in named if text.find(p) >= 0)
    between = [text[a + len(p) : b] for (a, p), (b, _) in zip(spots, spots[1:], strict=False)]
    run = len(between)
    while run > 1 and COORDINATED.fullmatch(between[run - 2]):
        run -= 1
    members = [p for _, p in spots[run - 1 : -1]] if between else []
    if (
        len(members) >= 2
        and _SHARED_HEAD.fullmatch(between[-1].strip())
        and set(members) & set(phrases)
    ):
        head = spots[-1][1]
        return [(member, head) for member in members]
    if len(phrases) < 2 or _one_thing(reading):
        return []
    return [(p,) for p in phrases]


# Where a question's clauses end: a question mark, a comma, a semicolon.
_CLAUSE_MARKS = re.compile(r"[？?；;，,。]")


def asked_in_clauses(reading: Reading, pick: Pick) -> bool:
    """A question of clauses each asking its own thing with a question word of its own
    (董事会秘书是谁？联系电话多少？) asks each of its own unit, when the best one (``pick``) is
    a sentence stating one in its own words and another only by its section's heading
    (联系电话：0571-… under 《关于聘任公司董事会秘书的议案》 names no secretary)."""
    groups = reading.apart
    if pick.unit.kind not in ("sentence", "clause") or len(groups) < 2:
        return False
    if any(len(g) != 1 for g in groups):
        return False
    clauses = [c for c in _CLAUSE_MARKS.split(fold(reading.question.text)) if c.strip()]
    homes = [next((i for i, c in enumerate(clauses) if g[0] in c), -1) for g in groups]
    if -1 in homes or len(set(homes)) != len(homes):
        return False
    if not all(any(w in clauses[i] for w in QUESTION_WORDS) for i in homes):
        return False
    own = fold(pick.unit.text)
    return not all(states(g[0], own) for g in groups)


def clause_question(question: Question, phrase: str) -> Question:
    """``question`` as the clause asking ``phrase`` asks it (董事会秘书是谁？ of 董事会秘书
    是谁？联系电话多少？): the form of its answer is that clause's — a person, not a number."""
    clause = next((c for c in _CLAUSE_MARKS.split(fold(question.text)) if phrase in c), "")
    if not clause:
        return question
    return dataclasses.replace(
        question,
        quantitative=bool(QUANTITATIVE.search(clause)),
        asks_figure=bool(ASKS_FIGURE.search(clause)),
        who_or_which=bool(WHO_OR_WHICH.search(clause)),
        figures_asked=1,
    )


def best_units_each(reading: Reading) -> list[Pick | None]:
    """A question that asks two things at once (asked_apart), which no one unit states: the
    best unit for each, in the question's order. Names asked apart (A和B的目标价) are
    answered each as found, None for a name whose part no unit states, and [] when none is;
    things asked apart of one subject (储能电池出货量和光伏逆变器毛利率): [] unless every
    one has one."""
    picks: list[Pick | None] = []
    groups = reading.apart
    # a name asked apart is what its own part is asked of, not the entity of every part
    names = {a[0] for a in groups if len(a) > 1}
    entity_terms = [t for t in reading.entity_terms if fold(t) not in names]
    for asked in groups:
        topic = [
            t for t in reading.topic if any(fold(t) in p or p in fold(t) for p in asked)
        ] or list(asked)
        question = reading.question
        if len(asked) == 1 and reading.clauses_apart:
            question = clause_question(question, asked[0])
        own = Reading(question, entity_terms, topic, reading.sources, "", asked)
        # (a unit another name's part took answers this one's too only where it names this
        # one itself: 澄远人寿为 AA 类，澄远财险为 A 类 states each rating)
        found = [
            p
            for p in best_units(own)
            if all(q is None or p.unit is not q.unit for q in picks)
            or (len(asked) > 1 and fold(asked[0]) in fold(p.unit.text))
        ]
        if not found and len(asked) == 1:
            return []
        picks.append(found[0] if found else None)
    return picks if any(picks) else []


def figure_score(handle: dict[str, Any], reading: Reading) -> float:
    label = fold(handle.get("label") or handle.get("key") or "")
    topic = reading.topic
    if not topic:
        return 0.0
    matched = [coverage(t, label) for t in topic]
    if max(matched, default=0) < 0.75:
        return 0.0
    score = sum(c for c in matched if c >= 0.75)
    score += 0.3 * sum(1 for t in reading.question.times if coverage(fold(t), label) >= 0.6)
    # Prefer the label that says least beyond what was asked (三季度营业收入 over 营业收入同比增长).
    asked = sum(len(t) for t, c in zip(topic, matched, strict=True) if c >= 0.75)
    return score - 0.05 * max(0, len(label) - asked)


def relevant_figures(reading: Reading) -> list[tuple[float, Source, dict[str, Any]]]:
    found = []
    seen = set()
    for source in reading.sources:
        for handle in source.handles:
            if handle["id"] in seen:
                continue
            label = handle.get("label") or handle.get("key") or ""
            if not states_question(reading, label, without_headline(source.title)):
                continue
            if year_end_before_asked(reading) and not writes_year_end_before(label):
                continue  # (a figure's label naming no date is the report's own)
            if not _in_the_unit_asked(reading, handle):
                continue
            score = figure_score(handle, reading)
            if score > 0:
                seen.add(handle["id"])
                found.append((score, source, handle))
    found.sort(key=lambda f: (-f[0], f[1].rank))
    return found


def _in_the_unit_asked(reading: Reading, handle: dict[str, Any]) -> bool:
    """A figure asked in a unit (多少股) is one in that unit, as a sentence's is
    (``answers_form``): a handle displaying 10% neither answers nor relates to it."""
    asked = reading.question.unit
    figures = quantities_in(fold(str(handle.get("display") or "")))
    if not asked or not figures:
        return True
    return any(in_base_unit(f.value, f.unit)[1] == asked for f in figures)


def handle_answers(handle: dict[str, Any], reading: Reading) -> bool:
    """Does this figure answer the question itself (not just relate to it)?

    Its label must state (nearly) everything asked about, and any time the question
    names — or the sentence stating the figure must.
    """
    label = fold(handle.get("label") or handle.get("key") or "")
    topic = "".join(reading.topic)
    if not topic or coverage(topic, label) < 0.8:
        return False
    if label.endswith("率") and not any(RATE.search(p) for p in reading.phrases or (topic,)):
        return False  # a rate answers a rate: 研发费用率 is not 研发 (花了多少钱)
    return all(coverage(fold(t), label) >= 0.6 for t in reading.question.times) or not (
        reading.question.times
    )


MAX_QUOTED_CELLS = 12


# A phrase that asks a rate or a share: its figure is a percent (增速 11.7%, not 214.8 亿元).
# A phrase that ends with a change asks it as a percent too (净利润增长, 营收降).
RATE = re.compile(
    r"(?:率|速|比|重|例|幅|仓位|"
    + words(RISE, FALL, UNSIGNED_CHANGE, RISE_COLLOQUIAL, FALL_COLLOQUIAL)
    + ")$"
)
# What is counted in money (a currency amount): 收入, 利润, 费用 … or 多少钱 / 多少亿.
_AMOUNT_HEAD = re.compile(
    r"(?:收入|营收|利润|净利|费用|成本|金额|销售额|投入|现金流|净额|资产|负债)$"
)
_AMOUNT_ASKED = re.compile(r"多少(?:钱|亿|万|元)|金额")


def cite_marker(source: Source) -> str:
    return f"[[cite:{source.id}]]"


def dates_line(figures: list[tuple[float, Source, dict[str, Any]]]) -> str:
    dates: list[str] = sorted({f[2]["asOf"] for f in figures if f[2].get("asOf")})
    if not dates:
        return ""
    return "\n\n数据日期：" + "、".join(dates) + "。"
