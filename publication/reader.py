"""The reader: the only way answer bodies leave the store.

REST, WebSocket replay, history and the console all read through here. It
applies the run owner's *current* authorization: a block whose source (or an
inherited dependency, transitively) was revoked is returned as protected,
without its body, while its committed record stays for audit. A block whose own
record is corrupt is protected on its own and does not hide the others.

Query count does not grow with the number of blocks or events: everything is
fetched per run in a fixed number of queries and decided in memory.
"""

import logging
from dataclasses import dataclass

from django.db.models import F

from citations.evidence import SourceAccess
from citations.models import CitationReference
from publication.models import (
    AnswerBlock,
    BlockDependency,
    BlockRevision,
    PublicationAttempt,
    SourceBinding,
    SourceHint,
)

logger = logging.getLogger(__name__)

VISIBLE = "visible"
PROTECTED = "protected"


@dataclass(frozen=True)
class BlockView:
    id: str
    revision: int
    delivery_ordinal: int
    state: str
    content: dict | None
    source_hint: str
    truncated: bool
    origin: str = ""

    def as_dict(self) -> dict:
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


def _valid_content(content) -> bool:
    if not isinstance(content, dict):
        return False
    if content.get("type") == "text":
        return isinstance(content.get("text"), str)
    if content.get("type") == "table":
        return isinstance(content.get("columns"), list) and isinstance(content.get("rows"), list)
    return False


