"""Starting runs: the one entry every surface (REST, console) goes through."""

from django.db import transaction

from runs.access import require_active
from runs.models import Run
from runs.runtime.tasks import execute_run_task
from sparktide.agents.models import AgentPin
from sparktide.errors import ErrorCode, SparkTideError
from sparktide.tenancy.models import App


def start_run(
    *, user, app: App, agent_key: str, input: str, session_id: str = "", agent_version=None
) -> Run:
    """Create a QUEUED run of the app's pinned agent version and enqueue it after commit.

    ``agent_version`` lets the console try another published version of the
    same agent without changing the app's pin.
    """
    require_active(app)
    pin = (
        AgentPin.objects.select_related("version__agent")
        .filter(app=app, agent__key=agent_key)
        .first()
    )
    if pin is None:
        raise SparkTideError(ErrorCode.AGENT_NOT_AVAILABLE)
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
