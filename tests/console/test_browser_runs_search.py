"""运行记录 in real headless Chromium: search by question text and agent version, then page
through the result with 下一页 while a new run arrives."""

from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from runs.models import Run
from tests import factories
from tests.console.conftest import screenshot

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser, pytest.mark.slow]


def make_run(app, owner, version, text, hours) -> Run:
    return Run.objects.create(
        tenant=app.tenant,
        app=app,
        owner=owner,
        agent_version=version,
        input=text,
        status="COMPLETED",
        security_policy_epoch=app.security_policy_epoch,
        knowledge_access_epoch=app.knowledge_access_epoch,
        created_at=timezone.now() - timedelta(hours=hours),
    )


def test_search_by_question_and_version_then_page_through(signed_in, app, alice, bob):
    model = factories.scripted({"answerPart": "x"})
    one = factories.make_agent(app.tenant, "researcher", model=model, pin_to=[app])
    two = factories.make_agent(app.tenant, "researcher", model=model, version="2")
    wanted = [make_run(app, alice, two, f"北辰医药 Revenue 问题 {i}", i) for i in range(12)]
    for i in range(5):
        make_run(app, bob, one, f"北辰医药 revenue 旧版本 {i}", i)
        make_run(app, alice, two, f"毛利率 {i}", i)

    page = signed_in
    page.goto("/console/apps/business/runs/?per=10")
    page.fill("input[name=q]", "REVENUE")
    page.select_option("select[name=agent]", "researcher")
    page.fill("input[name=version]", "2")
    page.click(".filters button[type=submit]")
    expect(page.locator(".page-head .lead")).to_contain_text("共 12 次运行")
    links = page.locator("a.run-link")
    expect(links).to_have_count(10)
    first = links.all_inner_texts()
    screenshot(page, "runs-search")

    make_run(app, alice, two, "北辰医药 revenue 新来的", 0)  # arrives between the two pages
    page.click("a[rel=next]")
    expect(links).to_have_count(2)
    second = links.all_inner_texts()
    assert sorted(first + second) == sorted(run.pk for run in wanted)
    expect(page.locator("input[name=q]")).to_have_value("REVENUE")
    expect(page.locator("span.button.disabled")).to_have_text("下一页")
