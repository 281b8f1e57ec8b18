"""Reads of runs and their events for the public API (through Publication's reader)."""

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.contrib.auth.base_user import AbstractBaseUser
from django.core import signing
from django.db.models import F, Q, QuerySet
from django.utils.translation import gettext as _

from foundation.errors import ErrorCode, SparkTideError
from publication.models import SourceBinding
from publication.reader import RunReader
from runs.events import TERMINAL_EVENT_TYPES, log_page
from runs.models import JournalEntry, Run, RunEvent
from runs.streams import live_streams
from tenancy.models import App

MAX_EVENTS_PAGE = 1000
DEFAULT_RUNS_PAGE = 20
MAX_RUNS_PAGE = 100
_CURSOR_SALT = "sparktide.runs.list-cursor"


def public_run(run: Run) -> dict[str, Any]:
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


def run_detail(run: Run) -> dict[str, Any]:
    """The run as its owner reads it (getRun): public_run and the run's searches."""
    return {**public_run(run), "searches": run_searches(run)}


def events_page(run: Run, *, after: int, limit: int) -> dict[str, Any]:
    events = list(log_page(run.pk, after=after, limit=limit))
    hydrated = RunReader(run).hydrate(events)
    next_after = events[-1].seq if events else after
    terminal = RunEvent.objects.filter(
        run=run, type__in=TERMINAL_EVENT_TYPES, seq__lte=next_after
    ).exists()
    page = {"events": hydrated, "nextAfter": next_after, "terminal": terminal}
    if not terminal:
        # The live turn's text so far (docs/events.md, "The text stream"): not events.
        page["stream"] = live_streams(run.pk)
    return page


def run_searches(run: Run) -> list[dict[str, Any]]:
    """Each ``search_knowledge`` call of the run, in order: the query as searched (its
    terms and vocabulary expansions), the versions asked, each hit (rank, score relative
    to its source's best, document, page, citation ID, and ``cited``: a current
    revision of the published answer cites it, verified) and the hits refused (counts:
    versions the app may not use, chunks the owner's document ACL kept out). Two queries."""
    cited = set(
        SourceBinding.objects.filter(
            revision__block__run=run,
            verified=True,
            citation__isnull=False,
            revision__revision=F("revision__block__current_revision"),
        ).values_list("citation_id", flat=True)
    )
    searches = []
    for entry in JournalEntry.objects.filter(
        run=run,
        kind=JournalEntry.Kind.TOOL_RECEIPT,
        tool="search_knowledge",
        data__has_key="search",
    ).order_by("id"):
        search = dict(entry.data["search"])
        search["step"] = entry.step
        search["hits"] = [
            {**hit, "cited": hit.get("citationId") in cited} for hit in search.get("hits", [])
        ]
        searches.append(search)
    return searches


def answer(run: Run) -> dict[str, Any]:
    return {"blocks": [view.as_dict() for view in RunReader(run).blocks()]}


# --- the caller's own runs of one app, newest first ----------------------------------


# The longest question text a runs list is searched by (REST ``q``, the console's 问题).
MAX_QUESTION_QUERY = 200


@dataclass(frozen=True)
class RunFilters:
    status: str = ""
    session_id: str | None = None
    created_after: datetime | None = None  # inclusive
    created_before: datetime | None = None  # exclusive
    question: str = ""  # a substring of the question, any case
    agent: str = ""  # the agent's key
    agent_version: str = ""  # with ``agent``: that version of it


def match_runs(
    runs: QuerySet[Run], *, question: str = "", agent: str = "", agent_version: str = ""
) -> QuerySet[Run]:
    """Runs whose question contains ``question`` (any case; LIKE's wildcards are literal)
    and of ``agent`` (and that version of it): the filters the REST list and the console's
    runs list share. On PostgreSQL a trigram index on UPPER(input) serves the question
    (console/migrations/0001_runs_question_search.py)."""
    if question:
        runs = runs.filter(input__icontains=question)
    if agent:
        runs = runs.filter(agent_version__agent__key=agent)
        if agent_version:
            runs = runs.filter(agent_version__version=agent_version)
    return runs


def keyset_page(
    runs: QuerySet[Run], *, cursor: str | None, limit: int
) -> tuple[list[Run], str | None]:
    """One page of ``runs`` newest first after ``cursor`` and the cursor of the next page
    (None on the last). Ordered by (createdAt, id) descending, so runs created in the same
    microsecond still have one total order and keyset paging neither skips nor repeats one,
    and runs created meanwhile (newer than any page) never shift a later page. One query."""
    if cursor:
        created_at, run_id = decode_runs_cursor(cursor)
        runs = runs.filter(Q(created_at__lt=created_at) | Q(created_at=created_at, pk__lt=run_id))
    page = list(runs.order_by("-created_at", "-pk")[: limit + 1])
    more = len(page) > limit
    page = page[:limit]
    return page, (encode_runs_cursor(page[-1]) if more else None)


def encode_runs_cursor(run: Run) -> str:
    """An opaque, server-signed position: the (createdAt, id) of the last run of a page."""
    return signing.dumps([run.created_at.isoformat(), run.pk], salt=_CURSOR_SALT, compress=True)


def decode_runs_cursor(cursor: str) -> tuple[datetime, str]:
    try:
        created_at, run_id = signing.loads(cursor, salt=_CURSOR_SALT)
        return datetime.fromisoformat(created_at), str(run_id)
    except (signing.BadSignature, ValueError, TypeError):
        raise SparkTideError(
            ErrorCode.INVALID_REQUEST, "cursor: " + _("不是本 API 签发的游标。")
        ) from None


def runs_page(
    user: AbstractBaseUser,
    app: App,
    *,
    filters: RunFilters,
    cursor: str | None = None,
    limit: int = DEFAULT_RUNS_PAGE,
) -> dict[str, Any]:
    """One page of ``user``'s own runs in ``app`` (membership already checked by the caller),
    by ``keyset_page``. Ownership is the rule of ``access_run_for_owner``: the owner, in the
    owner's own tenant. One query per page.
    """
    runs = Run.objects.select_related("agent_version__agent").filter(
        app=app, owner_id=user.pk, owner__tenant_user__tenant=F("tenant")
    )
    if filters.status:
        runs = runs.filter(status=filters.status)
    if filters.session_id is not None:
        runs = runs.filter(session_id=filters.session_id)
    if filters.created_after is not None:
        runs = runs.filter(created_at__gte=filters.created_after)
    if filters.created_before is not None:
        runs = runs.filter(created_at__lt=filters.created_before)
    runs = match_runs(
        runs, question=filters.question, agent=filters.agent, agent_version=filters.agent_version
    )
    page, next_cursor = keyset_page(runs, cursor=cursor, limit=limit)
    return {"runs": [_listed_run(run) for run in page], "nextCursor": next_cursor}


def _listed_run(run: Run) -> dict[str, Any]:
    data = {
        "id": run.pk,
        "status": run.status,
        "agent": run.agent_version.agent.key,
        "agentVersion": run.agent_version.version,
        "sessionId": run.session_id,
        "createdAt": run.created_at.isoformat(),
    }
    if run.completed_at:
        data["completedAt"] = run.completed_at.isoformat()
    return data
