import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { SparkTideClient, SparkTideError } from "../../static/sparktide/client.js";
import { backoffDelay } from "../../static/sparktide/stream.js";
import { makeFetch, makeWebSocket, problem, waitFor } from "./helpers/fakes.mjs";

/**
 * Open a stream against scripted servers. `serve(socket, index)` plays connection `index`.
 * Returns the handle plus everything the callbacks saw.
 */
function follow(serve, { fetchHandler, baseUrl = "https://st.example", ...options } = {}) {
  const { fetch, calls, ticketRequests } = makeFetch(fetchHandler);
  const { WebSocket, sockets } = makeWebSocket(serve);
  const client = new SparkTideClient({ baseUrl, appId: "business", token: "st_alice", fetch, WebSocket });
  const seen = { events: [], errors: [], closes: [] };
  const handle = client.events("run_1", {
    retryDelay: () => 0,
    onEvent: (event) => seen.events.push(event),
    onError: (error) => seen.errors.push(error),
    onClose: (info) => seen.closes.push(info),
    ...options,
  });
  return { handle, seen, sockets, calls, ticketRequests };
}

const seqs = (seen) => seen.events.map((e) => e.seq);

describe("events(): connecting", () => {
  test("gets a ticket, then opens wss://<host>/ws/v1/apps/{app}/runs/{run}/events?after=&ticket=", async () => {
    const { handle, sockets, ticketRequests } = follow((socket) => {
      socket.open();
      socket.event(1, "run.completed", { status: "COMPLETED" });
      socket.serverClose(1000);
    });
    await handle.finished;
    assert.equal(ticketRequests().length, 1);
    assert.equal(ticketRequests()[0].init.headers.Authorization, "Bearer st_alice");
    const url = new URL(sockets[0].url);
    assert.equal(url.protocol, "wss:");
    assert.equal(url.host, "st.example");
    assert.equal(url.pathname, "/ws/v1/apps/business/runs/run_1/events");
    assert.equal(url.searchParams.get("after"), "0");
    assert.equal(url.searchParams.get("ticket"), "t1");
  });

  test("http baseUrl gives ws://, and `after` starts the cursor", async () => {
    const { handle, sockets } = follow(
      (socket) => {
        socket.open();
        socket.serverClose(1000);
      },
      { baseUrl: "http://127.0.0.1:8000", after: 41 },
    );
    await handle.finished;
    assert.ok(sockets[0].url.startsWith("ws://127.0.0.1:8000/ws/v1/apps/business/runs/run_1/events?"));
    assert.equal(sockets[0].query.get("after"), "41");
    assert.equal(handle.lastSeq, 41);
  });

  test("cookie mode (ticket: false) requests no ticket and sends none", async () => {
    const { handle, sockets, calls } = follow(
      (socket) => {
        socket.open();
        socket.serverClose(1000);
      },
      { ticket: false },
    );
    await handle.finished;
    assert.equal(calls.length, 0);
    assert.equal(sockets[0].query.has("ticket"), false);
  });

  test("a refused ticket request gives up without opening a socket", async () => {
    const { handle, seen, sockets } = follow(() => {}, {
      fetchHandler: () => problem(404, "RESOURCE_NOT_FOUND"),
    });
    const info = await handle.finished;
    assert.equal(sockets.length, 0);
    assert.equal(seen.errors[0].code, "RESOURCE_NOT_FOUND");
    assert.equal(info.error, seen.errors[0]);
  });
});

describe("events(): delivery", () => {
  test("after a dropped connection it resumes from after=<lastSeq> with a fresh ticket", async () => {
    const { handle, seen, sockets, ticketRequests } = follow((socket, index) => {
      socket.open();
      if (index === 0) {
        socket.event(1, "run.started");
        socket.event(2, "agent.started", { agentCallId: "c1", depth: 0 });
        socket.drop();
      } else {
        socket.event(3, "answer.published");
        socket.event(4, "run.completed", { status: "COMPLETED" });
        socket.serverClose(1000);
      }
    });
    await handle.finished;
    assert.deepEqual(seqs(seen), [1, 2, 3, 4]);
    assert.equal(sockets.length, 2);
    assert.equal(sockets[1].query.get("after"), "2");
    assert.equal(sockets[1].query.get("ticket"), "t2");
    assert.equal(ticketRequests().length, 2);
  });

  test("events at or below the last seen seq are never delivered twice, and order holds", async () => {
    const { handle, seen } = follow((socket, index) => {
      socket.open();
      if (index === 0) {
        socket.event(1);
        socket.event(2);
        socket.event(2); // resent
        socket.event(1); // stale
        socket.event(3);
        socket.serverClose(1011);
      } else {
        socket.event(2); // a server replaying a little too much after reconnect
        socket.event(3);
        socket.event(4);
        socket.event(5, "run.failed", { status: "FAILED" });
        socket.serverClose(1000);
      }
    });
    await handle.finished;
    assert.deepEqual(seqs(seen), [1, 2, 3, 4, 5]);
    assert.equal(handle.lastSeq, 5);
  });

  test("every delivered event is acked 'received' once; ack(seq, 'rendered') sends a rendered ack", async () => {
    let socket0;
    const { handle, seen } = follow((socket) => {
      socket0 = socket;
      socket.open();
      socket.event(1);
      socket.event(1);
      socket.event(2);
    });
    await waitFor(() => seen.events.length === 2);
    assert.equal(handle.ack(2, "rendered"), true);
    assert.deepEqual(socket0.sent, [
      { ack: 1, kind: "received" },
      { ack: 2, kind: "received" },
      { ack: 2, kind: "rendered" },
    ]);
    assert.throws(() => handle.ack(2, "read"), TypeError);
    handle.close();
  });

  test("autoAck: false sends no acks", async () => {
    let socket0;
    const { handle, seen } = follow(
      (socket) => {
        socket0 = socket;
        socket.open();
        socket.event(1);
      },
      { autoAck: false },
    );
    await waitFor(() => seen.events.length === 1);
    assert.deepEqual(socket0.sent, []);
    handle.close();
  });

  test("frames that are not JSON or not of this protocol are ignored", async () => {
    const { handle, seen } = follow((socket) => {
      socket.open();
      socket.raw("not json");
      socket.raw(JSON.stringify({ kind: "event", seq: "7" }));
      socket.raw(JSON.stringify({ hello: 1 }));
      socket.event(1, "run.completed");
      socket.serverClose(1000);
    });
    await handle.finished;
    assert.deepEqual(seqs(seen), [1]);
  });
});

