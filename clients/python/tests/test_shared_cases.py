"""The client's pure helpers against the repository's shared conformance cases (the same files
the server's pytest and the browser SDK's node tests read): the citation ID grammar, the marker
grammar, answer_segments and verified_citations. Standard library only (unittest), so they run
in a bare venv of any supported Python: ``python -m unittest discover -s clients/python/tests``."""

import json
import unittest
from pathlib import Path

from sparktide_client import answer_segments, find_markers, is_citation_id, verified_citations

CONFORMANCE = Path(__file__).resolve().parents[3] / "tests" / "conformance"


def cases(name):
    return json.loads((CONFORMANCE / name).read_text(encoding="utf-8"))


def shape(segments):
    return [
        {"type": "text", "text": s["text"]}
        if s["type"] == "text"
        else {"type": s["type"], "id": s["id"]}
        for s in segments
    ]


class SharedCases(unittest.TestCase):
    def test_citation_ids(self):
        data = cases("citation_ids.json")
        self.assertTrue(data["valid"] and data["invalid"])
        for case in data["valid"]:
            with self.subTest(case["why"]):
                self.assertTrue(is_citation_id(case["id"]))
        for case in data["invalid"]:
            with self.subTest(case["why"]):
                self.assertFalse(is_citation_id(case["id"]))

    def test_markers(self):
        for case in cases("markers.json")["cases"]:
            with self.subTest(case["name"]):
                markers = find_markers(case["text"])
                self.assertEqual([m["raw"] for m in markers], case["markers"])
                cited = list(dict.fromkeys(m["value"] for m in markers if m["kind"] == "cite"))
                self.assertEqual(cited, case["citedIds"])

    def test_answer_segments(self):
        all_cases = cases("client_segments.json")["cases"]
        self.assertGreater(len(all_cases), 20)
        for case in all_cases:
            with self.subTest(case["name"]):
                segments = answer_segments(
                    case["text"],
                    case["rootAgentCallId"],
                    case["citationChecks"],
                    case["citations"],
                    streaming=case["streaming"],
                )
                self.assertEqual(shape(segments), case["segments"])
                for segment in segments:
                    if segment["type"] == "citation":
                        self.assertEqual(segment["citation"], case["citations"][segment["id"]])

    def test_verified_citations(self):
        for case in cases("trusted_sources.json")["cases"]:
            with self.subTest(case["name"]):
                sources = verified_citations(
                    case["rootAgentCallId"], case["citationChecks"], case["citations"]
                )
                self.assertEqual([s["id"] for s in sources], case["verified"])


if __name__ == "__main__":
    unittest.main()
