"""retrieve(): managed and remote sources together, at most top_k, and a failing
remote fails the retrieval (the engine reports it as a tool error)."""

import pytest

from knowledge.remote import RemoteKnowledgeError, RemoteTimeout
from knowledge.retrieval import retrieve, select_versions
from tests.factories import add_document, lease, make_agent, make_knowledge, publish, scripted
from tests.remote_server import make_remote_version, remote_item

pytestmark = pytest.mark.django_db


@pytest.fixture
def reports(tenant, alice, app):
    version = make_knowledge(tenant, "reports")
    add_document(version, ["公开材料：北辰医药营收增长。"], key="public")
    add_document(version, ["内部材料：营收。"], key="secret", readers=[alice])
    add_document(version, ["其他材料：营收持平。"], key="flat")
    publish(version)
    lease(app, version)
    return version


@pytest.fixture
def crm(tenant, remote_knowledge, app):
    remote_knowledge.set_items(
        [remote_item(f"crm-{n}", f"拜访记录{n}：营收。", version="1") for n in range(1, 4)]
    )
    version = make_remote_version(tenant, remote_knowledge, key="crm")
    lease(app, version)
    return version


def test_managed_and_remote_results_are_merged_by_score(reports, crm, alice, context, app):
    items = retrieve(
        versions=[reports, crm], query="营收", top_k=10, owner=alice, app=app, context=context
    )

    assert len(items) == 6
    assert [item.score for item in items] == sorted((item.score for item in items), reverse=True)
    assert items[0].document is not None  # equal scores: managed first, then remotes
    assert [item.remote_item_id for item in items if item.document is None] == [
        "crm-1",
        "crm-2",
        "crm-3",
    ]


def test_at_most_top_k_items_come_back_overall(reports, crm, alice, context, app):
    items = retrieve(
        versions=[reports, crm], query="营收", top_k=3, owner=alice, app=app, context=context
    )

    assert len(items) == 3


def test_retrieval_applies_the_owners_document_acl(reports, bob, context, app):
    items = retrieve(
        versions=[reports], query="营收", top_k=10, owner=bob, app=app, context=context
    )

    assert "secret" not in {item.document.key for item in items}


def test_a_failing_remote_fails_the_retrieval(reports, crm, alice, context, remote_knowledge, app):
    remote_knowledge.fail(500)

    with pytest.raises(RemoteKnowledgeError, match="HTTP 500"):
        retrieve(
            versions=[reports, crm], query="营收", top_k=5, owner=alice, app=app, context=context
        )


def test_a_slow_remote_fails_the_retrieval_with_a_timeout(
    reports, crm, alice, context, remote_knowledge, settings, app
):
    settings.SPARKTIDE_REMOTE_TIMEOUT_CAP = 0.2
    remote_knowledge.sleep(5)

    with pytest.raises(RemoteTimeout):
        retrieve(versions=[crm], query="营收", top_k=5, owner=alice, app=app, context=context)


def test_routing_then_retrieval_searches_only_the_routed_versions(
    tenant, reports, crm, alice, context, remote_knowledge, app
):
    routing = [{"match": "拜访", "knowledge": ["crm@1"]}]
    agent_version = make_agent(tenant, model=scripted(), knowledge=[reports, crm], routing=routing)

    versions = select_versions(agent_version, "客户拜访中的营收")
    items = retrieve(
        versions=versions, query="营收", top_k=10, owner=alice, app=app, context=context
    )

    assert {item.version for item in items} == {crm}
    assert len(remote_knowledge.requests) == 1
