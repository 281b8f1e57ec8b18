"""The extractive provider driven without a database: a question, the excerpts a search
would return, and the answer blocks it publishes (revisions applied), in milliseconds.
For the reader's own rules; tests/answers/test_extractive_answers.py runs the real engine."""

import json
from dataclasses import dataclass, field
from typing import Any

from agents.providers.extractive import ExtractiveProvider


def excerpt(title: str, content: str, *handles: dict[str, Any]) -> dict[str, Any]:
    """One search result: ``content`` of the document ``title``, with its figures' handles
    (``{"key", "label", "display"}``)."""
    number = abs(hash((title, content))) % 10**8
    return {
        "id": f"cite_{number:08d}",
        "title": title,
        "content": content,
        "handles": [{"id": f"num_{number:08d}_{i}", **h} for i, h in enumerate(handles)],
    }


@dataclass
class _State:
    task: str
    results: list[dict[str, Any]]
    history: list[dict[str, Any]] = field(default_factory=list)
    instructions: str = ""
    messages: list[dict[str, Any]] = field(default_factory=list)
    published: list[str] = field(default_factory=list)
    searches: int = 0

    def evidence_ids(self) -> list[str]:
        return [r["id"] for r in self.results]

    def publication_ids(self) -> list[str]:
        return self.published

    def numeric_handles(self) -> list[str]:
        return [h["id"] for r in self.results for h in r["handles"]]

    def search_results(self) -> list[dict[str, Any]]:
        return self.results * self.searches


def answer(question: str, results: list[dict[str, Any]], history=()) -> list[str]:
    """The visible blocks of the answer, first block first, each revision in its place;
    handles written as their display."""
    state = _State(question, results, list(history))
    provider = ExtractiveProvider({})
    blocks: dict[str, str] = {}
    displays = {h["id"]: h["display"] for r in results for h in r["handles"]}
    for _ in range(20):
        turn = provider.next_turn(state)
        if turn.text:
            blocks[f"pub_{len(blocks)}"] = turn.text
        for call in turn.tool_calls:
            args = json.loads(call.arguments)
            if call.name == "search_knowledge":
                state.searches += 1
            elif call.name == "send_answer_part":
                text = args["markdown"]
                for handle, display in displays.items():
                    text = text.replace(f"[[num:{handle}]]", display)
                if args.get("replaces"):
                    blocks[args["replaces"]] = text
                else:
                    pub = f"pub_{len(blocks)}"
                    blocks[pub] = text
                    state.published.append(pub)
        if turn.done:
            break
    return list(blocks.values())


def not_found(blocks: list[str]) -> bool:
    return blocks[0].startswith("未在可用的知识版本中找到") and "[[cite:" not in blocks[0]
