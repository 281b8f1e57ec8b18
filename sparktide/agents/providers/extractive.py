"""The extractive provider: no model at all.

It searches with the task, then publishes a progressive, cited answer built
from the best excerpts: an overview, the supporting points, the declared
figures (as numeric handles), and finally a revision of the overview that
names how many sources agree. It is what the demo runs on a bare machine.
"""

import json
import re

from sparktide.agents.providers.base import AgentState, ToolCall, Turn
from sparktide.knowledge.text import search_tokens

_SENTENCE = re.compile(r"[^。！？!?\n]+[。！？!?]?")


def _excerpt(text: str, question: str = "", limit: int = 140) -> str:
    """The sentences of an excerpt that say most about the question, in their order.

    Sentences are scored by the search tokens (CJK bigrams, words) they share with
    the question; without a question the excerpt's opening sentences are taken.
    """
    sentences = [s.strip() for s in _SENTENCE.findall(text) if s.strip()]
    if not sentences:
        return text[:limit].strip()
    wanted = set(search_tokens(question))
    scores = [len(wanted & set(search_tokens(s))) for s in sentences]
    ranked = (
        sorted(range(len(sentences)), key=lambda i: (-scores[i], i))
        if wanted
        else range(len(sentences))
    )
    chosen: list[int] = []
    size = 0
    for i in ranked:
        if chosen and size + len(sentences[i]) > limit:
            break
        chosen.append(i)
        size += len(sentences[i])
    return "".join(sentences[i] for i in sorted(chosen))[: limit * 2].strip()


class ExtractiveProvider:
    def __init__(self, config: dict) -> None:
        self.top_k = int(config.get("topK", 5))
        self.stage = "search"
        self.overview_id: str | None = None
        self._published_before = 0
        self._calls = 0

    def _tool(self, name: str, args: dict) -> Turn:
        self._calls += 1
        call = ToolCall(
            id=f"call_extractive_{self._calls}",
            name=name,
            arguments=json.dumps(args, ensure_ascii=False),
        )
        return Turn(tool_calls=[call])

    def next_turn(self, state: AgentState) -> Turn:
        results = state.search_results()
        if self.stage == "search":
            self.stage = "overview"
            return self._tool("search_knowledge", {"query": state.task, "top_k": self.top_k})
        if not results:
            return Turn(
                text="未在可用的知识版本中找到与问题相关的内容，无法给出有出处的回答。", done=True
            )
        if self.stage == "overview":
            self.stage = "points"
            self._published_before = len(state.publication_ids())
            best = results[0]
            return self._tool(
                "send_answer_part",
                {
                    "markdown": f"**概要**：{_excerpt(best['content'], state.task)} [[cite:{best['id']}]]"
                },
            )
        if self.stage == "points":
            self.stage = "figures"
            ids = state.publication_ids()
            self.overview_id = (
                ids[self._published_before] if len(ids) > self._published_before else None
            )
            points = [
                f"- {_excerpt(r['content'], state.task, 100)} [[cite:{r['id']}]]"
                for r in results[1:4]
            ]
            if points:
                return self._tool(
                    "send_answer_part", {"markdown": "**要点**\n" + "\n".join(points)}
                )
        if self.stage in ("points", "figures"):
            self.stage = "revise"
            # Each figure cites the excerpt whose document declares it.
            handles = [(h, r["id"]) for r in results for h in r.get("handles", [])]
            if handles:
                lines = [
                    f"- {h.get('label') or h['key']}：[[num:{h['id']}]]（{h.get('asOf') or '日期未注明'}）[[cite:{cite}]]"
                    for h, cite in handles[:6]
                ]
                return self._tool(
                    "send_answer_part", {"markdown": "**关键数据**\n" + "\n".join(lines)}
                )
        if self.stage == "revise" and self.overview_id:
            self.stage = "done"
            best = results[0]
            cites = "".join(f"[[cite:{r['id']}]]" for r in results[:3])
            return self._tool(
                "send_answer_part",
                {
                    "markdown": f"**概要**：{_excerpt(best['content'], state.task)} [[cite:{best['id']}]]\n\n"
                    f"以上内容综合自 {min(3, len(results))} 条检索到的来源 {cites}。",
                    "replaces": self.overview_id,
                },
            )
        return Turn(done=True)
