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
from dataclasses import replace
from typing import Any

from agents.providers.base import AgentState, ToolCall, Turn
from agents.providers.comparison import (
    AMONG,
    compared_groups,
    coordinated_missing,
    difference_line,
    extreme_line,
    kind_asked,
    members_compared,
    phrases_compared,
    rows_compared,
    states_own_figure,
)
from agents.providers.grammar import MENTIONING, PRONOUNS
from agents.providers.quoting import clause_with, picked_item, quote_rows, quote_unit, unit_stating
from agents.providers.reading import (
    as_asked,
    authors,
    covers,
    doer_phrases,
    enumerates,
    fold,
    is_attribute,
    is_class_letter,
    qualified_before,
    read_question,
    share_asked_alone,
    sibling_swapped,
    states,
    topic_phrases,
    unit_of,
    without_class,
)
from agents.providers.selection import (
    answering_rows,
    asked_apart,
    asked_in_clauses,
    asks_the_table,
    best_units,
    best_units_each,
    carried_rows,
    cite_marker,
    dates_line,
    handle_answers,
    is_about,
    named_otherwise,
    quantities_in,
    relevant_figures,
    row_owner,
    rows_alike,
    section_about,
    section_subject,
)
from agents.providers.sources import (
    Pick,
    Reading,
    Source,
    corpus_of,
    entity_terms_of,
    read_sources,
    source_names,
)
from agents.providers.structure import Unit, row_cell
from knowledge.figures import Figure, figures_in

NOT_FOUND = "未在可用的知识版本中找到与问题相关的内容，无法给出有出处的回答。"
MAX_POINTS = 3
MAX_FIGURES = 6


