import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { ChatSession } from "../../static/sparktide/session.js";
import { blockSourceStatus, citationState } from "../../static/sparktide/segments.js";
import { inlineText } from "../../static/sparktide/markdown.js";
import { citeId, makeSessionClient } from "./helpers/fakes.mjs";

const A = citeId("a");
const B = citeId("b");
const P1 = "pub_aaaaaaaaaaaaaaaaaaaaaaa1";
const ROOT = "call_root";

function created(id) {
  return { id, agentCallId: ROOT, knowledgeId: "fund-reports", knowledgeVersion: "2026-10", documentId: "d", chunkId: "1", title: "报告", sourceRef: { page: 1 } };
}

async function streaming() {
  const client = makeSessionClient();
  const session = new ChatSession(client);
  await session.start({ agent: "researcher", input: "营收?" });
  const stream = client.streams.at(-1);
  let seq = 0;
  const push = (type, data) => stream.push(++seq, type, data);
  push("run.started", {});
  push("agent.started", { agentCallId: ROOT, depth: 0, agent: "researcher" });
  push("citation.created", created(A));
  push("citation.created", created(B));
  return { session, push };
}

const publish = (text, sourceHint = "verified", revision = 1) => ({
  publicationId: P1,
  revision,
  deliveryOrdinal: 1,
  state: "visible",
  content: { type: "text", text },
  sourceHint,
  truncated: false,
  outcome: "COMMITTED",
});

/** The chips of a block as [id, state] in order, from the session's Markdown tree. */
function chips(session) {
  const out = [];
  const walk = (nodes) => {
    for (const node of nodes) {
      if (node.type === "citation") out.push([node.id, session.citationState(node.id).status]);
      for (const child of node.children ?? []) walk([child]);
      for (const item of node.items ?? []) walk(item.children);
    }
  };
  walk(session.markdownFor(session.getSnapshot().blocks[0]).children);
  return out;
}

describe("citation chips follow the run's final check", () => {
  test("pending while streaming, then VERIFIED or 来源未核验 once citation.verified arrives", async () => {
    const { session, push } = await streaming();
    push("answer.published", publish(`**营收** 增长 [[cite:${A}]]，另有 [[cite:${B}]]。`));
    assert.deepEqual(chips(session), [
      [A, "pending"],
      [B, "pending"],
    ]);
    assert.equal(session.blockSourceStatus(session.getSnapshot().blocks[0]), "pending");
    push("citation.verified", { agentCallId: ROOT, references: [{ id: A, status: "VERIFIED" }, { id: B, status: "UNVERIFIED" }] });
    assert.deepEqual(chips(session), [
      [A, "verified"],
      [B, "unverified"],
    ]);
    assert.equal(session.citationState(A).citation.id, A);
    assert.equal(session.blockSourceStatus(session.getSnapshot().blocks[0]), "sources_partial");
  });

  test("a cancelled run that never verified shows its markers as 来源未核验 chips", async () => {
    const { session, push } = await streaming();
    push("answer.published", publish(`营收增长 [[cite:${A}]]`));
    push("run.cancelled", { status: "CANCELLED", reason: "CANCELLED_BY_USER" });
    assert.deepEqual(chips(session), [[A, "unverified"]]);
    assert.equal(session.blockSourceStatus(session.getSnapshot().blocks[0]), "sources_unverified");
  });

  test("a check of another agent call verifies nothing at the root", async () => {
    const { session, push } = await streaming();
    push("answer.published", publish(`x [[cite:${A}]]`));
    push("citation.verified", { agentCallId: "call_sub", references: [{ id: A, status: "VERIFIED" }] });
    assert.deepEqual(chips(session), [[A, "pending"]]);
  });

  test("a verified ID the run never announced with an exact version stays unverified", () => {
    const checks = { [ROOT]: { agentCallId: ROOT, references: [{ id: A, status: "VERIFIED" }] } };
    assert.equal(citationState(A, ROOT, checks, { [A]: { id: A, knowledgeVersion: "", chunkId: "1" } }).status, "unverified");
    assert.equal(citationState(A, ROOT, checks, { [A]: created(A) }).status, "verified");
  });

  test("a streaming preview holds back a marker that is not finished yet", async () => {
    const { session, push } = await streaming();
    push("answer.preview", { candidateId: "cand_1", publicationId: P1, revision: 1, deliveryOrdinal: 1, content: { type: "text", text: `营收 [[cite:${A.slice(0, 9)}` }, sourceHint: "verified" });
    const tree = session.markdownFor(session.getSnapshot().blocks[0]);
    assert.equal(inlineText(tree.children[0].children), "营收");
  });
});

describe("a block's badge follows its receipt and the final check", () => {
  const context = (checked, settled = false) => ({
    rootAgentCallId: ROOT,
    citationChecks: checked ? { [ROOT]: { agentCallId: ROOT, references: checked } } : {},
    citations: { [A]: created(A), [B]: created(B) },
    settled,
  });
  const block = (text, sourceHint) => ({ state: "visible", sourceHint, content: { type: "text", text } });

  test("no 来源已核验 before citation.verified, whatever the receipt says", () => {
    assert.equal(blockSourceStatus(block(`[[cite:${A}]]`, "verified"), context(null)), "pending");
    assert.equal(blockSourceStatus(block(`[[cite:${A}]]`, "sources_partial"), context(null)), "pending");
  });

  test("after the check: the weaker of the receipt and the check of the block's own IDs", () => {
    const verifiedA = [{ id: A, status: "VERIFIED" }, { id: B, status: "UNVERIFIED" }];
    assert.equal(blockSourceStatus(block(`[[cite:${A}]]`, "verified"), context(verifiedA)), "verified");
    assert.equal(blockSourceStatus(block(`[[cite:${A}]] [[cite:${B}]]`, "verified"), context(verifiedA)), "sources_partial");
    assert.equal(blockSourceStatus(block(`[[cite:${B}]]`, "verified"), context(verifiedA)), "sources_unverified");
    assert.equal(blockSourceStatus(block(`[[cite:${A}]]`, "sources_partial"), context(verifiedA)), "sources_partial");
  });

  test("bad news and no news need no wait; a protected block is protected", () => {
    assert.equal(blockSourceStatus(block("x", "sources_unverified"), context(null)), "sources_unverified");
    assert.equal(blockSourceStatus(block("x", "none"), context(null)), "none");
    assert.equal(blockSourceStatus(block("x", undefined), context(null)), "unknown");
    assert.equal(blockSourceStatus({ state: "protected", content: null, sourceHint: "verified" }, context(null)), "protected");
  });

  test("a run that ended without a check leaves a verified receipt 来源未核验", () => {
    assert.equal(blockSourceStatus(block(`[[cite:${A}]]`, "verified"), context(null, true)), "sources_unverified");
  });

  test("a table's cells are checked like text", () => {
    const table = { state: "visible", sourceHint: "verified", content: { type: "table", columns: ["指标"], rows: [[`营收 [[cite:${B}]]`]] } };
    assert.equal(blockSourceStatus(table, context([{ id: B, status: "UNVERIFIED" }])), "sources_unverified");
  });
});