class RunReader:
    """Reads one run's answer for its owner, deciding visibility once per run."""

    def __init__(self, run) -> None:
        self.run = run
        self.access = SourceAccess(run)
        self._blocks: dict[str, AnswerBlock] | None = None
        self._current: dict[str, BlockRevision] = {}
        self._visible: dict[str, bool] = {}

    # -- loading -------------------------------------------------------------

    def _load(self) -> None:
        if self._blocks is not None:
            return
        self._blocks = {
            b.pk: b for b in AnswerBlock.objects.filter(run=self.run).order_by("delivery_ordinal")
        }
        current = list(
            BlockRevision.objects.filter(block__run=self.run, revision=F("block__current_revision"))
        )
        self._current = {r.block_id: r for r in current}
        self._own_ok = self._revisions_own_ok(current)
        deps: dict[int, list[str]] = {}
        for dep in BlockDependency.objects.filter(revision__in=current).values(
            "revision_id", "depends_on_id"
        ):
            deps.setdefault(dep["revision_id"], []).append(dep["depends_on_id"])
        self._deps = deps
        for block_id in self._blocks:
            self._visible[block_id] = self._block_visible(block_id, set())

    def _revisions_own_ok(self, revisions) -> dict[int, bool]:
        """Per revision: do all its resolved citations pass authorization now?"""
        bindings = list(
            SourceBinding.objects.filter(
                revision__in=revisions, citation__isnull=False
            ).select_related(
                "citation__version__knowledge", "citation__document__version__knowledge"
            )
        )
        refs = [b.citation for b in bindings]
        self._prefetch(refs)
        ok = {r.pk: True for r in revisions}
        for binding in bindings:
            if not self.access.reference_ok(binding.citation):
                ok[binding.revision_id] = False
        return ok

    def _prefetch(self, refs: list[CitationReference]) -> None:
        self.access.prefetch_versions({r.version for r in refs})
        self.access.prefetch_documents({r.document for r in refs if r.document_id})

    def _block_visible(self, block_id: str, seen: set[str]) -> bool:
        if block_id in self._visible:
            return self._visible[block_id]
        if block_id in seen:
            return True
        seen.add(block_id)
        revision = self._current.get(block_id)
        if (
            revision is None
            or not _valid_content(revision.content)
            or not self._own_ok.get(revision.pk, False)
        ):
            return False
        return all(self._block_visible(dep, seen) for dep in self._deps.get(revision.pk, []))

    # -- answers -------------------------------------------------------------

    def blocks(self) -> list[BlockView]:
        self._load()
        views = []
        for block in self._blocks.values():
            revision = self._current.get(block.pk)
            if revision is None:
                logger.error(
                    "block %s has no current revision %s", block.pk, block.current_revision
                )
                continue
            views.append(self._view(block, revision, self._visible[block.pk]))
        return views

    def _view(self, block: AnswerBlock, revision: BlockRevision, visible: bool) -> BlockView:
        return BlockView(
            id=block.pk,
            revision=revision.revision,
            delivery_ordinal=block.delivery_ordinal,
            state=VISIBLE if visible else PROTECTED,
            content=revision.content if visible else None,
            # Legacy revisions without source status read as unknown.
            source_hint=revision.source_hint or SourceHint.UNKNOWN,
            truncated=revision.truncated,
            origin=block.origin,
        )

    # -- events --------------------------------------------------------------

    def hydrate(self, events) -> list[dict]:
        """Public dicts of events, answer bodies filled in through this reader."""
        events = list(events)
        published = {
            (e.data.get("publicationId"), e.data.get("revision"))
            for e in events
            if e.type == "answer.published"
        }
        previews = {e.data.get("candidateId") for e in events if e.type == "answer.preview"}
        revisions: dict[tuple[str, int], BlockRevision] = {}
        attempts: dict[str, PublicationAttempt] = {}
        if published:
            self._load()
            wanted = [r for b, r in published if b in self._blocks]
            found = BlockRevision.objects.filter(
                block__run=self.run, revision__in=set(wanted) or {0}
            )
            revisions = {
                (r.block_id, r.revision): r for r in found if (r.block_id, r.revision) in published
            }
            extra = [r for r in revisions.values() if r.pk not in self._own_ok]
            if extra:
                self._own_ok.update(self._revisions_own_ok(extra))
        if previews:
            attempts = {
                a.candidate_id: a
                for a in PublicationAttempt.objects.filter(run=self.run, candidate_id__in=previews)
            }
            self._preview_refs = {
                r.pk: r
                for r in CitationReference.objects.filter(
                    pk__in={c for a in attempts.values() for c in (a.cited_ids or [])}
                ).select_related("version__knowledge", "document__version__knowledge")
            }
            self._prefetch(list(self._preview_refs.values()))
        return [self._hydrate_one(e, revisions, attempts) for e in events]

    def _hydrate_one(self, event, revisions, attempts) -> dict:
        data = dict(event.data)
        if event.type == "answer.published":
            revision = revisions.get((data.get("publicationId"), data.get("revision")))
            visible = False
            if revision is not None:
                visible = (
                    _valid_content(revision.content)
                    and self._own_ok.get(revision.pk, False)
                    and all(self._visible.get(dep, False) for dep in self._deps_of(revision))
                )
                data["sourceHint"] = revision.source_hint or SourceHint.UNKNOWN
                data["truncated"] = revision.truncated
            data["state"] = VISIBLE if visible else PROTECTED
            if visible:
                data["content"] = revision.content
        elif event.type == "answer.preview":
            attempt = attempts.get(data.get("candidateId"))
            visible = (
                attempt is not None
                and _valid_content(attempt.content)
                and self._preview_ok(attempt)
            )
            data["sourceHint"] = (attempt.source_hint if attempt else "") or SourceHint.UNKNOWN
            data["state"] = VISIBLE if visible else PROTECTED
            if visible:
                data["content"] = attempt.content
        return {"seq": event.seq, "type": event.type, "at": event.at.isoformat(), "data": data}

    def _deps_of(self, revision: BlockRevision) -> list[str]:
        if revision.pk in self._deps:
            return self._deps[revision.pk]
        return list(
            BlockDependency.objects.filter(revision=revision).values_list(
                "depends_on_id", flat=True
            )
        )

    def _preview_ok(self, attempt: PublicationAttempt) -> bool:
        for cited in attempt.cited_ids or []:
            ref = self._preview_refs.get(cited)
            if ref is not None and not self.access.reference_ok(ref):
                return False
        return True


def read_answer(run) -> list[BlockView]:
    return RunReader(run).blocks()


def hydrate_events(run, events) -> list[dict]:
    return RunReader(run).hydrate(events)
