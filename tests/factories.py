"""Test data builders. Three fixed users per tenant in most tests: the owner
(alice), a member without document access (bob) and an outsider of another tenant."""

import itertools
from collections.abc import Sequence

from django.contrib.auth import get_user_model
from guardian.shortcuts import assign_perm

from agents.models import Agent, AgentPin, AgentVersion
from knowledge.ingest import FactInput, ingest_document
from knowledge.models import Document, Knowledge, KnowledgeVersion, Lease
from tenancy.models import ApiToken, App, Membership, Tenant, TenantUser

_seq = itertools.count(1)


def make_tenant(key: str | None = None, name: str = "测试租户") -> Tenant:
    return Tenant.objects.create(key=key or f"tenant-{next(_seq)}", name=name)


def make_user(tenant: Tenant, username: str | None = None, *, token: str | None = None):
    user = get_user_model().objects.create_user(
        username=username or f"user{next(_seq)}", password="pw-unused-123"
    )
    TenantUser.objects.create(tenant=tenant, user=user)
    _, raw = ApiToken.issue(user, raw=token)
    user.raw_token = raw
    return user


def make_app(
    tenant: Tenant,
    slug: str | None = None,
    *,
    members: Sequence = (),
    history: bool = True,
    **fields,
) -> App:
    app = App.objects.create(
        tenant=tenant, slug=slug or f"app-{next(_seq)}", name="业务应用", **fields
    )
    for user in members:
        Membership.objects.create(app=app, user=user)
        if history:
            assign_perm("tenancy.view_run_history", user, app)
    return app


def make_knowledge(
    tenant: Tenant,
    key: str | None = None,
    *,
    type: str = Knowledge.Type.MANAGED,
    version: str = "1",
    **version_fields,
) -> KnowledgeVersion:
    knowledge = Knowledge.objects.create(tenant=tenant, key=key or f"kb-{next(_seq)}", type=type)
    return KnowledgeVersion.objects.create(knowledge=knowledge, version=version, **version_fields)


def add_document(
    version: KnowledgeVersion,
    pages: Sequence[str],
    *,
    key: str | None = None,
    title: str = "文档",
    readers: Sequence | None = None,
    facts: Sequence[FactInput] = (),
    source_version: str = "",
) -> Document:
    document = ingest_document(
        version,
        key=key or f"doc-{next(_seq)}",
        title=title,
        pages=pages,
        source_version=source_version,
        restricted=readers is not None,
        facts=facts,
    )
    for reader in readers or ():
        assign_perm("knowledge.read_document", reader, document)
    return document


def publish(version: KnowledgeVersion) -> KnowledgeVersion:
    version.status = KnowledgeVersion.Status.PUBLISHED
    version.save()
    return version


def lease(app: App, version: KnowledgeVersion, **fields) -> Lease:
    return Lease.objects.create(app=app, version=version, **fields)


def make_agent(
    tenant: Tenant,
    key: str | None = None,
    *,
    model: dict,
    knowledge: Sequence[KnowledgeVersion] = (),
    sub_agents: Sequence[Agent] = (),
    version: str = "1",
    max_steps: int = 20,
    pin_to: Sequence[App] = (),
    routing: list | None = None,
) -> AgentVersion:
    agent = Agent.objects.filter(tenant=tenant, key=key).first() if key else None
    agent = agent or Agent.objects.create(tenant=tenant, key=key or f"agent-{next(_seq)}")
    agent_version = AgentVersion.objects.create(
        agent=agent, version=version, model=model, max_steps=max_steps, routing=routing or []
    )
    agent_version.allowed_knowledge.set(knowledge)
    agent_version.sub_agents.set(sub_agents)
    agent_version.status = AgentVersion.Status.PUBLISHED
    agent_version.save()
    for app in pin_to:
        AgentPin.objects.update_or_create(app=app, agent=agent, defaults={"version": agent_version})
    return agent_version


def scripted(*steps: dict) -> dict:
    return {"provider": "scripted", "steps": list(steps)}


# --- the fund-research fixture most suites share ----------------------------------

REPORT_PAGES = [
    "北辰医药2026年三季度营收增长12%，主要来自创新药销售。\n\n公司研发投入同比增加。",
    "第二页：毛利率保持稳定，现金流充裕。😀 管理层预计四季度延续增长。",
]
MEMO_PAGES = ["内部投研纪要：北辰医药营收预测上调，仅限分析师阅读。"]
QUESTION = "北辰医药营收如何？"


def fund_reports(
    tenant: Tenant,
    app: App,
    reader,
    *,
    pages: Sequence[str] = REPORT_PAGES,
    facts: Sequence[FactInput] = (),
    source_version: str = "v3",
) -> KnowledgeVersion:
    """A published MANAGED version leased to ``app``: a public report and a memo
    only ``reader`` may read (as ``version.report`` / ``version.memo``)."""
    version = make_knowledge(tenant, "fund-reports", version="2026-10")
    version.report = version.public_doc = add_document(
        version,
        pages,
        key="report-a",
        title="北辰医药 2026 年三季度报告",
        source_version=source_version,
        facts=facts,
    )
    version.memo = version.private_doc = add_document(
        version, MEMO_PAGES, key="memo", title="内部投研纪要", readers=[reader]
    )
    publish(version)
    lease(app, version)
    return version


def scripted_run(
    app: App,
    owner,
    steps: Sequence[dict],
    *,
    knowledge: Sequence[KnowledgeVersion] = (),
    key: str = "researcher",
    execute: bool = True,
    session_id: str = "",
    **agent_fields,
):
    """A real run of a scripted agent pinned in ``app``, executed in-process."""
    from runs.models import Run
    from runtime.engine import execute_run
    from runtime.services import start_run

    agent_version = make_agent(
        app.tenant, key, model=scripted(*steps), knowledge=knowledge, pin_to=[app], **agent_fields
    )
    run = start_run(
        user=owner,
        app=app,
        agent_key=agent_version.agent.key,
        input=QUESTION,
        session_id=session_id,
    )
    if execute:
        execute_run(run.pk)
    # Related rows loaded now: async tests must not load them lazily.
    return Run.objects.select_related("app", "tenant", "owner").get(pk=run.pk)


def require(condition: bool, reason: str) -> None:
    """Skip a test whose service is absent in a developer's quick run (e.g. SQLite);
    under ``make test`` (SPARKTIDE_TEST_STRICT=1) a missing service fails it instead,
    so no skip can hide a missing dependency."""
    import pytest

    from foundation.env import env_bool

    if condition:
        return
    if env_bool("SPARKTIDE_TEST_STRICT"):
        pytest.fail(f"{reason} — make test provides it")
    pytest.skip(reason)


def client_for(user=None, token: str | None = None):
    """A DRF test client with the user's (or the given) bearer token."""
    from rest_framework.test import APIClient

    client = APIClient()
    raw = token or (user.raw_token if user is not None else None)
    if raw:
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    return client
