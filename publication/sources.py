"""Does a revision still stand on sources the run's owner may use *now*?

One ``SourceGraph`` per run and request: every revision of the run, its source
bindings and its ``[[block:…]]`` dependencies are loaded in a fixed number of
queries, then decided in memory. The pipeline uses it for inherited
dependencies, the reader for visibility. Dependencies are followed
transitively; a cycle (X revised to cite Y after Y cited X) adds no source of
its own, so members of a cycle are judged on everything reachable.
"""

from collections import defaultdict
from collections.abc import Iterable

from citations.evidence import ProofReference, SourceAccess
from citations.models import CitationReference
from publication.models import AnswerBlock, BlockDependency, BlockRevision, SourceBinding
from runs.models import Run

_REFERENCE_RELATED = ("version__knowledge", "document__version__knowledge")


def prefetch_references(
    access: SourceAccess, refs: Iterable[CitationReference | ProofReference]
) -> None:
    """Decide many references' versions and documents in a bounded number of queries."""
    refs = list(refs)
    # Distinct by ID (a model instance hashes through its pk descriptor, per reference).
    access.prefetch_versions({r.version_id: r.version for r in refs}.values())
    access.prefetch_documents({r.document_id: r.document for r in refs if r.document_id}.values())


class SourceGraph:
    """The run's revisions, their bindings and dependencies, decided against ``access``."""

    def __init__(
        self,
        access: SourceAccess,
        *,
        blocks: dict[str, AnswerBlock],
        revisions: Iterable[BlockRevision],
    ) -> None:
        self.access = access
        self.blocks = blocks
        self.revisions = {r.pk: r for r in revisions}
        self.current: dict[str, BlockRevision] = {}
        for revision in self.revisions.values():
            block = blocks.get(revision.block_id)
            if block is not None and revision.revision == block.current_revision:
                self.current[revision.block_id] = revision
        self._own_ok: dict[int, bool] = {}
        self._deps: dict[int, list[str]] = defaultdict(list)
        self._sources_ok: dict[str, bool] = {}
        self._load_bindings()
        self._load_dependencies()

    @classmethod
    def for_run(cls, run: Run, access: SourceAccess | None = None) -> "SourceGraph":
        blocks = {b.pk: b for b in AnswerBlock.objects.filter(run=run).order_by("delivery_ordinal")}
        revisions = BlockRevision.objects.filter(block__run=run)
        return cls(access or SourceAccess(run), blocks=blocks, revisions=revisions)

    # -- loading (fixed number of queries, whatever the number of blocks) -----

    def _load_bindings(self) -> None:
        ok = dict.fromkeys(self.revisions, True)
        if self.revisions:
            bindings = list(
                SourceBinding.objects.filter(revision_id__in=self.revisions).select_related(
                    *(f"citation__{path}" for path in _REFERENCE_RELATED)
                )
            )
            prefetch_references(
                self.access, (b.citation for b in bindings if b.citation is not None)
            )
            for binding in bindings:
                if binding.citation is None:
                    # A binding that was verified but lost its reference can no
                    # longer be re-checked: unprovable, so not admitted.
                    # An unverified one never resolved: no source to check.
                    if binding.verified:
                        ok[binding.revision_id] = False
                elif not self.access.reference_ok(binding.citation):
                    ok[binding.revision_id] = False
        self._own_ok = ok

    def _load_dependencies(self) -> None:
        if not self.revisions:
            return
        for revision_id, depends_on in BlockDependency.objects.filter(
            revision_id__in=self.revisions
        ).values_list("revision_id", "depends_on_id"):
            self._deps[revision_id].append(depends_on)

    # -- decisions -----------------------------------------------------------

    def own_sources_ok(self, revision: BlockRevision) -> bool:
        return self._own_ok.get(revision.pk, False)

    def dependencies(self, revision: BlockRevision) -> list[str]:
        return self._deps.get(revision.pk, [])

    def block_sources_ok(self, block_id: str) -> bool:
        """The block's current revision and everything it inherits, transitively."""
        if block_id not in self._sources_ok:
            self._sources_ok[block_id] = self._reachable_ok([block_id])
        return self._sources_ok[block_id]

    def revision_sources_ok(self, revision: BlockRevision) -> bool:
        """A given (possibly older) revision: its own bindings and its inherited blocks."""
        return self.own_sources_ok(revision) and all(
            self.block_sources_ok(dep) for dep in self.dependencies(revision)
        )

    def _reachable_ok(self, start: list[str]) -> bool:
        seen: set[str] = set()
        stack = list(start)
        while stack:
            block_id = stack.pop()
            if block_id in seen:
                continue
            seen.add(block_id)
            known = self._sources_ok.get(block_id)
            if known is True:
                continue
            revision = self.current.get(block_id)
            # A missing block or current revision: its sources cannot be confirmed.
            if known is False or revision is None or not self.own_sources_ok(revision):
                return False
            stack.extend(self.dependencies(revision))
        return True
