"""The scripted provider: a deterministic list of steps (docs/scripted-provider.md).

Steps: {search, topK?} · {text} (entry A) · {answerPart, replaces?} (entry B) ·
{callAgent, task} · {fail} · {sleep}. Placeholders {{cN}}, {{pN}}, {{nN}} are the
N-th citation ID of this call's evidence view, publication ID of the run and
numeric handle of this call (1-based), resolved when the step runs. A
placeholder with no such ID stays as written, so it reads as an unverified marker.
"""

import itertools
import json
import re
import time

from sparktide.agents.providers.base import AgentState, ProviderError, ToolCall, Turn

STEP_KEYS = {
    "search": {"topK"},
    "text": set(),
    "answerPart": {"replaces"},
    "callAgent": {"task"},
    "fail": set(),
    "sleep": set(),
}
MAX_SLEEP_SECONDS = 30
_PLACEHOLDER = re.compile(r"\{\{([cpn])(\d+)\}\}")


def validate_steps(steps) -> None:
    if not isinstance(steps, list) or not steps:
        raise ValueError("scripted provider needs a non-empty list of steps")
    for i, step in enumerate(steps):
        if not isinstance(step, dict):
            raise ValueError(f"steps[{i}] must be a mapping")
        kinds = [k for k in step if k in STEP_KEYS]
        if len(kinds) != 1:
            raise ValueError(f"steps[{i}] must have exactly one of {', '.join(STEP_KEYS)}")
        kind = kinds[0]
        extra = set(step) - {kind} - STEP_KEYS[kind]
        if extra:
            raise ValueError(f"steps[{i}] ({kind}) has unknown keys: {', '.join(sorted(extra))}")
        if kind == "sleep":
            if (
                not isinstance(step["sleep"], int | float)
                or not 0 <= step["sleep"] <= MAX_SLEEP_SECONDS
            ):
                raise ValueError(
                    f"steps[{i}].sleep must be a number of seconds between 0 and {MAX_SLEEP_SECONDS}"
                )
        elif (
            kind == "search"
            and "topK" in step
            and (not isinstance(step["topK"], int) or not 1 <= step["topK"] <= 20)
        ):
            raise ValueError(f"steps[{i}].topK must be an integer between 1 and 20")
        elif kind == "callAgent" and not isinstance(step.get("task", ""), str):
            raise ValueError(f"steps[{i}].task must be text")
        elif kind != "sleep" and not isinstance(step[kind], str):
            raise ValueError(f"steps[{i}].{kind} must be text")


def fill(text: str, state: AgentState) -> str:
    sources = {"c": state.evidence_ids, "p": state.publication_ids, "n": state.numeric_handles}
    cache: dict[str, list[str]] = {}

    def replace(match: re.Match) -> str:
        kind, number = match.group(1), int(match.group(2))
        if kind not in cache:
            cache[kind] = sources[kind]()
        values = cache[kind]
        return values[number - 1] if 1 <= number <= len(values) else match.group(0)

    return _PLACEHOLDER.sub(replace, text)


class ScriptedProvider:
    def __init__(self, config: dict) -> None:
        validate_steps(config.get("steps"))
        self.steps = config["steps"]
        self.position = 0
        self._ids = itertools.count(1)

    def _call(self, name: str, arguments: dict) -> ToolCall:
        return ToolCall(
            id=f"call_script_{next(self._ids)}",
            name=name,
            arguments=json.dumps(arguments, ensure_ascii=False),
        )

    def next_turn(self, state: AgentState) -> Turn:
        while self.position < len(self.steps):
            step = self.steps[self.position]
            self.position += 1
            done = self.position >= len(self.steps)
            if "sleep" in step:
                time.sleep(float(step["sleep"]))
                continue
            if "fail" in step:
                raise ProviderError(step["fail"] or "scripted failure")
            if "text" in step:
                return Turn(text=fill(step["text"], state), done=done)
            if "search" in step:
                args = {"query": fill(step["search"], state), "top_k": step.get("topK", 3)}
                return Turn(tool_calls=[self._call("search_knowledge", args)], done=done)
            if "answerPart" in step:
                args = {"markdown": fill(step["answerPart"], state)}
                if step.get("replaces"):
                    args["replaces"] = fill(step["replaces"], state)
                return Turn(tool_calls=[self._call("send_answer_part", args)], done=done)
            if "callAgent" in step:
                args = {"agent": step["callAgent"], "task": fill(step.get("task", ""), state)}
                return Turn(tool_calls=[self._call("call_agent", args)], done=done)
        return Turn(done=True)
