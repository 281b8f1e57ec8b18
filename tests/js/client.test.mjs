import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { SparkTideClient, SparkTideError } from "../../static/sparktide/client.js";
import { citeId, jsonResponse, makeFetch, problem } from "./helpers/fakes.mjs";

function clientWith(fetch, extra = {}) {
  return new SparkTideClient({ baseUrl: "https://st.example/", appId: "business", token: "st_alice", fetch, ...extra });
}

describe("REST calls", () => {
  test("createRun POSTs JSON with the bearer token and returns the 201 body", async () => {
    const created = { id: "run_1", status: "QUEUED", agent: "researcher", agentVersion: "1", createdAt: "2026-10-01T00:00:00Z" };
    const { fetch, calls } = makeFetch(() => jsonResponse(201, created));
    const run = await clientWith(fetch).createRun({ agent: "researcher", input: "营收?", sessionId: "s-1" });

    assert.deepEqual(run, created);
    assert.equal(calls.length, 1);
    assert.equal(calls[0].method, "POST");
    assert.equal(calls[0].url, "https://st.example/v1/apps/business/runs");
    assert.equal(calls[0].init.headers.Authorization, "Bearer st_alice");
    assert.equal(calls[0].init.headers["Content-Type"], "application/json");
    assert.deepEqual(JSON.parse(calls[0].init.body), { agent: "researcher", input: "营收?", sessionId: "s-1" });
  });

  test("a token function is asked on every request, so a refreshed token is used", async () => {
    let current = "st_one";
    const { fetch, calls } = makeFetch(() => jsonResponse(200, { id: "run_1" }));
    const client = clientWith(fetch, { token: async () => current });
    await client.getRun("run_1");
    current = "st_two";
    await client.getRun("run_1");
    assert.deepEqual(
      calls.map((c) => c.init.headers.Authorization),
      ["Bearer st_one", "Bearer st_two"],
    );
  });

  test("without a token no Authorization header is sent (cookie-authenticated console)", async () => {
    const { fetch, calls } = makeFetch(() => jsonResponse(200, {}));
    await clientWith(fetch, { token: undefined, headers: { "X-CSRFToken": "csrf" } }).getAnswer("run_1");
    assert.equal(calls[0].init.headers.Authorization, undefined);
    assert.equal(calls[0].init.headers["X-CSRFToken"], "csrf");
    assert.equal(calls[0].init.credentials, "same-origin");
  });

  test("getEvents passes after and limit as query parameters", async () => {
    const page = { events: [{ seq: 3, type: "run.started", at: "x", data: {} }], nextAfter: 3, terminal: false };
    const { fetch, calls } = makeFetch(() => jsonResponse(200, page));
    assert.deepEqual(await clientWith(fetch).getEvents("run_1", { after: 2, limit: 50 }), page);
    assert.equal(calls[0].path, "/v1/apps/business/runs/run_1/events");
    assert.equal(calls[0].query.get("after"), "2");
    assert.equal(calls[0].query.get("limit"), "50");
  });

  test("path segments are encoded: an ID can never escape its path segment", async () => {
    const { fetch, calls } = makeFetch(() => jsonResponse(200, {}));
    await clientWith(fetch).getRun("../../admin?x=1");
    assert.equal(calls[0].url, "https://st.example/v1/apps/business/runs/..%2F..%2Fadmin%3Fx%3D1");
  });

  test("cancelRun answers 202 without a body → null", async () => {
    const { fetch, calls } = makeFetch(() => new Response(null, { status: 202 }));
    assert.equal(await clientWith(fetch).cancelRun("run_1"), null);
    assert.equal(calls[0].method, "POST");
    assert.equal(calls[0].path, "/v1/apps/business/runs/run_1/cancel");
  });

  test("a problem+json error becomes a SparkTideError with code, status and detail", async () => {
    const { fetch } = makeFetch(() => problem(410, "EVENT_CURSOR_EXPIRED", "Beyond retention."));
    await assert.rejects(clientWith(fetch).getEvents("run_1", { after: 1 }), (error) => {
      assert.ok(error instanceof SparkTideError);
      assert.equal(error.code, "EVENT_CURSOR_EXPIRED");
      assert.equal(error.status, 410);
      assert.equal(error.detail, "Beyond retention.");
      return true;
    });
  });

  test("an error page that is not a problem document becomes HTTP_ERROR with the status", async () => {
    const { fetch } = makeFetch(() => new Response("<html>bad gateway</html>", { status: 502, statusText: "Bad Gateway" }));
    await assert.rejects(clientWith(fetch).getRun("run_1"), { name: "SparkTideError", code: "HTTP_ERROR", status: 502 });
  });

  test("a network failure becomes NETWORK_ERROR with status 0", async () => {
    const fetch = async () => {
      throw new TypeError("fetch failed");
    };
    await assert.rejects(clientWith(fetch).getRun("run_1"), { code: "NETWORK_ERROR", status: 0 });
  });
});

