"""Starting runs: the one entry every surface (REST, console) goes through.

``start_run`` trusts none of its callers: it checks the app, the user's
membership, the agent version and the input itself, so a surface that forgets a
check cannot start a run it should not.
"""

from django.db import transaction
from django.utils.translation import gettext as _

from runs.access import require_active
from runs.models import Run
from runs.runtime.tasks import execute_run_task
from sparktide.agents.models import AgentPin, AgentVersion
from sparktide.errors import ErrorCode, SparkTideError, not_found
from sparktide.tenancy.models import App, Membership

# The input rules of a run (REST and console alike): text, not blank, at most this long.
MAX_INPUT_CHARS = 32_000


def validate_run_input(value) -> str:
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


def require_member(user, app: App) -> None:
    """The user is an active business user of the app's tenant and a member of the
    app now (one query); anyone else gets the 404 a missing app gets."""
    if user is None or user.pk is None:
        raise not_found()
    member = Membership.objects.filter(
        app_id=app.pk,
        user_id=user.pk,
        user__is_active=True,
        user__tenant_user__tenant_id=app.tenant_id,
    ).exists()
    if not member:
        raise not_found()


def runnable_version(app: App, agent_key: str, agent_version=None) -> AgentVersion:
    """The version a run of ``agent_key`` in ``app`` uses: the app's pin, or the
    version the caller asked to try — only a PUBLISHED version of the pinned agent,
    of the app's tenant (422 AGENT_NOT_AVAILABLE otherwise)."""
    pin = (
        AgentPin.objects.select_related("agent", "version__agent")
        .filter(app=app, agent__key=agent_key)
        .first()
    )
    if pin is None:
        raise SparkTideError(ErrorCode.AGENT_NOT_AVAILABLE)
    version: AgentVersion | None = pin.version
    if agent_version is not None:
        version = (
            AgentVersion.objects.select_related("agent")
            .filter(pk=getattr(agent_version, "pk", agent_version))
            .first()
        )
    if (
        version is None
        or version.status != AgentVersion.Status.PUBLISHED
        or version.agent_id != pin.agent_id
        or version.agent.tenant_id != app.tenant_id
    ):
        raise SparkTideError(
            ErrorCode.AGENT_NOT_AVAILABLE, _("只有此应用固定的智能体的已发布版本可以运行。")
        )
    return version


def start_run(
    *, user, app: App, agent_key: str, input: str, session_id: str = "", agent_version=None
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
