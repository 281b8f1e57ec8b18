"""Routing rules choose among the agent version's allowed, published knowledge."""

import pytest

from knowledge.models import KnowledgeVersion
from knowledge.retrieval import select_versions
from tests.factories import make_agent, make_knowledge, publish, scripted

pytestmark = pytest.mark.django_db


@pytest.fixture
def funds(tenant):
    return publish(make_knowledge(tenant, "funds", version="2026-10"))


@pytest.fixture
def pharma(tenant):
    return publish(make_knowledge(tenant, "pharma", version="3"))


@pytest.fixture
def crm(tenant):
    return publish(make_knowledge(tenant, "crm", version="1"))


def agent(tenant, knowledge, routing=None):
    return make_agent(tenant, model=scripted(), knowledge=knowledge, routing=routing)


def test_without_rules_every_allowed_published_version_is_searched(tenant, funds, pharma):
    assert select_versions(agent(tenant, [funds, pharma]), "营收") == [funds, pharma]


def test_a_version_revoked_after_the_agent_was_published_is_not_searched(tenant, funds, pharma):
    agent_version = agent(tenant, [funds, pharma])
    pharma.status = KnowledgeVersion.Status.REVOKED
    pharma.save()

    assert select_versions(agent_version, "营收") == [funds]


def test_the_first_matching_rule_selects_its_versions(tenant, funds, pharma, crm):
    routing = [
        {"match": "基金", "knowledge": ["funds@2026-10"]},
        {"match": "医药", "knowledge": ["pharma@3", "crm@1"]},
    ]

    selected = select_versions(agent(tenant, [funds, pharma, crm], routing), "北辰医药的营收")

    assert selected == [pharma, crm]


def test_rules_are_tried_in_order(tenant, funds, pharma):
    routing = [
        {"match": "营收", "knowledge": ["funds@2026-10"]},
        {"match": "医药", "knowledge": ["pharma@3"]},
    ]

    assert select_versions(agent(tenant, [funds, pharma], routing), "医药营收") == [funds]


def test_a_rule_matches_whatever_the_case(tenant, funds, pharma):
    routing = [{"match": "CRM", "knowledge": ["pharma@3"]}]

    assert select_versions(agent(tenant, [funds, pharma], routing), "latest crm notes") == [pharma]


def test_when_no_rule_matches_every_allowed_version_is_searched(tenant, funds, pharma):
    routing = [{"match": "基金", "knowledge": ["funds@2026-10"]}]

    assert select_versions(agent(tenant, [funds, pharma], routing), "医药") == [funds, pharma]


def test_a_rule_cannot_reach_beyond_the_allowed_knowledge(tenant, funds, pharma):
    routing = [{"match": "医药", "knowledge": ["pharma@3", "funds@2026-10"]}]

    assert select_versions(agent(tenant, [funds], routing), "医药") == [funds]


def test_a_matching_rule_naming_nothing_usable_selects_nothing(tenant, funds, pharma):
    routing = [{"match": "医药", "knowledge": ["pharma@3", "pharma@4"]}]
    agent_version = agent(tenant, [funds, pharma], routing)
    pharma.status = KnowledgeVersion.Status.REVOKED
    pharma.save()

    assert select_versions(agent_version, "医药") == []


def test_an_exact_version_is_required(tenant, funds):
    routing = [{"match": "基金", "knowledge": ["funds@2026-09"]}]

    assert select_versions(agent(tenant, [funds], routing), "基金") == []


def test_selected_versions_have_their_knowledge_loaded(tenant, funds, django_assert_num_queries):
    agent_version = agent(tenant, [funds])

    with django_assert_num_queries(1):
        selected = select_versions(agent_version, "营收")
        assert selected[0].knowledge.type == "MANAGED"
