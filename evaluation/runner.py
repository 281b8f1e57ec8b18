"""The evaluation runner: every question of a set is a normal run, read back the way a
business app reads it, and measured mechanically (docs/evaluation.md).

- **Asking**: ``start_run`` as the user (membership, app status, input rules, the agent
  version: the checks every surface goes through), then the engine's ``execute_run`` —
  retrieval, citation issuance, Publication, verification; nothing bypassed. A follow-up
  is asked in its conversation's ``sessionId`` (made unique to this evaluation, so an
  earlier evaluation's runs are never its history). ``--agent KEY@VERSION`` runs that
  published version of the pinned agent without changing the app's pin (the console's
  "try a version": ``start_run(agent_version=…)``).
- **Reading**: the history read every surface shares (``access_run_history``), the answer
  (``api.selectors.answer``: Publication's reader, the user's current authorization), the
  run's event log (``citation.created``, ``citation.verified``, ``answer.published``),
  and every cited excerpt through ``citations.preview.preview_citation`` — the domain
  function the preview endpoint calls on a click, with the user's authorization.
- **Measuring**: ``evaluation/checks.py`` (one home with bench/answers.py).
"""

from __future__ import annotations

import hashlib
import secrets
import statistics
import sys
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any

from django.contrib.auth import get_user_model
from django.db import connection

from agents.models import AgentPin, AgentVersion
from api import selectors
from citations.preview import preview_citation
from evaluation.checks import cited_ids, figures_before_markers, holds, is_not_found, numbers
from evaluation.sets import EvaluationSet, Question
from foundation.errors import SparkTideError
from runs.access import access_run_history
from runs.models import Run
from runtime.engine import execute_run
from runtime.services import require_member, runnable_version, start_run
from tenancy.models import App

TERMINAL = {Run.Status.COMPLETED, Run.Status.PARTIAL, Run.Status.FAILED, Run.Status.CANCELLED}
WAIT_FOR_WORKER_SECONDS = 120.0


class EvaluationError(Exception):
    """The evaluation cannot start: the message says what to fix."""


# --------------------------------------------------------------------------- who asks


@dataclass(frozen=True)
class Target:
    """One agent version to evaluate."""

    label: str  # KEY@VERSION
    agent_key: str
    version: AgentVersion
    pinned: bool  # the app's pin (no agent_version passed to start_run)


def resolve(app_slug: str, username: str, agents: Iterable[str]) -> tuple[App, Any, list[Target]]:
    """The app, the user and the agent versions, checked before any question runs."""
    app = App.objects.select_related("tenant").filter(slug=app_slug).first()
    if app is None:
        raise EvaluationError(f"--app {app_slug}: no such app")
    user = get_user_model().objects.filter(username=username).first()
    if user is None:
        raise EvaluationError(f"--as {username}: no such user")
    try:
        require_member(user, app)
    except SparkTideError:
        raise EvaluationError(
            f"--as {username}: not an active member of {app_slug} (a run would be refused)"
        )
    return app, user, resolve_targets(app, agents)


def resolve_targets(app: App, agents: Iterable[str], *, where: str = "--agent") -> list[Target]:
    """The agent versions (``KEY`` or ``KEY@VERSION``), checked before any question runs;
    each error names the item (``--agent X``, or ``agents[1]`` over REST)."""
    specs = list(agents)
    if not specs:
        return [_target(app, _default_agent(app), where)]
    targets = [
        _target(app, spec, f"{where} {spec}" if where == "--agent" else f"{where}[{i}]")
        for i, spec in enumerate(specs)
    ]
    labels = [t.label for t in targets]
    if len(set(labels)) != len(labels):
        raise EvaluationError(f"{where}: the same version twice ({', '.join(labels)})")
    return targets


def _default_agent(app: App) -> str:
    keys = sorted(AgentPin.objects.filter(app=app).values_list("agent__key", flat=True))
    if len(keys) == 1:
        return keys[0]
    if "researcher" in keys:
        return "researcher"
    if not keys:
        raise EvaluationError(f"--app {app.slug}: no agent is pinned in this app")
    raise EvaluationError(
        f"--app {app.slug} pins several agents ({', '.join(keys)}): name one with --agent KEY"
    )


