import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { answerSegments, contentText, splitStreaming } from "../../static/sparktide/segments.js";
import { citeId } from "./helpers/fakes.mjs";

const ROOT = "call_root";
const SUB = "call_sub";
const A = citeId("a");
const B = citeId("b");
const C = citeId("c");

function created(id, extra = {}) {
  return {
    id,
    agentCallId: ROOT,
    knowledgeId: "fund-reports",
    knowledgeVersion: "2026-10",
    documentId: "report-a",
    chunkId: `chunk-${id.slice(-3)}`,
    title: "某基金 2026 年三季度报告",
    sourceRef: { type: "document", id: "report-a", page: 1 },
    ...extra,
  };
}

const citations = { [A]: created(A), [B]: created(B), [C]: created(C, { agentCallId: SUB }) };
const checks = {
  [ROOT]: { agentCallId: ROOT, references: [{ id: A, status: "VERIFIED" }, { id: B, status: "UNVERIFIED" }] },
  [SUB]: { agentCallId: SUB, references: [{ id: C, status: "VERIFIED" }] },
};

describe("answerSegments", () => {
  test("a marker VERIFIED for the root call becomes a citation entry with its source", () => {
    const segments = answerSegments(`营收增长 [[cite:${A}]]。`, ROOT, checks, citations);
    assert.deepEqual(segments, [
      { type: "text", text: "营收增长 " },
      { type: "citation", id: A, status: "VERIFIED", citation: citations[A] },
      { type: "text", text: "。" },
    ]);
  });

  test("an UNVERIFIED marker stays literal text", () => {
    const text = `见 [[cite:${B}]] 页`;
    assert.deepEqual(answerSegments(text, ROOT, checks, citations), [{ type: "text", text }]);
  });

  test("the legacy [cite_…] marker, when verified, becomes a citation entry", () => {
    const segments = answerSegments(`数据[${A}]如上`, ROOT, checks, citations);
    assert.deepEqual(
      segments.map((s) => s.type),
      ["text", "citation", "text"],
    );
    assert.equal(segments[1].id, A);
  });

  test("a marker verified only under another agent call stays text", () => {
    const text = `子调用结论 [[cite:${C}]]`;
    assert.deepEqual(answerSegments(text, ROOT, checks, citations), [{ type: "text", text }]);
    // …and the same text does verify when that call is the root being displayed.
    assert.equal(answerSegments(text, SUB, checks, citations)[1].type, "citation");
  });

  test("an unknown ID, even well-formed, stays text", () => {
    const text = `[[cite:${citeId("zzz")}]]`;
    assert.deepEqual(answerSegments(text, ROOT, checks, citations), [{ type: "text", text }]);
  });

  test("a URI stays text, never an entry", () => {
    const text = `来源 https://example.com/${A} 以及 [[cite:https://evil.example/x]]`;
    assert.deepEqual(answerSegments(text, ROOT, checks, citations), [{ type: "text", text }]);
  });

  test("a Markdown link stays text, including one whose label looks like a verified legacy marker", () => {
    for (const text of [`[年报](http://example.com/report)`, `[${A}](https://evil.example)`]) {
      assert.deepEqual(answerSegments(text, ROOT, checks, citations), [{ type: "text", text }]);
    }
  });

  test("[[num:…]] and [[block:…]] markers stay text", () => {
    const text = "权益占比 [[num:num_aaaaaaaaaaaaaaaaaaaaaaaa]] 见 [[block:pub_aaaaaaaaaaaaaaaaaaaaaaaa]]";
    assert.deepEqual(answerSegments(text, ROOT, checks, citations), [{ type: "text", text }]);
  });

  test("before any check exists for the root call, everything is text", () => {
    const text = `增长 [[cite:${A}]] 与 [${A}]`;
    assert.deepEqual(answerSegments(text, ROOT, {}, citations), [{ type: "text", text }]);
    assert.deepEqual(answerSegments(text, ROOT, null, citations), [{ type: "text", text }]);
    assert.deepEqual(answerSegments(text, null, checks, citations), [{ type: "text", text }]);
  });

  test("a verified ID whose source was never announced (or lacks an exact version) stays text", () => {
    const text = `[[cite:${A}]]`;
    assert.deepEqual(answerSegments(text, ROOT, checks, {}), [{ type: "text", text }]);
    const legacy = { [A]: { id: A, title: "old event without version or chunk" } };
    assert.deepEqual(answerSegments(text, ROOT, checks, legacy), [{ type: "text", text }]);
  });

  test("Maps work as well as objects, and prototype keys are never sources", () => {
    const segments = answerSegments(`x [[cite:${A}]]`, ROOT, new Map(Object.entries(checks)), new Map(Object.entries(citations)));
    assert.equal(segments[1].type, "citation");
    assert.deepEqual(answerSegments("[[cite:constructor]]", "constructor", {}, {}), [
      { type: "text", text: "[[cite:constructor]]" },
    ]);
  });

  test("adjacent text is merged around unverified markers; consecutive citations stay separate", () => {
    const text = `a [[cite:${B}]] b [[cite:${A}]][${A}] c`;
    const segments = answerSegments(text, ROOT, checks, citations);
    assert.deepEqual(
      segments.map((s) => (s.type === "text" ? s.text : `<${s.id}>`)),
      [`a [[cite:${B}]] b `, `<${A}>`, `<${A}>`, " c"],
    );
  });

  test("empty text gives no segments", () => {
    assert.deepEqual(answerSegments("", ROOT, checks, citations), []);
  });
});

describe("streaming", () => {
  test("a marker split across two chunks is assembled from the accumulated body", () => {
    const chunks = ["营收增长 [[cite:ci", `te_${A.slice(5)}]]。`];
    let buffer = "";

    buffer += chunks[0];
    const first = splitStreaming(buffer);
    assert.deepEqual(first, { settled: "营收增长 ", pending: "[[cite:ci" });
    assert.deepEqual(answerSegments(buffer, ROOT, checks, citations, { streaming: true }), [
      { type: "text", text: "营收增长 " },
    ]);

    buffer += chunks[1];
    assert.deepEqual(splitStreaming(buffer), { settled: buffer, pending: "" });
    const segments = answerSegments(buffer, ROOT, checks, citations, { streaming: true });
    assert.deepEqual(
      segments.map((s) => s.type),
      ["text", "citation", "text"],
    );
    assert.equal(segments[1].id, A);

    // Segmenting chunk by chunk would have lost the citation — the reason for the rule.
    const naive = chunks.flatMap((chunk) => answerSegments(chunk, ROOT, checks, citations));
    assert.ok(naive.every((s) => s.type === "text"));
  });

  test("every unfinished marker shape is held back; finished text is not", () => {
    const pending = ["[", "[[", "[[c", "[[cite:", `[[cite:${A}`, `[[cite:${A}]`, "[cite_", `[${A}`, `[${A}]`, "[[num:num_x", "[[block:"];
    for (const tail of pending) assert.deepEqual(splitStreaming(`前文 ${tail}`), { settled: "前文 ", pending: tail }, tail);
    const settled = ["[年报](http://x)", "a [b] c", `[[cite:${A}]]`, "[[cite:a b", "[x", `[${A}] 后`];
    for (const text of settled) assert.deepEqual(splitStreaming(text), { settled: text, pending: "" }, text);
  });
});

describe("contentText", () => {
  test("reads a string or a text content object, nothing else", () => {
    assert.equal(contentText("hi"), "hi");
    assert.equal(contentText({ type: "text", text: "hi" }), "hi");
    assert.equal(contentText({ type: "table", columns: [], rows: [] }), null);
    assert.equal(contentText(null), null);
  });
});
