"""Does a block's current revision still stand on sources the owner may use?

Used by the pipeline (inherited dependencies) and by the reader. Follows
[[block:…]] dependencies transitively; a cycle cannot occur because a revision
may only reference blocks that existed before it was written, but a visited set
guards it anyway.
"""

from citations.evidence import SourceAccess
from publication.models import AnswerBlock, BlockRevision


def block_sources_ok(
    block: AnswerBlock, access: SourceAccess, _seen: set[str] | None = None
) -> bool:
    seen = _seen if _seen is not None else set()
    if block.pk in seen:
        return True
    seen.add(block.pk)
    revision = (
        BlockRevision.objects.filter(block=block, revision=block.current_revision)
        .prefetch_related(
            "bindings__citation__version__knowledge",
            "bindings__citation__document__version__knowledge",
        )
        .prefetch_related("dependencies__depends_on")
        .first()
    )
    if revision is None:
        return False
    for binding in revision.bindings.all():
        if binding.citation is not None and not access.reference_ok(binding.citation):
            return False
    return all(
        block_sources_ok(dep.depends_on, access, seen) for dep in revision.dependencies.all()
    )