describe("events(): close codes", () => {
  test("1000 after the terminal event ends the stream without reconnecting", async () => {
    const { handle, seen, sockets } = follow((socket) => {
      socket.open();
      socket.event(1, "run.started");
      socket.event(2, "run.completed", { status: "COMPLETED" });
      socket.serverClose(1000);
    });
    const info = await handle.finished;
    assert.equal(sockets.length, 1);
    assert.deepEqual(seen.closes, [info]);
    assert.equal(info.code, 1000);
    assert.equal(info.terminal, true);
    assert.equal(seen.errors.length, 0);
    assert.equal(handle.closed, true);
  });

  test("an abnormal close after the terminal event does not reconnect either", async () => {
    const { handle, sockets } = follow((socket) => {
      socket.open();
      socket.event(1, "run.cancelled", { status: "CANCELLED" });
      socket.drop();
    });
    const info = await handle.finished;
    assert.equal(sockets.length, 1);
    assert.equal(info.terminal, true);
  });

  test("4410 gives up with EVENT_CURSOR_EXPIRED", async () => {
    const { handle, seen, sockets } = follow(
      (socket) => {
        socket.open();
        socket.errorFrame("EVENT_CURSOR_EXPIRED", "Beyond retention.");
        socket.serverClose(4410);
      },
      { after: 3 },
    );
    const info = await handle.finished;
    assert.equal(sockets.length, 1);
    assert.equal(seen.errors.length, 1);
    assert.ok(seen.errors[0] instanceof SparkTideError);
    assert.equal(seen.errors[0].code, "EVENT_CURSOR_EXPIRED");
    assert.equal(seen.errors[0].status, 4410);
    assert.equal(seen.errors[0].detail, "Beyond retention.");
    assert.equal(seen.closes.length, 1);
    assert.equal(info.code, 4410);
  });

  test("4404 gives up with RESOURCE_NOT_FOUND", async () => {
    const { handle, seen, sockets } = follow((socket) => {
      socket.open();
      socket.serverClose(4404);
    });
    await handle.finished;
    assert.equal(sockets.length, 1);
    assert.equal(seen.errors[0].code, "RESOURCE_NOT_FOUND");
  });

  test("4403 (origin refused) gives up", async () => {
    const { handle, seen, sockets } = follow((socket) => socket.serverClose(4403));
    await handle.finished;
    assert.equal(sockets.length, 1);
    assert.equal(seen.errors[0].code, "ORIGIN_NOT_ALLOWED");
  });

  test("4401 earns exactly one fresh ticket, then gives up", async () => {
    const { handle, seen, sockets, ticketRequests } = follow((socket) => {
      socket.errorFrame("TICKET_INVALID", "Unknown or used ticket.");
      socket.serverClose(4401);
    });
    await handle.finished;
    assert.equal(sockets.length, 2);
    assert.deepEqual(
      sockets.map((s) => s.query.get("ticket")),
      ["t1", "t2"],
    );
    assert.equal(ticketRequests().length, 2);
    assert.equal(seen.errors[0].code, "TICKET_INVALID");
    assert.equal(seen.errors[0].status, 4401);
  });

  test("4401 once, then a working fresh ticket, carries on", async () => {
    const { handle, seen, sockets } = follow((socket, index) => {
      if (index === 0) return socket.serverClose(4401);
      socket.open();
      socket.event(1, "run.completed");
      socket.serverClose(1000);
    });
    await handle.finished;
    assert.equal(sockets.length, 2);
    assert.deepEqual(seqs(seen), [1]);
    assert.equal(seen.errors.length, 0);
  });

  test("4408 reconnects at once from the cursor, without waiting for backoff", async () => {
    const { handle, seen, sockets } = follow(
      (socket, index) => {
        socket.open();
        if (index === 0) {
          socket.event(1);
          socket.event(2);
          socket.serverClose(4408);
        } else {
          socket.event(3, "run.partial");
          socket.serverClose(1000);
        }
      },
      { retryDelay: () => 60_000 },
    );
    await handle.finished;
    assert.equal(sockets[1].query.get("after"), "2");
    assert.deepEqual(seqs(seen), [1, 2, 3]);
  });

  for (const code of [4503, 4500]) {
    test(`${code} (a fault of the server) reconnects with backoff and resumes from the cursor`, async () => {
      const delays = [];
      const { handle, seen, sockets } = follow(
        (socket, index) => {
          socket.open();
          if (index === 0) {
            socket.event(1);
            socket.event(2);
            socket.errorFrame(code === 4503 ? "DATABASE_UNAVAILABLE" : "INTERNAL_ERROR", "try again");
            socket.serverClose(code);
          } else {
            socket.event(2); // a replay at the cursor is dropped
            socket.event(3, "run.completed");
            socket.serverClose(1000);
          }
        },
        {
          retryDelay: (attempt) => {
            delays.push(attempt);
            return 0;
          },
        },
      );
      await handle.finished;
      assert.equal(sockets.length, 2);
      assert.equal(sockets[1].query.get("after"), "2");
      assert.deepEqual(seqs(seen), [1, 2, 3]);
      assert.deepEqual(delays, [0]); // the backoff, not the at-once path of 4408
      assert.equal(seen.errors.length, 0);
    });
  }

  test("other 4xxx closes still give up", async () => {
    const { handle, seen, sockets } = follow((socket) => {
      socket.open();
      socket.errorFrame("INVALID_REQUEST", "bad after");
      socket.serverClose(4400);
    });
    await handle.finished;
    assert.equal(sockets.length, 1);
    assert.equal(seen.errors[0].code, "INVALID_REQUEST");
  });

  test("maxRetries bounds reconnects without progress (STREAM_UNAVAILABLE)", async () => {
    const { handle, seen, sockets } = follow((socket) => socket.drop(), { maxRetries: 3 });
    await handle.finished;
    assert.equal(sockets.length, 4); // the first connection + 3 retries
    assert.equal(seen.errors[0].code, "STREAM_UNAVAILABLE");
  });

  test("a transient ticket failure (503) is retried", async () => {
    let failures = 1;
    const { handle, seen, sockets } = follow(
      (socket) => {
        socket.open();
        socket.event(1, "run.completed");
        socket.serverClose(1000);
      },
      { fetchHandler: () => (failures-- > 0 ? problem(503, "UNAVAILABLE") : undefined) },
    );
    await handle.finished;
    assert.equal(sockets.length, 1);
    assert.deepEqual(seqs(seen), [1]);
  });
});

