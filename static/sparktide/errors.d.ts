/** The SDK's one error type, mirroring the server's application/problem+json bodies. */
export class SparkTideError extends Error {
  constructor(problem?: {
    code: string;
    status?: number;
    detail?: string;
    title?: string;
    type?: string;
    cause?: unknown;
  });
  readonly name: "SparkTideError";
  /** Documented server code (e.g. "CITATION_NOT_AVAILABLE") or a {@link ClientErrorCode}. */
  code: string;
  /** HTTP status; 0 = refused before any request or no answer; a WebSocket close code for streams. */
  status: number;
  detail: string;
  title: string;
  type: string;
}

/** Codes the SDK produces itself when the server gave none. */
export declare const ClientErrorCode: Readonly<{
  NETWORK_ERROR: "NETWORK_ERROR";
  HTTP_ERROR: "HTTP_ERROR";
  INVALID_RESPONSE: "INVALID_RESPONSE";
  ORIGIN_NOT_ALLOWED: "ORIGIN_NOT_ALLOWED";
  STREAM_UNAVAILABLE: "STREAM_UNAVAILABLE";
  PROTOCOL_CONFLICT: "PROTOCOL_CONFLICT";
}>;
