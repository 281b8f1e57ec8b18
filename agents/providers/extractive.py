"""The extractive provider: a research answer with no model at all (docs/extractive-provider.md).

It searches with the question (resolving an elliptical follow-up against the conversation's
earlier questions), reads the excerpts at their real boundaries, and publishes:

1. **回答** — the direct answer: the best-supported sentence (or list) for the question's
   entity and terms, quoted from the excerpt that states it;
2. **依据** — the supporting points from the other relevant excerpts;
3. **相关数据** — only the declared figures relevant to the question, each named by its
   entity, as numeric handles cited to the very excerpt that states them;
4. a revision of 回答 when a figure answers the question: the figure, named, with the
   clause that states it — a sharper answer than the first quote, not a template.

A relevance floor: when the question names something the retrieved text never mentions
(an entity, a year), the answer says so and cites nothing. Every figure it writes is in
the excerpt whose marker follows it: sentences are quoted verbatim, values come from
handles (a handle's citation is the chunk that states its value).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from agents.providers.base import AgentState, ToolCall, Turn
from agents.providers.reading import (
    Question,
    Unit,
    coverage,
    covers,
    entity_of,
    fold,
    is_item,
    periods_in,
    read_question,
    row_cell,
    short_name,
    states,
    topic_phrases,
    units,
)
from knowledge.figures import Figure, figures_in, in_base_unit, value_spans
from knowledge.text import search_tokens

NOT_FOUND = "未在可用的知识版本中找到与问题相关的内容，无法给出有出处的回答。"
MAX_POINTS = 3
MAX_FIGURES = 6


@dataclass
class _Source:
    """One retrieved excerpt as the provider reads it."""

    id: str
    title: str
    entity: str
    name: str  # short entity name
    content: str
    units: list[Unit]
    handles: list[dict[str, Any]]
    rank: int


@dataclass
class _Pick:
    source: _Source
    unit: Unit
    score: float


def _sources(results: list[dict[str, Any]]) -> list[_Source]:
    seen: set[str] = set()
    out = []
    for rank, r in enumerate(results):
        if r["id"] in seen:
            continue
        seen.add(r["id"])
        entity = entity_of(r.get("title") or "")
        out.append(
            _Source(
                id=r["id"],
                title=r.get("title") or "",
                entity=entity,
                name=short_name(entity),
                content=r.get("content") or "",
                units=units(r.get("content") or ""),
                handles=list(r.get("handles") or []),
                rank=rank,
            )
        )
    return out


def _corpus(sources: list[_Source]) -> str:
    parts = []
    for s in sources:
        parts += [s.title, s.name, s.content, *(h.get("label") or "" for h in s.handles)]
    return fold("\n".join(parts))


def _entity_terms(question: Question, sources: list[_Source]) -> list[str]:
    """The question's terms that name a retrieved document's entity."""
    return [
        t
        for t in question.terms
        if len(t) >= 2 and any(fold(t) in fold(s.title) or covers(fold(s.name), t) for s in sources)
    ]


@dataclass
class _Reading:
    question: Question
    entity_terms: list[str]
    topic: list[str]  # the other terms: what is asked about the entity
    sources: list[_Source]  # relevant excerpts, best first
    resolved_from: str = ""  # the earlier question an elliptical follow-up was read against
    phrases: tuple[str, ...] = ()  # what is asked, as written (topic_phrases): the floor


def _states_question(reading: _Reading, text: str, context: str) -> bool:
    """The floor on the thing asked: ``text`` (with its heading or table header, and the
    document's title for the period) states every phrase the question asks about and
    every period it names. Not the entity alone: 基金简称 does not answer 基金经理."""
    said = fold(f"{text}\n{context}")
    phrases = reading.phrases
    if not all(states(p, said) for p in phrases):
        return False
    return reading.question.periods <= periods_in(said)


def _about(source: _Source, entity_terms: list[str]) -> bool:
    if not entity_terms:
        return True
    return any(covers(t, fold(source.name)) or covers(t, fold(source.title)) for t in entity_terms)


def _unit_score(unit: Unit, reading: _Reading, source: _Source) -> float:
    if unit.kind in ("heading", "header"):
        return 0.0
    text = fold(unit.text)
    context = fold(unit.heading)
    # Another entity the question names is asked about here (持有北辰医药的比例).
    others = [t for t in reading.entity_terms if not _names(source, t)]
    topic = [*reading.topic, *others] or list(reading.entity_terms)
    score = 0.0
    for term in topic:
        c = coverage(term, text)
        if c >= 0.6:
            score += 2.0 * c
        elif coverage(term, context) >= 0.6:
            # A list is read under its heading (第四节 风险提示 → its items), a table row
            # under its header.
            score += 2.0 * coverage(term, context) if unit.kind in ("list", "row") else 0.5
    if score == 0.0:
        return 0.0
    for time in reading.question.times:
        if coverage(fold(time), text) >= 0.6:
            score += 0.5
    # A few shared words break ties between sentences that both name the topic.
    wanted = set(search_tokens(reading.question.text))
    said = f"{unit.heading} {unit.text}" if unit.kind in ("list", "row") else unit.text
    score += min(0.5, 0.1 * len(wanted & set(search_tokens(said))))
    if unit.kind == "list":
        score += 1.0 if reading.question.enumerates else -0.5
        # The fuller enumeration of a topic answers "which" better.
        score += 0.1 * min(len(unit.clauses), 5) if reading.question.enumerates else 0.0
    if reading.question.quantitative and figures_in(unit.text):
        score += 0.5
    if unit.kind == "list" and reading.question.enumerates:
        return score  # a whole enumeration is not penalized for its length
    return score - 0.002 * len(unit.text)


def _names(source: _Source, term: str) -> bool:
    return fold(term) in fold(source.title) or covers(fold(source.name), fold(term))


def _candidates(source: _Source, reading: _Reading) -> list[Unit]:
    """A list is one answer to "which ones"; otherwise each item stands on its own."""
    out = []
    for unit in source.units:
        if unit.kind == "list" and not reading.question.enumerates:
            lines = unit.text.split("\n")
            items = unit.clauses or lines[1:]
            lead_in = lines[0] if lines[0] not in items and not is_item(lines[0]) else ""
            context = f"{unit.heading} {lead_in}".strip()
            for line in items:
                out.append(Unit(line, "sentence", context, [line]))
            continue
        out.append(unit)
        if unit.kind == "sentence" and len(unit.clauses) > 1:
            # A clause of a long sentence answers on its own (…；扣非净利润 5.9 亿元…；).
            out += [Unit(c.strip(), "clause", unit.heading, [c]) for c in unit.clauses]
    return out


def _best_units(reading: _Reading) -> list[_Pick]:
    picks = []
    for source in reading.sources:
        for unit in _candidates(source, reading):
            if not _states_question(reading, unit.text, f"{unit.heading}\n{source.title}"):
                continue
            score = _unit_score(unit, reading, source)
            if score > 0:
                picks.append(_Pick(source, unit, score))
    picks.sort(key=lambda p: (-p.score, p.source.rank))
    return picks


def _figure_score(handle: dict[str, Any], reading: _Reading) -> float:
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


def _figures(reading: _Reading) -> list[tuple[float, _Source, dict[str, Any]]]:
    found = []
    seen = set()
    for source in reading.sources:
        for handle in source.handles:
            if handle["id"] in seen:
                continue
            label = handle.get("label") or handle.get("key") or ""
            if not _states_question(reading, label, source.title):
                continue
            score = _figure_score(handle, reading)
            if score > 0:
                seen.add(handle["id"])
                found.append((score, source, handle))
    found.sort(key=lambda f: (-f[0], f[1].rank))
    return found


def _answers(handle: dict[str, Any], reading: _Reading) -> bool:
    """Does this figure answer the question itself (not just relate to it)?

    Its label must state (nearly) everything asked about, and any time the question
    names — or the sentence stating the figure must.
    """
    label = fold(handle.get("label") or handle.get("key") or "")
    topic = "".join(reading.topic)
    if not topic or coverage(topic, label) < 0.8:
        return False
    return all(coverage(fold(t), label) >= 0.6 for t in reading.question.times) or not (
        reading.question.times
    )


def _clause_with(unit: Unit, display: str) -> str:
    """The clause of ``unit`` that states ``display`` (the value as a handle renders it)."""
    figures = figures_in(display)
    if not figures:
        return unit.text
    for clause in unit.clauses or [unit.text]:
        if value_spans(clause, figures[0].value, figures[0].unit):
            return clause.rstrip("；;，,")
    return unit.text


def _unit_stating(source: _Source, display: str) -> Unit | None:
    figures = figures_in(display)
    if not figures:
        return None
    for unit in source.units:
        if unit.kind != "heading" and value_spans(unit.text, figures[0].value, figures[0].unit):
            return unit
    return None


def _quote(unit: Unit, phrases: tuple[str, ...] = ()) -> str:
    """A unit as written: a list keeps its lead-in and every item on their own lines; a
    table row is answered by the cell the question asks for (its row label and column
    header), then quoted whole with its header — every cell verbatim."""
    if unit.kind == "row":
        column = row_cell(unit, phrases)
        quoted = f"表格：{unit.heading}\n  {unit.text}"
        if column > 0:
            header = unit.heading.split(" | ")
            return f"{unit.clauses[0]}（{header[column]}）：{unit.clauses[column]}\n  {quoted}"
        return quoted
    return unit.text.rstrip("；;，,") if unit.kind == "clause" else unit.text


# Two named entities joined as one subject (A基金和B基金, A与B, A、B): a comparison.
_COORDINATED = re.compile(r"\s*(?:和|与|及|跟|同|、|以及)\s*")


def _compared(reading: _Reading) -> list[tuple[str, list[_Source]]]:
    """The entities a comparison question names, each with its own retrieved sources, in
    the question's order — or [] when the question is not a comparison of two or more.
    Entities must be coordinated in the text (A和B的…): 星河医疗健康混合基金持有北辰医药
    names two entities but asks about one."""
    text = fold(reading.question.text)
    # A generic name (基金 in every fund's title) names no one entity: it is not compared.
    specific = [
        t
        for t in reading.entity_terms
        if len({s.entity for s in reading.sources if _names(s, t)}) == 1
    ]
    placed = sorted((text.find(fold(t)), t) for t in specific if text.find(fold(t)) >= 0)
    groups: list[tuple[str, list[_Source]]] = []
    for i, (at, term) in enumerate(placed):
        if i > 0:
            previous_at, previous = placed[i - 1]
            between = text[previous_at + len(fold(previous)) : at]
            if not _COORDINATED.fullmatch(between):
                return []
        named = [s for s in reading.sources if _names(s, term)]
        if not named or any({s.entity for s in named} & {s.entity for s in g} for _, g in groups):
            return []
        groups.append((term, named))
    if len(groups) >= 1:
        order = {term: at for at, term in placed}
        missing = _coordinated_missing(reading)
        groups += [(name, []) for _, name in missing]
        order |= {name: at for at, name in missing}
        groups.sort(key=lambda g: order[g[0]])
    return groups if len(groups) >= 2 else []


def _difference(values: list[tuple[str, Figure]]) -> str:
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


def _coordinated_missing(reading: _Reading) -> list[tuple[int, str]]:
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
            if _COORDINATED.fullmatch(before or after or "x"):
                out.append((at, name))
                break
    return out


def _cite(source: _Source) -> str:
    return f"[[cite:{source.id}]]"


def _dates(figures: list[tuple[float, _Source, dict[str, Any]]]) -> str:
    dates: list[str] = sorted({f[2]["asOf"] for f in figures if f[2].get("asOf")})
    if not dates:
        return ""
    return "\n\n数据日期：" + "、".join(dates) + "。"


class ExtractiveProvider:
    def __init__(self, config: dict[str, Any]) -> None:
        self.top_k = int(config.get("topK", 5))
        self.stage = "search"
        self.reading: _Reading | None = None
        self.direct_id: str | None = None
        self._published_before = 0
        self._calls = 0
        self._cited: dict[str, list[str]] = {}
        self._pending_resolution: tuple[str, str] | None = None
        self._first_count: int | None = None  # results of the first search (a follow-up)
        self._direct_pick: _Pick | None = None
        self._comparing = False  # a comparison's direct answer is not revised to one entity

    # -- turns -------------------------------------------------------------------

    def _tool(self, name: str, args: dict[str, Any]) -> Turn:
        self._calls += 1
        call = ToolCall(
            id=f"call_extractive_{self._calls}",
            name=name,
            arguments=json.dumps(args, ensure_ascii=False),
        )
        return Turn(tool_calls=[call])

    def _publish(self, markdown: str, replaces: str | None = None) -> Turn:
        args = {"markdown": markdown}
        if replaces:
            args["replaces"] = replaces
        return self._tool("send_answer_part", args)

    def next_turn(self, state: AgentState) -> Turn:
        if self.stage == "search":
            self.stage = "read"
            return self._tool("search_knowledge", {"query": state.task, "top_k": self.top_k})
        if self.stage == "read":
            resolution = self._follow_up_query(state)
            if resolution is not None:
                self.stage = "resolved"
                self._pending_resolution = resolution
                return self._tool("search_knowledge", {"query": resolution[1], "top_k": self.top_k})
            self.stage = "direct"
            self.reading = self._read(state, state.search_results())
        if self.stage == "resolved":
            self.stage = "direct"
            earlier, _ = self._pending_resolution or ("", "")
            results = self._latest_search(state)
            self.reading = self._read(state, results, earlier=earlier)
        reading = self.reading
        if reading is None or not reading.sources:
            self.stage = "done"
            return Turn(text=self._not_found(state, reading), done=True)
        if self.stage == "direct":
            self.stage = "points"
            self._published_before = len(state.publication_ids())
            return self._publish(self._direct(reading))
        if self.stage == "points":
            self.stage = "figures"
            ids = state.publication_ids()
            if len(ids) > self._published_before:
                self.direct_id = ids[self._published_before]
            points = self._points(reading)
            if points:
                return self._publish(points)
        if self.stage == "figures":
            self.stage = "revise"
            figures = self._figure_lines(reading)
            if figures:
                return self._publish(figures)
        if self.stage == "revise":
            self.stage = "done"
            revised = "" if self._comparing else self._revised(reading)
            if revised and self.direct_id:
                return self._publish(revised, replaces=self.direct_id)
        return Turn(done=True)

    # -- reading -------------------------------------------------------------------

    def _latest_search(self, state: AgentState) -> list[dict[str, Any]]:
        """Results of the last search only (a follow-up searches twice)."""
        results = state.search_results()
        count = self._first_count
        return results[count:] if count is not None else results

    def _follow_up_query(self, state: AgentState) -> tuple[str, str] | None:
        """(earlier question, resolved query) when the question leaves out its entity."""
        history = list(getattr(state, "history", None) or [])
        if not history:
            return None
        results = state.search_results()
        self._first_count = len(results)
        sources = _sources(results)
        question = read_question(state.task, _corpus(sources))
        if sources and _entity_terms(question, sources):
            return None
        if not question.follow_up and question.terms and len("".join(question.terms)) > 6:
            return None
        for turn in reversed(history):
            earlier = str(turn.get("question") or "")
            earlier_question = read_question(earlier, fold(earlier))
            if earlier_question.terms:
                query = " ".join([*earlier_question.terms, *question.terms, *question.unknown])
                return earlier, query
        return None

    def _read(
        self, state: AgentState, results: list[dict[str, Any]], *, earlier: str = ""
    ) -> _Reading:
        sources = _sources(results)
        corpus = _corpus(sources)
        question = read_question(state.task, corpus)
        entity_terms = _entity_terms(question, sources)
        if earlier:
            earlier_question = read_question(earlier, corpus)
            inherited = _entity_terms(earlier_question, sources)
            entity_terms = entity_terms or inherited
            if not question.times and earlier_question.times:
                question = Question(
                    text=question.text,
                    terms=question.terms,
                    unknown=question.unknown,
                    times=earlier_question.times,
                    years=earlier_question.years,
                    follow_up=question.follow_up,
                    enumerates=question.enumerates,
                    quantitative=question.quantitative,
                    runs=question.runs,
                    periods=earlier_question.periods,
                )
        topic = [t for t in question.terms if t not in entity_terms]
        reading = _Reading(question, entity_terms, topic, [], earlier if entity_terms else "")
        reading.phrases = tuple(topic_phrases(question, entity_terms))
        missing = {fold(name) for _, name in _coordinated_missing(reading)}
        reading.phrases = tuple(p for p in reading.phrases if p not in missing)
        if not self._relevant(reading, sources):
            reading.sources = []
            return reading
        about = [s for s in sources if _about(s, entity_terms)]
        # The document named most fully comes first (星河医疗健康混合基金 before 北辰医药).
        about.sort(
            key=lambda s: (-max((len(t) for t in entity_terms if _names(s, t)), default=0), s.rank)
        )
        for rank, source in enumerate(about):
            source.rank = rank
        reading.sources = about
        if not _best_units(reading) and not _figures(reading):
            reading.sources = []
        return reading

    def _relevant(self, reading: _Reading, sources: list[_Source]) -> bool:
        """The relevance floor: is the question about what was retrieved at all?"""
        question = reading.question
        if not sources:
            return False
        if question.unknown and not reading.entity_terms:
            return False  # it names something no excerpt mentions (贵州茅台…)
        if not question.terms:
            return False
        corpus = _corpus([s for s in sources if _about(s, reading.entity_terms)])
        if any(year not in corpus for year in question.years):
            return False
        if not reading.entity_terms:
            # Without a named entity, one excerpt must speak to every term.
            return any(all(covers(t, fold(s.content)) for t in question.terms) for s in sources)
        return True

    def _not_found(self, state: AgentState, reading: _Reading | None) -> str:
        count = len({r["id"] for r in state.search_results()})
        if reading is None or count == 0:
            return NOT_FOUND
        question = reading.question
        if reading.entity_terms and reading.phrases:
            # The entity is known; what was asked about it is stated nowhere.
            terms = reading.entity_terms
            named = [t for t in terms if not any(t != o and t in o for o in terms)]
            entity = "、".join(f"「{t}」" for t in named[:3])
            asked = "、".join(f"「{p}」" for p in reading.phrases[:3])
            when = "、".join(question.times)
            return (
                f"未在可用的知识版本中找到{entity}{when}{asked}的内容（检索到 {count} 段摘录，"
                f"没有一段写明{asked}{'及' + when if when else ''}），无法给出有出处的回答。"
            )
        named = list(question.unknown) or list(reading.entity_terms)
        if not named and not question.years:
            named = list(question.terms)
        subject = "、".join(f"「{n}」" for n in named[:3])
        if question.years:
            subject += " " + "、".join(f"{y} 年" for y in question.years)
        if not subject.strip():
            return NOT_FOUND
        return (
            f"未在可用的知识版本中找到关于{subject.strip()}的内容（检索到 {count} 段摘录，"
            "没有一段能回答这个问题），无法给出有出处的回答。"
        )

    # -- composing -----------------------------------------------------------------

    def _context_note(self, reading: _Reading) -> str:
        if reading.resolved_from:
            about = "、".join(reading.entity_terms)
            return f"\n\n（接上一问「{reading.resolved_from.strip()}」，按{about}理解。）"
        return ""

    def _comparison(self, reading: _Reading, groups: list[tuple[str, list[_Source]]]) -> str:
        """One line per compared entity, each figure cited to its own entity's excerpt; an
        entity with no document says so on its line; two figures of one unit end with the
        difference and which is higher."""
        lines = []
        values: list[tuple[str, Figure]] = []
        for term, sources in groups:
            if not sources:
                lines.append(f"- {term}：未检索到关于「{term}」的文档。")
                continue
            own = _Reading(reading.question, [term], reading.topic, sources, "", reading.phrases)
            figures = _figures(own)
            answering = [f for f in figures if _answers(f[2], own)] or figures
            picks = _best_units(own)
            if answering:
                _, source, handle = answering[0]
                label = handle.get("label") or handle["key"]
                lines.append(f"- {source.name}{label}：[[num:{handle['id']}]] {_cite(source)}")
                stated = figures_in(handle.get("display") or "")
                if stated:
                    values.append((source.name, stated[0]))
            elif picks:
                lines.append(
                    f"- {picks[0].source.name}：{_quote(picks[0].unit, reading.phrases)} "
                    f"{_cite(picks[0].source)}"
                )
            else:
                lines.append(f"- {sources[0].name}：检索到的摘录没有写明。")
                continue
            self._cited.setdefault("direct", []).append(
                (answering[0][1] if answering else picks[0].source).id
            )
        names = "与".join(sources[0].name if sources else term for term, sources in groups)
        difference = _difference(values) if len(values) == len(groups) == 2 else ""
        return (
            f"**回答**（{names}对比）：\n"
            + "\n".join(lines)
            + difference
            + self._context_note(reading)
        )

    def _direct(self, reading: _Reading) -> str:
        groups = _compared(reading)
        if groups:
            self._comparing = True
            return self._comparison(reading, groups)
        picks = _best_units(reading)
        if not picks:
            score, source, handle = _figures(reading)[0]
            unit = _unit_stating(source, handle["display"])
            text = unit.text if unit else f"{handle['label']}：[[num:{handle['id']}]]"
            self._cited["direct"] = [source.id]
            return f"**回答**：{source.name}：{text} {_cite(source)}{self._context_note(reading)}"
        pick = picks[0]
        self._direct_pick = pick
        self._cited["direct"] = [pick.source.id]
        return (
            f"**回答**（{pick.source.name}）：{_quote(pick.unit, reading.phrases)} "
            f"{_cite(pick.source)}"
            f"{self._context_note(reading)}"
        )

    def _points(self, reading: _Reading) -> str:
        picks = _best_units(reading)
        direct = self._direct_pick
        lines: list[str] = []
        used = [(direct.source.id, direct.unit.text)] if direct else []
        answering = [f for f in _figures(reading) if _answers(f[2], reading)]
        if answering:
            stating = _unit_stating(answering[0][1], answering[0][2]["display"])
            if stating is not None:
                used.append((answering[0][1].id, stating.text))
        for pick in picks:
            if len(lines) >= MAX_POINTS:
                break
            if direct is not None and pick.score < 0.75 * direct.score:
                break
            # Never the answer again, nor a sentence that holds it or a clause of it.
            if any(
                pick.source.id == sid and (pick.unit.text in text or text in pick.unit.text)
                for sid, text in used
            ):
                continue
            used.append((pick.source.id, pick.unit.text))
            quote = _quote(pick.unit).replace("\n", "\n  ")
            lines.append(f"- {pick.source.name}：{quote} {_cite(pick.source)}")
            self._cited.setdefault("points", []).append(pick.source.id)
        if not lines:
            return ""
        return "**依据**\n" + "\n".join(lines)

    def _figure_lines(self, reading: _Reading) -> str:
        figures = _figures(reading)[:MAX_FIGURES]
        if not figures:
            return ""
        lines = []
        for _, source, handle in figures:
            lines.append(
                f"- {source.name} · {handle.get('label') or handle['key']}："
                f"[[num:{handle['id']}]] {_cite(source)}"
            )
            self._cited.setdefault("figures", []).append(source.id)
        return "**相关数据**\n" + "\n".join(lines) + _dates(figures)

    def _revised(self, reading: _Reading) -> str:
        answering = [f for f in _figures(reading) if _answers(f[2], reading)]
        if not answering:
            return ""
        _, source, handle = answering[0]
        unit = _unit_stating(source, handle["display"])
        label = handle.get("label") or handle["key"]
        lines = [f"**回答**：{source.name}{label}为 [[num:{handle['id']}]] {_cite(source)}。"]
        if unit is not None:
            lines.append(f"原文：「{_clause_with(unit, handle['display'])}」 {_cite(source)}")
        # What the answer cites once this revision replaces the first 回答: true counts.
        cited = list(
            dict.fromkeys(
                [*self._cited.get("points", []), *self._cited.get("figures", []), source.id]
            )
        )
        documents = {s.title for s in reading.sources if s.id in cited}
        note = f"本回答共引用 {len(cited)} 段摘录，来自 {len(documents)} 份文档"
        if handle.get("asOf"):
            note += f"；数据截至 {handle['asOf']}"
        return "\n\n".join(lines) + "\n\n" + note + "。" + self._context_note(reading)
