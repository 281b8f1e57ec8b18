"""运行详情 in real headless Chromium: the source dialog needs the owner's own token."""

import pytest
from playwright.sync_api import expect

from tests import factories
from tests.console.conftest import ANSWER_STEPS, screenshot

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
    page.locator("#answer .cite-chip").first.click()
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
