"""One citation ID grammar (foundation/ids.py), and every client's pre-request check agreeing
with it case by case, read from the shared cases file (the browser SDK's and the Java client's
checks read the same file: tests/js/citation_ids.test.mjs, clients/java CitationIdsTest)."""

import json
from pathlib import Path

import pytest
import sparktide_client

from foundation.ids import is_citation_id, new_citation_id

CASES = json.loads((Path(__file__).with_name("citation_ids.json")).read_text())
ALL = [(case["id"], True, case["why"]) for case in CASES["valid"]] + [
    (case["id"], False, case["why"]) for case in CASES["invalid"]
]


@pytest.mark.parametrize(("value", "valid", "why"), ALL, ids=[why for _, _, why in ALL])
def test_the_server_grammar_decides_each_case(value, valid, why):
    assert is_citation_id(value) is valid


@pytest.mark.parametrize(("value", "valid", "why"), ALL, ids=[why for _, _, why in ALL])
def test_the_python_client_agrees_with_the_server_on_each_case(value, valid, why):
    assert sparktide_client.is_citation_id(value) is valid


def test_issued_ids_are_well_formed_for_both():
    for _ in range(200):
        issued = new_citation_id()
        assert is_citation_id(issued) and sparktide_client.is_citation_id(issued)


def test_non_strings_are_never_citation_ids():
    for value in (None, 42, b"cite_" + b"a" * 24, ["cite_" + "a" * 24]):
        assert not is_citation_id(value)
        assert not sparktide_client.is_citation_id(value)
