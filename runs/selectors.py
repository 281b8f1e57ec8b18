"""Reads of runs and their events for the public API (through Publication's reader)."""

from publication.reader import RunReader
from runs.events import TERMINAL_EVENT_TYPES
from runs.models import Run, RunEvent

MAX_EVENTS_PAGE = 500


def public_run(run: Run) -> dict:
    data = {
        "id": run.pk,
        "status": run.status,
        "agent": run.agent_version.agent.key,
        "agentVersion": run.agent_version.version,
        "createdAt": run.created_at.isoformat(),
        "sessionId": run.session_id,
    }
    if run.reason:
        data["reason"] = run.reason
    if run.completed_at:
        data["completedAt"] = run.completed_at.isoformat()
    return data


def events_page(run: Run, *, after: int, limit: int) -> dict:
    events = list(RunEvent.objects.filter(run=run, seq__gt=after).order_by("seq")[:limit])
    hydrated = RunReader(run).hydrate(events)
    next_after = events[-1].seq if events else after
    terminal = RunEvent.objects.filter(
        run=run, type__in=TERMINAL_EVENT_TYPES, seq__lte=next_after
    ).exists()
    return {"events": hydrated, "nextAfter": next_after, "terminal": terminal}


def answer(run: Run) -> dict:
    return {"blocks": [view.as_dict() for view in RunReader(run).blocks()]}
