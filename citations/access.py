"""The access checks of the citation preview, in the order docs/preview.md fixes.

Steps 2–5 are the run-history gate every history read shares
(``runs.access.access_run_for_owner`` and ``require_run_history``); step 8 asks
knowledge's one capability rule (``refusal_of``, through ``SourceAccess.refusal``).

Each function returns what the next one needs or raises ``SparkTideError``;
``access_citation_for_preview`` runs them in order. Nothing here reads the
excerpt itself: re-fetching and comparing it is ``citations/preview.py``'s job.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import AnonymousUser, User
from django.db.models import QuerySet
from django.utils import timezone

from citations.evidence import SourceAccess, lease_of_version
from citations.models import CitationReference
from foundation.compiled import (
    PLACEHOLDER_INT,
    PLACEHOLDER_TIME,
    instances_once,
    placeholder_text,
)
from foundation.errors import ErrorCode, SparkTideError
from foundation.ids import is_citation_id
from knowledge.models import (
    CapabilityRefusal,
    user_may_read_document,
)
from runs.access import access_run_for_owner, require_run_history
from runs.models import Run


@dataclass(frozen=True)
class PreviewTarget:
    run: Run
    reference: CitationReference


def citation_not_available() -> SparkTideError:
    # One detail for every reason (malformed, unknown, another run's, no digest,
    # gone from the source): the caller learns nothing about which it was.
    return SparkTideError(ErrorCode.CITATION_NOT_AVAILABLE)


def access_caller(user: AbstractBaseUser | AnonymousUser | None) -> User:
    """1. Credentials: an authenticated, active user (the bearer token's owner)."""
    if user is None or not user.is_authenticated or not user.is_active:
        raise SparkTideError(ErrorCode.AUTHENTICATION_REQUIRED)
    return cast(User, user)  # AUTH_USER_MODEL is auth.User


def require_same_policy(run: Run) -> None:
    """6. The app's policy epochs are the ones the run was made under (409)."""
    app = run.app
    if app.security_policy_epoch != run.security_policy_epoch:
        raise SparkTideError(ErrorCode.SECURITY_POLICY_CHANGED)
    if app.knowledge_access_epoch != run.knowledge_access_epoch:
        raise SparkTideError(ErrorCode.KNOWLEDGE_ACCESS_CHANGED)


def access_reference(
    run: Run, citation_id: str, *, read_with: Mapping[str, Any] | None = None
) -> CitationReference:
    """7. A well-formed ``cite_`` ID this run issued, still stored with its digest.

    A URI, a Markdown link or anything else that is not a platform ID is refused
    before any lookup; a reference of another run is as unknown as a forged one.
    ``read_with``: annotations the caller reads in the same statement (the preview's
    re-fetch of the chunk and the answer text); nothing here looks at them.
    """
    if not is_citation_id(citation_id):
        raise citation_not_available()
    read_with = read_with or {}
    values: dict[str, Any] = {
        "citation_id": citation_id,
        "run_id": run.pk,
        "app_id": run.app.pk,
        "now": timezone.now(),
    }
    # Each text placeholder is named for its value, so no two can be equal.
    texts = {name: placeholder_text(name) for name in ("citation_id", "run_id")}
    # Compiled once per process for each set of ``read_with`` names (their
    # expressions are fixed by name) and prepared on each connection (PostgreSQL
    # plans it once there, not on every click); every click still runs it.
    found: list[CitationReference] = instances_once(
        # The key only has to be unique, and the one caller (the preview) passes one set
        # of ``read_with`` names: another name, or none, compiles the same statement.
        ("access_reference", *sorted(read_with)),  # pragma: no mutate - a unique key, one shape
        _reference_query,
        {
            **texts,
            "app_id": PLACEHOLDER_INT,
            "now": PLACEHOLDER_TIME,
            "read_with": read_with,
        },
        values,
        fixed=("read_with",),
        prepare=True,
    )
    reference = found[0] if found else None
    if reference is None or not reference.digest:
        # No digest: a legacy reference, or one cleared by archive — nothing to
        # compare a re-fetch against, so nothing may be shown.
        raise citation_not_available()
    return reference


def _reference_query(
    *, citation_id: str, run_id: str, app_id: int, now: datetime, read_with: Mapping[str, Any]
) -> QuerySet[CitationReference]:
    """Step 7's read. The version's capability (step 8) is read in the same query,
    decided there by knowledge's rule (``SourceAccess.refusal``): one round trip, same
    order. The document's full text is never needed here, nor its version read again:
    it must be the reference's own (step 9), which this statement already reads."""
    references = CitationReference.objects.select_related("version__knowledge", "document").defer(
        "document__text"
    )
    return (
        references.filter(pk=citation_id, run_id=run_id)
        .annotate(
            app_lease_current=lease_of_version(app_id, now),
            **read_with,
        )
        .order_by()
    )


def require_capability(run: Run, reference: CitationReference) -> None:
    """8. The app may use the exact version now (knowledge's capability rule, which
    retrieval and source proof share): still PUBLISHED (409), the app's lease on it
    current — expired, revoked or missing alike (503), and of the app's tenant (403,
    as step 9 would answer). The lease was read with the reference (step 7)."""
    refusal = SourceAccess(run).refusal(reference)
    if refusal == CapabilityRefusal.NOT_PUBLISHED:
        raise SparkTideError(ErrorCode.CAPABILITY_REVOKED)
    if refusal == CapabilityRefusal.NO_CURRENT_LEASE:
        raise SparkTideError(ErrorCode.CAPABILITY_UNAVAILABLE)
    if refusal is not None:
        raise knowledge_access_denied()


# What ``source_refusals`` says of a reference the owner may no longer read (step 9).
DOCUMENT_NOT_READABLE = "document_not_readable"


def source_refusals(
    run: Run, citation_ids: Iterable[str], access: SourceAccess | None = None
) -> dict[str, str]:
    """Why 查看来源片段 of each of the run's references would be refused now, checked when a
    page renders it (the click still runs every step): the app's policy epochs (step 6: the
    ``ErrorCode``), knowledge's capability rule as step 8 reads it (``SourceAccess.refusal``
    on the reference read with ``lease_of_version``: a ``CapabilityRefusal``) and the owner's
    right to read the document now (step 9: ``DOCUMENT_NOT_READABLE``). A reference absent
    from the answer is simply not named. One query; ``access``: a run reader's, whose
    decided documents cost nothing more."""
    ids = [i for i in dict.fromkeys(citation_ids) if is_citation_id(i)]
    if not ids:
        return {}
    try:
        require_same_policy(run)
    except SparkTideError as error:
        return dict.fromkeys(ids, str(error.code))
    access = access or SourceAccess(run)
    references = (
        CitationReference.objects.filter(run_id=run.pk, pk__in=ids)
        .select_related("version__knowledge", "document")
        .defer("document__text")
        .annotate(app_lease_current=lease_of_version(run.app.pk, access.now))
        .order_by()
    )
    refusals: dict[str, str] = {}
    for reference in references:
        refusal = access.refusal(reference)
        if refusal is not None:
            refusals[reference.pk] = str(refusal)
        elif reference.document is not None and not access.document_ok(reference.document):
            refusals[reference.pk] = DOCUMENT_NOT_READABLE
    return refusals


def knowledge_access_denied() -> SparkTideError:
    return SparkTideError(ErrorCode.KNOWLEDGE_ACCESS_DENIED)


def require_knowledge_access(run: Run, reference: CitationReference) -> None:
    """9. The owner may use the knowledge now (same tenant) and read the document
    (its ACL, checked now — never what it was at retrieval time)."""
    owner = run.owner
    tenant_id = reference.version.knowledge.tenant_id
    tenant_user = getattr(owner, "tenant_user", None)
    allowed = (
        owner.is_active
        and tenant_id == run.tenant_id
        and tenant_user is not None
        and tenant_user.tenant_id == tenant_id
    )
    if allowed and reference.document is not None:
        document = reference.document
        allowed = document.version_id == reference.version_id
        if allowed:
            # The same row: the document's version is the reference's, read with it.
            document.version = reference.version
            allowed = user_may_read_document(owner, document)
    if not allowed:
        raise knowledge_access_denied()


def access_citation_for_preview(
    user: AbstractBaseUser | AnonymousUser | None,
    *,
    app_slug: str,
    run_id: str,
    citation_id: str,
    read_with: Mapping[str, Any] | None = None,
) -> PreviewTarget:
    """Every check of the preview except the re-fetch, in the documented order.

    ``read_with`` (annotations) is read with the reference in step 7's statement and
    only used by the caller after every check passed."""
    user = access_caller(user)
    # 2–5: the one gate of a run's history, shared with events, answer, ticket and
    # WebSocket: owner (404), app ACTIVE (403), retention (410), membership and
    # view_run_history now (403).
    # The run query also reads membership + view_run_history (step 5), consumed there.
    run = access_run_for_owner(user, app_slug, run_id, history_permission=True)
    require_run_history(run)
    require_same_policy(run)
    reference = access_reference(run, citation_id, read_with=read_with)
    require_capability(run, reference)
    require_knowledge_access(run, reference)
    return PreviewTarget(run=run, reference=reference)
