"""The marker grammar's shared cases (markers.json) hold for citations/markers.py; the browser
SDK runs the same file (tests/js/markers.test.mjs), so both sides agree on what a marker is."""

import json
from pathlib import Path

import pytest

from citations.markers import ANY_MARKER, parse_markers

CASES = json.loads((Path(__file__).parent / "markers.json").read_text(encoding="utf-8"))["cases"]


@pytest.mark.parametrize("case", CASES, ids=[case["name"] for case in CASES])
def test_the_server_grammar_finds_exactly_the_markers_of_each_shared_case(case):
    markers = parse_markers(case["text"])
    assert [m.group(0) for m in ANY_MARKER.finditer(case["text"])] == case["markers"]
    assert list(markers.cited_ids) == case["citedIds"]
    assert list(markers.numeric_handles) == case["numericHandles"]
    assert list(markers.block_ids) == case["blockIds"]


def test_the_shared_cases_cover_every_kind_of_marker_and_the_python_whitespace_edge():
    kinds = {
        kind for case in CASES for kind in ("citedIds", "numericHandles", "blockIds") if case[kind]
    }
    assert kinds == {"citedIds", "numericHandles", "blockIds"}
    assert any("\u001c" in case["text"] and not case["markers"] for case in CASES)
    assert any("\ufeff" in case["text"] and case["markers"] for case in CASES)
