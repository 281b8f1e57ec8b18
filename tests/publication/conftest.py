"""Publication tests run on real scripted runs (the engine issues the citations,
handles and blocks) and on direct ``publish_candidate`` calls against them."""

import itertools
from decimal import Decimal

import pytest

from knowledge.ingest import FactInput
from runs.models import Run
from tests import factories

REPORT_PAGES = [
    "北辰医药2026年三季度营收增长12%，主要来自创新药销售。\n\n公司研发投入同比增加。",
    "第二页：毛利率保持稳定，现金流充裕。管理层预计四季度延续增长。",
    "第三页：分产品营收，创新药营收占比过半。",
    "第四页：分地区营收，海外营收增长较快。",
]

_keys = itertools.count(1)


@pytest.fixture
def knowledge(tenant, app, alice):
    """One leased version: a public report (with a numeric fact) and a memo only alice may read."""
    facts = [FactInput(key="revenue_growth", value=Decimal("12.0"), unit="%")]
    return factories.fund_reports(tenant, app, alice, pages=REPORT_PAGES, facts=facts)


@pytest.fixture
def make_run(app, alice, knowledge):
    """A real run of a fresh scripted agent pinned in ``app``."""

    def run(*steps, owner=None, **kwargs):
        key = f"researcher-{next(_keys)}"
        return factories.scripted_run(
            app, owner or alice, steps, knowledge=[knowledge], key=key, **kwargs
        )

    return run


def reopen(run: Run) -> Run:
    """Let direct publish_candidate calls continue a run the engine executed.

    Publication refuses commits into an ended run (RUN_ENDED); these tests play
    the engine's part for a few more candidates of the same root call.
    """
    Run.objects.filter(pk=run.pk).update(status=Run.Status.RUNNING, completed_at=None, reason="")
    return Run.objects.select_related("tenant", "app", "owner").get(pk=run.pk)


@pytest.fixture
def live_run(make_run):
    """A running run whose root call retrieved the public report and the memo."""

    def build(*steps, owner=None):
        steps = steps or ({"search": "营收", "topK": 5},)
        return reopen(make_run(*steps, owner=owner))

    return build


@pytest.fixture
def publish():
    """publish_candidate for the run's root call (entry B unless told)."""
    from publication.pipeline import publish_candidate

    def call(run, body, *, replaces=None, preview=True, entry="B"):
        root = run.agent_calls.get(depth=0)
        return publish_candidate(
            run=run, agent_call=root, entry=entry, body=body, replaces=replaces, preview=preview
        )

    return call


def refs(run):
    """The run's citation references: public report chunks first, then the memo's."""
    from citations.models import CitationReference

    found = list(CitationReference.objects.filter(run=run).select_related("document"))
    public = [r for r in found if r.document.key == "report-a"]
    memo = [r for r in found if r.document.key == "memo"]
    return public, memo
