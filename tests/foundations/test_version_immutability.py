"""Published knowledge and agent versions are immutable in the model layer:
save(), delete(), queryset update()/delete() and many-to-many writes all refuse."""

from decimal import Decimal

import pytest
from django.db import transaction

from agents.models import AgentPin, AgentVersion
from knowledge.ingest import FactInput
from knowledge.models import (
    Chunk,
    Document,
    Fact,
    ImmutableVersionError,
    Knowledge,
    KnowledgeVersion,
)
from tests import factories

pytestmark = pytest.mark.django_db


@pytest.fixture
def draft(tenant):
    version = factories.make_knowledge(tenant, "fund-reports", version="2026-10")
    factories.add_document(
        version,
        ["第一页：股票仓位 61.2%。", "第二页：前十大重仓股。"],
        key="report-a",
        facts=[FactInput(key="equity_weight", value=Decimal("61.2"), unit="%")],
    )
    return version


@pytest.fixture
def published(draft):
    return factories.publish(draft)


def test_draft_version_content_can_change(draft):
    document = draft.documents.get()
    document.title = "改过的标题"
    document.save()
    Chunk.objects.filter(document=document).update(text="改")
    Fact.objects.filter(document=document).update(unit="pct")
    draft.endpoint = "http://127.0.0.1:9100/x"
    draft.save()
    document.delete()
    assert not draft.documents.exists()


def test_published_version_content_cannot_change_through_the_orm(published):
    published.version = "2026-11"
    with pytest.raises(ImmutableVersionError):
        published.save()


def test_published_remote_version_endpoint_secret_and_timeout_cannot_change(tenant):
    version = factories.make_knowledge(
        tenant,
        "crm",
        type=Knowledge.Type.REMOTE,
        endpoint="http://127.0.0.1:9100/retrieve",
        secret="signing-secret",
    )
    factories.publish(version)
    for field, value in (
        ("endpoint", "http://127.0.0.1:9200/other"),
        ("secret", "another"),
        ("timeout_seconds", 5.0),
    ):
        fresh = KnowledgeVersion.objects.get(pk=version.pk)
        setattr(fresh, field, value)
        with pytest.raises(ImmutableVersionError):
            fresh.save()


def test_published_version_cannot_be_deleted(published):
    with pytest.raises(ImmutableVersionError):
        published.delete()
    with pytest.raises(ImmutableVersionError):
        Document.objects.filter(version=published).delete()
    assert KnowledgeVersion.objects.filter(pk=published.pk).exists()


def test_document_of_a_published_version_cannot_be_saved_or_deleted(published):
    document = published.documents.get()
    document.title = "篡改"
    with pytest.raises(ImmutableVersionError):
        document.save()
    with pytest.raises(ImmutableVersionError):
        document.delete()
    with pytest.raises(ImmutableVersionError):
        Document.objects.filter(pk=document.pk).update(title="篡改")
    assert Document.objects.get(pk=document.pk).title == "文档"


def test_chunks_of_a_published_version_refuse_save_update_and_delete(published):
    chunk = Chunk.objects.filter(document__version=published).first()
    original = chunk.text
    chunk.text = "篡改"
    with pytest.raises(ImmutableVersionError):
        chunk.save()
    with pytest.raises(ImmutableVersionError):
        chunk.delete()
    with pytest.raises(ImmutableVersionError):
        Chunk.objects.filter(document__version=published).update(text="篡改")
    with pytest.raises(ImmutableVersionError):
        Chunk.objects.filter(document__version=published).delete()
    assert Chunk.objects.get(pk=chunk.pk).text == original


def test_facts_of_a_published_version_refuse_save_update_and_delete(published):
    fact = Fact.objects.get(document__version=published)
    fact.value = Decimal("99")
    with pytest.raises(ImmutableVersionError):
        fact.save()
    with pytest.raises(ImmutableVersionError):
        fact.delete()
    with pytest.raises(ImmutableVersionError):
        Fact.objects.filter(pk=fact.pk).update(value=Decimal("99"))
    with pytest.raises(ImmutableVersionError):
        Fact.objects.filter(pk=fact.pk).delete()
    assert Fact.objects.get(pk=fact.pk).value == Decimal("61.2")


def test_new_documents_cannot_be_added_to_a_published_version(published):
    with pytest.raises(ImmutableVersionError):
        factories.add_document(published, ["迟到的文档"], key="late")


