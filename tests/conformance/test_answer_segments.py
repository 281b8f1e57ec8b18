"""The answer segments' shared cases (answer_segments.json) hold for console/detail.py, the page
without scripts; the browser SDK runs the same file (tests/js/answer_segments.test.mjs), so 运行详情
with and without scripts turn the same markers into the same source entries and claims."""

import json
from pathlib import Path

import pytest

from console.detail import Segment, answer_segments, answer_sources

CASES = json.loads((Path(__file__).parent / "answer_segments.json").read_text(encoding="utf-8"))[
    "cases"
]


def _events(case: dict) -> list[dict]:
    """The run's public events a case describes, as run_detail hands them to answer_sources."""
    started = {"agentCallId": case["rootAgentCallId"], "depth": 0}
    return [
        {"type": "agent.started", "data": started},
        *({"type": "citation.created", "data": c} for c in case["citations"].values()),
        *({"type": "citation.verified", "data": c} for c in case["citationChecks"].values()),
    ]


def _shared_form(segments: list[Segment]) -> list[dict]:
    """What both pages agree on: a marker that is no source entry is part of the text."""
    shared: list[dict] = []
    for seg in segments:
        if seg.type == "citation":
            shared.append({"type": "citation", "id": seg.citation_id, "number": seg.number})
        elif shared and shared[-1]["type"] == "text":
            shared[-1]["text"] += seg.text
        else:
            shared.append({"type": "text", "text": seg.text})
    return shared


@pytest.mark.parametrize("case", CASES, ids=[case["name"] for case in CASES])
def test_the_console_segments_each_shared_case_as_written(case):
    sources = answer_sources(_events(case))
    segments = answer_segments(
        case["text"], sources.verified_map(), settled=sources.checked or case["settled"]
    )
    assert _shared_form(segments) == case["expect"]["segments"]
    cited = [{"id": seg.citation_id, "state": seg.state} for seg in segments if seg.citation_id]
    assert cited == case["expect"]["markers"]
    for seg in segments:
        if seg.type == "citation":
            assert seg.citation == case["citations"][seg.citation_id]


def test_the_shared_cases_cover_every_claim_and_a_renumbered_source():
    states = {m["state"] for case in CASES for m in case["expect"]["markers"]}
    assert states == {"pending", "verified", "unverified"}
    assert any(
        seg["type"] == "citation" and seg["number"] > 1
        for case in CASES
        for seg in case["expect"]["segments"]
    )