describe("events(): closing", () => {
  test("close() disconnects, reports byClient and never reconnects", async () => {
    let socket0;
    const { handle, seen, sockets } = follow((socket) => {
      socket0 = socket;
      socket.open();
      socket.event(1);
    });
    await waitFor(() => seen.events.length === 1);
    handle.close();
    const info = await handle.finished;
    assert.equal(socket0.closedByClient, 1000);
    assert.equal(info.byClient, true);
    await new Promise((resolve) => setTimeout(resolve, 10));
    assert.equal(sockets.length, 1);
    assert.equal(seen.closes.length, 1);
  });

  test("aborting the signal closes the stream", async () => {
    const controller = new AbortController();
    const { handle, seen } = follow(
      (socket) => {
        socket.open();
        socket.event(1);
      },
      { signal: controller.signal },
    );
    await waitFor(() => seen.events.length === 1);
    controller.abort();
    assert.equal((await handle.finished).byClient, true);
  });

  test("close() while the ticket is being fetched opens no socket", async () => {
    let release;
    const gate = new Promise((resolve) => (release = resolve));
    const { fetch } = makeFetch();
    const slowFetch = async (url, init) => {
      await gate;
      init.signal?.throwIfAborted();
      return fetch(url, init);
    };
    const { WebSocket, sockets } = makeWebSocket();
    const client = new SparkTideClient({ baseUrl: "https://st.example", appId: "business", token: "t", fetch: slowFetch, WebSocket });
    const handle = client.events("run_1", {});
    handle.close();
    release();
    await handle.finished;
    await new Promise((resolve) => setTimeout(resolve, 5));
    assert.equal(sockets.length, 0);
  });
});

describe("backoffDelay", () => {
  test("starts near 250 ms, doubles, caps at 5 s, with jitter", () => {
    assert.equal(backoffDelay(0, () => 1), 250);
    assert.equal(backoffDelay(0, () => 0), 125);
    assert.equal(backoffDelay(1, () => 1), 500);
    assert.equal(backoffDelay(10, () => 1), 5000);
    assert.equal(backoffDelay(10, () => 0), 2500);
  });
});
