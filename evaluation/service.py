"""Kept evaluations: checked and queued at once, executed in the background, recorded.

``create_evaluation`` is the one entry of the console's 评测 page and of the REST
``createEvaluation``: everything is checked before a single question runs — the app
active, the user an active member (the runs are theirs, with their authorization), the
set (every problem naming its key path), every question within a run's input limit, the
agent versions (a PUBLISHED version of an agent the app pins; the pin never changes) —
then an ``Evaluation`` row is written QUEUED and ``execute_evaluation_task`` enqueued
on commit, so the caller answers at once. A worker executes it: every question a normal
run as the owner (evaluation/runner.py), the figures and per-question rows recorded.

Every write of an execution is fenced on the row's status: only the execution that moved
it to RUNNING writes progress or the end, and nothing is written after the end; an
evaluation whose worker stopped (no progress for ``STALE_AFTER``) is ended FAILED when it
is next read, and a late write of the lost execution then changes nothing.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable
from datetime import timedelta
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import F, QuerySet
from django.utils import timezone

from evaluation.models import Evaluation
from evaluation.runner import (
    EvaluationError,
    Result,
    Target,
    evaluate,
    resolve_targets,
    summarize,
)
from evaluation.sets import EvaluationSet, EvaluationSetError, load_set, parse_set, read_data
from foundation.errors import ErrorCode, SparkTideError, not_found
from runs.access import access_app_for_member, require_active
from runtime.services import MAX_INPUT_CHARS, require_member
from tenancy.models import App

MAX_AGENTS = 2
# An execution that wrote no progress for this long lost its worker.
STALE_AFTER = timedelta(minutes=10)
# A row's question text and first block are kept this long (the run keeps all of it).
KEPT_TEXT_CHARS = 300


class EvaluationAbandoned(Exception):
    """The row is no longer this execution's to write (ended by someone else)."""


# --------------------------------------------------------------------------- checking


def check_set(data: Any, where: str) -> EvaluationSet:
    """A set given as data (a REST body's ``set``, an uploaded file's content), checked
    as a file is, plus the run's own input limit for every question: a question a run
    would refuse is named here, before anything runs."""
    try:
        checked = parse_set(data, where)
    except EvaluationSetError as exc:
        raise SparkTideError(ErrorCode.INVALID_REQUEST, str(exc))
    for q in checked.questions:
        if len(q.question) > MAX_INPUT_CHARS:
            raise SparkTideError(
                ErrorCode.INVALID_REQUEST,
                f"{where}: {q.path}.question: {len(q.question):,} characters; a run's input "
                f"holds at most {MAX_INPUT_CHARS:,}",
            )
    return checked


def read_set_file(text: str, name: str) -> Any:
    """An uploaded set file's data (YAML, or JSON for a ``.json`` name)."""
    try:
        return read_data(text, name)
    except EvaluationSetError as exc:
        raise SparkTideError(ErrorCode.INVALID_REQUEST, str(exc))


def shipped_sets(app: App) -> list[str]:
    """The set files shipped for the app: ``SPARKTIDE_EVALUATION_SETS_DIR/<app slug>/``."""
    folder = _shipped_folder(app)
    if folder is None or not folder.is_dir():
        return []
    return sorted(p.name for p in folder.iterdir() if p.suffix in (".yaml", ".yml", ".json"))


def load_shipped_set(app: App, name: str) -> EvaluationSet:
    if name not in shipped_sets(app):
        raise SparkTideError(ErrorCode.INVALID_REQUEST, f"shippedSet: no set {name!r}")
    folder = _shipped_folder(app)
    assert folder is not None  # shipped_sets found it
    try:
        loaded = load_set(folder / name)
    except EvaluationSetError as exc:
        raise SparkTideError(ErrorCode.INVALID_REQUEST, str(exc))
    return check_set(loaded.data, name)


def _shipped_folder(app: App) -> Path | None:
    root = getattr(settings, "SPARKTIDE_EVALUATION_SETS_DIR", "")
    return Path(root) / app.slug if root else None


