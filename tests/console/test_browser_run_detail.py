"""运行详情 in real headless Chromium: the source dialog needs the owner's own token."""

import re
from datetime import datetime
from zoneinfo import ZoneInfo

import pytest
from playwright.sync_api import expect

from tests import factories
from tests.console.conftest import ANSWER_STEPS, FORGED_ID, screenshot

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser, pytest.mark.slow]


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


def test_run_detail_refuses_a_preview_without_owner_credentials(signed_in, run):
    """The admin's own session is not enough: the dialog asks for the owner's token and no
    request leaves the page."""
    page = signed_in
    previews = []
    page.on(
        "request",
        lambda request: previews.append(request.url) if "/citations/" in request.url else None,
    )
    page.goto(f"/console/runs/{run.pk}/")
    expect(page.locator(".run-head")).to_contain_text(run.pk)
    page.locator("#sources [data-action=preview]").first.click()
    dialog = page.locator("#source-dialog")
    expect(dialog.locator("[data-role=need-token]")).to_be_visible()
    expect(dialog.locator("[data-role=need-token]")).to_contain_text("需要运行所有者的令牌")
    expect(dialog.locator("[data-role=token-form]")).to_be_visible()
    expect(dialog.locator("[data-role=excerpt-box]")).to_be_hidden()
    page.wait_for_timeout(300)
    assert previews == []


def test_run_detail_previews_with_the_owners_token_entered_by_hand(signed_in, run, alice):
    page = signed_in
    page.goto(f"/console/runs/{run.pk}/")
    page.locator("#sources [data-action=preview]").first.click()
    dialog = page.locator("#source-dialog")
    dialog.locator("[data-role=token-input]").fill(alice.raw_token)
    dialog.locator("[data-role=token-form] button[type=submit]").click()
    expect(dialog.locator("[data-role=excerpt]")).to_contain_text("北辰医药2026年三季度营收增长12%")
    expect(dialog.locator("[data-role=token-state]")).to_be_visible()
    expect(dialog.locator("[data-role=token-input]")).to_have_value("")
    screenshot(page, "run-detail-source-dialog", full_page=False)
    # Closing clears the excerpt; the token stays for this page only, so the next click works.
    dialog.locator(".dialog-foot [data-action=close]").click()
    expect(dialog.locator("[data-role=excerpt]")).to_have_text("")
    page.locator("#answer .cite-chip[data-state=verified]").first.click()
    expect(dialog.locator("[data-role=excerpt]")).to_contain_text("北辰医药2026年三季度营收增长12%")


def test_run_detail_shows_no_permission_for_someone_elses_token(signed_in, run, bob):
    """Another member's token gets the ownership 404, shown as 无权查看 — never an excerpt."""
    page = signed_in
    page.goto(f"/console/runs/{run.pk}/")
    page.locator("#sources [data-action=preview]").first.click()
    dialog = page.locator("#source-dialog")
    dialog.locator("[data-role=token-input]").fill(bob.raw_token)
    dialog.locator("[data-role=token-form] button[type=submit]").click()
    expect(dialog.locator("[data-role=error]")).to_have_attribute("data-code", "RESOURCE_NOT_FOUND")
    expect(dialog.locator("[data-role=error]")).to_contain_text("无权查看")
    expect(dialog.locator("[data-role=excerpt-box]")).to_be_hidden()
    # The refused token is forgotten: nothing says it is "in use", and another can be entered.
    expect(dialog.locator("[data-role=token-state]")).to_be_hidden()
    expect(dialog).not_to_contain_text("正在使用所有者令牌")
    expect(dialog.locator("[data-role=token-form]")).to_be_visible()
    expect(dialog.locator("[data-role=need-token]")).to_contain_text("该令牌未被接受")
    screenshot(page, "run-detail-token-refused", full_page=False)
    dialog.locator("[data-action=reload]").click()
    expect(dialog.locator("[data-role=error]")).to_be_hidden()  # no request without a token
    expect(dialog.locator("[data-role=token-form]")).to_be_visible()


def test_run_detail_a_token_refused_then_the_owners_token_shows_the_excerpt(
    signed_in, run, alice, bob
):
    page = signed_in
    page.goto(f"/console/runs/{run.pk}/")
    page.locator("#sources [data-action=preview]").first.click()
    dialog = page.locator("#source-dialog")
    dialog.locator("[data-role=token-input]").fill(bob.raw_token)
    dialog.locator("[data-role=token-form] button[type=submit]").click()
    expect(dialog.locator("[data-role=error]")).to_have_attribute("data-code", "RESOURCE_NOT_FOUND")
    dialog.locator("[data-role=token-input]").fill(alice.raw_token)
    dialog.locator("[data-role=token-form] button[type=submit]").click()
    expect(dialog.locator("[data-role=excerpt]")).to_contain_text("北辰医药2026年三季度营收增长12%")
    expect(dialog.locator("[data-role=error]")).to_be_hidden()
    expect(dialog.locator("[data-role=token-state]")).to_contain_text("正在使用所有者令牌")
    # Page and paragraph where the cited text begins (the server's location).
    expect(dialog.locator("[data-role=location]")).to_have_text(
        re.compile(r"^第 1 页 · 第 \d+ 段$")
    )


