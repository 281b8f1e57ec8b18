"""评测 in real headless Chromium, against daphne and a task worker: a small set is
uploaded, the evaluation runs in the background as the member whose token is pasted,
the page follows its progress, then shows its summary and a link to each run."""

import re

import pytest
from playwright.sync_api import expect

from evaluation.models import Evaluation
from runs.models import Run
from tests.console.conftest import screenshot

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser, pytest.mark.slow]

SMALL_SET = """\
name: small
questions:
  - key: growth
    question: 北辰医药三季度营收增长多少？
    expect: ["12"]
  - key: wrong
    question: 北辰医药三季度营收增长多少？
    expect: ["13"]
"""


def test_an_evaluation_of_a_small_set_shows_its_summary_and_links_its_runs(
    signed_in, app, researcher, alice, tmp_path
):
    path = tmp_path / "small.yaml"
    path.write_text(SMALL_SET, encoding="utf-8")
    page = signed_in
    page.goto("/console/apps/business/")
    page.click("nav.tabs >> text=评测")
    expect(page).to_have_url(re.compile("/console/apps/business/evaluations/$"))
    page.set_input_files("#id_set_file", str(path))
    page.select_option("#id_first", "researcher@1")
    page.fill("#id_token", alice.raw_token)
    page.click("#start-evaluation")

    expect(page).to_have_url(re.compile(r"/console/evaluations/eval_\w+/$"))
    expect(page.locator("#evaluation-status")).to_have_attribute(
        "data-status", "DONE", timeout=30_000
    )
    expect(page.locator("#evaluation-count")).to_contain_text("2 / 2")
    passed = page.locator("#evaluation-summary [data-measure=passed]")
    expect(passed).to_contain_text("50.0 % (1/2)")
    evaluation = Evaluation.objects.get()
    runs = Run.objects.filter(pk__in=evaluation.run_ids)
    assert {(r.owner, r.status) for r in runs} == {(alice, "COMPLETED")}
    row = page.locator("#evaluation-questions tr[data-key='small/wrong']")
    expect(row).to_contain_text("未通过")
    expect(row).to_contain_text("expect")
    screenshot(page, "evaluation-done")

    row.locator("a.run-link").click()
    expect(page.locator(".run-head")).to_contain_text(evaluation.results[1]["runId"])

    page.goto("/console/apps/business/evaluations/")
    listed = page.locator(f"#past-evaluations tr[data-evaluation-id='{evaluation.pk}']")
    expect(listed).to_contain_text("researcher@1")
    expect(listed).to_contain_text("50.0 % (1/2)")
