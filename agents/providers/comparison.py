"""Comparisons the extractive provider writes (docs/extractive-provider.md, "Comparisons"):
the entities a question coordinates and their sources, each one's figure for the phrase
asked, and the line that says which is higher and by how much — computed from the two
figures quoted above it, so it sits after every marker and in no excerpt's span.
"""

from __future__ import annotations

import re

from agents.providers.grammar import AMONG_KIND
from agents.providers.reading import Question, fold, leading_unstated, states
from agents.providers.selection import COORDINATED, RATE, member_sections, quantities_in
from agents.providers.sources import Reading, Source, source_names
from agents.providers.structure import Unit, row_cell
from knowledge.figures import Figure, in_base_unit


def compared_groups(reading: Reading) -> list[tuple[str, list[Source]]]:
    """The entities a comparison question names, each with its own retrieved sources, in
    the question's order — or [] when the question is not a comparison of two or more.
    Entities must be coordinated in the text (A和B的…): 星河医疗健康混合基金持有北辰医药
    names two entities but asks about one."""
    text = fold(reading.question.text)
    # A generic name (基金 in every fund's title) names no one entity: it is not compared.
    specific = [
        t
        for t in reading.entity_terms
        if one_entity({s.entity for s in reading.sources if source_names(s, t)})
    ]
    placed = sorted((text.find(fold(t)), t) for t in specific if text.find(fold(t)) >= 0)
    groups: list[tuple[str, list[Source]]] = []
    for i, (at, term) in enumerate(placed):
        if i > 0:
            previous_at, previous = placed[i - 1]
            between = text[previous_at + len(fold(previous)) : at]
            if not COORDINATED.fullmatch(between):
                return []
        named = [s for s in reading.sources if source_names(s, term)]
        if not named or any({s.entity for s in named} & {s.entity for s in g} for _, g in groups):
            return []
        groups.append((term, named))
    if len(groups) >= 1:
        order = {term: at for at, term in placed}
        missing = coordinated_missing(reading)
        groups += [(name, []) for _, name in missing]
        order |= {name: at for at, name in missing}
        groups.sort(key=lambda g: order[g[0]])
    return groups if len(groups) >= 2 else []


def one_entity(entities: set[str]) -> bool:
    """Whether ``entities`` are one: a note's short name of a company (泊川智能) begins the
    name its own report gives it (泊川智能装备) — one company, however many documents."""
    names = sorted(fold(e) for e in entities)
    return bool(names) and all(n.startswith(min(names, key=len)) for n in names)


def difference_line(values: list[tuple[str, Figure]]) -> str:
    """Which of two figures of one unit is higher, and by how much — written after every
    marker, so it sits in no excerpt's span; no difference across units."""
    (first, a), (second, b) = values
    percent = a.unit.startswith(("%", "％")) and b.unit.startswith(("%", "％"))
    base_a, unit_a = in_base_unit(a.value, a.unit)
    base_b, unit_b = in_base_unit(b.value, b.unit)
    if percent:
        delta, unit = abs(a.value - b.value), " 个百分点"
    elif a.unit == b.unit:
        delta, unit = abs(a.value - b.value), a.unit
    elif unit_a and unit_a == unit_b:
        delta, unit = abs(base_a - base_b), unit_a
    else:
        return ""
    if base_a == base_b:
        return "\n\n两者相同。"
    higher, lower = (first, second) if base_a > base_b else (second, first)
    return f"\n\n{higher}高于{lower}，相差 {format(delta.normalize(), 'f')}{unit}（按上面两处数字计算）。"


_CLAUSE_END = re.compile(r"[；;。\n]")


_COMMA = re.compile(r"[，,]")


