/**
 * Resumable WebSocket event stream of one run.
 *
 * The server's event log (seq cursor) is the truth; a socket is only a way to read it. So the
 * stream keeps the last seq it delivered and, after any unexpected close, reconnects with a
 * FRESH single-use ticket asking for `after=lastSeq`. Frames at or below that cursor are dropped,
 * which gives the caller each event at most once and in order, however often the socket flaps.
 *
 * Wire contract
 *   server → client  {"kind":"event","seq":N,"type":"…","at":"…","data":{…}}
 *                    {"kind":"stream","type":"answer.stream","data":{streamId,offset,delta,…}}
 *                      (the live text of a model turn: no seq, not in the log, not acked)
 *                    {"kind":"error","code":"…","detail":"…"}   (sent just before a close)
 *   client → server  {"ack":N,"kind":"received"|"rendered"}
 *   close codes      1000 normal end (after the terminal event)        → finish, no reconnect
 *                    4401 unauthenticated / ticket invalid             → one fresh ticket, then give up
 *                    4403 origin refused                               → give up (ORIGIN_NOT_ALLOWED)
 *                    4404 run not found / not yours                    → give up (RESOURCE_NOT_FOUND)
 *                    4408 client fell too far behind                   → reconnect at once from cursor
 *                    4410 cursor older than retention                  → give up (EVENT_CURSOR_EXPIRED)
 *                    45xx a fault of the server (4503 DATABASE_UNAVAILABLE, 4500 INTERNAL_ERROR)
 *                                                                      → reconnect with backoff from cursor
 *                    other 4xxx                                        → give up (code of the error frame)
 *                    anything else (1001, 1006, 1011, 1012, 1013, …)   → reconnect with backoff
 *
 * @module sparktide/stream
 */

import { ClientErrorCode, SparkTideError } from "./errors.js";

/** Event types after which the run produces nothing more. */
export const TERMINAL_EVENT_TYPES = Object.freeze(["run.completed", "run.partial", "run.failed", "run.cancelled"]);

/** @param {string} type */
export function isTerminalEventType(type) {
  return TERMINAL_EVENT_TYPES.includes(type);
}

export const CloseCode = Object.freeze({
  NORMAL: 1000,
  UNAUTHENTICATED: 4401,
  ORIGIN_REFUSED: 4403,
  NOT_FOUND: 4404,
  TOO_FAR_BEHIND: 4408,
  CURSOR_EXPIRED: 4410,
  SERVER_ERROR: 4500,
  DATABASE_UNAVAILABLE: 4503,
});

/**
 * Whether a close is a fault of the server the client outlives: 4500–4599 (4000 + a 5xx status,
 * docs/events.md) like 1011, which the server no longer sends.
 * @param {number} code
 */
export function isServerFault(code) {
  return code === 1011 || (code >= 4500 && code <= 4599);
}

const SOCKET_CONNECTING = 0;
const SOCKET_OPEN = 1;
const ACK_KINDS = ["received", "rendered"];

/**
 * Reconnect delay: 250 ms doubling per consecutive failure, capped at 5 s, with "equal jitter"
 * (half fixed, half random) so a fleet of tabs dropped by one server restart does not reconnect
 * in lockstep.
 * @param {number} attempt 0 for the first reconnect
 * @param {() => number} [random]
 */
export function backoffDelay(attempt, random = Math.random) {
  const ceiling = Math.min(5000, 250 * 2 ** Math.max(0, attempt));
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}

/**
 * @typedef {object} StreamEvent
 * @property {number} seq
 * @property {string} type
 * @property {string} at
 * @property {object} data
 *
 * @typedef {object} CloseInfo
 * @property {number} code       the socket's close code (1000 when the client closed it)
 * @property {string} reason
 * @property {boolean} terminal  the run's terminal event was delivered
 * @property {boolean} byClient  close() or the abort signal ended it
 * @property {SparkTideError} [error]  set when the stream gave up
 *
 * @typedef {object} EventStreamOptions
 * @property {number} [after=0]          resume after this seq
 * @property {(event: StreamEvent) => void} [onEvent]  called once per new seq, in order; the cursor
 *   and the "received" ack are settled before it runs, so an exception it throws is not caught
 *   and does not cause a redelivery
 * @property {(error: SparkTideError) => void} [onError]  the stream gave up (always followed by onClose)
 * @property {(info: CloseInfo) => void} [onClose]        called exactly once, last
 * @property {AbortSignal} [signal]      aborting it is close()
 * @property {number} [maxRetries=Infinity]  consecutive reconnects without a new event before
 *   giving up with STREAM_UNAVAILABLE; like EventSource the default is to keep trying until
 *   close(), because the run is still being recorded server-side and nothing is lost by waiting.
 * @property {boolean} [ticket=true]     false = cookie-authenticated (console): no ticket request
 * @property {boolean} [autoAck=true]    send a "received" ack for every delivered event
 * @property {(attempt: number) => number} [retryDelay=backoffDelay]
 */

