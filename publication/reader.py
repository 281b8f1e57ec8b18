"""The reader: the only way answer bodies leave the store.

REST, WebSocket replay, history and the console all read through here. It
applies the run owner's *current* authorization: a block whose source (or an
inherited dependency, transitively through ``[[block:…]]``) was revoked is
returned as protected, without its body, while its committed record stays for
audit. A block whose own record is corrupt (content not a valid body, or not
the body its digest was committed with) is protected on its own and does not
hide the others. Legacy revisions without a source status read as ``unknown``,
which is not ``none`` (a verified empty source set).

Query count does not grow with the number of blocks or events: everything is
fetched per run in a fixed number of queries and decided in memory.
"""

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeGuard

from citations.evidence import SourceAccess
from citations.markers import parse_markers
from citations.models import CitationReference
from publication.models import AnswerBlock, BlockRevision, PublicationAttempt, SourceHint
from publication.receipts import body_digest
from publication.sources import SourceGraph, prefetch_references
from publication.text import body_texts
from runs.models import Run, RunEvent

logger = logging.getLogger(__name__)

VISIBLE = "visible"
PROTECTED = "protected"


def committed_block_count(run: Run) -> int:
    """How many blocks of ``run`` the store holds: the one answer to "was anything
    committed?" (PARTIAL or FAILED, for the engine and for recovery alike)."""
    return AnswerBlock.objects.filter(run=run).count()


@dataclass(frozen=True)
class BlockView:
    id: str
    revision: int
    delivery_ordinal: int
    state: str
    content: dict[str, Any] | None
    source_hint: str
    truncated: bool
    origin: str = ""

    def as_dict(self) -> dict[str, Any]:
        data = {
            "id": self.id,
            "revision": self.revision,
            "deliveryOrdinal": self.delivery_ordinal,
            "state": self.state,
            "sourceHint": self.source_hint,
            "truncated": self.truncated,
        }
        if self.state == VISIBLE:
            data["content"] = self.content
        return data