def phrase_figure(
    phrase: str, texts: list[str], others: tuple[str, ...] = (), rate: bool = False
) -> tuple[tuple[int, int, int, int], Figure] | None:
    """The figure ``phrase`` names in ``texts``, with where it is: the first quantity of
    its kind (a percent for a rate, or when ``rate``) in a clause whose words up to it
    state the phrase, and
    that no other phrase asked (``others``) is stated by on its own (营业收入 214.8 亿元，
    同比增长 11.7% is 营收增速's 11.7%)."""
    rate = rate or bool(RATE.search(phrase))
    for t, text in enumerate(texts):
        for c, clause in enumerate(_CLAUSE_END.split(fold(text))):
            parts = _COMMA.split(clause)
            for i, part in enumerate(parts):
                said = "，".join(parts[: i + 1])
                # its modifier too: 医药冷链… does not state 生鲜食品冷链业务收入增速
                if not states(phrase, said) or leading_unstated(phrase, said) >= 2:
                    continue
                if any(states(o, part) and not states(phrase, part) for o in others):
                    continue
                for figure in quantities_in(part):
                    if figure.unit.startswith(("%", "％", "个百分点")) == rate:
                        return (t, c, i, figure.start), figure
    return None


def phrases_compared(reading: Reading, texts: list[str]) -> str:
    """Which of two things of one entity the question compares is higher, and by how much
    (difference_line), from the figures the quoted texts state for each — or ""."""
    phrases = reading.phrases
    if not reading.question.compares or len(phrases) != 2:
        return ""
    # like is compared with like: 医药冷链和生鲜冷链业务收入增速 compares two rates
    rate = any(RATE.search(p) for p in phrases)
    found = [phrase_figure(p, texts, tuple(o for o in phrases if o != p), rate) for p in phrases]
    if found[0] is None or found[1] is None or found[0][0] == found[1][0]:
        return ""  # a figure missing, or one figure read for both: no comparison
    return difference_line([(phrases[0], found[0][1]), (phrases[1], found[1][1])])


def rows_compared(reading: Reading, rows: list[Unit]) -> str:
    """Two rows a question compares (汽车电子与工业控制哪个毛利率更高): the difference of
    the column asked."""
    if not reading.question.compares or len(rows) != 2:
        return ""
    values = []
    for row in rows:
        column = row_cell(row, reading.phrases)
        cell = row.clauses[column] if 0 < column < len(row.clauses) else ""
        figures = quantities_in(cell)
        if not figures:
            return ""
        values.append((fold(row.clauses[0]).strip(), figures[0]))
    return difference_line(values)


def coordinated_missing(reading: Reading) -> list[tuple[int, str]]:
    """Names the question coordinates with a known entity (A和B的…) that no retrieved
    document is about: (position, name)."""
    text = fold(reading.question.text)
    known = [(text.find(fold(t)), fold(t)) for t in reading.entity_terms if fold(t) in text]
    out = []
    for name in reading.question.unknown:
        at = text.find(fold(name))
        if at < 0:
            continue
        for position, term in known:
            before = text[position + len(term) : at] if position < at else ""
            after = text[at + len(name) : position] if at < position else ""
            if COORDINATED.fullmatch(before or after or "x"):
                out.append((at, name))
                break
    return out


def states_own_figure(text: str, measures: list[str], own: str, names: list[str]) -> bool:
    """Whether ``text`` (a compared entity's line) states ``own``'s figure of the measure
    asked: a clause that states every one of ``measures`` with a quantity after them, and
    whose nearest compared name (``names``) before that quantity is ``own`` — or none, the
    unit's own subject. 溪口银行's line is not 净息差 | 1.52% (no 拨备覆盖率), nor 汐川银行和
    溪口银行…，汐川银行拨备覆盖率为 301.25% (汐川银行's figure, after 汐川银行's name)."""
    own = fold(own)
    folded = [fold(n) for n in names if fold(n) and fold(n) != own]
    if not measures:
        return True
    for clause in _CLAUSE_END.split(fold(text)):
        if not all(states(m, clause) for m in measures):
            continue
        parts = _COMMA.split(clause)
        for i, part in enumerate(parts):
            said = "，".join(parts[: i + 1])
            if not all(states(m, said) for m in measures):
                continue
            for figure in quantities_in(part):
                before = "，".join([*parts[:i], part[: figure.start]])
                spots = [(before.rfind(n), n) for n in (own, *folded) if n in before]
                if not spots or max(spots)[1] == own:
                    return True
            if i and _OWN_VALUE.match(part.strip()[len(own) :]) and part.strip().startswith(own):
                # a value that is no number, written after the measure's clause as the
                # name's own (在最近一期风险综合评级中，澄远人寿为 AA 类，澄远财险为 A 类)
                return True
    return False


