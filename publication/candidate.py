"""One candidate as it goes through the pipeline: its content, what the source proof
found for each cited ID, the values degrade decided, and what prepare binds."""

import re
from dataclasses import dataclass, field
from typing import Any

from citations.evidence import ProofReference, evidence_call_ids
from citations.markers import Markers, parse_markers
from citations.models import CitationReference
from foundation.ids import ID_PATTERN
from publication.models import AnswerBlock, PublicationAttempt, SourceHint
from publication.receipts import Effect, Reason
from publication.sources import SourceGraph
from runs.models import AgentCall, Run

_PLATFORM_ID = {
    prefix: re.compile(rf"^{prefix}_{ID_PATTERN}$") for prefix in ("cite", "num", "pub")
}
MAX_ID = 200  # the width of the columns that store IDs as written


def shaped(prefix: str, value: str) -> bool:
    """Only a value shaped like a platform ID can name one: skip the query otherwise."""
    return bool(_PLATFORM_ID[prefix].match(value))


# A cited ID's reference: as the source proof reads it, or behind a numeric handle.
Reference = ProofReference | CitationReference


@dataclass
class Candidate:
    run: Run
    agent_call: AgentCall
    entry: str
    content: dict[str, Any]
    replaces: str = ""
    attempt: PublicationAttempt = field(default=None)  # type: ignore[assignment]
    # Source proof: every cited ID as written → its reference (None: resolves to nothing).
    refs: dict[str, ProofReference | None] = field(default_factory=dict)
    in_view: set[str] = field(default_factory=set)
    blocks: dict[str, AnswerBlock] = field(default_factory=dict)
    unresolved_blocks: set[str] = field(default_factory=set)
    # Degrade: handle → (rendered value, its reference).
    values: dict[str, tuple[str, CitationReference | None]] = field(default_factory=dict)
    # What is stored (prepare).
    bindings: list[tuple[str, Reference | None, bool]] = field(default_factory=list)
    dependencies: list[AnswerBlock] = field(default_factory=list)
    source_hint: str = SourceHint.NONE
    truncated: bool = False
    rejection: tuple[Reason, str] | None = None
    _view: list[int] | None = None
    _graph: SourceGraph | None = None
    _markers: tuple[str, Markers] | None = None

    @property
    def effect(self) -> str:
        return Effect.REVISE if self.replaces else Effect.CREATE

    def texts(self) -> list[str]:
        if self.content["type"] == "text":
            return [self.content["text"]]
        return [*self.content["columns"], *(cell for row in self.content["rows"] for cell in row)]

    def markers(self) -> Markers:
        """The markers of the current content, parsed once per text (intake, degrade and
        prepare ask for them; the text changes only when prepare renders it)."""
        text = "\n".join(self.texts())
        if self._markers is None or self._markers[0] != text:
            self._markers = (text, parse_markers(text))
        return self._markers[1]

    def view(self) -> list[int]:
        """The agent call's evidence view (its own and its authorized sub-calls')."""
        if self._view is None:
            self._view = evidence_call_ids(self.agent_call)
        return self._view

    def cited_ids(self) -> list[str]:
        """What a later re-check needs: every ID as written and the references behind values."""
        ids = [cited for cited, _, _ in self.bindings if not cited.startswith("num:")]
        ids += [ref.pk for _, ref, _ in self.bindings if ref is not None]
        return list(dict.fromkeys(ids))

    def binding_key(self) -> tuple[frozenset[tuple[str, str | None, bool]], frozenset[str], str]:
        return (
            frozenset((cited, ref.pk if ref else None, ok) for cited, ref, ok in self.bindings),
            frozenset(b.pk for b in self.dependencies),
            self.source_hint,
        )