MARKDOWN_STEPS = (
    {"search": "营收", "topK": 2},
    {
        "answerPart": "### 要点\n\n1. **营收**同比增长 12% [[cite:{{c1}}]]\n2. 研发投入增加\n\n"
        f"传闻 [[cite:{FORGED_ID}]]，见 [链接](javascript:alert(1))。"
    },
)


def test_run_detail_renders_answers_as_markdown_with_chips_and_badges_that_agree(
    signed_in, app, knowledge, finished_run
):
    factories.make_agent(
        app.tenant,
        "researcher",
        model=factories.scripted(*MARKDOWN_STEPS),
        knowledge=[knowledge],
        pin_to=[app],
    )
    run = finished_run()
    page = signed_in
    page.goto(f"/console/runs/{run.pk}/")
    answer = page.locator("#answer article .block-body .answer-text").first
    expect(answer.locator(".md-heading")).to_have_text("要点")
    expect(answer.locator("ol.md-list > li")).to_have_count(2)
    expect(answer.locator("strong")).to_have_text("营收")
    expect(answer.locator("button.cite-chip[data-state=verified]")).to_have_text("1")
    unverified = answer.locator(f".cite-chip[data-citation-id='{FORGED_ID}']")
    expect(unverified).to_have_attribute("data-state", "unverified")
    expect(unverified).to_have_text("来源未核验")
    expect(answer).to_contain_text("链接 (javascript:alert(1))")
    expect(page.locator("#answer")).not_to_contain_text("[[cite:")
    expect(page.locator("#answer")).not_to_contain_text("**")
    assert page.locator("#answer a, #answer img, #answer script").count() == 0
    # One verified and one unverified citation: partial, as the 回答来源区 lists them.
    hint = page.locator("#answer article > header [data-role=hint]").first
    expect(hint).to_have_attribute("data-status", "sources_partial")
    expect(page.locator("#sources .source[data-citation-id]")).to_have_count(1)
    expect(page.locator("#sources .source-unverified")).to_have_count(1)
    screenshot(page, "run-detail-markdown")


def test_run_detail_shows_times_in_the_display_time_zone_with_its_label(signed_in, run):
    page = signed_in
    page.goto(f"/console/runs/{run.pk}/")
    expect(page.locator("#time-zone")).to_have_text("时间按 Asia/Shanghai (GMT+8) 显示")
    created = run.created_at.astimezone(ZoneInfo("Asia/Shanghai")).strftime("%Y-%m-%d %H:%M:%S")
    expect(page.locator(".meta-grid time").first).to_have_text(created)
    at = page.locator("#events time").first.get_attribute("datetime")
    clock = datetime.fromisoformat(at).astimezone(ZoneInfo("Asia/Shanghai")).strftime("%H:%M:%S")
    expect(page.locator("#events time").first).to_contain_text(clock)
    # Every time on the page (events, journal, revisions, attempts) is in the same zone.
    assert page.locator("time[data-time]").count() > 10
    assert page.locator("time[data-time]:not([title^='Asia/Shanghai'])").count() == 0


def test_run_detail_dialog_highlights_what_the_block_cited_at_its_page_and_paragraph(
    signed_in, run, alice
):
    """The answer's chip opens the excerpt with the cited figure and clause marked, the page
    and paragraph up front and the UTF-16 offsets only in the details line."""
    page = signed_in
    page.goto(f"/console/runs/{run.pk}/")
    page.locator("#answer .cite-chip[data-state=verified]").first.click()
    dialog = page.locator("#source-dialog")
    dialog.locator("[data-role=token-input]").fill(alice.raw_token)
    dialog.locator("[data-role=token-form] button[type=submit]").click()
    excerpt = dialog.locator("[data-role=excerpt]")
    expect(excerpt).to_contain_text("北辰医药2026年三季度营收增长12%")
    marks = excerpt.locator("mark.cited")
    expect(marks.first).to_be_visible()
    marked = " ".join(marks.all_inner_texts())
    # block #1 wrote "同比增长 12%，主要来自创新药 [[cite:…]]": its figure and clause are marked
    assert "12%" in marked and "主要来自创新药" in marked, marked
    assert "研发投入" not in marked  # the excerpt's other sentence was not what it cited
    expect(dialog.locator("[data-role=excerpt-caption]")).to_contain_text(
        "高亮部分为回答引用的内容"
    )
    expect(dialog.locator("[data-role=location]")).to_have_text("第 1 页 · 第 1 段")
    expect(dialog.locator("[data-role=location]")).not_to_contain_text("位置")
    expect(dialog.locator("[data-role=details]")).to_contain_text(
        re.compile(r"UTF-16 位置 \d+–\d+")
    )
    screenshot(page, "run-detail-dialog-highlight", full_page=False)