# A name's value stated by a copula after it (为 AA 类, 是 A 类).
_OWN_VALUE = re.compile(r"(?:为|是|被评为|评为)\s*\S")


# What closes a kind counted (三家银行中, 两只基金里): a place word, not part of the kind.
AMONG = re.compile(r"(?:之中|当中|中|里|之间)$")


def kind_asked(question: Question) -> tuple[str, str]:
    """The kind a superlative is asked over and its measure word (三家银行中谁的净息差最低 →
    银行, 家; 哪家券商的 ROE 最高 → 券商, 家): the term right after a count or which-word of
    things (三家, 哪家) in a question asking the highest or lowest one, or each one's figure
    (三家银行的不良率分别是多少: every member, none ranked) — ("", "") for any other
    question."""
    if not (question.extreme or question.each) or question.top > 1:
        return "", ""
    text = fold(question.text)
    match = re.search(AMONG_KIND, text)
    if match is None:
        return "", ""
    for term in question.terms:
        if text.startswith(fold(term), match.end()):
            return AMONG.sub("", fold(term)), match.group()[-1]
    return "", ""


Member = tuple[str, Source | None, Unit | None, Figure | None]


def members_compared(reading: Reading, kind: str) -> list[Member]:
    """Each member of the kind asked that the excerpts write a section of (member_sections),
    with the first unit of its section stating the measure asked and that unit's figure of
    it (phrase_figure) — (name, None, None, None) for a section stating none; [] unless two
    or more state it, or when the kind is a member's whole name (银行, which 澜州银行 and
    溪南银行 end with, is their kind)."""
    measures = [p for p in reading.phrases if fold(p) != kind and kind not in fold(p)]
    if not measures:
        return []
    out: list[Member] = []
    for name, units in member_sections(reading.sources):
        if kind == name:
            return []  # the kind is a member's own name: it is that one, not a kind
        found: Member = (name, None, None, None)
        for source, unit in units:
            figure = _measure_figure(measures, unit.text)
            if figure is not None:
                found = (name, source, unit, figure)
                break
        out.append(found)
    return out if sum(1 for m in out if m[3] is not None) >= 2 else []


def _measure_figure(measures: list[str], text: str) -> Figure | None:
    """The figure ``text`` states for every phrase of ``measures`` (one phrase asked): a
    rate's percent, or the first quantity of the phrase's own kind."""
    if len(measures) != 1:
        return None
    for rate in (bool(RATE.search(measures[0])), not RATE.search(measures[0])):
        found = phrase_figure(measures[0], [text], rate=rate)
        if found is not None:
            return found[1]
    return None


def extreme_line(members: list[Member], highest: bool, measure: str, counter: str) -> str:
    """Which member's figure is the highest or lowest of those stated — computed from the
    figures quoted above it, so it sits after every marker — naming the members whose
    sections state none; "" when the figures are of different units."""
    valued = [(name, figure) for name, _, _, figure in members if figure is not None]
    written = {
        name: _written(figure, unit.text)
        for name, _, unit, figure in members
        if figure is not None and unit is not None
    }
    bases = [in_base_unit(f.value, f.unit) for _, f in valued]
    if len({unit for _, unit in bases}) != 1:
        return ""
    values = [value for value, _ in bases]
    best = max(values) if highest else min(values)
    names = [name for (name, _), value in zip(valued, values, strict=True) if value == best]
    figure = written[valued[values.index(best)][0]]
    word = "最高" if highest else "最低"
    missing = [name for name, _, _, f in members if f is None]
    unstated = f"；{'、'.join(missing)}的摘录没有写明，未计入" if missing else ""
    return (
        f"\n\n写明{measure}的 {len(valued)} {counter}中，{'、'.join(names)}{word}"
        f"（{figure}，按上面各处数字比较）{unstated}。"
    )


def _written(figure: Figure, text: str) -> str:
    """``figure`` as ``text`` writes it (4.80%, not 4.8%)."""
    folded = fold(text)
    for quantity in quantities_in(folded):
        if quantity.value == figure.value and quantity.unit == figure.unit:
            return folded[quantity.start : quantity.end].strip()
    return f"{format(figure.value.normalize(), 'f')}{figure.unit}"