def _target(app: App, spec: str, where: str = "") -> Target:
    where = where or f"--agent {spec}"
    key, _, wanted = spec.partition("@")
    if not key:
        raise EvaluationError(f"{where}: expected KEY or KEY@VERSION")
    pin = AgentPin.objects.select_related("version").filter(app=app, agent__key=key).first()
    if pin is None:
        raise EvaluationError(
            f"{where}: the agent {key!r} is not pinned in {app.slug}; only a version "
            "of an agent the app pins can run there"
        )
    if not wanted:
        return Target(f"{key}@{pin.version.version}", key, pin.version, pinned=True)
    version = AgentVersion.objects.filter(
        agent__tenant=app.tenant, agent__key=key, version=wanted
    ).first()
    if version is None:
        raise EvaluationError(f"{where}: {key} has no version {wanted!r}")
    if version.status != AgentVersion.Status.PUBLISHED:
        raise EvaluationError(
            f"{where}: the version is {version.status}; only a PUBLISHED version runs "
            "(publish it first; a RETIRED one stays retired)"
        )
    try:
        runnable_version(app, key, version)  # start_run's own rule, asked before any run
    except SparkTideError as exc:
        raise EvaluationError(f"{where}: {exc.detail}")
    return Target(spec, key, version, pinned=version.pk == pin.version_id)


# --------------------------------------------------------------------------- one question


@dataclass
class Figure:
    value: str
    cite: str
    ok: bool


@dataclass
class Result:
    set: str
    key: str
    kind: str
    question: str
    run_id: str = ""
    status: str = ""
    error: str = ""
    texts: list[str] = field(default_factory=list)
    answered_not_found: bool = False
    references: int = 0  # citation.verified references
    verified: int = 0  # of which VERIFIED
    cited: list[str] = field(default_factory=list)  # cite IDs in the answer
    issued: int = 0  # citations the run's retrieval issued
    unused: int = 0  # issued, never cited
    figures: list[Figure] = field(default_factory=list)
    expect: list[tuple[str, bool]] = field(default_factory=list)
    expected_not_found: bool = False
    document_ok: bool | None = None
    page_ok: bool | None = None
    first_block_s: float | None = None
    run_s: float = 0.0
    checks: dict[str, bool] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return not self.error and all(self.checks.values())

    @property
    def failed_checks(self) -> list[str]:
        return [name for name, ok in self.checks.items() if not ok] + (
            ["error"] if self.error else []
        )


def _text(block: dict[str, Any]) -> str:
    content = block.get("content") or {}
    if content.get("type") == "table":
        rows = [content.get("columns", []), *content.get("rows", [])]
        return "\n".join(" | ".join(map(str, row)) for row in rows)
    return str(content.get("text") or "")


def _events(run: Run) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    after = 0
    while True:
        page = selectors.events_page(run, after=after, limit=selectors.MAX_EVENTS_PAGE)
        out += page["events"]
        if not page["events"] or page["nextAfter"] == after:
            return out
        after = page["nextAfter"]


def _wait_terminal(run_id: str) -> str:
    """A run another process claimed first (a worker on the same database): its end."""
    deadline = time.monotonic() + WAIT_FOR_WORKER_SECONDS
    while time.monotonic() < deadline:
        status = Run.objects.values_list("status", flat=True).get(pk=run_id)
        if status in TERMINAL:
            return status
        time.sleep(0.2)
    return Run.objects.values_list("status", flat=True).get(pk=run_id)


def ask(
    *, app: App, user: Any, target: Target, question: Question, set_name: str, session: str
) -> Result:
    result = Result(set_name, question.key, question.kind, question.question)
    started = time.perf_counter()
    try:
        run = start_run(
            user=user,
            app=app,
            agent_key=target.agent_key,
            input=question.question,
            session_id=session,
            agent_version=None if target.pinned else target.version,
        )
        if execute_run(run.pk) is None:
            _wait_terminal(run.pk)
    except SparkTideError as exc:
        result.error = f"{exc.code}: {exc.detail}"
        result.run_s = time.perf_counter() - started
        _score(result, question)
        return result
    result.run_s = time.perf_counter() - started
    result.run_id = run.pk
    read(result, app=app, user=user, run_id=run.pk)
    _measure(result, question, app=app, user=user)
    return result