def test_the_document_acl_stays_writable_on_a_published_version(published):
    """restricted is permission, not content: an operator may tighten it any time."""
    document = published.documents.get()
    document.restricted = True
    document.save(update_fields=["restricted"])
    Document.objects.filter(pk=document.pk).update(restricted=False)
    assert Document.objects.get(pk=document.pk).restricted is False


@pytest.mark.parametrize(
    ("path", "allowed"),
    [
        (["DRAFT", "PUBLISHED", "REVOKED"], True),
        (["DRAFT", "REVOKED"], True),
        (["DRAFT", "PUBLISHED", "DRAFT"], False),
        (["DRAFT", "PUBLISHED", "REVOKED", "PUBLISHED"], False),
        (["DRAFT", "REVOKED", "DRAFT"], False),
    ],
)
def test_status_goes_forward_only(draft, path, allowed):
    *steps, last = path[1:]
    for status in steps:
        draft.status = status
        draft.save()
    draft.status = last
    if allowed:
        draft.save()
        assert KnowledgeVersion.objects.get(pk=draft.pk).status == last
    else:
        with pytest.raises(ImmutableVersionError):
            draft.save()


def test_publishing_and_revoking_stamp_their_times(draft):
    factories.publish(draft)
    assert draft.published_at is not None and draft.revoked_at is None
    draft.status = KnowledgeVersion.Status.REVOKED
    draft.save()
    assert draft.revoked_at is not None


@pytest.fixture
def agent_version(tenant, published):
    helper = factories.make_agent(tenant, "helper", model={"provider": "extractive"})
    return factories.make_agent(
        tenant,
        "researcher",
        model=factories.scripted({"search": "仓位"}),
        knowledge=[published],
        sub_agents=[helper.agent],
    )


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("instructions", "新的指令"),
        ("model", {"provider": "extractive"}),
        ("routing", [{"match": "仓位", "knowledge": ["fund-reports@2026-10"]}]),
        ("max_steps", 3),
        ("version", "2"),
    ],
)
def test_published_agent_version_fields_cannot_change(agent_version, field, value):
    setattr(agent_version, field, value)
    with pytest.raises(ImmutableVersionError):
        agent_version.save()


def test_published_agent_version_cannot_go_back_to_draft_or_be_deleted(agent_version):
    agent_version.status = AgentVersion.Status.DRAFT
    with pytest.raises(ImmutableVersionError):
        agent_version.save()
    fresh = AgentVersion.objects.get(pk=agent_version.pk)
    with pytest.raises(ImmutableVersionError):
        fresh.delete()


def test_published_agent_version_allowed_knowledge_cannot_change(tenant, agent_version):
    other = factories.publish(factories.make_knowledge(tenant, "other"))
    # Each write in its own savepoint: the related manager's atomic block marks
    # the enclosing transaction broken when the guard raises.
    with pytest.raises(ImmutableVersionError), transaction.atomic():
        agent_version.allowed_knowledge.add(other)
    with pytest.raises(ImmutableVersionError), transaction.atomic():
        agent_version.allowed_knowledge.clear()
    with pytest.raises(ImmutableVersionError), transaction.atomic():
        other.agent_versions.add(agent_version)  # the reverse side too
    assert agent_version.allowed_knowledge.count() == 1


def test_published_agent_version_sub_agents_cannot_change(agent_version):
    with pytest.raises(ImmutableVersionError), transaction.atomic():
        agent_version.sub_agents.set([])
    with pytest.raises(ImmutableVersionError), transaction.atomic():
        agent_version.sub_agents.remove(*agent_version.sub_agents.all())
    assert agent_version.sub_agents.count() == 1


def test_allowed_knowledge_takes_only_published_versions(tenant, draft):
    version = factories.make_agent(tenant, "writer", model={"provider": "extractive"})
    draft_agent = AgentVersion.objects.create(
        agent=version.agent, version="2", model={"provider": "extractive"}
    )
    with pytest.raises(ImmutableVersionError), transaction.atomic():
        draft_agent.allowed_knowledge.add(draft)


def test_only_a_published_agent_version_can_be_pinned(tenant, app, agent_version):
    draft_version = AgentVersion.objects.create(
        agent=agent_version.agent, version="2", model={"provider": "extractive"}
    )
    with pytest.raises(ImmutableVersionError):
        AgentPin.objects.create(app=app, agent=agent_version.agent, version=draft_version)
    pin = AgentPin.objects.create(app=app, agent=agent_version.agent, version=agent_version)
    assert pin.version == agent_version
