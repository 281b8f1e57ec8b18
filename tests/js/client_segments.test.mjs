import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, test } from "node:test";

import { answerSegments } from "../../static/sparktide/segments.js";

// The same file pins the Python client's answer_segments (tests/conformance/test_answer_segments.py).
const { cases } = JSON.parse(readFileSync(new URL("../conformance/client_segments.json", import.meta.url), "utf-8"));

describe("the SDK's answerSegments gives the hand-written segments of every shared case", () => {
  for (const c of cases) {
    test(c.name, () => {
      const segments = answerSegments(c.text, c.rootAgentCallId, c.citationChecks, c.citations, {
        streaming: c.streaming,
      });
      assert.deepEqual(
        segments.map((s) => (s.type === "text" ? { type: "text", text: s.text } : { type: s.type, id: s.id })),
        c.segments,
      );
      for (const s of segments.filter((s) => s.type === "citation")) {
        assert.equal(s.status, "VERIFIED");
        assert.deepEqual(s.citation, c.citations[s.id]);
      }
    });
  }
});