def read(result: Result, *, app: App, user: Any, run_id: str) -> None:
    """The answer and the event log, through the history read a business app's requests
    take (the owner's authorization, now)."""
    run = access_run_history(user, app.slug, run_id)
    result.status = run.status
    blocks = selectors.answer(run)["blocks"]
    result.texts = [_text(b) for b in blocks if b.get("state") == "visible"]
    result.answered_not_found = is_not_found(result.texts)
    events = _events(run)
    issued = {e["data"]["id"] for e in events if e["type"] == "citation.created"}
    references = [
        r
        for e in events
        if e["type"] == "citation.verified"
        for r in e["data"].get("references", [])
    ]
    result.references = len(references)
    result.verified = sum(r.get("status") == "VERIFIED" for r in references)
    result.cited = cited_ids("\n\n".join(result.texts))
    result.issued = len(issued)
    result.unused = len(issued - set(result.cited))
    published = [e["at"] for e in events if e["type"] == "answer.published"]
    if published:
        first = datetime.fromisoformat(min(published))
        result.first_block_s = max(0.0, (first - run.created_at).total_seconds())


def _measure(result: Result, question: Question, *, app: App, user: Any) -> None:
    previews: dict[str, dict[str, Any] | None] = {}

    def preview(cite: str) -> dict[str, Any] | None:
        """The click on 查看来源片段: re-authorized, the excerpt re-fetched."""
        if cite not in previews:
            try:
                previews[cite] = preview_citation(
                    user=user, app_slug=app.slug, run_id=result.run_id, citation_id=cite
                )
            except SparkTideError:
                previews[cite] = None
        return previews[cite]

    for text in result.texts:
        for value, cite in figures_before_markers(text):
            body = preview(cite)
            ok = body is not None and value in numbers(body.get("content", ""))
            result.figures.append(Figure(str(value), cite, ok))
    first = result.texts[0] if result.texts else ""
    result.expect = [(e, holds(first, e)) for e in question.expect]
    if question.document:
        refs = [p for p in map(preview, cited_ids(first)) if p is not None]
        documents = [r for r in refs if question.document in (r.get("documentId"), r.get("title"))]
        result.document_ok = bool(documents)
        if question.page is not None:
            result.page_ok = any(
                (r.get("sourceRef") or {}).get("page") == question.page for r in documents
            )
    _score(result, question)


def _score(result: Result, question: Question) -> None:
    checks: dict[str, bool] = {}
    if result.run_id:
        checks["completed"] = result.status == Run.Status.COMPLETED
    result.expected_not_found = question.not_found
    if question.not_found:
        checks["not_found"] = result.answered_not_found and result.verified == 0
    else:
        checks["answered"] = bool(result.run_id) and not result.answered_not_found
    if question.expect:
        checks["expect"] = bool(result.expect) and all(ok for _, ok in result.expect)
    if result.figures:
        checks["figures"] = all(f.ok for f in result.figures)
    if result.document_ok is not None:
        checks["document"] = result.document_ok
    if result.page_ok is not None:
        checks["page"] = result.page_ok
    result.checks = checks


# --------------------------------------------------------------------------- a whole evaluation


@dataclass
class Evaluation:
    target: Target
    results: list[Result]
    seconds: float
    jobs: int


def _session(token: str, set_index: int, conversation: str) -> str:
    if not conversation:
        return ""
    session = f"eval-{token}-{set_index}:{conversation}"
    if len(session) > 200:
        digest = hashlib.sha256(conversation.encode()).hexdigest()[:24]
        session = f"eval-{token}-{set_index}:{digest}"
    return session


def concurrency(jobs: int) -> tuple[int, str]:
    """How many questions run at once, and why not more."""
    if jobs <= 1:
        return 1, ""
    if connection.vendor == "sqlite":
        return 1, (
            "SQLite has one writer: runs executing at once would wait on each other's "
            "database locks (and the wait would be measured as run time), so the questions "
            "run one after another"
        )
    return jobs, ""