def targets(app: App, agents: Iterable[str], *, where: str) -> list[Target]:
    """The versions to evaluate (422 AGENT_NOT_AVAILABLE naming the item otherwise)."""
    specs = list(agents)
    if len(specs) > MAX_AGENTS:
        raise SparkTideError(
            ErrorCode.INVALID_REQUEST, f"{where}: at most {MAX_AGENTS} versions are compared"
        )
    try:
        return resolve_targets(app, specs, where=where)
    except EvaluationError as exc:
        raise SparkTideError(ErrorCode.AGENT_NOT_AVAILABLE, str(exc))


def digest(sets: list[EvaluationSet]) -> str:
    canonical = json.dumps(
        [s.data for s in sets], sort_keys=True, ensure_ascii=False, separators=(",", ":")
    )
    return hashlib.sha256(canonical.encode()).hexdigest()


# --------------------------------------------------------------------------- starting


def create_evaluation(
    *,
    app: App,
    owner: User,
    evaluation_set: EvaluationSet,
    agents: Iterable[str] = (),
    started_by: User | None = None,
    origin: str = Evaluation.Origin.API,
    where: str = "agents",
) -> Evaluation:
    """Check everything, keep the evaluation QUEUED and enqueue it (on commit)."""
    require_member(owner, app)
    require_active(app)
    chosen = targets(app, agents, where=where)
    evaluation = Evaluation.objects.create(
        app=app,
        owner=owner,
        started_by=started_by,
        origin=origin,
        set_name=evaluation_set.name,
        set_digest=digest([evaluation_set]),
        set_data=[evaluation_set.data],
        agents=[t.label for t in chosen],
        questions_total=len(evaluation_set.questions) * len(chosen),
    )
    from evaluation.tasks import execute_evaluation_task

    transaction.on_commit(lambda: execute_evaluation_task.enqueue(evaluation.pk))
    return evaluation


def record_command(
    *, app: App, owner: User, sets: list[EvaluationSet], chosen: list[Target]
) -> Evaluation:
    """``manage.py evaluate`` keeps its evaluation too (RUNNING at once: it runs here)."""
    now = timezone.now()
    return Evaluation.objects.create(
        app=app,
        owner=owner,
        origin=Evaluation.Origin.COMMAND,
        set_name=", ".join(s.name for s in sets)[:200],
        set_digest=digest(sets),
        set_data=[s.data for s in sets],
        agents=[t.label for t in chosen],
        questions_total=sum(len(s.questions) for s in sets) * len(chosen),
        status=Evaluation.Status.RUNNING,
        started_at=now,
        progress_at=now,
    )


# --------------------------------------------------------------------------- executing


def execute_evaluation(evaluation_id: str) -> str | None:
    """The background task's body: claim the row, ask every question, record the end.
    None: another execution holds it, or it already ended."""
    now = timezone.now()
    claimed = Evaluation.objects.filter(pk=evaluation_id, status=Evaluation.Status.QUEUED).update(
        status=Evaluation.Status.RUNNING, started_at=now, progress_at=now
    )
    if not claimed:
        return None
    evaluation = Evaluation.objects.select_related("app__tenant", "owner").get(pk=evaluation_id)
    try:
        sets = [parse_set(data, evaluation.set_name) for data in evaluation.set_data]
        # Checked again: a version retired or a member removed since it was queued.
        require_member(evaluation.owner, evaluation.app)
        chosen = targets(evaluation.app, evaluation.agents, where="agents")
        run_all(evaluation, sets, chosen)
    except EvaluationAbandoned:
        return None
    except (SparkTideError, EvaluationSetError) as exc:
        fail(evaluation.pk, getattr(exc, "detail", None) or str(exc))
    except Exception as exc:  # recorded on the row (and the task row), never left RUNNING
        fail(evaluation.pk, f"{type(exc).__name__}: {exc}")
        raise
    return Evaluation.objects.values_list("status", flat=True).get(pk=evaluation_id)


