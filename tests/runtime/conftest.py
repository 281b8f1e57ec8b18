import pytest

from sparktide.knowledge.ingest import FactInput
from tests import factories

REPORT_PAGES = [
    "北辰医药2026年三季度营收增长12%，主要来自创新药销售。\n\n公司研发投入同比增加。",
    "第二页：毛利率保持稳定，现金流充裕。😀 管理层预计四季度延续增长。",
]
PRIVATE_PAGES = ["内部投研纪要：北辰医药营收预测上调，仅限分析师阅读。"]


@pytest.fixture
def knowledge(tenant, app, alice):
    version = factories.make_knowledge(tenant, "fund-reports", version="2026-10")
    public = factories.add_document(
        version,
        REPORT_PAGES,
        key="report-a",
        title="北辰医药 2026 年三季度报告",
        source_version="v3",
        facts=[
            FactInput(key="revenue_growth", value=__import__("decimal").Decimal("12.0"), unit="%")
        ],
    )
    private = factories.add_document(
        version, PRIVATE_PAGES, key="memo", title="内部投研纪要", readers=[alice]
    )
    factories.publish(version)
    factories.lease(app, version)
    version.public_doc, version.private_doc = public, private
    return version


@pytest.fixture
def make_run(app, alice, knowledge):
    """Create a run of a scripted agent pinned in ``app`` and execute it in-process."""
    from runs.engine import execute_run
    from runs.services import start_run

    def run(*steps, owner=None, sub_agents=(), key="researcher", execute=True, **agent_fields):
        agent_version = factories.make_agent(
            app.tenant,
            key,
            model=factories.scripted(*steps),
            knowledge=[knowledge],
            sub_agents=sub_agents,
            pin_to=[app],
            **agent_fields,
        )
        created = start_run(
            user=owner or alice,
            app=app,
            agent_key=agent_version.agent.key,
            input="北辰医药营收如何？",
        )
        if execute:
            execute_run(created.pk)
        created.refresh_from_db()
        return created

    return run
