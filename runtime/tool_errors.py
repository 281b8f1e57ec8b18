"""The errors a tool call answers to the model: a code and a neutral message.

A tool result is read by the model and may end up quoted in an answer, so it
never carries a host, a port, a URL or an exception's text (those go to the
log and the journal's code only). The message is fixed by the code.
"""

from enum import StrEnum
from typing import Any

from foundation.errors import ErrorCode


class ToolError(StrEnum):
    message: str

    def __new__(cls, code: str, message: str) -> "ToolError":
        member = str.__new__(cls, code)
        member._value_ = code
        member.message = message
        return member

    UNKNOWN_TOOL = "UNKNOWN_TOOL", "There is no tool of that name."
    ARGUMENTS_TOO_LARGE = "ARGUMENTS_TOO_LARGE", "Tool arguments exceed 256 KiB."
    ARGUMENTS_NOT_SEALED = "ARGUMENTS_NOT_SEALED", "Arguments are not a complete JSON object."
    INVALID_ARGUMENTS = "INVALID_ARGUMENTS", "The arguments do not match the tool's parameters."
    AGENT_NOT_ALLOWED = "AGENT_NOT_ALLOWED", "That agent is not an allowed sub-agent here."
    AGENT_NOT_AVAILABLE = "AGENT_NOT_AVAILABLE", "That agent has no pinned version in this app."
    SUB_AGENT_FAILED = "SUB_AGENT_FAILED", "The sub-agent failed and returned no answer."
    KNOWLEDGE_SOURCE_ERROR = (
        "KNOWLEDGE_SOURCE_ERROR",
        "A knowledge source answered with an error; no results from it.",
    )
    KNOWLEDGE_SOURCE_UNAVAILABLE = (
        "KNOWLEDGE_SOURCE_UNAVAILABLE",
        "A knowledge source cannot be reached; no results from it.",
    )
    KNOWLEDGE_SOURCE_TIMED_OUT = (
        "KNOWLEDGE_SOURCE_TIMED_OUT",
        "A knowledge source did not answer in time; no results from it.",
    )
    KNOWLEDGE_INDEX_MISSING = (
        "KNOWLEDGE_INDEX_MISSING",
        "A knowledge version has no search index yet; nothing was searched.",
    )
    SOURCE_ITEM_UNSTORABLE = (
        "SOURCE_ITEM_UNSTORABLE",
        "One item of a knowledge source holds text that cannot be stored; it was left out.",
    )
    CITATION_LIMIT_EXCEEDED = (
        "CITATION_LIMIT_EXCEEDED",
        "The run reached its citation limit; further items were not issued.",
    )

    def result(self, message: str | None = None) -> dict[str, Any]:
        """The tool result. ``message`` may only be engine-written text."""
        return {"error": {"code": str(self), "message": message or self.message}}


# A REMOTE failure during retrieval, as the model is told of it.
REMOTE_TOOL_ERRORS = {
    ErrorCode.KNOWLEDGE_SOURCE_ERROR: ToolError.KNOWLEDGE_SOURCE_ERROR,
    ErrorCode.KNOWLEDGE_SOURCE_UNAVAILABLE: ToolError.KNOWLEDGE_SOURCE_UNAVAILABLE,
    ErrorCode.CITATION_PREVIEW_TIMED_OUT: ToolError.KNOWLEDGE_SOURCE_TIMED_OUT,
}
