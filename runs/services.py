"""Writes and access checks for runs (views call these; they hold no rules)."""

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from runs.models import Run
from sparktide.agents.models import AgentPin
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
        raise SparkTideError(ErrorCode.APP_NOT_ACTIVE, 403, f"The app is {app.status.lower()}.")


def start_run(
    *, user, app: App, agent_key: str, input: str, session_id: str = "", agent_version=None
) -> Run:
    """Create a QUEUED run of the app's pinned agent version and enqueue it after commit.

    ``agent_version`` lets the console try another published version of the
    same agent without changing the app's pin.
    """
    from runs.tasks import execute_run_task

    require_active(app)
    pin = (
        AgentPin.objects.select_related("version__agent")
        .filter(app=app, agent__key=agent_key)
        .first()
    )
    if pin is None:
        raise SparkTideError(
            ErrorCode.AGENT_NOT_AVAILABLE, 422, f"No agent {agent_key!r} is pinned in this app."
        )
    version = agent_version or pin.version
    with transaction.atomic():
        run = Run.objects.create(
            tenant=app.tenant,
            app=app,
            owner=user,
            agent_version=version,
            input=input,
            session_id=session_id,
            security_policy_epoch=app.security_policy_epoch,
            knowledge_access_epoch=app.knowledge_access_epoch,
        )
        run_id = run.pk
        transaction.on_commit(lambda: execute_run_task.enqueue(run_id))
    return run


def cancel_run(run: Run) -> Run:
    """Ask a run to stop. A queued run ends at once; a running one at its next step."""
    from runs.engine import finish_run

    if run.is_terminal:
        raise SparkTideError(
            ErrorCode.RUN_ALREADY_FINISHED, 409, f"The run already ended ({run.status})."
        )
    Run.objects.filter(pk=run.pk, cancel_requested_at__isnull=True).update(
        cancel_requested_at=timezone.now()
    )
    if Run.objects.filter(pk=run.pk, status=Run.Status.QUEUED).exists():
        finish_run(run, Run.Status.CANCELLED, "CANCELLED_BY_USER")
    return run
