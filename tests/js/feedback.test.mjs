import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { SparkTideClient, SparkTideError } from "../../static/sparktide/client.js";
import { jsonResponse, makeFetch, problem } from "./helpers/fakes.mjs";

function clientWith(fetch) {
  return new SparkTideClient({ baseUrl: "https://st.example/", appId: "business", token: "st_alice", fetch });
}

const GIVEN = {
  rating: "down",
  note: "第二段的数字不对",
  block: "pub_2",
  createdAt: "2026-10-01T00:00:00Z",
  updatedAt: "2026-10-01T00:00:00Z",
};

describe("feedback", () => {
  test("sendFeedback PUTs rating, note and block as JSON with the bearer token", async () => {
    const { fetch, calls } = makeFetch(() => jsonResponse(200, GIVEN));
    const answer = await clientWith(fetch).sendFeedback("run_1", { rating: "down", note: "第二段的数字不对", block: "pub_2" });
    assert.deepEqual(answer, GIVEN);
    assert.equal(calls.length, 1);
    assert.equal(calls[0].method, "PUT");
    assert.equal(calls[0].url, "https://st.example/v1/apps/business/runs/run_1/feedback");
    assert.equal(calls[0].init.headers.Authorization, "Bearer st_alice");
    assert.equal(calls[0].init.headers["Content-Type"], "application/json");
    assert.deepEqual(JSON.parse(calls[0].init.body), { rating: "down", note: "第二段的数字不对", block: "pub_2" });
  });

  test("sendFeedback on the whole run sends no block and no note when none is given", async () => {
    const { fetch, calls } = makeFetch(() => jsonResponse(200, { ...GIVEN, rating: "up", note: "", block: null }));
    await clientWith(fetch).sendFeedback("run_1", { rating: "up" });
    assert.deepEqual(JSON.parse(calls[0].init.body), { rating: "up" });
  });

  test("listFeedback GETs the run's feedback", async () => {
    const { fetch, calls } = makeFetch(() => jsonResponse(200, { feedback: [GIVEN] }));
    assert.deepEqual(await clientWith(fetch).listFeedback("run_1"), { feedback: [GIVEN] });
    assert.equal(calls[0].method, "GET");
    assert.equal(calls[0].path, "/v1/apps/business/runs/run_1/feedback");
  });

  test("a refused feedback rejects with the problem's code, status and detail", async () => {
    const { fetch } = makeFetch(() => problem(400, "INVALID_REQUEST", "block: 此运行中没有该回答块。"));
    await assert.rejects(clientWith(fetch).sendFeedback("run_1", { rating: "up", block: "pub_x" }), (error) => {
      assert.ok(error instanceof SparkTideError);
      assert.equal(error.code, "INVALID_REQUEST");
      assert.equal(error.status, 400);
      assert.equal(error.detail, "block: 此运行中没有该回答块。");
      return true;
    });
  });

  test("the run ID stays one path segment", async () => {
    const { fetch, calls } = makeFetch(() => jsonResponse(200, { feedback: [] }));
    await clientWith(fetch).listFeedback("../x");
    assert.equal(calls[0].path, "/v1/apps/business/runs/..%2Fx/feedback");
  });
});
