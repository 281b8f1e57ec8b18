import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { SparkTideClient } from "../../static/sparktide/client.js";
import { ChatSession } from "../../static/sparktide/session.js";
import { SparkTideError } from "../../static/sparktide/errors.js";
import { citeId, makeFetch, makeSessionClient, makeWebSocket } from "./helpers/fakes.mjs";

const P1 = "pub_aaaaaaaaaaaaaaaaaaaaaaa1";
const P2 = "pub_aaaaaaaaaaaaaaaaaaaaaaa2";
const text = (t) => ({ type: "text", text: t });

function published(publicationId, revision, deliveryOrdinal, body, extra = {}) {
  return {
    publicationId,
    revision,
    deliveryOrdinal,
    state: "visible",
    content: text(body),
    sourceHint: "verified",
    truncated: false,
    outcome: "COMMITTED",
    ...extra,
  };
}

/** A session following a freshly started run, and that run's scripted stream. */
async function started() {
  const client = makeSessionClient();
  const session = new ChatSession(client);
  await session.start({ agent: "researcher", input: "营收?", sessionId: "biz-1" });
  const stream = client.streams.at(-1);
  let seq = 0;
  const push = (type, data) => stream.push(++seq, type, data);
  return { client, session, stream, push };
}

const bodies = (session) => session.getSnapshot().blocks.map((b) => [b.publicationId, b.revision, b.content?.text ?? null, b.preview]);

describe("ChatSession: store contract", () => {
  test("a new idle snapshot, stable identity until a change, frozen", () => {
    const session = new ChatSession(makeSessionClient());
    const first = session.getSnapshot();
    assert.equal(first.status, "idle");
    assert.deepEqual(first.blocks, []);
    assert.equal(session.getSnapshot(), first);
    assert.ok(Object.isFrozen(first) && Object.isFrozen(first.blocks));
    assert.throws(() => {
      first.status = "running";
    }, TypeError);
  });

  test("subscribe notifies on every change with a new snapshot; unsubscribe stops it", async () => {
    const { session, push } = await started();
    const seen = [];
    const unsubscribe = session.subscribe(() => seen.push(session.getSnapshot()));
    push("run.started", {});
    push("agent.started", { agentCallId: "call_root", depth: 0, agent: "researcher" });
    unsubscribe();
    push("run.completed", { status: "COMPLETED" });
    assert.equal(seen.length, 2);
    assert.notEqual(seen[0], seen[1]);
    assert.equal(seen[1].rootAgentCallId, "call_root");
    assert.equal(session.getSnapshot().status, "completed");
  });
});