def evaluate(
    sets: list[EvaluationSet],
    *,
    app: App,
    user: Any,
    target: Target,
    jobs: int = 1,
    progress: Callable[[str], None] | None = None,
) -> Evaluation:
    """Run every question of ``sets`` as ``target``; conversations in order, on one thread."""
    jobs, _ = concurrency(jobs)
    token = secrets.token_hex(4)
    work: list[tuple[EvaluationSet, list[Question], str]] = []
    for set_index, evaluation_set in enumerate(sets):
        for group in evaluation_set.conversations():
            work.append((evaluation_set, group, _session(token, set_index, group[0].conversation)))
    total = sum(len(group) for _, group, _ in work)
    done = [0]
    lock = threading.Lock()
    say = progress or _stderr

    def run_group(item: tuple[EvaluationSet, list[Question], str]) -> list[Result]:
        evaluation_set, group, session = item
        out = []
        try:
            for q in group:
                result = ask(
                    app=app,
                    user=user,
                    target=target,
                    question=q,
                    set_name=evaluation_set.name,
                    session=session,
                )
                out.append(result)
                with lock:
                    done[0] += 1
                    verdict = "ok  " if result.passed else "FAIL"
                    failed = ",".join(result.failed_checks)
                    say(
                        f"[{done[0]:>4}/{total}] {target.label} {verdict} {result.run_s:5.2f}s "
                        f"{evaluation_set.name}/{q.key}" + (f" ({failed})" if failed else "")
                    )
        finally:
            if jobs > 1:
                connection.close()  # this thread's own connection
        return out

    started = time.perf_counter()
    if jobs == 1:
        grouped = [run_group(item) for item in work]
    else:
        with ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="evaluate") as pool:
            grouped = list(pool.map(run_group, work))
    seconds = time.perf_counter() - started
    order = {s.name: i for i, s in enumerate(sets)}
    results = sorted(  # back in set and file order
        (r for group in grouped for r in group),
        key=lambda r: (order[r.set], sets[order[r.set]].by_key[r.key].index),
    )
    return Evaluation(target, results, seconds, jobs)


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- measures


def _pct(ok: int, total: int) -> dict[str, Any]:
    return {"ok": ok, "total": total, "rate": (ok / total) if total else None}


def _quantile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    if len(values) == 1:
        return values[0]
    ordered = sorted(values)
    position = q * (len(ordered) - 1)
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def summarize(results: list[Result]) -> dict[str, Any]:
    """The measures of a list of results (a set, a kind, or everything)."""
    expecting = [r for r in results if r.expect]
    items = [ok for r in results for _, ok in r.expect]
    not_found = [r for r in results if r.expected_not_found]
    answerable = [r for r in results if not r.expected_not_found]
    on_topic = [r for r in not_found if r.kind == "unanswerable"]
    off_topic = [r for r in not_found if r.kind == "off_topic"]
    figures = [f for r in results for f in r.figures]
    answered = [r for r in results if r.run_id and not r.answered_not_found]
    documents = [r for r in results if r.document_ok is not None]
    pages = [r for r in results if r.page_ok is not None]
    whole = [r for r in expecting if r.kind in ("list", "table")]
    first_blocks = [r.first_block_s for r in results if r.first_block_s is not None]
    run_times = [r.run_s for r in results if r.run_id]
    issued = sum(r.issued for r in results)
    return {
        "questions": len(results),
        "passed": _pct(sum(r.passed for r in results), len(results)),
        "fact_hit": _pct(sum(r.checks.get("expect", False) for r in expecting), len(expecting)),
        "fact_items": _pct(sum(items), len(items)),
        "whole_lists_tables": _pct(sum(r.checks.get("expect", False) for r in whole), len(whole)),
        "not_found": _pct(sum(r.checks.get("not_found", False) for r in not_found), len(not_found)),
        "unanswerable_not_found": _pct(
            sum(r.checks.get("not_found", False) for r in on_topic), len(on_topic)
        ),
        "off_topic_not_found": _pct(
            sum(r.checks.get("not_found", False) for r in off_topic), len(off_topic)
        ),
        "false_not_found": _pct(sum(r.answered_not_found for r in answerable), len(answerable)),
        "figure_precision": _pct(sum(f.ok for f in figures), len(figures)),
        "verified_rate": _pct(sum(r.verified for r in results), sum(r.references for r in results)),
        "citations_per_answer": (
            sum(len(r.cited) for r in answered) / len(answered) if answered else None
        ),
        "unused_retrieval": _pct(sum(r.unused for r in results), issued),
        "document_accuracy": _pct(sum(bool(r.document_ok) for r in documents), len(documents)),
        "page_accuracy": _pct(sum(bool(r.page_ok) for r in pages), len(pages)),
        "first_block_p50_s": _quantile(first_blocks, 0.5),
        "first_block_p95_s": _quantile(first_blocks, 0.95),
        "run_p50_s": _quantile(run_times, 0.5),
        "run_p95_s": _quantile(run_times, 0.95),
        "run_mean_s": statistics.fmean(run_times) if run_times else None,
        "errors": sum(bool(r.error) for r in results),
    }


