import assert from "node:assert/strict";
import { describe, test } from "node:test";

import * as sdk from "../../static/sparktide/index.js";
import { useChatSession as useReact } from "../../static/sparktide/react.js";
import { ChatSession } from "../../static/sparktide/session.js";
import { useChatSession as useVue } from "../../static/sparktide/vue.js";
import { makeSessionClient } from "./helpers/fakes.mjs";

describe("framework bindings", () => {
  test("React: useSyncExternalStore gets the session's stable subscribe/getSnapshot", () => {
    const session = new ChatSession(makeSessionClient());
    const calls = [];
    const React = {
      useSyncExternalStore: (subscribe, getSnapshot, getServerSnapshot) => {
        calls.push([subscribe, getSnapshot, getServerSnapshot]);
        return getSnapshot();
      },
    };
    assert.equal(useReact(session, React), session.getSnapshot());
    useReact(session, React);
    assert.equal(calls[0][0], session.subscribe);
    assert.equal(calls[0][1], session.getSnapshot);
    assert.equal(calls[1][0], calls[0][0], "identity is stable across renders");
    assert.throws(() => useReact(session, {}), TypeError);
  });

  test("Vue: a shallow ref that follows snapshots and unsubscribes on unmount", async () => {
    const client = makeSessionClient();
    const session = new ChatSession(client);
    const unmounted = [];
    const state = useVue(session, { shallowRef: (value) => ({ value }), onUnmounted: (fn) => unmounted.push(fn) });
    assert.equal(state.value.status, "idle");

    session.resume("run_1");
    assert.equal(state.value, session.getSnapshot());
    client.streams[0].push(1, "run.completed", { status: "COMPLETED" });
    assert.equal(state.value.status, "completed");

    unmounted.forEach((fn) => fn());
    session.resume("run_2");
    assert.equal(state.value.runId, "run_1", "no updates after unmount");
  });

  test("index re-exports the public API", () => {
    for (const name of ["SparkTideClient", "SparkTideError", "ChatSession", "answerSegments", "splitStreaming", "useReactChatSession", "useVueChatSession"]) {
      assert.equal(typeof sdk[name], "function", name);
    }
  });
});
