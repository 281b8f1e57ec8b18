"""The provider interface the run engine drives.

The engine owns the loop: it asks ``provider.next_turn(state)`` for the next
assistant turn, publishes the turn's plain text (Publication entry A), runs its
tool calls and appends their results to ``state.messages``, and repeats until a
turn says ``done`` or a limit is hit. A provider never touches the database.
"""

from dataclasses import dataclass, field
from typing import Any, Protocol

# Tools the model sees. Arguments are JSON objects; the engine's tool entry
# checks only the tool's identity, that the arguments are a sealed (complete,
# parseable) JSON object, and the transport byte cap.
TOOL_SCHEMAS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "search_knowledge",
            "description": "Search the knowledge this agent may use. Returns excerpts with their cite_ IDs "
            "and num_ handles for declared numeric facts. Cite with [[cite:<id>]], use values with [[num:<handle>]].",
            "parameters": {
                "type": "object",
                "properties": {
                    "query": {"type": "string"},
                    "top_k": {"type": "integer", "minimum": 1, "maximum": 20},
                },
                "required": ["query"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "send_answer_part",
            "description": "Publish a part of the answer (Markdown). Pass replaces=<publication id> to revise a part "
            "published earlier in this run.",
            "parameters": {
                "type": "object",
                "properties": {"markdown": {"type": "string"}, "replaces": {"type": "string"}},
                "required": ["markdown"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "call_agent",
            "description": "Ask an allowed sub-agent to do a task; returns its answer text with citations.",
            "parameters": {
                "type": "object",
                "properties": {"agent": {"type": "string"}, "task": {"type": "string"}},
                "required": ["agent", "task"],
            },
        },
    },
]
TOOL_NAMES = frozenset(t["function"]["name"] for t in TOOL_SCHEMAS)


class ProviderError(Exception):
    """The model provider failed; the run ends FAILED or PARTIAL with this message."""


class ModelConfigError(ValueError):
    """A model config the provider refuses: ``path`` is the key path inside the
    ``model`` mapping (``steps[2].sleep``; empty for the mapping itself), so the
    manifest, the admin and the engine all name the same place."""

    def __init__(self, path: str, problem: str) -> None:
        self.path = path
        self.problem = problem
        super().__init__(f"model.{path} {problem}" if path else f"model {problem}")


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    # Raw JSON text as the model produced it; the tool entry checks it is sealed.
    arguments: str


@dataclass(frozen=True)
class Turn:
    text: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    # True when the model has nothing more to say after this turn.
    done: bool = False


class AgentState(Protocol):
    """What a provider may read about the agent call it is driving."""

    instructions: str
    task: str
    # OpenAI-style chat messages, including tool results appended by the engine.
    messages: list[dict[str, Any]]
    # Earlier turns of the conversation (same sessionId, owner and app), oldest first:
    # [{"question", "answer", "runId"}]; empty for a sub-agent or a run without a session.
    history: list[dict[str, Any]]

    def evidence_ids(self) -> list[str]:
        """cite_ IDs of this call's evidence view, in issuance order."""

    def publication_ids(self) -> list[str]:
        """pub_ IDs issued in this run, in issuance order."""

    def numeric_handles(self) -> list[str]:
        """num_ handles issued to this call, in issuance order."""

    def search_results(self) -> list[dict[str, Any]]:
        """Items returned by this call's searches: {id, title, content, handles: [{id, key, display}]}."""


class Provider(Protocol):
    def next_turn(self, state: AgentState) -> Turn: ...
