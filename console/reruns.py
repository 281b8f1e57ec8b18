"""用其他版本重跑 (运行详情): the run's question asked again, with another published version of
its agent, by the run's owner — the owner of the pasted bearer token, as 运行调试 does it.

Staff never run as someone else: the token must be the original owner's own (the run
endpoints' owner rule, ``access_run_for_owner``, else the identical 404), and ``start_run``
checks the rest as for any run (membership 404, app ACTIVE 403, the version 422)."""

from typing import Any

from django.contrib.auth.models import User
from django.db import transaction

from agents.models import AgentVersion
from console.models import Rerun
from runs.access import access_run_for_owner
from runs.models import Run
from runtime.services import start_run


def start_rerun(*, original: Run, owner: User, version: int, started_by: User) -> Run:
    """A new run of ``original``'s question for its owner with agent version ``version``
    (a pk), linked to ``original``. Not in the original's business session: a re-run is
    a debugging run and adds no turn to the business's conversation."""
    access_run_for_owner(owner, original.app.slug, original.pk)
    with transaction.atomic():
        run = start_run(
            user=owner,
            app=original.app,
            agent_key=original.agent_version.agent.key,
            input=original.input,
            agent_version=version,
        )
        Rerun.objects.create(run=run, original=original, started_by=started_by)
    return run


def rerun_panel(run: Run) -> dict[str, Any]:
    """What 运行详情's 用其他版本重跑 shows: the published versions of the run's agent (the
    first one not the run's own preselected), the run it re-ran if it is a re-run, and its
    own re-runs, newest first. Three queries."""
    versions = list(
        AgentVersion.objects.filter(
            agent_id=run.agent_version.agent_id, status=AgentVersion.Status.PUBLISHED
        )
        .select_related("agent")
        .order_by("-published_at", "-pk")
    )
    other = next((v.pk for v in versions if v.pk != run.agent_version_id), None)
    origin = Rerun.objects.filter(run=run).select_related("original__agent_version__agent").first()
    reruns = list(
        Rerun.objects.filter(original=run)
        .select_related("run__agent_version__agent", "started_by")
        .order_by("-created_at", "-run_id")
    )
    return {"versions": versions, "preselected": other, "origin": origin, "reruns": reruns}
