"""Reads for the console's lists: navigation, the runs list and its filters, the
运行调试 form. The run detail (运行详情) is console/detail.py."""

from collections import defaultdict
from dataclasses import dataclass
from datetime import date, datetime, time
from typing import Any

from django.db.models import Count, Max, Q, QuerySet
from django.utils import timezone

from agents.models import AgentPin, AgentVersion
from api.selectors import keyset_page, match_runs
from evaluation.models import Evaluation
from evaluation.service import end_stale
from runs.models import Run
from tenancy.models import App, Membership, Tenant

PAGE_SIZES = (10, 25, 50, 100)
DEFAULT_PAGE_SIZE = 50

# --- navigation -------------------------------------------------------------------


@dataclass(frozen=True)
class TenantNav:
    tenant: Tenant
    apps: list[App]


def nav_tree() -> list[TenantNav]:
    """Tenants and their apps, in two queries whatever their number."""
    apps_by_tenant: dict[int, list[App]] = defaultdict(list)
    for app in App.objects.order_by("slug"):
        apps_by_tenant[app.tenant_id].append(app)
    return [TenantNav(t, apps_by_tenant[t.pk]) for t in Tenant.objects.order_by("key")]


def app_overview() -> list[TenantNav]:
    """Like nav_tree, with per-app run counts and pinned agents (a fixed number of queries)."""
    apps = list(
        App.objects.annotate(
            run_total=Count("runs", distinct=True),
            run_active=Count(
                "runs",
                filter=Q(runs__status__in=[Run.Status.QUEUED, Run.Status.RUNNING]),
                distinct=True,
            ),
            last_run_at=Max("runs__created_at"),
        ).order_by("slug")
    )
    pins: dict[int, list[AgentPin]] = defaultdict(list)
    for pin in AgentPin.objects.select_related("agent", "version").order_by("agent__key"):
        pins[pin.app_id].append(pin)
    by_tenant: dict[int, list[App]] = defaultdict(list)
    for app in apps:
        app.pinned = pins[app.pk]
        by_tenant[app.tenant_id].append(app)
    return [TenantNav(t, by_tenant[t.pk]) for t in Tenant.objects.order_by("key")]


# --- runs list --------------------------------------------------------------------


@dataclass(frozen=True)
class RunFilters:
    tenant: str = ""
    app: str = ""
    status: str = ""
    agent: str = ""
    version: str = ""  # with ``agent``: that version of it
    owner: str = ""
    question: str = ""  # a substring of the question, any case
    since: datetime | None = None
    until: datetime | None = None


def day_start(day: date) -> datetime:
    return timezone.make_aware(datetime.combine(day, time.min))


def day_end(day: date) -> datetime:
    return timezone.make_aware(datetime.combine(day, time.max))


def runs_queryset(filters: RunFilters) -> QuerySet[Run]:
    runs = Run.objects.select_related("app__tenant", "owner", "agent_version__agent").order_by(
        "-created_at", "-pk"
    )
    if filters.tenant:
        runs = runs.filter(tenant__key=filters.tenant)
    if filters.app:
        runs = runs.filter(app__slug=filters.app)
    if filters.status:
        runs = runs.filter(status=filters.status)
    runs = match_runs(
        runs, question=filters.question, agent=filters.agent, agent_version=filters.version
    )
    if filters.owner:
        runs = runs.filter(owner__username=filters.owner)
    if filters.since:
        runs = runs.filter(created_at__gte=filters.since)
    if filters.until:
        runs = runs.filter(created_at__lte=filters.until)
    return runs


@dataclass(frozen=True)
class RunsPage:
    runs: list[Run]
    count: int  # of every run the filters match
    next_cursor: str | None  # None on the last page


def runs_page(filters: RunFilters, *, cursor: str | None, per_page: int) -> RunsPage:
    """One page of runs after ``cursor`` (the REST list's signed keyset cursor, so a page is
    the same under new runs): a COUNT and one SELECT, however large or far the page is. A
    cursor not issued by SparkTide raises INVALID_REQUEST."""
    runs = runs_queryset(filters)
    page, next_cursor = keyset_page(runs, cursor=cursor, limit=per_page)
    return RunsPage(runs=page, count=runs.count(), next_cursor=next_cursor)


def filter_choices(app: App | None) -> dict[str, list[str]]:
    """Agent keys and owner usernames to filter by (of one app, or of all)."""
    pins = AgentPin.objects.all() if app is None else AgentPin.objects.filter(app=app)
    members = Membership.objects.all() if app is None else Membership.objects.filter(app=app)
    return {
        "agents": sorted(set(pins.values_list("agent__key", flat=True))),
        "owners": sorted(set(members.values_list("user__username", flat=True))),
    }


# --- run debugging ----------------------------------------------------------------


def debug_setup(app: App) -> dict[str, Any]:
    """What 运行调试 offers: the app's pinned agents with their other published versions.

    Nothing about the members' tokens is sent: whose token was pasted is decided by
    the server when the run is started (the owner's bearer token, verified).
    """
    pins = list(AgentPin.objects.filter(app=app).select_related("agent", "version"))
    versions: dict[int, list[AgentVersion]] = defaultdict(list)
    for version in AgentVersion.objects.filter(
        agent__in=[p.agent_id for p in pins], status=AgentVersion.Status.PUBLISHED
    ).order_by("-published_at", "-pk"):
        versions[version.agent_id].append(version)
    return {
        "agents": [
            {
                "key": pin.agent.key,
                "name": pin.agent.name or pin.agent.key,
                "pinned": {"id": pin.version_id, "version": pin.version.version},
                "versions": [
                    {"id": v.pk, "version": v.version, "pinned": v.pk == pin.version_id}
                    for v in versions[pin.agent_id]
                ],
            }
            for pin in sorted(pins, key=lambda p: p.agent.key)
        ],
    }


# --------------------------------------------------------------------------- 评测

PAST_EVALUATIONS = 50


def evaluation_versions(app: App) -> list[str]:
    """``KEY@VERSION`` of every published version of the agents the app pins, the pinned
    one first per agent (what an evaluation may compare)."""
    out: list[str] = []
    for agent in debug_setup(app)["agents"]:
        pinned = f"{agent['key']}@{agent['pinned']['version']}"
        others = [f"{agent['key']}@{v['version']}" for v in agent["versions"] if not v["pinned"]]
        out += [pinned, *others]
    return out


def past_evaluations(app: App) -> list[dict[str, Any]]:
    """The app's evaluations, newest first, with the trend measures per version."""
    kept = Evaluation.objects.filter(app=app)
    end_stale(kept)
    rows = []
    for e in kept.select_related("owner", "started_by")[:PAST_EVALUATIONS]:
        rows.append({"evaluation": e, "versions": [
            {"label": label, "summary": e.summaries.get(label, {})} for label in e.agents
        ]})  # fmt: skip
    return rows


def console_evaluation(evaluation_id: str) -> Evaluation | None:
    found = Evaluation.objects.filter(pk=evaluation_id)
    end_stale(found)
    return found.select_related("app__tenant", "owner", "started_by").first()


def evaluation_summary(evaluation: Evaluation, measures: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per measure, one cell per version (a rate as ok/total and %)."""
    rows = []
    for key, label in measures.items():
        cells = []
        for version in evaluation.agents:
            value = evaluation.summaries.get(version, {}).get(key)
            cells.append(value)
        rows.append({"key": key, "label": label, "cells": cells})
    return rows
