"""Access checks for apps and runs: each returns the object or raises (views hold no rules).

``access_run_history`` is the one gate of a run's history — its events (REST and
WebSocket), its answer, an event ticket and, with its own later steps, the
citation preview (citations/access.py): the owner, the app ACTIVE, retention,
and the owner's *current* membership and ``view_run_history`` permission. An open
WebSocket passes ``require_run_history`` again on every read of the log
(delivery/fanout.py ``read_frames``).
"""

from typing import Any

from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import User
from django.contrib.contenttypes.models import ContentType
from django.db.models import CharField, Exists, F, OuterRef, Q, QuerySet
from django.db.models.functions import Cast
from guardian.utils import get_group_obj_perms_model, get_user_obj_perms_model

from foundation.compiled import PLACEHOLDER_INT, instances_once, placeholder_text
from foundation.errors import ErrorCode, SparkTideError, not_found
from runs.models import Run
from runs.retention import require_within_retention
from tenancy.models import App, Membership


def _lookup_value(value: str) -> str:
    # PostgreSQL refuses NUL in text parameters (a 500): such a value names
    # nothing, so it is asked as "" — the same one query, the same 404.
    return value if "\x00" not in value else ""


def access_app_for_member(user: AbstractBaseUser, app_slug: str) -> App:
    """The app, if the user is a member now (tenancy/models.py ``Membership.objects.current()``,
    as ``require_member`` asks it); otherwise the same 404 as a missing app.

    One query decides it, so a missing app and an app the user is no member of
    cost the same and answer the same: nothing tells a non-member the app exists.
    """
    member = Membership.objects.current().filter(app_id=OuterRef("pk"), user_id=user.pk)
    app = (
        App.objects.select_related("tenant")
        .filter(Exists(member), slug=_lookup_value(app_slug))
        .first()
    )
    if app is None:
        raise not_found()
    return app


# The values the run statements are compiled with, one placeholder per value asked
# (foundation/compiled.py): constants, the same for every call.
_PLACEHOLDERS: dict[str, Any] = {
    "run_id": placeholder_text("run"),
    "app_slug": placeholder_text("app"),
    "owner_id": PLACEHOLDER_INT,
}


def access_run_for_owner(
    user: AbstractBaseUser, app_slug: str, run_id: str, *, history_permission: bool = False
) -> Run:
    """The run, only for its active owner, in the named app, inside the owner's tenant.

    Everything is decided by this one query, so a missing app, a missing run,
    another member, a platform admin and another tenant all cost the same single
    query and get the identical 404 — nothing, not even the number of queries,
    tells them apart. A platform admin is not the owner.

    ``history_permission=True`` also reads the owner's current membership and
    ``view_run_history`` in the same query, for the next ``require_history_permission``
    of this request only (it consumes the answer; a later check queries again).
    """
    values: dict[str, Any] = {
        "run_id": _lookup_value(run_id),
        "app_slug": _lookup_value(app_slug),
        "owner_id": user.pk,
    }
    # The statement is compiled once per process and prepared once per connection
    # on PostgreSQL (foundation/compiled.py: planning it was most of its cost), and
    # re-bound on every call; its builder names it in the key, and the content type
    # id it holds is part of the key.
    found = instances_once(
        (_run_for_owner, history_permission, ContentType.objects.get_for_model(App).pk),
        _run_for_owner,
        {**_PLACEHOLDERS, "history_permission": history_permission},
        values,
        fixed=("history_permission",),
        prepare=True,
    )
    if not found:
        raise not_found()
    run: Run = found[0]
    return run


def _run_for_owner(
    *, run_id: str, app_slug: str, owner_id: int, history_permission: bool
) -> QuerySet[Run]:
    runs = Run.objects.select_related("app", "tenant", "owner__tenant_user", "agent_version__agent")
    if history_permission:
        runs = runs.annotate(**{_PERMISSION_NOW: Exists(_history_grant(OuterRef("app_id")))})
    return runs.filter(
        pk=run_id,
        app__slug=app_slug,
        owner_id=owner_id,
        owner__is_active=True,
        owner__tenant_user__tenant_id=F("tenant_id"),
        app__tenant_id=F("tenant_id"),  # a primary key: one row at most, no LIMIT needed
    ).order_by()


def require_active(app: App) -> None:
    if not app.is_active:
        raise SparkTideError(ErrorCode.APP_NOT_ACTIVE)


