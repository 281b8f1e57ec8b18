"""Test data builders. Three fixed users per tenant in most tests: the owner
(alice), a member without document access (bob) and an outsider of another tenant."""

import itertools
from collections.abc import Sequence

from django.contrib.auth import get_user_model
from guardian.shortcuts import assign_perm

from sparktide.agents.models import Agent, AgentPin, AgentVersion
from sparktide.knowledge.ingest import FactInput, ingest_document
from sparktide.knowledge.models import Document, Knowledge, KnowledgeVersion, Lease
from sparktide.tenancy.models import ApiToken, App, Membership, Tenant, TenantUser

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
