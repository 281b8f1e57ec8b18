/**
 * SparkTide REST client for the browser (plain ES module, no build step, no dependencies).
 *
 * Every call carries the *current business user's* bearer token: the platform re-authorizes
 * each request (above all each citation preview) with the caller's own credentials, so the SDK
 * never caches answers, never retries a preview, and never falls back to an older result.
 *
 * @module sparktide/client
 */

import { ClientErrorCode, SparkTideError } from "./errors.js";
import { openEventStream } from "./stream.js";

export { SparkTideError } from "./errors.js";

/**
 * A well-formed citation ID: the platform issues `cite_` + 24 lowercase base-36 characters.
 * Anything else (a URI, a path fragment, an empty or truncated ID) is refused before a request
 * exists, so model output can never steer the preview call to another path.
 */
export const CITATION_ID_PATTERN = /^cite_[a-z0-9]{24}$/;

/** @param {unknown} value */
export function isCitationId(value) {
  return typeof value === "string" && CITATION_ID_PATTERN.test(value);
}

/**
 * @typedef {object} ClientOptions
 * @property {string} [baseUrl]  origin (optionally with a path prefix) of the platform; "" = same origin
 * @property {string} appId      the app slug, e.g. "business"
 * @property {string | (() => string | null | undefined | Promise<string | null | undefined>)} [token]
 *   bearer token, or a function returning the current one (called per request, so a refreshed
 *   token is picked up). Omit it for cookie-authenticated pages such as the console.
 * @property {typeof fetch} [fetch]          injected for tests; defaults to the global fetch
 * @property {typeof WebSocket} [WebSocket]  injected for tests; defaults to the global WebSocket
 * @property {Record<string,string> | (() => Record<string,string>)} [headers]
 *   extra request headers (e.g. the console's X-CSRFToken for cookie-authenticated POSTs)
 */

export class SparkTideClient {
  /** @param {ClientOptions} options */
  constructor({ baseUrl = "", appId, token, fetch, WebSocket, headers } = /** @type {any} */ ({})) {
    if (typeof appId !== "string" || appId === "") throw new TypeError("SparkTideClient: appId is required");
    this.baseUrl = String(baseUrl).replace(/\/+$/, "");
    this.appId = appId;
    this._token = token;
    this._fetch = fetch;
    this._WebSocket = WebSocket;
    this._headers = headers;
  }

  /** POST /runs → 201 `{id, status, agent, agentVersion, createdAt}`. */
  createRun({ agent, input, sessionId } = /** @type {any} */ ({}), { signal } = {}) {
    const body = { agent, input };
    if (sessionId !== undefined && sessionId !== null) body.sessionId = sessionId;
    return this._request("POST", ["runs"], { body, signal });
  }

  /** GET /runs/{runId} → `{id, status, reason?, createdAt, completedAt?, sessionId}`. */
  getRun(runId, { signal } = {}) {
    return this._request("GET", ["runs", runId], { signal });
  }

  /**
   * One page of the run's event log over REST → `{events, nextAfter, terminal}`.
   * A cursor older than retention rejects with EVENT_CURSOR_EXPIRED (410).
   */
  getEvents(runId, { after, limit, signal } = {}) {
    const query = new URLSearchParams();
    if (after !== undefined && after !== null) query.set("after", String(after));
    if (limit !== undefined && limit !== null) query.set("limit", String(limit));
    return this._request("GET", ["runs", runId, "events"], { query, signal });
  }

  /** The committed answer blocks as the reader shows them to *this* caller now. */
  getAnswer(runId, { signal } = {}) {
    return this._request("GET", ["runs", runId, "answer"], { signal });
  }

  /** Ask the server to cancel (202). Closing an event stream never cancels a run; this does. */
  cancelRun(runId, { signal } = {}) {
    return this._request("POST", ["runs", runId, "cancel"], { signal });
  }

  /**
   * The run owner's 👍/👎 (`rating` "up" | "down") with an optional note (≤ 2000 characters) on
   * the whole run, or on one answer block when `block` is a block ID of this run. A second call on
   * the same target replaces the first. → 200 `{rating, note, block, createdAt, updatedAt}`.
   */
  sendFeedback(runId, { rating, note, block } = /** @type {any} */ ({}), { signal } = {}) {
    const body = { rating };
    if (note !== undefined && note !== null) body.note = note;
    if (block !== undefined && block !== null) body.block = block;
    return this._request("PUT", ["runs", runId, "feedback"], { body, signal });
  }

  /** The feedback given on the run (run-level and per block), oldest first → `{feedback: [...]}`. */
  listFeedback(runId, { signal } = {}) {
    return this._request("GET", ["runs", runId, "feedback"], { signal });
  }

  /** A short-lived, single-use WebSocket ticket → 201 `{ticket, expiresAt}`. */
  createEventTicket(runId, { signal } = {}) {
    return this._request("POST", ["runs", runId, "events", "ticket"], { signal });
  }