/**
 * @param {import("./client.js").SparkTideClient} client
 * @param {string} runId
 * @param {EventStreamOptions} options
 */
export function openEventStream(client, runId, options = {}) {
  const stream = new EventStream(client, runId, options);
  stream._start();
  return stream.handle;
}

class EventStream {
  constructor(client, runId, options) {
    this.client = client;
    this.runId = runId;
    this.options = options;
    this.WebSocket = client._webSocketClass(); // fail fast, before any ticket is spent
    this.lastSeq = Number(options.after ?? 0);
    this.maxRetries = options.maxRetries ?? Infinity;
    this.retryDelay = options.retryDelay ?? backoffDelay;
    this.useTicket = options.ticket !== false;
    this.autoAck = options.autoAck !== false;

    this.socket = null;
    this.done = false;
    this.terminal = false;
    this.attempts = 0; // consecutive reconnects without progress
    this.ticketRenewed = false; // a 4401 earns exactly one fresh ticket
    this.errorFrame = null;
    this.timer = null;
    this.pending = new AbortController(); // cancels an in-flight ticket request on close()
    this.onAbort = () => this.close();

    let resolveFinished;
    const finished = new Promise((resolve) => (resolveFinished = resolve));
    this.resolveFinished = resolveFinished;

    const self = this;
    /** The caller's handle; `lastSeq` is live. */
    this.handle = Object.freeze({
      close: () => self.close(),
      ack: (seq, kind) => self.ack(seq, kind),
      get lastSeq() {
        return self.lastSeq;
      },
      get closed() {
        return self.done;
      },
      /** resolves with the CloseInfo once the stream has ended (never rejects) */
      finished,
    });
  }

  _start() {
    const { signal } = this.options;
    if (signal?.aborted) {
      this._finish({ code: CloseCode.NORMAL, reason: "aborted", byClient: true });
      return;
    }
    signal?.addEventListener("abort", this.onAbort, { once: true });
    this._connect();
  }

  async _connect() {
    this.timer = null;
    if (this.done) return;
    let ticket = null;
    if (this.useTicket) {
      try {
        ({ ticket } = await this.client.createEventTicket(this.runId, { signal: this.pending.signal }));
      } catch (error) {
        if (this.done) return;
        // A refused ticket (bad token, no such run, expired history) will not get better by
        // retrying; a network error, 408, 429 or 5xx might.
        if (error instanceof SparkTideError && [400, 401, 403, 404, 410].includes(error.status)) {
          this._fail(error);
        } else {
          this._scheduleReconnect();
        }
        return;
      }
      if (this.done) return;
    }
    let socket;
    try {
      socket = new this.WebSocket(this.client.eventsSocketUrl(this.runId, { after: this.lastSeq, ticket }));
    } catch (error) {
      // A bad URL or a blocked scheme (ws: from an https page) will not fix itself.
      this._fail(
        new SparkTideError({ code: ClientErrorCode.STREAM_UNAVAILABLE, status: 0, detail: String(error?.message ?? error), cause: error }),
      );
      return;
    }
    this.socket = socket;
    this.errorFrame = null;
    socket.onmessage = (message) => this._onMessage(socket, message);
    socket.onclose = (event) => this._onClose(socket, event);
    socket.onerror = () => {}; // an error is always followed by a close; that is where we decide
  }

  _onMessage(socket, message) {
    if (socket !== this.socket || this.done) return;
    let frame;
    try {
      frame = JSON.parse(typeof message.data === "string" ? message.data : "");
    } catch {
      return; // not a frame of this protocol; the log on the server is the truth, nothing is lost
    }
    if (!frame || typeof frame !== "object") return;
    if (frame.kind === "error") {
      this.errorFrame = { code: String(frame.code ?? ""), detail: String(frame.detail ?? "") };
      return;
    }
    if (frame.kind === "stream") {
      // The live text before verification (docs/events.md "The text stream"): handed on as is.
      if (frame.data && typeof frame.data === "object") this.options.onStream?.(Object.freeze({ type: String(frame.type ?? ""), data: frame.data }));
      return;
    }
    if (frame.kind !== "event" || !Number.isSafeInteger(frame.seq)) return;
    // Replays after a reconnect (and any server resend) arrive at or below the cursor: drop them,
    // so the caller sees each seq at most once and strictly increasing.
    if (frame.seq <= this.lastSeq) return;
    this.lastSeq = frame.seq;
    this.attempts = 0;
    this.ticketRenewed = false;
    if (isTerminalEventType(frame.type)) this.terminal = true;
    if (this.autoAck) this.ack(frame.seq, "received");
    this.options.onEvent?.(Object.freeze({ seq: frame.seq, type: frame.type, at: frame.at, data: frame.data ?? {} }));
  }

