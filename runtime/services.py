"""Starting runs: the one entry every surface (REST, console) goes through.

``start_run`` trusts none of its callers: it checks the app, the user's
membership, the agent version and the input itself, so a surface that forgets a
check cannot start a run it should not.
"""

from typing import Any

from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import AnonymousUser, User
from django.db import transaction
from django.db.models import QuerySet
from django.utils.translation import gettext as _

from agents.models import AgentPin, AgentVersion
from agents.versions import is_runnable
from foundation.compiled import PLACEHOLDER_INT, compiled_once, instances_once, placeholder_text
from foundation.errors import ErrorCode, SparkTideError, not_found
from runs.access import require_active
from runs.models import Run
from runtime.tasks import execute_run_task
from tenancy.models import App, Membership

# The input rules of a run (REST and console alike): text, not blank, at most this long.
MAX_INPUT_CHARS = 32_000


def validate_run_input(value: object) -> str:
    """The run input as given (never trimmed), or 400 INVALID_REQUEST naming ``input``."""
    if not isinstance(value, str):
        raise SparkTideError(ErrorCode.INVALID_REQUEST, "input: " + _("必须是文本。"))
    if not value.strip():
        raise SparkTideError(ErrorCode.INVALID_REQUEST, "input: " + _("不能为空白。"))
    if len(value) > MAX_INPUT_CHARS:
        raise SparkTideError(
            ErrorCode.INVALID_REQUEST,
            "input: " + _("最多 %(limit)d 个字符。") % {"limit": MAX_INPUT_CHARS},
        )
    return value


def require_member(user: AbstractBaseUser | AnonymousUser, app: App) -> None:
    """The user is a member of the app now (tenancy/models.py ``Membership.objects.current()``:
    active, of the app's tenant; one query); anyone else gets the 404 a missing app gets."""
    if user is None or user.pk is None:
        raise not_found()
    values = {"app_id": app.pk, "user_id": user.pk}
    # Compiled once per process (foundation/compiled.py), re-bound and run on every call.
    compiled = compiled_once(
        "start_run.member",
        _membership,
        {"app_id": PLACEHOLDER_INT, "user_id": PLACEHOLDER_INT - 1},
    )
    member = bool(compiled.rows(values) if compiled else _membership(**values).exists())
    if not member:
        raise not_found()


def _membership(*, app_id: int, user_id: int) -> QuerySet[Membership, Any]:
    return Membership.objects.current().filter(app_id=app_id, user_id=user_id).values_list("pk")[:1]


def _pin(*, app_id: int, agent_key: str) -> QuerySet[AgentPin]:
    return (
        AgentPin.objects.select_related("agent", "version__agent")
        .filter(app_id=app_id, agent__key=agent_key)
        .order_by("pk")[:1]
    )


def runnable_version(
    app: App, agent_key: str, agent_version: AgentVersion | int | None = None
) -> AgentVersion:
    """The version a run of ``agent_key`` in ``app`` uses: the app's pin, or the
    version the caller asked to try — only a PUBLISHED version of the pinned agent,
    of the app's tenant (422 AGENT_NOT_AVAILABLE otherwise)."""
    values = {"app_id": app.pk, "agent_key": agent_key}
    pins = instances_once(
        "start_run.pin",
        _pin,
        {"app_id": PLACEHOLDER_INT, "agent_key": placeholder_text("agent")},
        values,
    )
    pin = pins[0] if pins else None
    if pin is None:
        raise SparkTideError(ErrorCode.AGENT_NOT_AVAILABLE)
    version: AgentVersion | None = pin.version
    if agent_version is not None:
        version = (
            AgentVersion.objects.select_related("agent")
            .filter(pk=getattr(agent_version, "pk", agent_version))
            .first()
        )
    if version is None or not is_runnable(version, agent_id=pin.agent_id, tenant_id=app.tenant_id):
        raise SparkTideError(
            ErrorCode.AGENT_NOT_AVAILABLE, _("只有此应用固定的智能体的已发布版本可以运行。")
        )
    return version


def start_run(
    *,
    user: User,
    app: App,
    agent_key: str,
    input: str,
    session_id: str = "",
    agent_version: AgentVersion | int | None = None,
) -> Run:
    """Create a QUEUED run and enqueue it after commit.

    Checks, in order: the user is a member of the app (404, so nothing else is
    told to a non-member), the app is ACTIVE (403), the input rules (400), the
    agent version (422). ``agent_version`` lets the
    console try another published version of the pinned agent without changing
    the app's pin.
    """
    require_member(user, app)
    require_active(app)
    validate_run_input(input)
    version = runnable_version(app, agent_key, agent_version)
    # One INSERT is atomic on its own: no BEGIN/COMMIT around it. The task is enqueued
    # once the run is committed — at once here, or when a caller's transaction commits.
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