describe("ChatSession: answer blocks", () => {
  test("a preview shows as a temporary block, and the commit replaces it with its own source status", async () => {
    const { session, push } = await started();
    push("answer.preview", { candidateId: "cand_1", publicationId: P1, revision: 1, deliveryOrdinal: 1, content: text("草稿"), sourceHint: "none" });
    assert.deepEqual(bodies(session), [[P1, 1, "草稿", true]]);
    push("answer.published", published(P1, 1, 1, "草稿"));
    assert.deepEqual(bodies(session), [[P1, 1, "草稿", false]]);
    assert.equal(session.getSnapshot().blocks[0].sourceHint, "verified");
  });

  test("a preview known only by its candidate ID is replaced by the commit in its slot", async () => {
    const { session, push } = await started();
    push("answer.preview", { candidateId: "cand_1", revision: 1, deliveryOrdinal: 1, content: text("草稿"), sourceHint: "none" });
    assert.equal(session.getSnapshot().blocks[0].candidateId, "cand_1");
    push("answer.published", published(P1, 1, 1, "定稿"));
    assert.deepEqual(bodies(session), [[P1, 1, "定稿", false]]);
  });

  test("a newer revision replaces the older one in place, in delivery order", async () => {
    const { session, push } = await started();
    push("answer.published", published(P1, 1, 1, "第一段"));
    push("answer.published", published(P2, 1, 2, "第二段"));
    push("answer.published", published(P1, 2, 1, "第一段（修订）"));
    assert.deepEqual(bodies(session), [
      [P1, 2, "第一段（修订）", false],
      [P2, 1, "第二段", false],
    ]);
  });

  test("blocks are ordered by deliveryOrdinal, not arrival", async () => {
    const { session, push } = await started();
    push("answer.published", published(P2, 1, 2, "二"));
    push("answer.published", published(P1, 1, 1, "一"));
    assert.deepEqual(
      session.getSnapshot().blocks.map((b) => b.publicationId),
      [P1, P2],
    );
  });

  test("an older revision never overwrites a newer one", async () => {
    const { session, push } = await started();
    push("answer.published", published(P1, 2, 1, "新"));
    push("answer.published", published(P1, 1, 1, "旧"));
    assert.deepEqual(bodies(session), [[P1, 2, "新", false]]);
    assert.equal(session.getSnapshot().error, null);
  });

  test("same publication and revision with a different body is a protocol conflict; nothing is overwritten", async () => {
    const { session, push } = await started();
    push("answer.published", published(P1, 1, 1, "原文"));
    push("answer.published", published(P1, 1, 1, "另一版本"));
    const snapshot = session.getSnapshot();
    assert.equal(snapshot.status, "error");
    assert.equal(snapshot.error.code, "PROTOCOL_CONFLICT");
    assert.deepEqual(bodies(session), [[P1, 1, "原文", false]]);
    push("run.completed", { status: "COMPLETED" });
    assert.equal(session.getSnapshot().status, "error", "the conflict stays visible after the run ends");
  });

  test("the same revision and body again (replay / UNCHANGED) is not a conflict", async () => {
    const { session, push } = await started();
    push("answer.published", published(P1, 1, 1, "原文"));
    push("answer.published", published(P1, 1, 1, "原文", { outcome: "UNCHANGED" }));
    assert.equal(session.getSnapshot().error, null);
    assert.equal(session.getSnapshot().status, "running");
  });

  test("a newer preview shows over an older commit (temporarily); a rejection drops it again", async () => {
    const { session, push } = await started();
    push("answer.published", published(P1, 1, 1, "已保存"));
    push("answer.published", published(P2, 1, 2, "第二段"));
    push("answer.preview", { candidateId: "cand_2", publicationId: P1, revision: 2, content: text("修改中"), sourceHint: "verified" });
    assert.deepEqual(bodies(session)[0], [P1, 2, "修改中", true]);
    push("answer.rejected", { candidateId: "cand_2", publicationId: P1, code: "REVISION_QUOTA_EXCEEDED", effect: "modify" });
    assert.deepEqual(bodies(session), [
      [P1, 1, "已保存", false],
      [P2, 1, "第二段", false],
    ]);
    assert.equal(session.getSnapshot().rejections.length, 1);
    assert.equal(session.getSnapshot().rejections[0].code, "REVISION_QUOTA_EXCEEDED");
  });

  test("a preview of an already committed revision is ignored (the receipt wins)", async () => {
    const { session, push } = await started();
    push("answer.published", published(P1, 1, 1, "已保存"));
    push("answer.preview", { candidateId: "cand_1", publicationId: P1, revision: 1, content: text("旧草稿"), sourceHint: "none" });
    assert.deepEqual(bodies(session), [[P1, 1, "已保存", false]]);
  });

  test("a protected block carries no content", async () => {
    const { session, push } = await started();
    push("answer.published", { publicationId: P1, revision: 1, deliveryOrdinal: 1, state: "protected", content: text("x"), sourceHint: "unknown", truncated: false });
    const [block] = session.getSnapshot().blocks;
    assert.equal(block.state, "protected");
    assert.equal(block.content, null);
    assert.equal(session.segmentsFor(block), null);
  });

  test("the terminal event sets the status and removes previews that were never saved", async () => {
    const { session, push } = await started();
    push("answer.published", published(P1, 1, 1, "已保存"));
    push("answer.preview", { candidateId: "cand_9", revision: 1, content: text("未保存"), sourceHint: "none" });
    push("run.partial", { status: "PARTIAL", reason: "model failed" });
    const snapshot = session.getSnapshot();
    assert.equal(snapshot.status, "partial");
    assert.equal(snapshot.reason, "model failed");
    assert.deepEqual(bodies(session), [[P1, 1, "已保存", false]]);
  });

  for (const [type, status] of [
    ["run.completed", "completed"],
    ["run.failed", "failed"],
    ["run.cancelled", "cancelled"],
  ]) {
    test(`${type} sets status ${status}`, async () => {
      const { session, push } = await started();
      push(type, { status: status.toUpperCase() });
      assert.equal(session.getSnapshot().status, status);
    });
  }
});

