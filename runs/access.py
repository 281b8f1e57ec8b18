"""Access checks for apps and runs: each returns the object or raises (views hold no rules)."""

from django.db.models import F

from runs.models import Run
from sparktide.errors import ErrorCode, SparkTideError, not_found
from sparktide.tenancy.models import App, Membership


def access_app_for_member(user, app_slug: str) -> App:
    """The app, if the user is a member; otherwise the same 404 as a missing app."""
    if "\x00" in app_slug:
        raise not_found()
    app = App.objects.select_related("tenant").filter(slug=app_slug).first()
    if app is None or not Membership.objects.filter(app=app, user=user).exists():
        raise not_found()
    return app


def access_run_for_owner(user, app_slug: str, run_id: str) -> Run:
    """The run, only for its owner in the named app of the owner's tenant.

    Anyone else — another member, a platform admin, another tenant — gets the
    identical 404 a missing run gets: nothing tells them the run exists.
    """
    if "\x00" in run_id or "\x00" in app_slug:
        raise not_found()  # PostgreSQL refuses NUL in text: not a lookup, the same 404
    run = (
        Run.objects.select_related("app", "tenant", "owner", "agent_version__agent")
        .filter(pk=run_id, app__slug=app_slug, owner=user, owner__tenant_user__tenant=F("tenant"))
        .first()
    )
    if run is None:
        raise not_found()
    return run


def require_active(app: App) -> None:
    if not app.is_active:
        raise SparkTideError(ErrorCode.APP_NOT_ACTIVE)
