"""The re-authorized citation preview: every click re-checks and re-fetches.

``preview_citation`` runs the access checks of ``citations/access.py`` in order,
then re-fetches the excerpt from its source and compares it with the digest
stored when the run retrieved it. No cached decision, no fallback to stored text
(there is none to fall back to), never a visit to ``uri``, no retry. Nothing is
kept between clicks.
"""

from __future__ import annotations

import functools
import logging
from typing import Any

from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import AnonymousUser
from django.db.models import OuterRef, QuerySet, Subquery

from citations.access import PreviewTarget, access_citation_for_preview, citation_not_available
from citations.highlights import highlights_and_location, passage_annotations
from citations.models import CitationReference
from foundation import observability
from foundation.errors import ErrorCode, SparkTideError
from knowledge.context import TrustedContext
from knowledge.models import Chunk, Knowledge
from knowledge.remote import RemoteKnowledgeError, call_remote
from knowledge.text import snippet_digest
from runs.models import Run

logger = logging.getLogger(__name__)

SCOPE = "RETRIEVED_EXCERPT"


def source_changed() -> SparkTideError:
    return SparkTideError(ErrorCode.CITATION_SOURCE_CHANGED)


def preview_citation(
    *, user: AbstractBaseUser | AnonymousUser | None, app_slug: str, run_id: str, citation_id: str
) -> dict[str, Any]:
    """The preview body for the run's owner, or a ``SparkTideError``."""
    try:
        # The chunk and the answer's text are read in the reference's statement (one
        # query each fewer), on this click, and used only after every check passed.
        target = access_citation_for_preview(
            user,
            app_slug=app_slug,
            run_id=run_id,
            citation_id=citation_id,
            read_with=_read_with(),
        )
        content = refetch_excerpt(target)
    except SparkTideError as error:
        observability.preview_outcome(run_id=run_id, code=str(error.code))
        raise
    observability.preview_outcome(run_id=run_id, code="OK")
    body = render_preview(target.reference, content)
    # Optional: what the answer cited in this excerpt, and where it is (citations/highlights.py).
    body.update(
        highlights_and_location(
            target.reference, content, paragraph=getattr(target.reference, "chunk_paragraph", None)
        )
    )
    return body


def refetch_excerpt(target: PreviewTarget) -> str:
    """The excerpt as the source gives it now, if it is still the one the model saw."""
    reference = target.reference
    if reference.version.knowledge.type == Knowledge.Type.REMOTE:
        return refetch_remote(target.run, reference)
    return refetch_managed(reference)


def _chunk(chunk: Any, document: Any, version: Any) -> QuerySet[Chunk]:
    """The reference's chunk, only inside its own document of its exact version."""
    return Chunk.objects.filter(pk=chunk, document_id=document, document__version_id=version)


# Where ``_managed_excerpt`` leaves the chunk read with the reference.
_CHUNK_TEXT, _CHUNK_PARAGRAPH = "chunk_text_now", "chunk_paragraph_now"


def _managed_excerpt() -> dict[str, Any]:
    """The chunk's text and paragraph as annotations of the reference's query: the
    rows ``refetch_managed`` takes, read on this click in that statement."""
    chunk = _chunk(OuterRef("chunk_id"), OuterRef("document_id"), OuterRef("version_id"))
    return {
        _CHUNK_TEXT: Subquery(chunk.values("text")[:1]),
        _CHUNK_PARAGRAPH: Subquery(chunk.values("paragraph")[:1]),
    }


@functools.cache
def _read_with() -> dict[str, Any]:
    """The expressions read with the reference: built once per process (they hold no
    value of a request, only ``OuterRef``s; the ORM copies them when it resolves them)."""
    return {**_managed_excerpt(), **passage_annotations()}


def refetch_managed(reference: CitationReference) -> str:
    """MANAGED/INLINE: re-read the chunk from the exact (immutable) version, on every
    click: no cache. A chunk altered behind the platform's back is caught by its digest.

    The chunk is read in the reference's own statement (``_read_with``, this request),
    and taken from it once: a reference read without it, or whose chunk is gone (or
    that names no chunk or document), is not available. There is no other read."""
    text: str | None = reference.__dict__.pop(_CHUNK_TEXT, None)
    # Where the chunk begins on its page, read with its text, for the preview's
    # location; kept on this request's reference object only.
    reference.chunk_paragraph = reference.__dict__.pop(_CHUNK_PARAGRAPH, None)
    if text is None:
        raise citation_not_available()
    digest = snippet_digest(text)
    # A published version is immutable, so a mismatch means the store was altered
    # behind the platform's back; showing it would show what the model never saw.
    if digest != reference.digest:
        raise source_changed()
    return text


def refetch_remote(run: Run, reference: CitationReference) -> str:
    """REMOTE: ask again with the original query and topK and a freshly built
    trusted context; the original item must come back unchanged.

    Item missing (gone, or ranked out of the original topK) or its reported
    version changed → CITATION_NOT_AVAILABLE; same reported version but another
    digest → CITATION_SOURCE_CHANGED. The reported version is compared as the
    source gave it (possibly empty), so a source without versions that edits an
    item answers "changed", not "gone".
    """
    if reference.query is None or reference.top_k is None or not reference.remote_item_id:
        raise citation_not_available()
    context = TrustedContext(
        tenant=run.tenant.key,
        app=run.app.slug,
        user=run.owner.get_username(),
        business_session_id=run.session_id,
    )
    try:
        # One attempt, bounded by min(version timeout, SPARKTIDE_REMOTE_TIMEOUT_CAP).
        items = call_remote(
            reference.version, query=reference.query, top_k=reference.top_k, context=context
        )
    except RemoteKnowledgeError as exc:
        logger.warning("citation preview of %s: %s", reference.pk, exc)
        # The remote module's own message names the endpoint host and low-level
        # causes; it goes to the log only. The caller gets the code's own detail.
        raise SparkTideError(exc.code) from None
    item = next((i for i in items if i.id == reference.remote_item_id), None)
    if item is None or item.version != reference.remote_item_version:
        raise citation_not_available()
    if item.digest != reference.digest:
        raise source_changed()
    return item.content


def render_preview(reference: CitationReference, content: str) -> dict[str, Any]:
    public = reference.public()
    public.pop("agentCallId")
    return {**public, "content": content, "scope": SCOPE}