describe("ChatSession: citations", () => {
  const A = citeId("a");

  test("root call, citations and checks feed segmentsFor", async () => {
    const { session, push } = await started();
    push("agent.started", { agentCallId: "call_sub", depth: 1, parentAgentCallId: "call_root", agent: "helper" });
    push("agent.started", { agentCallId: "call_root", depth: 0, agent: "researcher" });
    push("citation.created", { id: A, agentCallId: "call_root", knowledgeId: "k", knowledgeVersion: "2026-10", documentId: "d", chunkId: "c1", title: "t", sourceRef: { type: "document", id: "d" } });
    push("answer.published", published(P1, 1, 1, `增长 [[cite:${A}]]`));
    const before = session.segmentsFor(session.getSnapshot().blocks[0]);
    assert.deepEqual(before, [{ type: "text", text: `增长 [[cite:${A}]]` }], "plain text before verification");

    push("citation.verified", { agentCallId: "call_root", references: [{ id: A, status: "VERIFIED" }] });
    const snapshot = session.getSnapshot();
    assert.equal(snapshot.rootAgentCallId, "call_root");
    assert.equal(snapshot.citations[A].knowledgeVersion, "2026-10");
    assert.deepEqual(
      session.segmentsFor(snapshot.blocks[0]).map((s) => s.type),
      ["text", "citation"],
    );
  });

  test("a new turn resets citations, checks, root and blocks, keeps the business session ID, and ignores the old stream", async () => {
    const { client, session, stream, push } = await started();
    push("agent.started", { agentCallId: "call_root", depth: 0 });
    push("citation.created", { id: A, knowledgeVersion: "v", chunkId: "c" });
    push("citation.verified", { agentCallId: "call_root", references: [{ id: A, status: "VERIFIED" }] });
    push("answer.published", published(P1, 1, 1, "上一轮"));
    push("answer.rejected", { candidateId: "cand_x", code: "X", effect: "create" });

    await session.start({ agent: "researcher", input: "下一问" });
    const snapshot = session.getSnapshot();
    assert.equal(stream.closed, true);
    assert.equal(snapshot.runId, "run_2");
    assert.equal(snapshot.status, "running");
    assert.equal(snapshot.rootAgentCallId, null);
    assert.deepEqual(snapshot.citations, {});
    assert.deepEqual(snapshot.citationChecks, {});
    assert.deepEqual(snapshot.blocks, []);
    assert.deepEqual(snapshot.rejections, []);
    assert.equal(snapshot.lastSeq, 0);
    assert.equal(snapshot.sessionId, "biz-1");
    assert.equal(client.calls.filter((c) => c.op === "createRun")[1].args.sessionId, "biz-1");

    stream.push(99, "citation.created", { id: A, knowledgeVersion: "v", chunkId: "c" }); // late, old turn
    assert.deepEqual(session.getSnapshot().citations, {});
  });
});

