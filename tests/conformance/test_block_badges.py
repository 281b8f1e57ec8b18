"""The block badge's shared cases (block_badges.json) hold for console/detail.py; the browser
SDK runs the same file (tests/js/block_badges.test.mjs), so the page without scripts and the
page with them never disagree on what a block's badge claims."""

import json
from pathlib import Path

import pytest

from console.detail import block_badge

CASES = json.loads((Path(__file__).parent / "block_badges.json").read_text(encoding="utf-8"))[
    "cases"
]


@pytest.mark.parametrize("case", CASES, ids=[case["name"] for case in CASES])
def test_the_server_badge_of_each_shared_case(case):
    badge = block_badge(
        case["state"],
        case["sourceHint"],
        case["cited"],
        checked=case["checked"],
        settled=case["settled"],
    )
    assert badge == case["expected"]
