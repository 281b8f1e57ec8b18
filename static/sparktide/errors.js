/**
 * The SDK's one error type, mirroring the server's `application/problem+json` bodies
 * (RFC 9457 plus a `code` member). Callers branch on `code`, never on message text.
 *
 * `status` is the HTTP status, or:
 *   - 0 when the SDK refused the call before any request (e.g. a malformed citation ID)
 *     or the network failed before an answer arrived;
 *   - the WebSocket close code (4401, 4403, 4404, 4410, …) when an event stream gave up.
 *
 * @module sparktide/errors
 */

export class SparkTideError extends Error {
  /**
   * @param {object} problem
   * @param {string} problem.code   documented error code, e.g. "CITATION_NOT_AVAILABLE"
   * @param {number} [problem.status]
   * @param {string} [problem.detail]
   * @param {string} [problem.title]
   * @param {string} [problem.type]
   * @param {unknown} [problem.cause]
   */
  constructor({ code, status = 0, detail = "", title = "", type = "about:blank", cause } = {}) {
    super(`${code}: ${detail || title || code}`, cause === undefined ? undefined : { cause });
    this.name = "SparkTideError";
    this.code = code;
    this.status = status;
    this.detail = detail;
    this.title = title;
    this.type = type;
  }
}

/**
 * Codes the SDK itself produces when the server gave none (never sent over the wire by the SDK).
 * Server codes (RESOURCE_NOT_FOUND, EVENT_CURSOR_EXPIRED, …) are used verbatim.
 */
export const ClientErrorCode = Object.freeze({
  /** fetch rejected (offline, DNS, CORS) — there is no HTTP status to report. */
  NETWORK_ERROR: "NETWORK_ERROR",
  /** a non-2xx answer whose body was not a problem document (a proxy page, say). */
  HTTP_ERROR: "HTTP_ERROR",
  /** a 2xx answer whose body was not the JSON the contract promises. */
  INVALID_RESPONSE: "INVALID_RESPONSE",
  /** WebSocket closed 4403: the server refused this page's Origin. */
  ORIGIN_NOT_ALLOWED: "ORIGIN_NOT_ALLOWED",
  /** the event stream gave up after `maxRetries` reconnects without progress. */
  STREAM_UNAVAILABLE: "STREAM_UNAVAILABLE",
  /** an event stream frame or answer event contradicted an earlier one. */
  PROTOCOL_CONFLICT: "PROTOCOL_CONFLICT",
});
