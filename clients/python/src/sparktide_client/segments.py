"""Answer text → display segments, and the run's verified sources: the browser SDK's
``answerSegments`` / ``trustedSources`` (static/sparktide/segments.js) for Python.

A marker in model output is only a claim. A ``[[cite:…]]`` (or legacy ``[cite_…]``) becomes a
citation segment only when the run's own ``citation.verified`` for the ROOT agent call lists that
exact ID as VERIFIED and ``citation.created`` announced it with an exact knowledge version and
chunk. Everything else — unverified or unknown IDs, IDs verified only under another agent call,
URIs, Markdown links, ``[[num:…]]`` / ``[[block:…]]`` markers — stays literal text. Segments are
plain data: show ``text`` as text, never as HTML.

The marker grammar is the server's (citations/markers.py). The shared cases of
tests/conformance (markers.json, trusted_sources.json, client_segments.json) pin this module, the
server and the browser SDK to the same answers.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from sparktide_client.ids import is_citation_id

# The server's grammar, one alternative per kind so the groups tell which kind matched.
_VALUE = r"[^\[\]\s]{0,200}"
_ANY_MARKER = re.compile(
    r"\[\[(cite|num|block):(" + _VALUE + r")\]\]"
    r"|(?<!\[)\[(cite_[A-Za-z0-9_\-]{0,200})\](?![\]\(])"
)
_PENDING_VALUE = re.compile(_VALUE + r"\]?")
_PENDING_LEGACY = re.compile(r"[A-Za-z0-9_\-]{0,200}\]?")
_DOUBLE_OPENINGS = ("[[cite:", "[[num:", "[[block:")
_LEGACY_OPENING = "[cite_"
# The longest unfinished marker: "[[block:" + 200 characters + "]" (Python counts code points).
_PENDING_WINDOW = len("[[block:") + 200 + 2


def find_markers(text: str) -> list[dict]:
    """Every marker of ``text``, left to right: ``{kind, value, legacy, raw, start, end}``
    (``kind`` is ``cite``, ``num`` or ``block``; offsets are Python string indices)."""
    markers = []
    for match in _ANY_MARKER.finditer(text):
        legacy = match.group(3) is not None
        markers.append(
            {
                "kind": "cite" if legacy else match.group(1),
                "value": match.group(3) if legacy else match.group(2),
                "legacy": legacy,
                "raw": match.group(0),
                "start": match.start(),
                "end": match.end(),
            }
        )
    return markers


def answer_segments(
    text: str | None,
    root_agent_call_id: str | None,
    citation_checks: Mapping[str, Any] | None,
    citations: Mapping[str, Any] | None,
    *,
    streaming: bool = False,
) -> list[dict]:
    """Split one block's text into ``{"type": "text", "text"}`` and
    ``{"type": "citation", "id", "status": "VERIFIED", "citation"}`` segments.

    ``root_agent_call_id`` is the ``agentCallId`` of the run's depth-0 ``agent.started``;
    ``citation_checks`` maps an agentCallId to its ``citation.verified`` data; ``citations`` maps
    a citation ID to its ``citation.created`` data (``RunCitations`` collects all three from the
    events). ``text`` is the FULL text of the block; with ``streaming``, a trailing, still
    incomplete marker is held back (see ``split_streaming``) instead of shown half-written.
    """
    body = "" if text is None else str(text)
    if streaming:
        body = split_streaming(body)[0]
    verified = _verified_ids(root_agent_call_id, citation_checks)
    segments: list[dict] = []
    text_start = 0
    if verified:
        for marker in find_markers(body):
            if marker["kind"] != "cite":
                continue
            cited = marker["value"]
            citation = _trusted_citation(cited, citations) if cited in verified else None
            if citation is None:
                continue  # stays part of the surrounding literal text
            _push_text(segments, body[text_start : marker["start"]])
            segments.append(
                {"type": "citation", "id": cited, "status": "VERIFIED", "citation": citation}
            )
            text_start = marker["end"]
    _push_text(segments, body[text_start:])
    return segments


def verified_citations(
    root_agent_call_id: str | None,
    citation_checks: Mapping[str, Any] | None,
    citations: Mapping[str, Any] | None,
) -> list[dict]:
    """The run's verified sources (回答来源区), in the order of the root call's own check:
    ``[{"id", "citation"}]``, each listed VERIFIED there, a well-formed ``cite_`` ID and
    announced with an exact knowledge version and chunk (citations/trusted.py's rule). Empty
    until that check arrives."""
    check = _root_check(root_agent_call_id, citation_checks)
    if check is None:
        return []
    verified = _verified_ids(root_agent_call_id, citation_checks)
    sources = []
    for reference in _references(check):
        cited = reference.get("id")
        trusted = isinstance(cited, str) and cited in verified
        citation = _trusted_citation(cited, citations) if trusted else None
        if citation is not None:
            sources.append({"id": cited, "citation": citation})
    return sources


def split_streaming(buffer: str | None) -> tuple[str, str]:
    """``(settled, pending)``: the part of an accumulating buffer that can be segmented now, and
    a trailing fragment that may still become a marker once more text arrives. Always segment the
    whole accumulated text, never chunk by chunk."""
    text = "" if buffer is None else str(buffer)
    i = text.find("[", max(0, len(text) - _PENDING_WINDOW))
    while i != -1:
        if _could_become_marker(text[i:]):
            return text[:i], text[i:]
        i = text.find("[", i + 1)
    return text, ""


def content_text(content: object) -> str | None:
    """The text of a block's content (a string or ``{"type": "text", "text"}``); None for a
    table or a protected block (no content)."""
    if isinstance(content, str):
        return content
    if isinstance(content, Mapping) and content.get("type") == "text":
        text = content.get("text")
        return text if isinstance(text, str) else None
    return None


class RunCitations:
    """What ``answer_segments`` needs, collected from a run's events (``stream``, ``events``):
    the root agent call, every ``citation.verified`` by agent call, every ``citation.created``
    by ID. Feed it events in order with ``add``; it keeps nothing else."""

    def __init__(self, events: Iterable[Mapping[str, Any]] = ()) -> None:
        self.root_agent_call_id: str | None = None
        self.citation_checks: dict[str, dict] = {}
        self.citations: dict[str, dict] = {}
        for event in events:
            self.add(event)

    def add(self, event: Mapping[str, Any]) -> None:
        data = event.get("data")
        if not isinstance(data, Mapping):
            return
        kind = event.get("type")
        if kind == "agent.started" and data.get("depth") == 0 and self.root_agent_call_id is None:
            call = data.get("agentCallId")
            self.root_agent_call_id = call if isinstance(call, str) else None
        elif kind == "citation.verified" and isinstance(data.get("agentCallId"), str):
            self.citation_checks[data["agentCallId"]] = dict(data)
        elif kind == "citation.created" and isinstance(data.get("id"), str):
            self.citations[data["id"]] = dict(data)

    def segments(self, text: str | None, *, streaming: bool = False) -> list[dict]:
        """``answer_segments`` of one block's text against what this run announced."""
        return answer_segments(
            text,
            self.root_agent_call_id,
            self.citation_checks,
            self.citations,
            streaming=streaming,
        )

    def verified(self) -> list[dict]:
        """``verified_citations`` of this run."""
        return verified_citations(self.root_agent_call_id, self.citation_checks, self.citations)


# --- internals ---------------------------------------------------------------------------


def _root_check(root: str | None, checks: Mapping[str, Any] | None) -> Mapping | None:
    """The root agent call's own check, or None (a check filed under the root's key but naming
    another call proves nothing about the root answer)."""
    if not root or not isinstance(checks, Mapping):
        return None
    check = checks.get(root)
    if not isinstance(check, Mapping):
        return None
    if "agentCallId" in check and check["agentCallId"] != root:
        return None
    return check


def _references(check: Mapping) -> list[Mapping]:
    references = check.get("references")
    if not isinstance(references, list):
        return []
    return [reference for reference in references if isinstance(reference, Mapping)]


def _verified_ids(root: str | None, checks: Mapping[str, Any] | None) -> set[str]:
    check = _root_check(root, checks)
    if check is None:
        return set()
    return {
        reference["id"]
        for reference in _references(check)
        if reference.get("status") == "VERIFIED" and is_citation_id(reference.get("id"))
    }


def _trusted_citation(cited: str, citations: Mapping[str, Any] | None) -> Mapping | None:
    """The announced source of a verified ID, or None: events without an exact knowledge version
    and chunk never create an entry."""
    if not isinstance(citations, Mapping):
        return None
    citation = citations.get(cited)
    if not isinstance(citation, Mapping):
        return None
    if "id" in citation and citation["id"] != cited:
        return None
    if not _present(citation.get("knowledgeVersion")) or not _present(citation.get("chunkId")):
        return None
    return citation


def _present(value: object) -> bool:
    return value is not None and value != ""


def _push_text(segments: list[dict], text: str) -> None:
    if text == "":
        return
    if segments and segments[-1]["type"] == "text":
        segments[-1] = {"type": "text", "text": segments[-1]["text"] + text}
    else:
        segments.append({"type": "text", "text": text})


def _could_become_marker(tail: str) -> bool:
    """Is ``tail`` (from a "[" to the end of the buffer) an unfinished marker?"""
    for opening in _DOUBLE_OPENINGS:
        if len(tail) <= len(opening):
            if opening.startswith(tail):
                return True
        elif tail.startswith(opening):
            return _PENDING_VALUE.fullmatch(tail[len(opening) :]) is not None
    if len(tail) <= len(_LEGACY_OPENING):
        return _LEGACY_OPENING.startswith(tail)
    return (
        tail.startswith(_LEGACY_OPENING)
        and _PENDING_LEGACY.fullmatch(tail[len(_LEGACY_OPENING) :]) is not None
    )