# The measures a --fail-under threshold may name: rates, higher is better.
RATE_METRICS = (
    "passed",
    "fact_hit",
    "fact_items",
    "whole_lists_tables",
    "not_found",
    "unanswerable_not_found",
    "off_topic_not_found",
    "figure_precision",
    "verified_rate",
    "document_accuracy",
    "page_accuracy",
)


def parse_threshold(spec: str) -> tuple[str, float]:
    """``METRIC=VALUE``: a rate as a fraction (0.9) or a percentage (90%)."""
    name, sep, raw = spec.partition("=")
    if not sep or name not in RATE_METRICS:
        raise EvaluationError(
            f"--fail-under {spec}: expected METRIC=VALUE with METRIC one of "
            f"{', '.join(RATE_METRICS)}"
        )
    try:
        value = float(raw[:-1]) / 100 if raw.endswith("%") else float(raw)
    except ValueError:
        raise EvaluationError(f"--fail-under {spec}: {raw!r} is not a number")
    if not 0 <= value <= 1:
        raise EvaluationError(f"--fail-under {spec}: a rate is between 0 and 1 (or 0% and 100%)")
    return name, value


def missed_thresholds(summary: dict[str, Any], thresholds: list[tuple[str, float]]) -> list[str]:
    """One line per threshold missed; a measure with nothing to measure misses its threshold
    (a gate never passes on an empty set)."""
    out = []
    for name, wanted in thresholds:
        rate = summary[name]["rate"]
        if rate is None:
            out.append(f"{name}: nothing measured (threshold {wanted:.1%})")
        elif rate + 1e-12 < wanted:
            measured = f"{summary[name]['ok']}/{summary[name]['total']}"
            out.append(f"{name}: {rate:.1%} ({measured}) is under {wanted:.1%}")
    return out


def result_from_json(data: dict[str, Any]) -> Result:
    """A result as ``as_json`` wrote it (to measure several evaluations together)."""
    fields = {k: v for k, v in data.items() if k not in ("passed", "failedChecks")}
    fields["figures"] = [Figure(**f) for f in fields.get("figures", [])]
    fields["expect"] = [tuple(e) for e in fields.get("expect", [])]
    return Result(**fields)


def as_json(evaluation: Evaluation, sets: list[EvaluationSet]) -> dict[str, Any]:
    return {
        "agent": evaluation.target.label,
        "seconds": evaluation.seconds,
        "jobs": evaluation.jobs,
        "total": summarize(evaluation.results),
        "sets": {
            s.name: summarize([r for r in evaluation.results if r.set == s.name]) for s in sets
        },
        "kinds": {
            kind: summarize([r for r in evaluation.results if r.kind == kind])
            for kind in dict.fromkeys(r.kind for r in evaluation.results)
        },
        "questions": [
            {**asdict(r), "passed": r.passed, "failedChecks": r.failed_checks}
            for r in evaluation.results
        ],
    }
