import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, test } from "node:test";

import { findMarkers } from "../../static/sparktide/markers.js";
import { answerSegments, citationState, trustedSources } from "../../static/sparktide/segments.js";

const { cases } = JSON.parse(readFileSync(new URL("../conformance/answer_segments.json", import.meta.url), "utf-8"));

describe("the SDK's answer segments agree with console/detail.py on every shared case", () => {
  for (const c of cases) {
    test(c.name, () => {
      const { rootAgentCallId, citationChecks, citations } = c;
      // The 回答来源区 numbers the sources; a page shows a chip with that number (static/console/debug.js).
      const numbers = new Map(trustedSources(rootAgentCallId, citationChecks, citations).verified.map((s, i) => [s.id, i + 1]));
      const segments = answerSegments(c.text, rootAgentCallId, citationChecks, citations);
      assert.deepEqual(
        segments.map((s) => (s.type === "citation" ? { type: "citation", id: s.id, number: numbers.get(s.id) } : s)),
        c.expect.segments,
      );
      for (const s of segments) if (s.type === "citation") assert.deepEqual(s.citation, citations[s.id]);
      const markers = findMarkers(c.text)
        .filter((m) => m.kind === "cite")
        .map((m) => ({ id: m.value, state: citationState(m.value, rootAgentCallId, citationChecks, citations, { settled: c.settled }).status }));
      assert.deepEqual(markers, c.expect.markers);
    });
  }
});