  _onClose(socket, event) {
    if (socket !== this.socket) return;
    this.socket = null;
    if (this.done) return;
    const code = Number(event?.code ?? 1006);
    const reason = String(event?.reason ?? "");
    const frame = this.errorFrame;
    this.errorFrame = null;

    if (this.terminal || code === CloseCode.NORMAL) {
      this._finish({ code, reason, byClient: false });
      return;
    }
    const giveUp = (fallbackCode, forcedCode) =>
      this._fail(
        new SparkTideError({
          code: forcedCode ?? (frame?.code || fallbackCode),
          status: code,
          detail: frame?.detail || reason || `The event stream was closed (${code}).`,
        }),
        { code, reason },
      );
    switch (code) {
      case CloseCode.UNAUTHENTICATED:
        // A ticket is single-use and short-lived: one fresh ticket may fix it, a second refusal
        // means the credentials themselves are refused. Cookie mode has no ticket to renew.
        if (this.useTicket && !this.ticketRenewed) {
          this.ticketRenewed = true;
          this._scheduleReconnect(0);
        } else {
          giveUp("AUTHENTICATION_REQUIRED");
        }
        return;
      case CloseCode.ORIGIN_REFUSED:
        giveUp(ClientErrorCode.ORIGIN_NOT_ALLOWED);
        return;
      case CloseCode.NOT_FOUND:
        giveUp("RESOURCE_NOT_FOUND", "RESOURCE_NOT_FOUND");
        return;
      case CloseCode.CURSOR_EXPIRED:
        giveUp("EVENT_CURSOR_EXPIRED", "EVENT_CURSOR_EXPIRED");
        return;
      case CloseCode.TOO_FAR_BEHIND:
        // The server dropped a slow consumer; the log still has everything after our cursor.
        this._scheduleReconnect(0);
        return;
      default:
        // A server fault (the database away, an internal error): the log keeps everything after
        // the cursor, so reconnect with backoff like after a dropped network.
        if (isServerFault(code)) this._scheduleReconnect();
        else if (code >= 4000 && code <= 4999) giveUp(ClientErrorCode.STREAM_UNAVAILABLE);
        else this._scheduleReconnect();
    }
  }

  /** @param {number} [delay] defaults to the backoff for this attempt */
  _scheduleReconnect(delay) {
    if (this.done) return;
    if (this.attempts >= this.maxRetries) {
      this._fail(
        new SparkTideError({
          code: ClientErrorCode.STREAM_UNAVAILABLE,
          status: 0,
          detail: `Gave up after ${this.attempts} reconnect attempts without a new event.`,
        }),
      );
      return;
    }
    const wait = delay ?? this.retryDelay(this.attempts);
    this.attempts += 1;
    this.timer = setTimeout(() => this._connect(), wait);
  }

  /**
   * Acknowledge an event. Acks are the client's own statement, recorded separately by the server;
   * they are best-effort: with no open socket the ack is dropped and `false` returned.
   * @param {number} seq
   * @param {"received" | "rendered"} [kind]
   */
  ack(seq, kind = "received") {
    if (!ACK_KINDS.includes(kind)) throw new TypeError(`ack kind must be "received" or "rendered", got ${kind}`);
    if (!Number.isSafeInteger(seq)) throw new TypeError("ack seq must be an integer");
    const socket = this.socket;
    if (!socket || socket.readyState !== SOCKET_OPEN) return false;
    socket.send(JSON.stringify({ ack: seq, kind }));
    return true;
  }

  /** Disconnect. This only stops reading; it never cancels the run (use cancelRun for that). */
  close() {
    this._finish({ code: CloseCode.NORMAL, reason: "closed by client", byClient: true });
  }

  /** `code` is the socket's close code when a close caused this, 0 when no socket was involved. */
  _fail(error, { code = 0, reason = "" } = {}) {
    if (this.done) return;
    this._finish({ code, reason, byClient: false, error });
  }

  _finish({ code, reason, byClient, error }) {
    if (this.done) return;
    this.done = true;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.pending.abort();
    this.options.signal?.removeEventListener("abort", this.onAbort);
    const socket = this.socket;
    this.socket = null;
    if (socket && (socket.readyState === SOCKET_CONNECTING || socket.readyState === SOCKET_OPEN)) {
      socket.close(CloseCode.NORMAL);
    }
    /** @type {CloseInfo} */
    const info = { code, reason, terminal: this.terminal, byClient };
    if (error) info.error = error;
    try {
      if (error) this.options.onError?.(error);
    } finally {
      Object.freeze(info);
      this.options.onClose?.(info);
      this.resolveFinished(info);
    }
  }
}
