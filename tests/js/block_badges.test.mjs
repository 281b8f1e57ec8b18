import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, test } from "node:test";

import { blockSourceStatus } from "../../static/sparktide/segments.js";

const { cases } = JSON.parse(readFileSync(new URL("../conformance/block_badges.json", import.meta.url), "utf-8"));

const ROOT = "call_root";
const idOf = (i) => `cite_${String(i).padStart(24, "0")}`;

/** The block, check and announcements a case describes: one marker per cited ID. */
function contextOf(c) {
  const ids = c.cited.map((_, i) => idOf(i));
  const content = { type: "text", text: ids.map((id) => `要点 [[cite:${id}]]`).join("\n") || "要点" };
  const citations = Object.fromEntries(
    ids.map((id) => [
      id,
      { id, agentCallId: ROOT, knowledgeId: "kn_1", knowledgeVersion: "2026-10", documentId: "doc_1", chunkId: "chk_1", title: "报告", sourceRef: { type: "MANAGED", id: "doc_1" } },
    ]),
  );
  const references = ids.map((id, i) => ({ id, status: c.cited[i] ? "VERIFIED" : "UNVERIFIED" }));
  const citationChecks = c.checked ? { [ROOT]: { agentCallId: ROOT, references } } : {};
  return { block: { state: c.state, sourceHint: c.sourceHint ?? undefined, content }, context: { rootAgentCallId: ROOT, citationChecks, citations, settled: c.settled } };
}

describe("the SDK's block badge agrees with console/detail.py on every shared case", () => {
  for (const c of cases) {
    test(c.name, () => {
      const { block, context } = contextOf(c);
      assert.equal(blockSourceStatus(block, context), c.expected);
    });
  }
});