describe("ChatSession: resume and failures", () => {
  test("resume re-reads the run's events from seq 0 without creating a run", () => {
    const client = makeSessionClient();
    const session = new ChatSession(client);
    session.resume("run_old");
    assert.deepEqual(client.calls, [{ op: "events", runId: "run_old", after: 0 }]);
    client.streams[0].push(1, "agent.started", { agentCallId: "call_root", depth: 0 });
    client.streams[0].push(2, "answer.published", published(P1, 1, 1, "历史回答"));
    client.streams[0].push(3, "run.completed", { status: "COMPLETED" });
    const snapshot = session.getSnapshot();
    assert.equal(snapshot.runId, "run_old");
    assert.equal(snapshot.status, "completed");
    assert.deepEqual(bodies(session), [[P1, 1, "历史回答", false]]);
  });

  test("resume over the real client and WebSocket sends no POST /runs, only a ticket request", async () => {
    const { fetch, calls } = makeFetch();
    const { WebSocket, sockets } = makeWebSocket((socket) => {
      socket.open();
      socket.event(1, "run.started");
      socket.event(2, "answer.published", published(P1, 1, 1, "历史"));
      socket.event(3, "run.completed", { status: "COMPLETED" });
      socket.serverClose(1000);
    });
    const client = new SparkTideClient({ baseUrl: "https://st.example", appId: "business", token: "t", fetch, WebSocket });
    const session = new ChatSession(client);
    const done = new Promise((resolve) => session.subscribe(() => session.getSnapshot().status === "completed" && resolve()));
    session.resume("run_old");
    await done;
    assert.deepEqual(
      calls.map((c) => `${c.method} ${c.path}`),
      ["POST /v1/apps/business/runs/run_old/events/ticket"],
    );
    assert.equal(sockets[0].query.get("after"), "0");
    assert.deepEqual(bodies(session), [[P1, 1, "历史", false]]);
  });

  test("a stream that gives up puts the session in error with the code", async () => {
    const { session, stream } = await started();
    stream.options.onError(new SparkTideError({ code: "EVENT_CURSOR_EXPIRED", status: 4410, detail: "old" }));
    assert.equal(session.getSnapshot().status, "error");
    assert.deepEqual(session.getSnapshot().error, { code: "EVENT_CURSOR_EXPIRED", detail: "old" });
  });

  test("a refused createRun rejects and is recorded in the snapshot", async () => {
    const client = makeSessionClient({
      createRun: async () => {
        throw new SparkTideError({ code: "AGENT_NOT_AVAILABLE", status: 409, detail: "not pinned" });
      },
    });
    const session = new ChatSession(client);
    await assert.rejects(session.start({ agent: "x", input: "y" }), { code: "AGENT_NOT_AVAILABLE" });
    assert.equal(session.getSnapshot().status, "error");
    assert.equal(session.getSnapshot().error.code, "AGENT_NOT_AVAILABLE");
    assert.equal(client.streams.length, 0);
  });

  test("close() stops reading without cancelling; cancel() asks the server", async () => {
    const { client, session, stream } = await started();
    session.close();
    assert.equal(stream.closed, true);
    assert.equal(client.calls.some((c) => c.op === "cancelRun"), false);
    await session.cancel();
    assert.deepEqual(client.calls.at(-1), { op: "cancelRun", runId: "run_1" });
  });

  test("ackRendered forwards a rendered ack to the stream", async () => {
    const { session, stream } = await started();
    assert.equal(session.ackRendered(4), true);
    assert.deepEqual(stream.acks, [[4, "rendered"]]);
  });
});

describe("ChatSession: receipts and unknown saves", () => {
  test("a receipt naming its candidate replaces that preview exactly, even with a different body", async () => {
    const { session, push } = await started();
    push("answer.preview", { candidateId: "cand_1", revision: 1, content: text("draft"), sourceHint: "none" });
    push("answer.published", published(P1, 1, 1, "saved", { candidateId: "cand_1" }));
    assert.deepEqual(bodies(session), [[P1, 1, "saved", false]]);
  });

  test("answer.save_unknown drops the preview without recording a rejection", async () => {
    const { session, push } = await started();
    push("answer.preview", { candidateId: "cand_1", revision: 1, content: text("draft"), sourceHint: "none" });
    push("answer.save_unknown", { candidateId: "cand_1", code: "SAVE_OUTCOME_UNKNOWN", effect: "create" });
    assert.deepEqual(bodies(session), []);
    assert.equal(session.getSnapshot().rejections.length, 0);
  });
});