class ExtractiveProvider:
    def __init__(self, config: dict[str, Any]) -> None:
        self.top_k = int(config.get("topK", 5))
        self.stage = "search"
        self.reading: Reading | None = None
        self.direct_id: str | None = None
        self._published_before = 0
        self._calls = 0
        self._cited: dict[str, list[str]] = {}
        self._pending_resolution: tuple[str, str] | None = None
        self._first_count: int | None = None  # results of the first search (a follow-up)
        self._direct_pick: Pick | None = None
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
            # One figure never replaces a comparison or the list a "which" question asks for.
            single = not self._comparing and not reading.question.which
            revised = self._revised(reading) if single else ""
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
        sources = read_sources(results)
        question = read_question(state.task, corpus_of(sources))
        entities = entity_terms_of(question, sources) if sources else []
        if entities and not (question.follow_up and not topic_phrases(question, entities)):
            return None  # (北港冷链呢？ names an entity and asks the earlier question of it)
        if not question.follow_up and question.terms and len("".join(question.terms)) > 6:
            return None
        for turn in reversed(history):
            earlier = str(turn.get("question") or "")
            earlier_question = read_question(earlier, fold(earlier))
            if all(is_attribute(t) for t in earlier_question.terms):
                # (同比增长多少？ asked an attribute of the question before it: that one
                # names the thing)
                continue
            if (
                earlier_question.follow_up
                and len(earlier_question.terms) == len(question.terms) == 1
                and rows_alike(sources, earlier_question.terms[0], question.terms[0])
            ):
                # (云岭农商行呢？ after 澜州银行呢？ after 溪南银行的净息差是多少？: a bare
                # follow-up naming a thing of one kind with the one before it — rows of one
                # table — puts it in the same place of the question they both follow, so
                # that question is what the chain goes on asking; 出租率呢？ after 华中呢？
                # asks of the row 华中)
                continue
            if earlier_question.terms:
                query = " ".join([*earlier_question.terms, *question.terms, *question.unknown])
                return earlier, query
        return None

    def _read(
        self, state: AgentState, results: list[dict[str, Any]], *, earlier: str = ""
    ) -> Reading:
        # (a follow-up reads its own search; the earlier one may hold a split table's header)
        sources = read_sources(results, state.search_results() if earlier else None)
        corpus = corpus_of(sources)
        names = tuple(n for s in sources for n in (s.name, s.entity))
        question = read_question(state.task, corpus, names)
        entity_terms = entity_terms_of(question, sources)
        # (a kind a superlative is asked over, 三家银行中, names no one of its members)
        kind, counter = kind_asked(question)
        entity_terms = [t for t in entity_terms if AMONG.sub("", fold(t)) != kind]
        names_own_entity = bool(entity_terms)
        if earlier:
            earlier_question = read_question(earlier, corpus)
            inherited = entity_terms_of(earlier_question, sources)
            entity_terms = entity_terms or inherited
            if earlier_question.times and question.periods <= {"YOY"}:
                # The earlier question's period goes on; a change on the year before
                # (同比增长多少？) is of that period, not a period of its own.
                question = replace(
                    question,
                    times=tuple(dict.fromkeys([*earlier_question.times, *question.times])),
                    years=earlier_question.years,
                    periods=earlier_question.periods | question.periods,
                )
            if earlier_question.ordinal and not question.ordinal and not names_own_entity:
                # 占净值比例多少？ after 第一大重仓股是哪只？ asks it of that ranked row.
                question = replace(
                    question,
                    ordinal=earlier_question.ordinal,
                    ordinal_text=earlier_question.ordinal_text,
                )
        # (a verb of mentioning — 提示了哪些风险 — asks nothing to rank by; nor does who
        # wrote the document asked of: authors)
        topic = [
            t
            for t in question.terms
            if t not in entity_terms and t not in MENTIONING and t not in authors(question)
        ]
        reading = Reading(question, entity_terms, topic, [], earlier if entity_terms else "")
        reading.phrases = tuple(topic_phrases(question, entity_terms))
        # the earlier question as these excerpts read it, and what it asked of its entity
        asked_before = read_question(earlier, corpus, names) if earlier else question
        earlier_entities = entity_terms_of(asked_before, sources) if earlier else []
        before = topic_phrases(asked_before, earlier_entities) if earlier else []
        if earlier and names_own_entity and not reading.phrases:
            # 北港冷链呢？ after 远川冷链上半年营收多少？ asks the same of another entity — in
            # the place of the row the earlier question named, where one table's rows name
            # both (澜州银行呢？ after 溪南银行的收盘价是多少？: 收盘价, of 澜州银行).
            replaced = {p for p in before if any(rows_alike(sources, p, t) for t in entity_terms)}
            reading.topic = [
                t
                for t in asked_before.terms
                if t not in earlier_entities and fold(t) not in replaced
            ]
            reading.phrases = tuple(p for p in before if p not in replaced)
        if earlier and reading.phrases and all(map(is_class_letter, reading.phrases)):
            # C类呢？ after A份额近一年的净值增长率是多少？ asks the same of another class.
            rest = [without_class(p) for p in before if not is_class_letter(p)]
            reading.phrases = (*reading.phrases, *(p for p in rest if p))
            reading.topic += [t for t in asked_before.terms if t not in entity_terms]
        if earlier and not names_own_entity and reading.phrases:
            # 核心一级呢？ after …并表口径的资本充足率多少？ qualifies what was asked before:
            # 核心一级资本充足率, of the same base (并表)
            qualified = qualified_before(reading.phrases, before, corpus)
            if qualified != reading.phrases:
                reading.topic += [p for p in qualified if p not in reading.phrases]
                reading.phrases = qualified
        if earlier and fold(state.task).startswith(PRONOUNS):
            # 她获授多少万股？ after 财务总监是谁？: she is whoever that question asked for, so
            # a unit that also says what it asked (苏明蕙 | 副总经理、财务总监 | 25.00) is hers.
            reading.topic += [t for t in earlier_question.terms if t not in entity_terms]
        if earlier and not names_own_entity and question.follow_up:
            # 信用债呢？ after 利率债占净值多少？ asks the same of a thing listed beside it.
            swapped = sibling_swapped(reading.phrases, before, asked_before.terms, corpus)
            if not swapped and len(reading.phrases) == 1 and len(before) > 1:
                # (or labelled beside it, rows of one table: 集团合并呢？ after 澄远人寿的
                # 综合偿付能力充足率是多少？ over 集团合并 … / 澄远人寿 …)
                (thing,) = reading.phrases
                alike = [b for b in before if b != thing and rows_alike(sources, b, thing)]
                if alike:
                    swapped = tuple(thing if b == alike[0] else b for b in before)
            if swapped:
                reading.phrases = swapped
                reading.question = question = replace(
                    question,
                    asks_figure=asked_before.asks_figure,
                    quantitative=asked_before.quantitative,
                    asks_share=asked_before.asks_share,
                )
        # (a share asked of someone named by a pronoun, or of a ranked row, is of that row)
        pointed = question.ordinal or fold(state.task).startswith(PRONOUNS)
        alone = earlier and not names_own_entity and not pointed
        whole = share_asked_alone(state.task) if alone else ""
        if whole:
            # 占营收比例呢？ after 冷链仓储业务收入多少？ asks that income's share of 营收:
            # what a figure is of another, as 占比 is — of the whole it names.
            reading.phrases = ("占比", whole)
            reading.of = tuple(p for p in before if not unit_of(p))
        if earlier and all(is_attribute(p) for p in reading.phrases):
            # 同比增长多少？ after 归母净利润是多少？ asks the growth of 归母净利润.
            # (the unit it was asked in, 多少亿元, is that answer's form, not a thing asked of:
            # 去年同期是多少？ is answered by a row in 元)
            reading.of = tuple(
                t for t in earlier_question.terms if t not in entity_terms and not unit_of(t)
            )
            # (较上年同期提升了多少？ after 创新药板块收入占营收比重是多少？ asks the change of
            # that share: a share is asked, its whole written with it)
            if earlier_question.asks_share and not question.asks_share:
                reading.question = question = replace(question, asks_share=True)
        if earlier and not names_own_entity and not question.ordinal:
            # 出租率呢？ after 华南呢？ asks it of the row the conversation is on.
            history = [str(t.get("question") or "") for t in getattr(state, "history", None) or []]
            carried = carried_rows(
                sources, state.task, [earlier, *reversed(history)], reading.phrases
            )
            # (a row named like a document's entity is that entity, not a row asked of:
            # 赤霞新材 in a fund's holdings after 赤霞新材第七项议案…)
            carried = [c for c in carried if not any(source_names(s, c) for s in sources)]
            reading.phrases = (*carried, *reading.phrases)
            reading.topic = [*carried, *reading.topic]
        missing = {fold(name) for _, name in coordinated_missing(reading)}
        reading.phrases = tuple(p for p in reading.phrases if p not in missing)
        reading.apart = tuple(asked_apart(reading))
        if kind and any(fold(a[0]) == kind for a in reading.apart):
            # (the kind asked over, 三家券商中谁的ROE, is no thing asked apart from its measure)
            reading.apart = ()
        if question.asks_figure and entity_terms and not (reading.phrases or reading.of):
            # A figure asked of nothing the reader could read (北辰医药这季度卖了多少钱):
            # which figure is not known — none is quoted.
            reading.sources = []
            return reading
        if not self._relevant(reading, sources):
            reading.sources = []
            return reading
        about = self._about(reading, sources)
        apart = [fold(a[0]) for a in reading.apart if len(a) > 1]
        # The document named most fully comes first (星河医疗健康混合基金 before 北辰医药).
        about.sort(
            key=lambda s: (
                -max((len(t) for t in entity_terms if source_names(s, t)), default=0),
                s.rank,
            )
        )
        for rank, source in enumerate(about):
            source.rank = rank
        reading.sources = about
        picks = reading.picks = best_units(reading)
        if kind and not reading.apart:
            # every member the excerpts write a section of, compared
            reading.members = members_compared(reading, kind)
            reading.counter = counter
        if picks and reading.apart and all(is_class_letter(a[0]) for a in reading.apart):
            # share classes asked together that one unit states together (a table of the
            # classes as columns, a sentence naming each) are answered by it; else each
            # class by its own table
            reading.apart, apart = (), []
        # (read once: what each thing asked apart is answered by, when it decides)
        # (clauses each asking their own thing, 是谁？…多少？, that the best sentence states
        # one of only by its heading: each by its own unit, every one found)
        clauses = reading.clauses_apart = bool(picks) and asked_in_clauses(reading, picks[0])
        each = reading.each = best_units_each(reading) if apart or not picks or clauses else []
        if clauses and not (each and all(each)):
            each = reading.each = []
            reading.clauses_apart = False
        if apart and not each:
            reading.sources = []
        reading.figures = relevant_figures(reading)
        if not (picks or reading.figures or each or reading.members):
            reading.sources = []
        listed = question.ordinal and picks and picks[0].unit.kind == "list"
        if listed and not picked_item(picks[0].unit, question.ordinal):
            reading.sources = []  # 第五大重仓股 over a list of three: not stated
        return reading

    def _about(self, reading: Reading, sources: list[Source]) -> list[Source]:
        """The excerpts about the question's entity: its documents', a note's sections
        headed by its name (## 澜州银行：…, read as those sections alone) — and, for names
        asked apart (澜州银行和溪南银行的目标价), any excerpt whose text names one, whoever
        it is about (a broker's note on both banks): each must be answered, or none is."""
        apart = [fold(a[0]) for a in reading.apart if len(a) > 1]
        about = []
        for source in sources:
            if named_otherwise(reading.question.text, source, reading.entity_terms):
                continue  # (海岚冷链 is not 岩岚冷链物流's name)
            if is_about(source, reading.entity_terms):
                about.append(source)
            elif any(name in fold(source.content) for name in apart):
                about.append(source)  # (whole: each name asked apart is read of its own)
            elif section := section_about(source, reading.entity_terms):
                about.append(section)
        return about

    def _relevant(self, reading: Reading, sources: list[Source]) -> bool:
        """The relevance floor: is the question about what was retrieved at all?"""
        question = reading.question
        if not sources:
            return False
        if question.unknown and not reading.entity_terms:
            return False  # it names something no excerpt mentions (贵州茅台…)
        if not question.terms and not reading.of:
            return False
        about = self._about(reading, sources)
        corpus = corpus_of(about)
        if any(year not in corpus for year in question.years):
            return False
        # who did the act asked of (董事会批了多少…) is named by the document, not the clause:
        # by any retrieved excerpt of it (a note's byline names its broker)
        titles = {s.title for s in about}
        documents = corpus_of([s for s in sources if s.title in titles])
        doers = doer_phrases(question, reading.entity_terms)
        if not all(states(doer, documents) for doer in doers):
            return False
        if not reading.entity_terms:
            # Without a named entity, one excerpt must speak to every term — or, for names
            # coordinated before a shared head (A和B的净息差), to some name's own (a name
            # whose part is stated nowhere says so on its own line).
            apart = [a for a in reading.apart if len(a) > 1]
            # (who did the act or wrote the note is named by the document, checked above,
            # not by the excerpt that answers: a note's byline names its broker once)
            said = [r for r in question.runs if r not in question.doers]
            own = [t for t in question.terms if any(t in r for r in said)]
            asked = apart or [tuple(own)]
            # (an excerpt's text with the headings it is read under: a section cut across
            # two chunks keeps its heading)
            texts = [fold("\n".join([s.content, *{u.heading for u in s.units}])) for s in sources]
            # (and its document's title, as the floor reads a unit: a document named by its
            # kind, 研报的分析师, or the plan it is, 定增完成后…, is named by the title — the
            # note's chunk naming its analyst writes no 点评 of its own)
            texts = [f"{text}\n{fold(s.title)}" for s, text in zip(sources, texts, strict=True)]
            return any(
                any(all(covers(t, text) for t in terms) for text in texts) for terms in asked
            )
        return True

    def _not_found(self, state: AgentState, reading: Reading | None) -> str:
        count = len({r["id"] for r in state.search_results()})
        if reading is None or count == 0:
            return NOT_FOUND
        question = reading.question
        if reading.entity_terms and reading.phrases:
            # The entity is known; what was asked about it is stated nowhere.
            terms = reading.entity_terms
            named = [t for t in terms if not any(t != o and t in o for o in terms)]
            entity = "、".join(f"「{t}」" for t in named[:3])
            asked = "、".join(f"「{as_asked(p, question.text)}」" for p in reading.phrases[:3])
            if question.ordinal_text:  # as asked (第一大客户), not as read (前一大客户)
                asked = re.sub(r"前([一二三四五六七八九十\d]+)([大名位])", r"第\1\2", asked)
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

    def _context_note(self, reading: Reading) -> str:
        if reading.resolved_from:
            about = "、".join(reading.entity_terms)
            return f"\n\n（接上一问「{reading.resolved_from.strip()}」，按{about}理解。）"
        return ""

    def _comparison(self, reading: Reading, groups: list[tuple[str, list[Source]]]) -> str:
        """One line per compared entity, each figure cited to its own entity's excerpt; an
        entity with no document says so on its line; two figures of one unit end with the
        difference and which is higher."""
        lines = []
        values: list[tuple[str, Figure]] = []
        for term, sources in groups:
            if not sources:
                lines.append(f"- {term}：未检索到关于「{term}」的文档。")
                continue
            own = Reading(reading.question, [term], reading.topic, sources, "", reading.phrases)
            figures = relevant_figures(own)
            answering = [f for f in figures if handle_answers(f[2], own)] or figures
            picks = best_units(own)
            if answering:
                _, source, handle = answering[0]
                label = handle.get("label") or handle["key"]
                lines.append(
                    f"- {source.name}{label}：[[num:{handle['id']}]] {cite_marker(source)}"
                )
                stated = figures_in(handle.get("display") or "")
                if stated:
                    values.append((source.name, stated[0]))
            elif picks and self._states_own(picks[0].unit, reading, term, groups):
                lines.append(
                    f"- {picks[0].source.name}：{quote_unit(picks[0].unit, reading.phrases)} "
                    f"{cite_marker(picks[0].source)}"
                )
            else:
                # (a unit not stating this entity's figure of the measure is no line for it)
                lines.append(f"- {sources[0].name}：检索到的摘录没有写明。")
                continue
            self._cited.setdefault("direct", []).append(
                (answering[0][1] if answering else picks[0].source).id
            )
        names = "与".join(sources[0].name if sources else term for term, sources in groups)
        difference = difference_line(values) if len(values) == len(groups) == 2 else ""
        return (
            f"**回答**（{names}对比）：\n"
            + "\n".join(lines)
            + difference
            + self._context_note(reading)
        )

    def _members(self, reading: Reading) -> str:
        """A superlative over a kind's members (三家银行中谁的净息差最低), or each one's
        figure (三家银行的不良率分别是多少): one line per member, its section's unit cited —
        or that its excerpts do not state it — then, for a superlative, which is the
        highest or lowest of the figures quoted."""
        lines = []
        for name, source, unit, _ in reading.members:
            if source is None:
                lines.append(f"- {name}：检索到的摘录没有写明。")
                continue
            lines.append(f"- {name}：{quote_unit(unit, reading.phrases)} {cite_marker(source)}")
            self._cited.setdefault("direct", []).append(source.id)
        kind, _ = kind_asked(reading.question)
        measure = next(p for p in reading.phrases if fold(p) != kind and kind not in fold(p))
        extreme = reading.question.extreme
        verdict = (
            extreme_line(reading.members, extreme > 0, measure, reading.counter) if extreme else ""
        )
        return "**回答**：\n" + "\n".join(lines) + verdict + self._context_note(reading)

    @staticmethod
    def _states_own(unit: Unit, reading: Reading, term: str, groups: list[Any]) -> bool:
        """Whether ``unit`` states ``term``'s own figure of what is asked (the phrases
        that name no compared entity): comparison.states_own_figure."""
        names = [name for name, _ in groups]
        measures = [p for p in reading.phrases if not any(fold(n) in p for n in names)]
        # (a row is read with the header it is quoted under: a first line of figures
        # taken for one, 拨备覆盖率 | 301.25%, states its own)
        header = (unit.header_text or unit.heading) if unit.kind == "row" else ""
        text = "\n".join(filter(None, [header, unit.text]))
        if unit.kind == "row" and not states_own_figure(text, measures, term, names):
            # a row states the measure by its column (公司 | 拨备覆盖率 | 净息差), of the
            # entity its first cell names, if any
            column = row_cell(unit, list(measures))
            first = fold(unit.clauses[0]) if unit.clauses else ""
            other = any(fold(n) in first for n in names if fold(n) != fold(term))
            cell = unit.clauses[column] if 0 < column < len(unit.clauses) else ""
            return bool(measures) and not other and bool(quantities_in(cell))
        return states_own_figure(text, measures, term, names)

    def _direct(self, reading: Reading) -> str:
        groups = compared_groups(reading)
        if groups:
            self._comparing = True
            return self._comparison(reading, groups)
        if reading.members:
            self._comparing = True
            return self._members(reading)
        # Names asked apart (A和B的目标价): each answered by the unit that states it.
        if reading.each and (any(len(a) > 1 for a in reading.apart) or reading.clauses_apart):
            return self._parts(reading, reading.each)
        picks = reading.picks
        if not picks and not reading.figures:
            return self._parts(reading, reading.each)
        if not picks:
            score, source, handle = reading.figures[0]
            unit = unit_stating(source, handle["display"])
            text = unit.text if unit else f"{handle['label']}：[[num:{handle['id']}]]"
            self._cited["direct"] = [source.id]
            return f"**回答**：{source.name}：{text} {cite_marker(source)}{self._context_note(reading)}"
        pick = picks[0]
        if reading.question.extreme and reading.question.top > 1 and pick.unit.kind != "row":
            # The top N of a table (占比前三的品种): its rows ranked, not the table listed.
            pick = next((p for p in picks if p.unit.kind == "row"), pick)
        self._direct_pick = pick
        self._cited["direct"] = [pick.source.id]
        # The cell asked: by the topic and the period a column names (年初至报告期末呢？,
        # 本报告期 of a two-line header), and the unit asked other than money (多少股: the
        # column of 持股数量 when the question names only the row, 泊川控股).
        measure = reading.question.unit
        asked = (*reading.phrases, *reading.question.times)
        if measure and not measure.endswith("元"):
            asked = (*asked, measure)
        quoted = quote_unit(pick.unit, asked)
        if reading.question.extreme and pick.unit.kind in ("sentence", "clause"):
            # The most of several a sentence enumerates (哪个业务收入最高): the whole
            # sentence, every figure to compare, not the clause that happens to score best.
            whole = next(
                (u for u in pick.source.units if u.kind == "sentence" and pick.unit.text in u.text),
                None,
            )
            if whole is not None and enumerates(whole.text):
                quoted = whole.text
        # One item of a ranked list asked (第一大重仓股): that item, with its lead-in.
        quoted = picked_item(pick.unit, reading.question.ordinal) or quoted
        # Two things of one entity compared (净利润增速比营收增速高多少): which is higher.
        compared = phrases_compared(reading, [pick.unit.text])
        if pick.unit.kind == "row":
            # Rows named together (A和B的毛利率), the extreme row (最高), every row (各…).
            rows = answering_rows(reading, pick.source, pick.unit)
            if rows != [pick.unit]:
                # (the table whole asked, 业绩考核目标是什么: no one column's cell is the answer)
                whole_table = asks_the_table(reading, pick.source, pick.unit)
                quoted = quote_rows(rows, () if whole_table else asked)
            compared = rows_compared(reading, rows)
            owners = [row_owner(reading, r) or pick.source for r in rows]
            if any(owner is not pick.source for owner in owners):
                # The rows of a table split over two excerpts: each excerpt's rows quoted
                # with its own citation.
                parts: list[tuple[Source, list[Unit]]] = []
                for owner, row in zip(owners, rows, strict=True):
                    if parts and parts[-1][0] is owner:
                        parts[-1][1].append(row)
                    else:
                        parts.append((owner, [row]))
                quoted = "\n".join(
                    f"{quote_rows(part, asked)} {cite_marker(owner)}" for owner, part in parts
                )
                self._cited["direct"] = list(dict.fromkeys(owner.id for owner, _ in parts))
                return (
                    f"**回答**（{pick.source.name}）：{quoted}{compared}"
                    f"{self._context_note(reading)}"
                )
        if compared:
            self._comparing = True  # no revision into one figure
        # (a sentence of a section whose lead names a subsidiary as its subject is that
        # subsidiary's: 澄远保险集团 · 澄远人寿)
        subject = section_subject(pick.source, pick.unit)
        holder = f"{pick.source.name} · {subject}" if subject else pick.source.name
        return (
            f"**回答**（{holder}）：{quoted} "
            f"{cite_marker(pick.source)}"
            f"{compared}"
            f"{self._context_note(reading)}"
        )

    def _parts(self, reading: Reading, picks: list[Pick | None]) -> str:
        """Two things asked at once, each answered by the unit that states it; a name asked
        apart whose part no unit states says so on its own line, citing nothing."""
        lines = []
        # each name a shared head is asked of (A和B的目标价) heads its own line
        parts = [(a[0], "".join(a[1:])) if len(a) > 1 else ("", "") for a in reading.apart]
        if len(parts) != len(picks):
            parts = [("", "")] * len(picks)
        kept: list[Pick | None] = []
        for pick, (name, asked) in zip(picks, parts, strict=True):
            names = [a[0] for a in reading.apart if len(a) > 1]
            if pick is not None and name and len(names) >= 2:
                # a name's line states that name's own figure of its part
                own = Reading(reading.question, [], [], [], "", (name, asked))
                if not self._states_own(pick.unit, own, name, [(n, []) for n in names]):
                    pick = None
            kept.append(pick)
            if pick is None:
                lines.append(f"- {name}：未找到{name}的「{asked}」（检索到的摘录没有写明）。")
                continue
            quote = quote_unit(pick.unit, reading.phrases).replace("\n", "\n  ")
            said = f"{name}（{pick.source.name}）" if name else pick.source.name
            lines.append(f"- {said}：{quote} {cite_marker(pick.source)}")
            self._cited.setdefault("direct", []).append(pick.source.id)
        self._comparing = True  # several units answer: no revision to one figure
        found = [pick.unit.text for pick in kept if pick is not None]
        compared = phrases_compared(reading, found) if len(found) == len(kept) else ""
        return "**回答**：\n" + "\n".join(lines) + compared + self._context_note(reading)

    def _points(self, reading: Reading) -> str:
        picks = reading.picks
        direct = self._direct_pick
        lines: list[str] = []
        used = [(direct.source.id, direct.unit.text)] if direct else []
        answering = [f for f in reading.figures if handle_answers(f[2], reading)]
        if answering:
            stating = unit_stating(answering[0][1], answering[0][2]["display"])
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
            quote = quote_unit(pick.unit).replace("\n", "\n  ")
            lines.append(f"- {pick.source.name}：{quote} {cite_marker(pick.source)}")
            self._cited.setdefault("points", []).append(pick.source.id)
        if not lines:
            return ""
        return "**依据**\n" + "\n".join(lines)

    def _figure_lines(self, reading: Reading) -> str:
        figures = reading.figures[:MAX_FIGURES]
        if not figures:
            return ""
        lines = []
        for _, source, handle in figures:
            lines.append(
                f"- {source.name} · {handle.get('label') or handle['key']}："
                f"[[num:{handle['id']}]] {cite_marker(source)}"
            )
            self._cited.setdefault("figures", []).append(source.id)
        return "**相关数据**\n" + "\n".join(lines) + dates_line(figures)

    def _revised(self, reading: Reading) -> str:
        answering = [f for f in reading.figures if handle_answers(f[2], reading)]
        if not answering:
            return ""
        _, source, handle = answering[0]
        unit = unit_stating(source, handle["display"])
        label = handle.get("label") or handle["key"]
        lines = [f"**回答**：{source.name}{label}为 [[num:{handle['id']}]] {cite_marker(source)}。"]
        if unit is not None:
            lines.append(f"原文：「{clause_with(unit, handle['display'])}」 {cite_marker(source)}")
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
