"""The Python client's answer helpers agree with the browser SDK case by case: answer_segments
runs the hand-written cases of client_segments.json (tests/js/client_segments.test.mjs runs them
against answerSegments), verified_citations the trusted-source cases (trusted_sources.json, also
run against citations/trusted.py and trustedSources), and its marker grammar the markers.json
cases (also run against citations/markers.py and markers.js)."""

import json
from pathlib import Path

import pytest
from sparktide_client import RunCitations, answer_segments, find_markers, verified_citations

HERE = Path(__file__).parent


def cases(name: str) -> list[dict]:
    return json.loads((HERE / name).read_text(encoding="utf-8"))["cases"]


SEGMENTS, TRUSTED, MARKERS = (
    cases("client_segments.json"),
    cases("trusted_sources.json"),
    cases("markers.json"),
)


def shape(segments: list[dict]) -> list[dict]:
    return [
        {"type": "text", "text": s["text"]}
        if s["type"] == "text"
        else {"type": s["type"], "id": s["id"]}
        for s in segments
    ]


@pytest.mark.parametrize("case", SEGMENTS, ids=[case["name"] for case in SEGMENTS])
def test_answer_segments_gives_the_hand_written_segments_of_each_shared_case(case):
    segments = answer_segments(
        case["text"],
        case["rootAgentCallId"],
        case["citationChecks"],
        case["citations"],
        streaming=case["streaming"],
    )
    assert shape(segments) == case["segments"]
    for segment in segments:
        if segment["type"] == "citation":
            assert segment["status"] == "VERIFIED"
            assert segment["citation"] == case["citations"][segment["id"]]


@pytest.mark.parametrize("case", TRUSTED, ids=[case["name"] for case in TRUSTED])
def test_verified_citations_lists_exactly_the_trusted_sources_of_each_shared_case(case):
    sources = verified_citations(case["rootAgentCallId"], case["citationChecks"], case["citations"])
    assert [source["id"] for source in sources] == case["verified"]
    for source in sources:
        assert source["citation"] == case["citations"][source["id"]]


@pytest.mark.parametrize("case", MARKERS, ids=[case["name"] for case in MARKERS])
def test_the_clients_marker_grammar_finds_exactly_the_markers_of_each_shared_case(case):
    markers = find_markers(case["text"])
    assert [marker["raw"] for marker in markers] == case["markers"]
    distinct = list(dict.fromkeys(m["value"] for m in markers if m["kind"] == "cite"))
    assert distinct == case["citedIds"]
    for kind, expected in (("num", "numericHandles"), ("block", "blockIds")):
        assert (
            list(dict.fromkeys(m["value"] for m in markers if m["kind"] == kind)) == case[expected]
        )


def test_the_shared_segment_cases_cover_streaming_forgery_and_every_trust_condition():
    names = " ".join(case["name"] for case in SEGMENTS)
    for needle in ("streaming", "forged", "another agent call", "chunk", "Markdown link", "legacy"):
        assert needle in names, needle
    kinds = {s["type"] for case in SEGMENTS for s in case["segments"]}
    assert kinds == {"text", "citation"}


def test_run_citations_collects_the_root_call_its_checks_and_the_announced_sources():
    case = next(c for c in SEGMENTS if c["name"].startswith("a marker VERIFIED for the root"))
    cited = next(iter(case["citations"]))
    events = [
        {"seq": 1, "type": "agent.started", "data": {"agentCallId": "call_root", "depth": 0}},
        {"seq": 2, "type": "agent.started", "data": {"agentCallId": "call_sub", "depth": 1}},
        *(
            {"seq": 3 + i, "type": "citation.created", "data": data}
            for i, data in enumerate(case["citations"].values())
        ),
        *(
            {"seq": 10 + i, "type": "citation.verified", "data": data}
            for i, data in enumerate(case["citationChecks"].values())
        ),
    ]
    run = RunCitations(events)
    assert run.root_agent_call_id == "call_root"
    assert shape(run.segments(case["text"])) == case["segments"]
    assert [source["id"] for source in run.verified()] == [cited]
    # Before the root's check arrives nothing is verified, whatever the sub-call's check says.
    early = RunCitations(events[:-2] + events[-1:])
    assert early.verified() == []
    assert shape(early.segments(case["text"])) == [{"type": "text", "text": case["text"]}]