describe("ChatSession: the live text stream (answer.stream)", () => {
  const delta = (streamId, offset, d, extra = {}) => ({ agentCallId: "call_root", streamId, step: 1, state: "streaming", offset, delta: d, ...extra });

  test("streamed text is shown as plain text before answer.published, then replaced by it", async () => {
    const { session, stream, push } = await started();
    push("agent.started", { agentCallId: "call_root", depth: 0, agent: "researcher" });
    assert.equal(session.getSnapshot().text, null);
    stream.options.onStream({ type: "answer.stream", data: delta("stm_1_1", 0, "营收增长") });
    stream.options.onStream({ type: "answer.stream", data: delta("stm_1_1", 4, " [[cite:cite_abc]] 了") });
    assert.equal(session.getSnapshot().text, "营收增长 [[cite:cite_abc]] 了");
    assert.deepEqual(session.getSnapshot().blocks, []);
    // Markers in a stream are literal text: never a citation, even a well-formed one.
    assert.deepEqual(
      session.streamSegments().map((s) => s.type),
      ["text"],
    );
    assert.equal(session.streamSegments()[0].text, "营收增长 [[cite:cite_abc]] 了");

    push("answer.published", published(P1, 1, 1, "营收增长了"));
    push("answer.stream", { agentCallId: "call_root", streamId: "stm_1_1", step: 1, state: "closed", offset: 22, reason: "committed" });
    assert.equal(session.getSnapshot().text, null);
    assert.deepEqual(session.getSnapshot().streaming, []);
    assert.deepEqual(bodies(session), [[P1, 1, "营收增长了", false]]);
    // A late delta of a closed stream never brings the text back.
    stream.options.onStream({ type: "answer.stream", data: delta("stm_1_1", 22, "迟到") });
    assert.equal(session.getSnapshot().text, null);
  });

  test("an unfinished trailing marker is held back (pending), never shown half", async () => {
    const { session, stream, push } = await started();
    push("agent.started", { agentCallId: "call_root", depth: 0, agent: "researcher" });
    stream.options.onStream({ type: "answer.stream", data: delta("stm_1_1", 0, "增长 [[cite:ci") });
    assert.equal(session.getSnapshot().text, "增长 [[cite:ci");
    assert.deepEqual(session.streamSegments(), [{ type: "text", text: "增长 " }]);
  });

  test("a snapshot then overlapping deltas: no duplicates, offsets in code points; a gap is ignored", async () => {
    const { session, stream, push } = await started();
    push("agent.started", { agentCallId: "call_root", depth: 0, agent: "researcher" });
    stream.options.onStream({ type: "answer.stream", data: delta("stm_1_1", 0, "😀ab", { snapshot: true }) });
    stream.options.onStream({ type: "answer.stream", data: delta("stm_1_1", 2, "bc") }); // overlaps "b"
    assert.equal(session.getSnapshot().text, "😀abc");
    stream.options.onStream({ type: "answer.stream", data: delta("stm_1_1", 9, "gap") });
    assert.equal(session.getSnapshot().text, "😀abc");
  });

  test("the run's end clears every stream; a rejection's close clears it too", async () => {
    const { session, stream, push } = await started();
    push("agent.started", { agentCallId: "call_root", depth: 0, agent: "researcher" });
    stream.options.onStream({ type: "answer.stream", data: delta("stm_1_1", 0, "被拒的话") });
    push("answer.rejected", { candidateId: "cand_x", code: "SOURCE_NOT_AUTHORIZED", effect: "create" });
    push("answer.stream", { agentCallId: "call_root", streamId: "stm_1_1", step: 1, state: "closed", offset: 4, reason: "rejected" });
    assert.equal(session.getSnapshot().text, null);
    stream.options.onStream({ type: "answer.stream", data: delta("stm_1_2", 0, "下一轮") });
    assert.equal(session.getSnapshot().text, "下一轮");
    push("run.failed", { status: "FAILED", reason: "PROVIDER_FAILED" });
    assert.equal(session.getSnapshot().text, null);
  });
});