def run_all(
    evaluation: Evaluation,
    sets: list[EvaluationSet],
    chosen: list[Target],
    *,
    say: Callable[[str], None] | None = None,
) -> list[Any]:
    """Every question of ``sets`` for every target, progress fenced, then the end."""

    def progress(line: str) -> None:
        advanced = Evaluation.objects.filter(
            pk=evaluation.pk, status=Evaluation.Status.RUNNING
        ).update(questions_done=F("questions_done") + 1, progress_at=timezone.now())
        if not advanced:
            raise EvaluationAbandoned(evaluation.pk)
        if say is not None:
            say(line)

    done = [
        evaluate(sets, app=evaluation.app, user=evaluation.owner, target=t, progress=progress)
        for t in chosen
    ]
    finish(evaluation.pk, done)
    return done


def finish(evaluation_id: str, done: list[Any]) -> bool:
    rows = [_row(e.target.label, r) for e in done for r in e.results]
    ended = Evaluation.objects.filter(pk=evaluation_id, status=Evaluation.Status.RUNNING).update(
        status=Evaluation.Status.DONE,
        finished_at=timezone.now(),
        summaries={e.target.label: summarize(e.results) for e in done},
        results=rows,
        run_ids=[r["runId"] for r in rows if r["runId"]],
    )
    return bool(ended)


def fail(evaluation_id: str, error: str) -> bool:
    return bool(
        Evaluation.objects.filter(pk=evaluation_id, status__in=_LIVE).update(
            status=Evaluation.Status.FAILED, finished_at=timezone.now(), error=error[:2000]
        )
    )


_LIVE = (Evaluation.Status.QUEUED, Evaluation.Status.RUNNING)


def _row(label: str, r: Result) -> dict[str, Any]:
    first = r.texts[0] if r.texts else ""
    return {
        "agent": label,
        "set": r.set,
        "key": r.key,
        "kind": r.kind,
        "question": r.question[:KEPT_TEXT_CHARS],
        "runId": r.run_id,
        "status": r.status,
        "passed": r.passed,
        "failedChecks": r.failed_checks,
        "error": r.error,
        "firstBlock": first[:KEPT_TEXT_CHARS],
        "figures": {"ok": sum(f.ok for f in r.figures), "total": len(r.figures)},
        "runSeconds": round(r.run_s, 3),
    }


# --------------------------------------------------------------------------- reading


def end_stale(queryset: QuerySet[Evaluation]) -> int:
    """RUNNING evaluations whose execution stopped writing progress: ended FAILED (fenced
    on the same progress stamp, so a live execution's next write is never overtaken)."""
    cutoff = timezone.now() - STALE_AFTER
    return queryset.filter(status=Evaluation.Status.RUNNING, progress_at__lt=cutoff).update(
        status=Evaluation.Status.FAILED,
        finished_at=timezone.now(),
        error="the worker executing it stopped (no progress for "
        f"{int(STALE_AFTER.total_seconds() // 60)} minutes)",
    )


def evaluation_for_owner(user: AbstractBaseUser, app_slug: str, evaluation_id: str) -> Evaluation:
    """The owner's evaluation in an app they are a member of; anyone else, or an unknown
    ID, gets the same 404 as a missing app."""
    app = access_app_for_member(user, app_slug)
    found = Evaluation.objects.filter(pk=evaluation_id, app=app, owner_id=user.pk)
    end_stale(found)
    evaluation = found.first()
    if evaluation is None:
        raise not_found()
    return evaluation


def public_evaluation(evaluation: Evaluation, *, rows: bool = True) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": evaluation.pk,
        "status": evaluation.status,
        "set": {"name": evaluation.set_name, "digest": evaluation.set_digest},
        "agents": evaluation.agents,
        "progress": {"done": evaluation.questions_done, "total": evaluation.questions_total},
        "createdAt": evaluation.created_at.isoformat(),
        "startedAt": evaluation.started_at.isoformat() if evaluation.started_at else None,
        "finishedAt": evaluation.finished_at.isoformat() if evaluation.finished_at else None,
        "error": evaluation.error or None,
        "summaries": evaluation.summaries,
    }
    if rows:
        out["questions"] = evaluation.results
    return out
