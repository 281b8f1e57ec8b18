"""The access checks of the citation preview, one function per check, in the order
the seed fixes (DESIGN.md "Preview endpoint", docs/preview.md).

Each function returns what the next one needs or raises ``SparkTideError``;
``access_citation_for_preview`` runs them in order. Nothing here reads the
excerpt itself: re-fetching and comparing it is ``citations/preview.py``'s job.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.contenttypes.models import ContentType
from django.db.models import Exists, F, Q
from django.utils import timezone
from guardian.utils import get_group_obj_perms_model, get_user_obj_perms_model

from citations.models import CitationReference
from runs.access import require_active
from runs.models import Run
from runs.retention import require_within_retention
from sparktide.errors import ErrorCode, SparkTideError, not_found
from sparktide.ids import is_citation_id
from sparktide.knowledge.models import KnowledgeVersion, Lease, user_may_read_document
from sparktide.tenancy.models import App, Membership


@dataclass(frozen=True)
class PreviewTarget:
    run: Run
    reference: CitationReference


def citation_not_available() -> SparkTideError:
    # One detail for every reason (malformed, unknown, another run's, no digest,
    # gone from the source): the caller learns nothing about which it was.
    return SparkTideError(ErrorCode.CITATION_NOT_AVAILABLE)


def access_caller(user):
    """1. Credentials: an authenticated, active user (the bearer token's owner)."""
    if user is None or not user.is_authenticated or not user.is_active:
        raise SparkTideError(ErrorCode.AUTHENTICATION_REQUIRED)
    return user


def access_run_for_preview(user, *, app_slug: str, run_id: str) -> Run:
    """2. The run, only for its owner, in the named app, inside the owner's tenant.

    Everything is decided by this one query, so a missing app, a missing run,
    another member, a platform admin and another tenant all cost the same single
    query and get the identical 404 — nothing, not even the number of queries,
    tells them apart. A platform admin is not the owner.
    """
    # PostgreSQL refuses NUL in text parameters (a 500): such a value names
    # nothing, so it is asked as "" — the same one query, the same 404.
    app_slug, run_id = (value if "\x00" not in value else "" for value in (app_slug, run_id))
    run = (
        Run.objects.select_related("app", "tenant", "owner__tenant_user")
        .filter(
            pk=run_id,
            app__slug=app_slug,
            owner_id=user.pk,
            owner__is_active=True,
            owner__tenant_user__tenant_id=F("tenant_id"),
            app__tenant_id=F("tenant_id"),
        )
        .first()
    )
    if run is None:
        raise not_found()
    return run


def require_app_active(run: Run) -> None:
    """3. The app is ACTIVE now (403 APP_NOT_ACTIVE)."""
    require_active(run.app)


def require_retention(run: Run) -> None:
    """4. Not archived and not older than the app's retention (410 EVENT_CURSOR_EXPIRED)."""
    require_within_retention(run)


def require_history_permission(run: Run) -> None:
    """5. The owner is still a member of the app and holds ``tenancy.view_run_history``
    on it now (guardian object permission, directly or through a group).

    One query instead of guardian's checker (two): this is the preview's hot path.
    It mirrors ``ObjectPermissionBackend``: an active superuser holds every
    permission, anyone else needs the object permission row.
    """
    owner = run.owner
    allowed = Membership.objects.filter(app_id=run.app_id, user_id=owner.pk)
    if not owner.is_superuser:
        # ContentType ids come from Django's per-process content type cache (a
        # query only the first time); the permission row itself is always read.
        app_type = ContentType.objects.get_for_model(App)
        grant = {
            "permission__codename": "view_run_history",
            "permission__content_type_id": app_type.pk,
            "content_type_id": app_type.pk,
            # guardian stores object_pk as text.
            "object_pk": str(run.app_id),
        }
        by_user = get_user_obj_perms_model().objects.filter(user_id=owner.pk, **grant)
        by_group = get_group_obj_perms_model().objects.filter(group__user=owner.pk, **grant)
        allowed = allowed.filter(Q(Exists(by_user)) | Q(Exists(by_group)))
    if not allowed.exists():
        raise SparkTideError(ErrorCode.BUSINESS_PERMISSION_DENIED)


def require_same_policy(run: Run) -> None:
    """6. The app's policy epochs are the ones the run was made under (409)."""
    app = run.app
    if app.security_policy_epoch != run.security_policy_epoch:
        raise SparkTideError(ErrorCode.SECURITY_POLICY_CHANGED)
    if app.knowledge_access_epoch != run.knowledge_access_epoch:
        raise SparkTideError(ErrorCode.KNOWLEDGE_ACCESS_CHANGED)


def access_reference(run: Run, citation_id: str) -> CitationReference:
    """7. A well-formed ``cite_`` ID this run issued, still stored with its digest.

    A URI, a Markdown link or anything else that is not a platform ID is refused
    before any lookup; a reference of another run is as unknown as a forged one.
    """
    if not is_citation_id(citation_id):
        raise citation_not_available()
    reference = (
        CitationReference.objects.select_related(
            "version__knowledge", "document__version__knowledge"
        )
        # The document's full text is never needed here; the chunk is re-read
        # (not loaded here) by the re-fetch.
        .defer("document__text")
        .filter(pk=citation_id, run_id=run.pk)
        .first()
    )
    if reference is None or not reference.digest:
        # No digest: a legacy reference, or one cleared by archive — nothing to
        # compare a re-fetch against, so nothing may be shown.
        raise citation_not_available()
    return reference


def require_capability(run: Run, reference: CitationReference, *, now=None) -> None:
    """8. The exact version is still PUBLISHED (409) and the app's lease on it is
    current (503) — expired, revoked or missing alike."""
    if reference.version.status != KnowledgeVersion.Status.PUBLISHED:
        raise SparkTideError(ErrorCode.CAPABILITY_REVOKED)
    leased = (
        Lease.objects.current(now or timezone.now())
        .filter(app_id=run.app_id, version_id=reference.version_id)
        .exists()
    )
    if not leased:
        raise SparkTideError(ErrorCode.CAPABILITY_UNAVAILABLE)


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
    if allowed and reference.document_id is not None:
        allowed = reference.document.version_id == reference.version_id and (
            user_may_read_document(owner, reference.document)
        )
    if not allowed:
        raise SparkTideError(ErrorCode.KNOWLEDGE_ACCESS_DENIED)


def access_citation_for_preview(
    user, *, app_slug: str, run_id: str, citation_id: str
) -> PreviewTarget:
    """Every check of the preview except the re-fetch, in the documented order."""
    user = access_caller(user)
    run = access_run_for_preview(user, app_slug=app_slug, run_id=run_id)
    require_app_active(run)
    require_retention(run)
    require_history_permission(run)
    require_same_policy(run)
    reference = access_reference(run, citation_id)
    require_capability(run, reference)
    require_knowledge_access(run, reference)
    return PreviewTarget(run=run, reference=reference)
