"""Fixtures of the preview tests: every run is a REAL scripted run executed by the
engine (retrieval, citation issuance, publication), never hand-inserted rows.

Users (tests/conftest.py): alice owns the runs; bob is another member of the same
app with history permission; mallory (``outsider``) belongs to another tenant;
``admin`` is a platform superuser who is also in alice's tenant and app.
"""

from dataclasses import dataclass

import pytest

from citations.models import CitationReference
from runs.models import Run
from tenancy.models import ApiToken, Membership, TenantUser
from tests import factories
from tests.remote_server import (
    make_remote_version,
    remote_item,
    remote_knowledge,  # noqa: F401 - the fixture
)

REPORT_PAGES = [
    "北辰医药2026年三季度营收增长12%，主要来自创新药销售。\n\n公司研发投入同比增加。",
    "第二页：毛利率保持稳定，现金流充裕。😀 管理层预计四季度延续增长。",
]
REMOTE_CONTENT = "客户拜访纪要：北辰医药三季度营收增长12%，回款正常。"
SESSION_ID = "sess-1"


@dataclass(frozen=True)
class Cited:
    """A finished run and the citation its answer cites."""

    run: Run
    reference: CitationReference

    @property
    def url(self) -> str:
        return preview_url(self.run.pk, self.reference.pk)


def preview_url(run_id: str, citation_id: str, app: str = "business") -> str:
    return f"/v1/apps/{app}/runs/{run_id}/citations/{citation_id}/preview"


@pytest.fixture
def knowledge(tenant, app, alice):
    """A published MANAGED version leased to the app: a public report and a memo
    only alice may read."""
    return factories.fund_reports(tenant, app, alice)


@pytest.fixture
def make_run(app, alice, knowledge):
    """Start a run of a scripted agent pinned in ``app`` and execute it in-process."""

    def run(*steps, owner=None, versions=None, **kwargs) -> Run:
        knowledge_versions = versions if versions is not None else [knowledge]
        return factories.scripted_run(
            app,
            owner or alice,
            steps,
            knowledge=knowledge_versions,
            session_id=SESSION_ID,
            **kwargs,
        )

    return run


def first_cited(run: Run) -> CitationReference:
    """The reference behind the answer's first VERIFIED citation."""
    verified = run.events.get(type="citation.verified").data["references"]
    first = next(ref["id"] for ref in verified if ref["status"] == "VERIFIED")
    return CitationReference.objects.select_related("version__knowledge").get(pk=first)


@pytest.fixture
def cited(make_run) -> Cited:
    """A completed run whose answer cites the public report's chunk on 营收."""
    run = make_run(
        {"search": "营收增长", "topK": 2}, {"answerPart": "营收增长 12% [[cite:{{c1}}]]"}
    )
    assert run.status == Run.Status.COMPLETED
    reference = first_cited(run)
    assert reference.document.key == "report-a"
    return Cited(run, reference)


@pytest.fixture
def cited_memo(make_run) -> Cited:
    """A completed run whose answer cites the restricted memo (alice may read it)."""
    run = make_run({"search": "内部投研纪要", "topK": 1}, {"answerPart": "纪要 [[cite:{{c1}}]]"})
    reference = first_cited(run)
    assert reference.document.key == "memo"
    return Cited(run, reference)


@pytest.fixture
def admin(tenant, app):
    """A platform superuser and staff member who is in the owner's tenant and app,
    with history permission — and still not the owner."""
    from django.contrib.auth import get_user_model
    from guardian.shortcuts import assign_perm

    user = get_user_model().objects.create_superuser("root", "root@example.com", "root-pw-123")
    TenantUser.objects.create(tenant=tenant, user=user)
    Membership.objects.create(app=app, user=user)
    assign_perm("tenancy.view_run_history", user, app)
    _, user.raw_token = ApiToken.issue(user)
    return user


@pytest.fixture
def remote_version(tenant, app, remote_knowledge):  # noqa: F811 - the fixture
    """A published REMOTE version (the fake server) leased to the app."""
    remote_knowledge.set_items(
        [
            remote_item(
                "crm-1",
                REMOTE_CONTENT,
                version="7",
                title="客户拜访纪要",
                page=2,
                locator={"start": 10, "end": 34},
                uri=remote_knowledge.url_for("/documents/crm-1"),
            ),
            remote_item("crm-2", "第二条：现金流充裕。", version="2"),
        ]
    )
    version = make_remote_version(tenant, remote_knowledge, key="crm")
    factories.lease(app, version)
    return version


@pytest.fixture
def cited_remote(make_run, remote_version, remote_knowledge) -> Cited:  # noqa: F811
    """A completed run whose answer cites the REMOTE item crm-1."""
    run = make_run(
        {"search": "营收", "topK": 2},
        {"answerPart": "拜访纪要 [[cite:{{c1}}]]"},
        versions=[remote_version],
    )
    assert run.status == Run.Status.COMPLETED
    reference = first_cited(run)
    assert reference.remote_item_id == "crm-1"
    remote_knowledge.requests.clear()
    return Cited(run, reference)
