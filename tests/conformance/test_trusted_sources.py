"""The trusted-source rule's shared cases (trusted_sources.json) hold for citations/trusted.py;
the browser SDK runs the same file (tests/js/trusted_sources.test.mjs), so the console, the SDK
and the server agree on which cited IDs become a source entry."""

import json
from pathlib import Path

import pytest

from citations.trusted import trusted_sources

CASES = json.loads((Path(__file__).parent / "trusted_sources.json").read_text(encoding="utf-8"))[
    "cases"
]


@pytest.mark.parametrize("case", CASES, ids=[case["name"] for case in CASES])
def test_the_server_rule_trusts_exactly_the_sources_of_each_shared_case(case):
    trusted = trusted_sources(case["rootAgentCallId"], case["citationChecks"], case["citations"])
    assert trusted.checked == case["checked"]
    assert [ref_id for ref_id, _ in trusted.verified] == case["verified"]
    assert trusted.unverified == case["unverified"]
    for ref_id, citation in trusted.verified:
        assert citation == case["citations"][ref_id]
