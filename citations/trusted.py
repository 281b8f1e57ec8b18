"""The trusted-source rule: which cited IDs of a run may become a source entry.

A reference of the root agent call's own final check (``citation.verified``) is a
VERIFIED source only when that check lists it VERIFIED, its ID is a well-formed
``cite_`` ID and the run announced it (``citation.created``) with an exact
knowledge version and chunk; everything else is UNVERIFIED and stays text. Old
events without an exact version or chunk never create an entry.

The browser SDK's twin is ``trustedSources`` (static/sparktide/segments.js); both
run the cases of tests/conformance/trusted_sources.json.
"""

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from foundation.ids import is_citation_id


@dataclass(frozen=True)
class TrustedSources:
    checked: bool  # the root call's own check has arrived
    verified: list[tuple[str, dict[str, Any]]] = field(default_factory=list)  # (id, created data)
    unverified: list[str] = field(default_factory=list)


def root_check(root_agent_call_id: str | None, checks: Mapping[str, Any]) -> dict[str, Any] | None:
    """The root call's own check: filed under its ID and not naming another call."""
    if not root_agent_call_id:
        return None
    check = checks.get(root_agent_call_id)
    if not isinstance(check, dict):
        return None
    if "agentCallId" in check and check["agentCallId"] != root_agent_call_id:
        return None
    return check


def trusted_sources(
    root_agent_call_id: str | None, checks: Mapping[str, Any], citations: Mapping[str, Any]
) -> TrustedSources:
    """``checks``: agentCallId → citation.verified data; ``citations``: id → citation.created data."""
    check = root_check(root_agent_call_id, checks)
    if check is None:
        return TrustedSources(checked=False)
    result = TrustedSources(checked=True)
    references = check.get("references")
    for reference in references if isinstance(references, list) else []:
        if not isinstance(reference, dict):
            result.unverified.append("")
            continue
        ref_id = reference.get("id")
        citation = citations.get(ref_id) if isinstance(ref_id, str) else None
        if (
            reference.get("status") == "VERIFIED"
            and is_citation_id(ref_id)
            and isinstance(citation, dict)
            and citation.get("id", ref_id) == ref_id
            and citation.get("knowledgeVersion") not in (None, "")
            and citation.get("chunkId") not in (None, "")
        ):
            result.verified.append((ref_id, citation))
        else:
            result.unverified.append("" if ref_id is None else str(ref_id))
    return result
