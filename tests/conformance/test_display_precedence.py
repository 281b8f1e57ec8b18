"""Display precedence's shared cases (display_precedence.json) are what publication/precedence.py
generates, so the file cannot drift from the Python rules; the browser SDK's ChatSession runs the
same file (tests/js/display_precedence.test.mjs), so the SDK and the server's rules agree."""

import json

import pytest

from publication.precedence import CASES_PATH, fold_events, render_cases

CASES = json.loads(CASES_PATH.read_text(encoding="utf-8"))["cases"]


def test_the_committed_cases_are_exactly_what_the_python_rules_generate():
    assert CASES_PATH.read_text(encoding="utf-8") == render_cases(), (
        "regenerate with: python -m publication.precedence --cases"
    )


@pytest.mark.parametrize("case", CASES, ids=[case["name"] for case in CASES])
def test_the_python_rules_fold_each_shared_case_to_its_expected_display(case):
    assert fold_events(case["events"]).as_dict() == case["expect"]


def test_the_cases_cover_every_display_and_a_conflict():
    displays = {case["expect"]["display"] for case in CASES}
    assert displays == {"shown", "withheld", "none"}
    assert any(case["expect"]["conflict"] for case in CASES)
    assert any(case["expect"].get("temporary") for case in CASES)