def _strings(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def valid_content(content: object) -> TypeGuard[dict[str, Any]]:
    """A body the clients can render: {type: text, text} or {type: table, columns, rows}."""
    if not isinstance(content, dict):
        return False
    if content.get("type") == "text":
        return isinstance(content.get("text"), str)
    if content.get("type") == "table":
        rows = content.get("rows")
        return (
            _strings(content.get("columns"))
            and isinstance(rows, list)
            and all(_strings(r) for r in rows)
        )
    return False


def _hint(value: str | None) -> str:
    # NULL (legacy: written before source status existed) → unknown, never none.
    return value or SourceHint.UNKNOWN


# The events whose data the reader fills in (answer bodies, their state and source
# hint); every other event is public as it is stored.
HYDRATED_EVENT_TYPES = frozenset({"answer.published", "answer.preview"})


def _public_event(seq: int, type_: str, at: datetime, data: dict[str, Any]) -> dict[str, Any]:
    return {"seq": seq, "type": type_, "at": at.isoformat(), "data": data}


class RunReader:
    """Reads one run's answer for its owner, deciding visibility once per run."""

    def __init__(self, run: Run, access: SourceAccess | None = None) -> None:
        self.run = run
        self.access = access or SourceAccess(run)
        self._graph: SourceGraph | None = None
        self._intact: dict[int, bool] = {}

    @property
    def graph(self) -> SourceGraph:
        if self._graph is None:
            self._graph = SourceGraph.for_run(self.run, self.access)
        return self._graph

    # -- decisions -------------------------------------------------------------

    def _revision_intact(self, revision: BlockRevision) -> bool:
        """Its content is a valid body and the very body its digest committed."""
        if revision.pk not in self._intact:
            intact = valid_content(revision.content)
            if intact and body_digest(revision.content) != revision.body_digest:
                logger.error(
                    "revision %s of %s does not match its digest", revision.pk, revision.block_id
                )
                intact = False
            self._intact[revision.pk] = intact
        return self._intact[revision.pk]

    def block_withheld(self, block_id: str) -> bool:
        """A block whose current revision stands on a source (or an inherited block)
        the owner may not use now: withheld in *every* revision and preview, on every
        path — a current source rejection beats the visibility of every older preview
        and receipt of that block. A block of another run (or none) is not this run's
        to withhold."""
        graph = self.graph
        return block_id in graph.blocks and not graph.block_sources_ok(block_id)

    def revision_visible(self, revision: BlockRevision) -> bool:
        return (
            self._revision_intact(revision)
            and self.graph.revision_sources_ok(revision)
            and not self.block_withheld(revision.block_id)
        )

    # -- answers -------------------------------------------------------------

    def blocks(self) -> list[BlockView]:
        graph = self.graph
        views = []
        for block in graph.blocks.values():
            revision = graph.current.get(block.pk)
            if revision is None:
                # Its record stays listed (protected): nothing else is hidden by it.
                logger.error("block %s has no revision %s", block.pk, block.current_revision)
                views.append(
                    BlockView(
                        id=block.pk,
                        revision=block.current_revision,
                        delivery_ordinal=block.delivery_ordinal,
                        state=PROTECTED,
                        content=None,
                        source_hint=SourceHint.UNKNOWN,
                        truncated=False,
                        origin=block.origin,
                    )
                )
                continue
            views.append(self._view(block, revision))
        return views

    def revisions(self) -> dict[str, list[BlockView]]:
        """Every committed revision of every block, oldest first, each decided by
        ``revision_visible`` (so a withheld block is withheld in all of them)."""
        graph = self.graph
        views: dict[str, list[BlockView]] = {block_id: [] for block_id in graph.blocks}
        for revision in sorted(graph.revisions.values(), key=lambda r: r.revision):
            block = graph.blocks.get(revision.block_id)
            if block is None:
                continue
            views[block.pk].append(self._view(block, revision))
        return views

    def _view(self, block: AnswerBlock, revision: BlockRevision) -> BlockView:
        visible = self.revision_visible(revision)
        return BlockView(
            id=block.pk,
            revision=revision.revision,
            delivery_ordinal=block.delivery_ordinal,
            state=VISIBLE if visible else PROTECTED,
            content=revision.content if visible else None,
            source_hint=_hint(revision.source_hint),
            truncated=revision.truncated,
            origin=block.origin,
        )

    # -- events --------------------------------------------------------------

    def hydrate_rows(self, rows: Iterable[tuple[int, str, Any, datetime]]) -> list[dict[str, Any]]:
        """``hydrate`` of events read as (seq, type, data, at) rows.

        ``data`` is the stored data: a dict for the events this reader fills in
        (``HYDRATED_EVENT_TYPES``); every other event's is passed on as given (the
        socket's read passes its stored JSON text, to be sent as it is).

        Only the events this reader fills in become RunEvent instances: a replay
        page is mostly other events, which are public as they are stored, and
        building 10,000 model instances was a large part of replaying a long run.
        """
        rows = list(rows)
        filled = self.hydrate(
            RunEvent(run_id=self.run.pk, seq=seq, type=type_, data=data, at=at)
            for seq, type_, data, at in rows
            if type_ in HYDRATED_EVENT_TYPES
        )
        by_seq = {event["seq"]: event for event in filled}
        return [
            by_seq.get(seq) or _public_event(seq, type_, at, data) for seq, type_, data, at in rows
        ]

    def hydrate(self, events: Iterable[RunEvent]) -> list[dict[str, Any]]:
        """Public dicts of events, answer bodies filled in through this reader."""
        events = list(events)
        revisions = {}
        if any(e.type == "answer.published" for e in events):
            revisions = {(r.block_id, r.revision): r for r in self.graph.revisions.values()}
        previews = {e.data.get("candidateId") for e in events if e.type == "answer.preview"}
        attempts: dict[str, PublicationAttempt] = {}
        refs: dict[str, CitationReference] = {}
        if previews:
            attempts = {
                a.candidate_id: a
                for a in PublicationAttempt.objects.filter(run=self.run, candidate_id__in=previews)
            }
            wanted = {
                c for a in attempts.values() for c in (a.cited_ids or []) if isinstance(c, str)
            }
            if wanted:
                refs = {
                    r.pk: r
                    for r in CitationReference.objects.filter(pk__in=wanted).select_related(
                        "version__knowledge", "document__version__knowledge"
                    )
                }
                prefetch_references(self.access, refs.values())
        return [self._hydrate_one(e, revisions, attempts, refs) for e in events]

    def _hydrate_one(
        self,
        event: RunEvent,
        # Keyed as the event data names them: JSON values, looked up as they are.
        revisions: dict[tuple[Any, Any], BlockRevision],
        attempts: dict[Any, PublicationAttempt],
        refs: dict[str, CitationReference],
    ) -> dict[str, Any]:
        data = dict(event.data)
        if event.type == "answer.published":
            revision = revisions.get((data.get("publicationId"), data.get("revision")))
            visible = revision is not None and self.revision_visible(revision)
            data["sourceHint"] = _hint(revision.source_hint if revision else None)
            data["truncated"] = revision.truncated if revision else False
            data["state"] = VISIBLE if visible else PROTECTED
            if visible and revision is not None:
                data["content"] = revision.content
        elif event.type == "answer.preview":
            attempt = attempts.get(data.get("candidateId"))
            visible = attempt is not None and self._preview_visible(attempt, refs)
            data["sourceHint"] = _hint(attempt.source_hint if attempt else None)
            data["state"] = VISIBLE if visible else PROTECTED
            if visible and attempt is not None:
                data["content"] = attempt.content
        return _public_event(event.seq, event.type, event.at, data)

    def _preview_visible(
        self, attempt: PublicationAttempt, refs: dict[str, CitationReference]
    ) -> bool:
        """A preview is re-checked like a commit: its sources and inherited blocks, now;
        and the preview of a block that is withheld now is withheld too."""
        if not valid_content(attempt.content):
            return False
        if attempt.block_id is not None and self.block_withheld(attempt.block_id):
            return False
        for cited in attempt.cited_ids or []:
            ref = refs.get(cited)
            if ref is not None and not self.access.reference_ok(ref):
                return False
        inherited = [
            b
            for b in parse_markers("\n".join(body_texts(attempt.content))).block_ids
            if b != attempt.replaces
        ]
        if not inherited:
            return True
        graph = self.graph
        return all(graph.block_sources_ok(b) for b in inherited if b in graph.blocks)