describe("previewCitation", () => {
  const GOOD = citeId("k7x2");

  test("malformed IDs are refused with CITATION_NOT_AVAILABLE before any request", async () => {
    const { fetch, calls } = makeFetch(() => jsonResponse(200, {}));
    const client = clientWith(fetch);
    const malformed = [
      "cite_",
      "cite_short",
      "https://x",
      "cite_../x",
      `cite_${"A".repeat(24)}`,
      GOOD.toUpperCase(),
      `${GOOD}0`,
      `${GOOD}/../x`,
      ` ${GOOD}`,
      "",
      undefined,
      null,
      42,
    ];
    for (const id of malformed) {
      await assert.rejects(client.previewCitation("run_1", id), (error) => {
        assert.ok(error instanceof SparkTideError, String(id));
        assert.equal(error.code, "CITATION_NOT_AVAILABLE");
        assert.equal(error.status, 0);
        return true;
      });
    }
    assert.equal(calls.length, 0);
  });

  test("a well-formed ID GETs the preview with the bearer token, no-store and the signal", async () => {
    const excerpt = { id: GOOD, content: "第一页正文……", scope: "RETRIEVED_EXCERPT" };
    const { fetch, calls } = makeFetch(() => jsonResponse(200, excerpt));
    const controller = new AbortController();
    assert.deepEqual(await clientWith(fetch).previewCitation("run_1", GOOD, { signal: controller.signal }), excerpt);
    assert.equal(calls[0].method, "GET");
    assert.equal(calls[0].url, `https://st.example/v1/apps/business/runs/run_1/citations/${GOOD}/preview`);
    assert.equal(calls[0].init.headers.Authorization, "Bearer st_alice");
    assert.equal(calls[0].init.cache, "no-store");
    assert.equal(calls[0].init.signal, controller.signal);
  });

  test("AbortController aborts the call and the AbortError is not swallowed", async () => {
    let started;
    const reached = new Promise((resolve) => (started = resolve));
    // Like the real fetch: pending until answered, rejects with an AbortError on abort.
    const fetch = (url, init) =>
      new Promise((resolve, reject) => {
        started();
        init.signal.addEventListener("abort", () => reject(new DOMException("The operation was aborted.", "AbortError")));
      });
    const controller = new AbortController();
    const pending = clientWith(fetch).previewCitation("run_1", GOOD, { signal: controller.signal });
    await reached;
    controller.abort();
    await assert.rejects(pending, (error) => {
      assert.equal(error.name, "AbortError");
      assert.ok(!(error instanceof SparkTideError));
      return true;
    });
  });

  test("an already-aborted signal rejects with the abort reason, not a SparkTideError", async () => {
    const fetch = async (url, init) => {
      init.signal.throwIfAborted();
      return jsonResponse(200, {});
    };
    const controller = new AbortController();
    controller.abort();
    await assert.rejects(clientWith(fetch).previewCitation("run_1", GOOD, { signal: controller.signal }), { name: "AbortError" });
  });

  test("each documented refusal surfaces as its code; there is no retry", async () => {
    const cases = [
      [404, "RESOURCE_NOT_FOUND"],
      [404, "CITATION_NOT_AVAILABLE"],
      [409, "CITATION_SOURCE_CHANGED"],
      [403, "KNOWLEDGE_ACCESS_DENIED"],
      [503, "CAPABILITY_UNAVAILABLE"],
      [408, "CITATION_PREVIEW_TIMED_OUT"],
    ];
    for (const [status, code] of cases) {
      const { fetch, calls } = makeFetch(() => problem(status, code, "refused"));
      await assert.rejects(clientWith(fetch).previewCitation("run_1", GOOD), { code, status, detail: "refused" });
      assert.equal(calls.length, 1, code);
    }
  });
});
