"""Feedback in the console, in real headless Chromium: given through REST with the owner's
token, shown on 运行详情 (rating, note as text, block, time in the display zone) and counted per
agent version on the runs list, in one query however many versions the page shows."""

import json
from datetime import datetime
from zoneinfo import ZoneInfo

import pytest
from django.db import connection
from django.template import Context, Template
from django.test.utils import CaptureQueriesContext
from playwright.sync_api import expect

from feedback.service import give_feedback
from publication.models import AnswerBlock
from runs.models import Run
from tests import factories
from tests.console.conftest import ANSWER_STEPS, screenshot

pytestmark = [pytest.mark.django_db(transaction=True)]

HOSTILE_NOTE = '<img src=x onerror="window.__pwned=1"><b>加粗</b> 第二段数字不对'


@pytest.fixture
def run(app, knowledge, finished_run):
    factories.make_agent(
        app.tenant,
        "researcher",
        model=factories.scripted(*ANSWER_STEPS),
        knowledge=[knowledge],
        pin_to=[app],
    )
    return finished_run()


def _put(page, run, token: str, body: dict) -> dict:
    response = page.request.put(
        f"/v1/apps/{run.app.slug}/runs/{run.pk}/feedback",
        data=json.dumps(body),
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
    )
    assert response.status == 200, response.text()
    return response.json()


@pytest.mark.browser
@pytest.mark.slow
def test_feedback_sent_through_rest_shows_on_run_detail_and_in_the_counts(signed_in, run, alice):
    page = signed_in
    blocks = list(AnswerBlock.objects.filter(run=run).order_by("delivery_ordinal"))
    assert len(blocks) >= 2
    whole = _put(page, run, alice.raw_token, {"rating": "up", "note": "引用准确"})
    on_block = _put(
        page, run, alice.raw_token, {"rating": "down", "note": HOSTILE_NOTE, "block": blocks[1].pk}
    )
    refused = page.request.put(
        f"/v1/apps/{run.app.slug}/runs/{run.pk}/feedback",
        data=json.dumps({"rating": "meh"}),
        headers={"Authorization": f"Bearer {alice.raw_token}", "Content-Type": "application/json"},
    )
    assert refused.status == 400 and refused.json()["code"] == "INVALID_REQUEST"

    page.goto(f"/console/runs/{run.pk}/")
    card = page.locator("#feedback")
    items = card.locator(".feedback-item")
    expect(items).to_have_count(2)
    first, second = items.nth(0), items.nth(1)
    expect(first).to_have_attribute("data-rating", "up")
    expect(first.locator(".feedback-rating")).to_have_text("👍 有用")
    expect(first.locator(".feedback-target")).to_have_text("整个运行")
    expect(first.locator(".feedback-note")).to_have_text("引用准确")
    expect(second).to_have_attribute("data-rating", "down")
    expect(second.locator(".feedback-rating")).to_have_text("👎 没有用")
    expect(second.locator(".feedback-target")).to_have_text(f"区块 #{blocks[1].delivery_ordinal}")
    expect(second.locator(".feedback-target a")).to_have_attribute("href", f"#block-{blocks[1].pk}")
    # The note is the owner's text, shown as text: no element is made of it.
    expect(second.locator(".feedback-note")).to_have_text(HOSTILE_NOTE)
    assert second.locator(".feedback-note img, .feedback-note b").count() == 0
    assert page.evaluate("window.__pwned") is None
    # The time is the display zone's, like every time on the page.
    shown = (
        datetime.fromisoformat(on_block["updatedAt"])
        .astimezone(ZoneInfo("Asia/Shanghai"))
        .strftime("%Y-%m-%d %H:%M:%S")
    )
    expect(second.locator("time")).to_have_text(shown)
    expect(second.locator("time")).to_have_attribute("title", "Asia/Shanghai (GMT+8)")
    assert whole["block"] is None
    card.scroll_into_view_if_needed()
    screenshot(page, "run-detail-feedback", full_page=False)

    page.goto(f"/console/apps/{run.app.slug}/runs/")
    row = page.locator("[data-feedback-counts] tr[data-agent-version='researcher@1']")
    expect(row.locator("[data-up]")).to_have_text("1")
    expect(row.locator("[data-down]")).to_have_text("1")


@pytest.mark.browser
@pytest.mark.slow
def test_another_members_token_cannot_give_feedback_and_run_detail_shows_none(signed_in, run, bob):
    page = signed_in
    response = page.request.put(
        f"/v1/apps/{run.app.slug}/runs/{run.pk}/feedback",
        data=json.dumps({"rating": "down", "note": "不是我的运行"}),
        headers={"Authorization": f"Bearer {bob.raw_token}", "Content-Type": "application/json"},
    )
    assert (response.status, response.json()["code"]) == (404, "RESOURCE_NOT_FOUND")
    page.goto(f"/console/runs/{run.pk}/")
    expect(page.locator("#feedback")).to_contain_text("还没有反馈。")
    expect(page.locator("#feedback .feedback-item")).to_have_count(0)


def test_the_counts_cost_one_query_however_many_versions_the_page_shows(app, alice, staff_client):
    runs = [
        factories.scripted_run(app, alice, [{"answer": "好。"}], key=f"agent{i}") for i in range(4)
    ]
    for index, item in enumerate(runs):
        give_feedback(item, owner=alice, rating="up" if index % 2 else "down")
    template = Template("{% include 'console/_feedback_counts.html' with runs=runs %}")

    def render(count: int) -> tuple[str, int]:
        listed = list(
            Run.objects.select_related("agent_version__agent").filter(
                pk__in=[r.pk for r in runs[:count]]
            )
        )
        with CaptureQueriesContext(connection) as queries:
            html = template.render(Context({"runs": listed}))
        return html, len(queries)

    one, one_queries = render(1)
    four, four_queries = render(4)
    assert one_queries == four_queries == 1
    assert four.count("data-agent-version=") == 4
    assert 'data-agent-version="agent0@1"' in four and 'data-agent-version="agent0@1"' in one
    # agent1 and agent3 got 👍, agent0 and agent2 👎.
    assert '<td class="num" data-up>1</td><td class="num" data-down>0</td>' in four
    staff_page = staff_client.get(f"/console/apps/{app.slug}/runs/")
    assert staff_page.status_code == 200
    assert staff_page.content.decode().count("data-agent-version=") == 4
