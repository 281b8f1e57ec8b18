"""运行详情 · 用其他版本重跑 in real headless Chromium: the owner's token, another published
version, the click, and the new run — which links back, and which the original lists."""

import re

import pytest
from playwright.sync_api import expect

from console.models import Rerun
from runs.models import Run
from tests import factories
from tests.console.conftest import ANSWER_STEPS, screenshot, wait_for_terminal

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser, pytest.mark.slow]


@pytest.fixture
def versions(app, knowledge):
    def version(number, **kwargs):
        return factories.make_agent(
            app.tenant,
            "researcher",
            model=factories.scripted(*ANSWER_STEPS),
            knowledge=[knowledge],
            version=number,
            **kwargs,
        )

    return {"1": version("1", pin_to=[app]), "2": version("2")}


def test_rerun_with_another_version_opens_the_new_run_of_the_owner(
    signed_in, versions, finished_run, alice
):
    run = finished_run(input="北辰医药三季度营收增长多少？")
    page = signed_in
    page.goto(f"/console/runs/{run.pk}/")
    panel = page.locator("#rerun")
    expect(panel.locator("#rerun-version")).to_have_value(str(versions["2"].pk))
    expect(panel.locator("[data-reruns]")).to_contain_text("还没有重跑。")
    panel.locator("#rerun-token").fill(alice.raw_token)
    panel.locator("#rerun-start").click()

    page.wait_for_url(lambda url: run.pk not in url)
    assert re.search(r"/console/runs/run_[a-z0-9]+/$", page.url)
    new_id = page.url.rstrip("/").rsplit("/", 1)[1]
    assert new_id != run.pk
    new = wait_for_terminal(new_id)
    assert new.owner == alice and new.agent_version == versions["2"] and new.input == run.input
    expect(page.locator("[data-rerun-of]")).to_contain_text(run.pk)
    expect(page.locator(".meta-grid")).to_contain_text("researcher@2")
    screenshot(page, "run-detail-rerun-new")

    page.locator("[data-rerun-of] a").click()
    page.wait_for_url(f"**/console/runs/{run.pk}/")
    listed = page.locator("[data-reruns]")
    expect(listed).to_contain_text(new_id)
    expect(listed).to_contain_text("@2")
    screenshot(page, "run-detail-reruns")


def test_rerun_with_a_token_not_the_owners_says_so_and_starts_nothing(
    signed_in, versions, finished_run, bob
):
    run = finished_run()
    page = signed_in
    page.goto(f"/console/runs/{run.pk}/")
    panel = page.locator("#rerun")
    panel.locator("#rerun-start").click()
    expect(panel.locator("#rerun-error")).to_have_text("请粘贴运行所有者的令牌。")
    panel.locator("#rerun-token").fill(bob.raw_token)
    panel.locator("#rerun-start").click()
    expect(panel.locator("#rerun-error")).to_contain_text("重跑只能以原运行所有者本人的身份进行")
    assert page.url.endswith(f"/console/runs/{run.pk}/")
    assert Run.objects.count() == 1 and not Rerun.objects.exists()
    screenshot(page, "run-detail-rerun-refused", full_page=False)
