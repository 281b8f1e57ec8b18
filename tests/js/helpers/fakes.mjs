/**
 * Test doubles for the SDK: a scripted fetch and a scripted WebSocket (Node 20 has no global
 * WebSocket). Both record what the SDK did, so tests assert on requests and frames, not timing.
 */

/** A valid, well-formed citation ID (cite_ + 24 lowercase base-36 characters). */
export function citeId(seed) {
  return `cite_${String(seed).padEnd(24, "0").slice(0, 24)}`;
}

export function jsonResponse(status, body, contentType = "application/json") {
  return new Response(body === undefined ? null : JSON.stringify(body), {
    status,
    headers: { "Content-Type": contentType },
  });
}

export function problem(status, code, detail = "") {
  return jsonResponse(status, { type: "about:blank", title: "x", status, code, detail }, "application/problem+json");
}

/**
 * fetch that records every call and answers with `handler({method, url, path, init})`.
 * By default it issues fresh tickets "t1", "t2", … for POST …/events/ticket.
 */
export function makeFetch(handler = () => undefined) {
  const calls = [];
  let tickets = 0;
  const fetch = async (url, init = {}) => {
    const parsed = new URL(url, "http://localhost");
    const request = { method: init.method ?? "GET", url, path: parsed.pathname, query: parsed.searchParams, init };
    calls.push(request);
    if (request.method === "POST" && request.path.endsWith("/events/ticket")) {
      const answer = handler(request);
      if (answer) return answer;
      tickets += 1;
      return jsonResponse(201, { ticket: `t${tickets}`, expiresAt: "2030-01-01T00:00:00Z" });
    }
    return handler(request) ?? problem(404, "RESOURCE_NOT_FOUND");
  };
  return { fetch, calls, ticketRequests: () => calls.filter((c) => c.path.endsWith("/events/ticket")) };
}

/**
 * A WebSocket class whose server side is a script: `serve(socket, index)` runs for every new
 * connection (index 0, 1, …) right after construction. Helpers on the socket play the server.
 */
export function makeWebSocket(serve = () => {}) {
  const sockets = [];
  class FakeWebSocket {
    static CONNECTING = 0;
    static OPEN = 1;
    static CLOSING = 2;
    static CLOSED = 3;

    constructor(url) {
      this.url = url;
      this.query = new URL(url).searchParams;
      this.readyState = 0;
      this.sent = [];
      this.closedByClient = null;
      this.onopen = this.onmessage = this.onclose = this.onerror = null;
      const index = sockets.length;
      sockets.push(this);
      // Like a browser: nothing happens before the constructor returns and handlers are set.
      setImmediate(() => serve(this, index));
    }

    // --- server side -------------------------------------------------------------------
    open() {
      this.readyState = 1;
      this.onopen?.({});
    }
    event(seq, type = "note", data = {}) {
      this.onmessage?.({ data: JSON.stringify({ kind: "event", seq, type, at: "2026-10-01T00:00:00Z", data }) });
    }
    errorFrame(code, detail = "") {
      this.onmessage?.({ data: JSON.stringify({ kind: "error", code, detail }) });
    }
    raw(data) {
      this.onmessage?.({ data });
    }
    serverClose(code, reason = "") {
      if (this.readyState === 3) return;
      this.readyState = 3;
      this.onclose?.({ code, reason, wasClean: code !== 1006 });
    }
    drop() {
      this.onerror?.({});
      this.serverClose(1006);
    }

    // --- client side (what the SDK calls) -------------------------------------------------
    send(data) {
      if (this.readyState !== 1) throw new Error("send on a socket that is not open");
      this.sent.push(JSON.parse(data));
    }
    close(code = 1000, reason = "") {
      if (this.readyState === 3) return;
      this.closedByClient = code;
      this.readyState = 3;
      setImmediate(() => this.onclose?.({ code, reason, wasClean: true }));
    }
  }
  return { WebSocket: FakeWebSocket, sockets };
}

/** Resolve after pending immediates/microtasks have run `times` rounds. */
export async function settle(times = 5) {
  for (let i = 0; i < times; i += 1) await new Promise((resolve) => setImmediate(resolve));
}

/** Poll until `predicate()` is true (or fail after `ms`). */
export async function waitFor(predicate, ms = 2000) {
  const start = Date.now();
  while (!predicate()) {
    if (Date.now() - start > ms) throw new Error("waitFor: condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

/**
 * A ChatSession-facing fake client: records calls, hands out scripted streams the test drives
 * by calling `stream.push(seq, type, data)`.
 */
export function makeSessionClient({ createRun } = {}) {
  const calls = [];
  const streams = [];
  let runs = 0;
  return {
    calls,
    streams,
    async createRun(args) {
      calls.push({ op: "createRun", args });
      if (createRun) return createRun(args);
      runs += 1;
      return { id: `run_${runs}`, status: "QUEUED", agent: args.agent, agentVersion: "1", createdAt: "2026-10-01T00:00:00Z" };
    },
    async cancelRun(runId) {
      calls.push({ op: "cancelRun", runId });
      return null;
    },
    events(runId, options) {
      calls.push({ op: "events", runId, after: options.after });
      const stream = {
        runId,
        options,
        closed: false,
        acks: [],
        close() {
          stream.closed = true;
        },
        ack(seq, kind) {
          stream.acks.push([seq, kind]);
          return true;
        },
        push(seq, type, data = {}) {
          options.onEvent({ seq, type, at: "2026-10-01T00:00:00Z", data });
        },
      };
      streams.push(stream);
      return stream;
    },
  };
}