def require_history_permission(run: Run) -> None:
    """The owner is still a member of the app and holds ``tenancy.view_run_history``
    on it now (guardian object permission, directly or through a group), else 403
    BUSINESS_PERMISSION_DENIED.

    One query instead of guardian's checker (two): this is the hot path of every
    history read. It mirrors ``ObjectPermissionBackend``: an active superuser holds
    every permission, anyone else needs the object permission row.
    """
    read_with_run = run.__dict__.pop(_PERMISSION_NOW, None)
    if read_with_run is not None:
        if not read_with_run:
            raise SparkTideError(ErrorCode.BUSINESS_PERMISSION_DENIED)
        return
    if not _history_grant(run.app_id, owner=run.owner).exists():
        raise SparkTideError(ErrorCode.BUSINESS_PERMISSION_DENIED)


# Where ``access_run_for_owner(history_permission=True)`` leaves the answer of its query.
_PERMISSION_NOW = "_history_permission_now"


def _history_grant(app_id: int | OuterRef, *, owner: User | None = None) -> QuerySet[Membership]:
    """The membership rows of the run's owner in ``app_id`` (a pk, or ``OuterRef`` in
    the run query) that carry ``view_run_history`` now. With ``owner`` given (a loaded
    user) the superuser case is decided in Python; inside the run query (``owner``
    None) it is read from the owner's row, and the owner is the run's."""
    # The owner's membership as every entry point asks it (``Membership.objects.current()``):
    # an owner deactivated since a socket opened is no member at its next read.
    members = Membership.objects.current()
    if owner is None:
        allowed = members.filter(app_id=app_id, user_id=OuterRef("owner_id"))
    else:
        allowed = members.filter(app_id=app_id, user_id=owner.pk)
        if owner.is_superuser:
            return allowed
    # ContentType ids come from Django's per-process content type cache (a
    # query only the first time); the permission row itself is always read.
    app_type = ContentType.objects.get_for_model(App)
    grant = {
        "permission__codename": "view_run_history",
        "permission__content_type_id": app_type.pk,
        "content_type_id": app_type.pk,
        # guardian stores object_pk as text; the membership row names user and app.
        "object_pk": Cast(OuterRef("app_id"), CharField()),
    }
    by_user = get_user_obj_perms_model()._default_manager.filter(
        user_id=OuterRef("user_id"), **grant
    )
    by_group = get_group_obj_perms_model()._default_manager.filter(
        group__user=OuterRef("user_id"), **grant
    )
    permitted = Q(Exists(by_user)) | Q(Exists(by_group))
    if owner is None:
        permitted |= Q(user__is_superuser=True)
    return allowed.filter(permitted)


def run_for_history_read(run_id: str) -> Run:
    """The run read afresh for ``require_run_history``, its owner's membership and
    history permission read in the same query (consumed by the next check, as with
    ``access_run_for_owner(history_permission=True)``): an open socket's re-check
    of every read of the log costs one query instead of two."""
    found = instances_once(
        (_run_for_history_read, ContentType.objects.get_for_model(App).pk),
        _run_for_history_read,
        {"run_id": _PLACEHOLDERS["run_id"]},
        {"run_id": run_id},
        prepare=True,
    )
    if not found:
        raise Run.DoesNotExist(run_id)
    run: Run = found[0]
    return run


def _run_for_history_read(*, run_id: str) -> QuerySet[Run]:
    return runs_for_history_read().filter(pk=run_id)


def runs_for_history_read() -> QuerySet[Run]:
    """Runs as ``require_run_history`` reads them: app, tenant and owner joined, the owner's
    current membership and history permission in the same query (consumed by the next
    check). The shared read of many runs' live text filters and extends it
    (delivery/fanout.py ``read_live_streams``)."""
    return Run.objects.select_related("app", "tenant", "owner").annotate(
        **{_PERMISSION_NOW: Exists(_history_grant(OuterRef("app_id")))}
    )


def require_run_history(run: Run) -> None:
    """Everything but ownership, in the documented order: the app ACTIVE (403),
    within retention (410), the owner's current membership and history permission
    (403)."""
    require_active(run.app)
    require_within_retention(run)
    require_history_permission(run)


def access_run_history(user: AbstractBaseUser, app_slug: str, run_id: str) -> Run:
    """The run whose history (events, answer, ticket, WebSocket, preview) ``user``
    may read now: ``access_run_for_owner`` (404), then ``require_run_history``.

    The owner's membership and history permission are read in the run's own query,
    compiled once and prepared (one statement, where a second query built per call
    took most of a ticket's time); the checks still run in the documented order."""
    run = access_run_for_owner(user, app_slug, run_id, history_permission=True)
    require_run_history(run)
    return run
