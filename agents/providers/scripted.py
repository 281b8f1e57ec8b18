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
from typing import Any

from agents.providers.base import (
    AgentState,
    ModelConfigError,
    ProviderError,
    ToolCall,
    Turn,
)
from knowledge.retrieval import MAX_TOP_K

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


def validate_config(config: dict[str, Any]) -> None:
    """Raise ModelConfigError naming the key path of what a ``scripted`` config gets wrong."""
    extra = sorted(str(k) for k in config if k not in ("provider", "steps"))
    if extra:
        raise ModelConfigError(extra[0], "is not a setting of the scripted provider")
    if "steps" not in config:
        raise ModelConfigError("steps", "is required")
    validate_steps(config["steps"])


def validate_steps(steps: Any) -> None:
    if not isinstance(steps, list) or not steps:
        raise ModelConfigError("steps", "must be a non-empty list of steps")
    for i, step in enumerate(steps):
        where = f"steps[{i}]"
        if not isinstance(step, dict):
            raise ModelConfigError(where, "must be a mapping")
        kinds = [k for k in step if k in STEP_KEYS]
        if len(kinds) != 1:
            raise ModelConfigError(where, f"must have exactly one of {', '.join(STEP_KEYS)}")
        kind = kinds[0]
        for key in step:
            if key != kind and key not in STEP_KEYS[kind]:
                allowed = ", ".join(sorted(STEP_KEYS[kind])) or "nothing else"
                raise ModelConfigError(
                    f"{where}.{key}", f"unknown key for a {kind} step; allowed: {allowed}"
                )
        if kind == "sleep":
            seconds = step["sleep"]
            if (
                not isinstance(seconds, int | float)
                or isinstance(seconds, bool)
                or not 0 <= seconds <= MAX_SLEEP_SECONDS
            ):
                raise ModelConfigError(
                    f"{where}.sleep",
                    f"must be a number of seconds between 0 and {MAX_SLEEP_SECONDS}",
                )
            continue
        if not isinstance(step[kind], str):
            raise ModelConfigError(f"{where}.{kind}", "must be text")
        if kind in ("search", "callAgent") and not step[kind].strip():
            raise ModelConfigError(f"{where}.{kind}", "must not be empty")
        if "topK" in step and (
            not isinstance(step["topK"], int)
            or isinstance(step["topK"], bool)
            or not 1 <= step["topK"] <= MAX_TOP_K
        ):
            raise ModelConfigError(f"{where}.topK", f"must be an integer between 1 and {MAX_TOP_K}")
        if kind == "callAgent":
            if "task" not in step:
                raise ModelConfigError(f"{where}.task", "is required for a callAgent step")
            if not isinstance(step["task"], str):
                raise ModelConfigError(f"{where}.task", "must be text")
        if "replaces" in step and not isinstance(step["replaces"], str):
            raise ModelConfigError(f"{where}.replaces", "must be text")


def fill(text: str, state: AgentState) -> str:
    sources = {"c": state.evidence_ids, "p": state.publication_ids, "n": state.numeric_handles}
    cache: dict[str, list[str]] = {}

    def replace(match: re.Match[str]) -> str:
        kind, number = match.group(1), int(match.group(2))
        if kind not in cache:
            cache[kind] = sources[kind]()
        values = cache[kind]
        return values[number - 1] if 1 <= number <= len(values) else match.group(0)

    return _PLACEHOLDER.sub(replace, text)


class ScriptedProvider:
    def __init__(self, config: dict[str, Any]) -> None:
        # get_provider validated the config (validate_model_config).
        self.steps = config["steps"]
        self.position = 0
        self._ids = itertools.count(1)

    def _call(self, name: str, arguments: dict[str, Any]) -> ToolCall:
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
