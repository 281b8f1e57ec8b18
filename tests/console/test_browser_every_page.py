"""Every console page, as a person sees it in Chromium, in Chinese and in English: one clock
(every time on the display zone, which the page names) and no raw code in the text a person
reads — statuses, reasons, outcomes and entries are words, their codes only on hover
(``title``). JSON shown as data (``<pre>``, ``<code>``) is data, not a label. Each page is
also saved as a screenshot under test-artifacts/console/ for a reviewer."""

import re

import pytest

from runs.models import Run
from tests import factories
from tests.console.conftest import ANSWER_STEPS, screenshot

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser, pytest.mark.slow]

# A code as the platform writes one: upper-case words joined by "_" (CANCELLED_BY_USER,
# WORKER_LOST), or one of the statuses and outcomes it stores as a bare word.
CODE = re.compile(r"\b[A-Z][A-Z0-9]+(?:_[A-Z0-9]+)+\b")
BARE_CODES = {
    *Run.Status.values,
    "COMMITTED",
    "UNCHANGED",
    "PREVIEWED",
    "REJECTED",
    "SAVE_UNKNOWN",
    "PUBLISHED",
    "DRAFT",
    "RETIRED",
    "REVOKED",
    "VERIFIED",
    "UNVERIFIED",
    "ACTIVE",
    "SUSPENDED",
    "DISABLED",
}

# The text a person reads: the page without scripts, styles and data shown as data.
READ_TEXT = """() => {
    const body = document.body.cloneNode(true);
    body.querySelectorAll("script, style, pre, code, template, [hidden]").forEach((n) => n.remove());
    return body.innerText;
}"""


@pytest.fixture
def pages(app, knowledge, finished_run):
    factories.make_agent(
        app.tenant,
        "researcher",
        model=factories.scripted(*ANSWER_STEPS),
        knowledge=[knowledge],
        pin_to=[app],
    )
    run = finished_run()
    slug = app.slug
    return {
        "home": "/console/",
        "runs": "/console/runs/",
        "app-runs": f"/console/apps/{slug}/runs/",
        "app": f"/console/apps/{slug}/",
        "debug": f"/console/apps/{slug}/debug/",
        "evaluations": f"/console/apps/{slug}/evaluations/",
        "run-detail": f"/console/runs/{run.pk}/",
    }


def raw_codes(text: str) -> list[str]:
    words = set(re.findall(r"\b[A-Z][A-Z0-9_]+\b", text))
    return sorted({*CODE.findall(text), *(words & BARE_CODES)})


@pytest.mark.parametrize("language", ["zh-hans", "en"])
def test_every_console_page_shows_one_clock_and_no_raw_code(signed_in, pages, language):
    page = signed_in
    if language == "en":
        page.goto("/console/")
        page.click("button.lang[value=en]")
        page.wait_for_load_state()
    for name, path in pages.items():
        page.goto(path)
        page.wait_for_load_state("networkidle")
        screenshot(page, f"every-page-{name}-{language}")
        text = page.evaluate(READ_TEXT)
        assert raw_codes(text) == [], f"{path} ({language}) shows raw codes"
        times = page.locator("time[data-time]")
        if times.count():
            # One clock: every time on the page is on the display zone the page names.
            assert page.locator("time[data-time]:not([title^='Asia/Shanghai'])").count() == 0, path
            assert "Asia/Shanghai" in text, f"{path} does not name its clock"
        assert page.evaluate("document.documentElement.lang").lower().startswith(language[:2])