  /**
   * Re-authorized source excerpt of one VERIFIED citation.
   *
   * Malformed IDs are refused *without any request*: SparkTideError code CITATION_NOT_AVAILABLE,
   * status 0 (0 = "never reached the server"; the server's own answer for an unknown ID is the
   * same code with 404). `signal` is passed to fetch so closing the dialog aborts the call; an
   * aborted call rejects with the fetch AbortError untouched. `cache: "no-store"` because every
   * click must be authorized anew; there is no retry and no fallback to an earlier excerpt.
   * The returned `content` is untrusted plain text — render it as text, never as HTML.
   */
  async previewCitation(runId, citationId, { signal } = {}) {
    if (!isCitationId(citationId)) {
      throw new SparkTideError({
        code: "CITATION_NOT_AVAILABLE",
        status: 0,
        detail: "Not a platform citation ID; only cite_ IDs issued by this run can be previewed.",
      });
    }
    return this._request("GET", ["runs", runId, "citations", citationId, "preview"], {
      signal,
      cache: "no-store",
    });
  }

  /**
   * Follow the run's events over WebSocket; see {@link openEventStream} for the options and the
   * frame / close-code contract. Returns `{close(), ack(seq, kind), lastSeq, closed, finished}`.
   */
  events(runId, options = {}) {
    return openEventStream(this, runId, options);
  }

  /**
   * ws(s) URL of the event stream. The scheme follows baseUrl (http→ws, https→wss) and so does
   * any path prefix, exactly like the REST URLs; with baseUrl = location.origin this is
   * `wss://<host>/ws/v1/apps/{app}/runs/{runId}/events?after=…&ticket=…`.
   */
  eventsSocketUrl(runId, { after = 0, ticket } = {}) {
    const path = `/ws/v1/apps/${encodeURIComponent(this.appId)}/runs/${encodeURIComponent(runId)}/events`;
    const url = new URL(this.baseUrl + path, globalThis.location?.href);
    if (url.protocol === "http:") url.protocol = "ws:";
    else if (url.protocol === "https:") url.protocol = "wss:";
    else if (url.protocol !== "ws:" && url.protocol !== "wss:") {
      throw new TypeError(`SparkTideClient: unsupported baseUrl scheme ${url.protocol}`);
    }
    url.searchParams.set("after", String(after));
    if (ticket) url.searchParams.set("ticket", ticket);
    return url.toString();
  }

  /** @returns {typeof WebSocket} */
  _webSocketClass() {
    const WS = this._WebSocket ?? globalThis.WebSocket;
    if (typeof WS !== "function") throw new TypeError("SparkTideClient: no WebSocket implementation available");
    return WS;
  }

  async _resolveToken() {
    const token = typeof this._token === "function" ? await this._token() : this._token;
    return token || null;
  }

  /** `${baseUrl}/v1/apps/{app}/…` with every path segment encoded (IDs are data, not paths). */
  _url(segments, query) {
    const path = ["v1", "apps", this.appId, ...segments].map((s) => encodeURIComponent(String(s))).join("/");
    const qs = query && [...query].length ? `?${query}` : "";
    return `${this.baseUrl}/${path}${qs}`;
  }

  async _request(method, segments, { body, query, signal, cache } = {}) {
    const extra = typeof this._headers === "function" ? this._headers() : this._headers;
    /** @type {Record<string,string>} */
    const headers = { Accept: "application/json, application/problem+json", ...(extra ?? {}) };
    const token = await this._resolveToken();
    if (token) headers.Authorization = `Bearer ${token}`;
    /** @type {RequestInit} */
    const init = { method, headers, credentials: "same-origin" };
    if (body !== undefined) {
      headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    if (signal) init.signal = signal;
    if (cache) init.cache = cache;

    // Resolved per call (not in the constructor) so a page can install fetch late; called
    // without a receiver because browsers reject fetch invoked on a foreign `this`.
    const fetchImpl = this._fetch ?? globalThis.fetch;
    let response;
    try {
      response = await fetchImpl(this._url(segments, query), init);
    } catch (error) {
      // An abort is the caller's decision and must surface as-is (AbortError or signal.reason).
      if (signal?.aborted || isAbortError(error)) throw error;
      throw new SparkTideError({
        code: ClientErrorCode.NETWORK_ERROR,
        status: 0,
        detail: String(error?.message ?? error),
        cause: error,
      });
    }
    if (!response.ok) throw await problemFromResponse(response);
    const text = await response.text();
    if (text === "") return null; // 202 cancel, 204
    try {
      return JSON.parse(text);
    } catch (error) {
      throw new SparkTideError({
        code: ClientErrorCode.INVALID_RESPONSE,
        status: response.status,
        detail: "The response body is not JSON.",
        cause: error,
      });
    }
  }
}

/** @param {unknown} error */
export function isAbortError(error) {
  return typeof error === "object" && error !== null && /** @type {any} */ (error).name === "AbortError";
}

/**
 * Turn a non-2xx response into a SparkTideError. The HTTP status is authoritative; the body's
 * `code` is used when the body is a problem document, otherwise HTTP_ERROR (e.g. a proxy page).
 * @param {Response} response
 */
async function problemFromResponse(response) {
  let problem = null;
  try {
    problem = JSON.parse(await response.text());
  } catch (error) {
    if (isAbortError(error)) throw error; // aborted while reading the body: still the caller's abort
    problem = null;
  }
  if (problem && typeof problem === "object" && typeof problem.code === "string") {
    return new SparkTideError({
      code: problem.code,
      status: response.status,
      detail: typeof problem.detail === "string" ? problem.detail : "",
      title: typeof problem.title === "string" ? problem.title : "",
      type: typeof problem.type === "string" ? problem.type : "about:blank",
    });
  }
  return new SparkTideError({
    code: ClientErrorCode.HTTP_ERROR,
    status: response.status,
    detail: response.statusText || `HTTP ${response.status}`,
  });
}
