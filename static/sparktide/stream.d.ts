import type { SparkTideClient } from "./client.js";
import type { SparkTideError } from "./errors.js";

export type TerminalEventType = "run.completed" | "run.partial" | "run.failed" | "run.cancelled";
export declare const TERMINAL_EVENT_TYPES: readonly TerminalEventType[];
export function isTerminalEventType(type: string): type is TerminalEventType;

export declare const CloseCode: Readonly<{
  NORMAL: 1000;
  UNAUTHENTICATED: 4401;
  ORIGIN_REFUSED: 4403;
  NOT_FOUND: 4404;
  TOO_FAR_BEHIND: 4408;
  CURSOR_EXPIRED: 4410;
}>;

/** Reconnect delay in ms: 250 doubling per failure, capped at 5000, half of it jittered. */
export function backoffDelay(attempt: number, random?: () => number): number;

/** One event of the run's log: the same over WebSocket and REST. */
export interface StreamEvent {
  readonly seq: number;
  readonly type: string;
  readonly at: string;
  readonly data: Record<string, unknown>;
}

export interface CloseInfo {
  readonly code: number;
  readonly reason: string;
  /** The run's terminal event was delivered. */
  readonly terminal: boolean;
  /** close() or the abort signal ended it. */
  readonly byClient: boolean;
  /** Set when the stream gave up. */
  readonly error?: SparkTideError;
}

export interface EventStreamOptions {
  /** Resume after this seq (default 0). */
  after?: number;
  onEvent?: (event: StreamEvent) => void;
  onError?: (error: SparkTideError) => void;
  onClose?: (info: CloseInfo) => void;
  /** Aborting it is close(). */
  signal?: AbortSignal;
  /** Consecutive reconnects without a new event before STREAM_UNAVAILABLE (default Infinity). */
  maxRetries?: number;
  /** false = cookie-authenticated (the console): no ticket request. */
  ticket?: boolean;
  /** Send a "received" ack for every delivered event (default true). */
  autoAck?: boolean;
  retryDelay?: (attempt: number) => number;
}

export interface EventStreamHandle {
  /** Disconnect; never cancels the run (use cancelRun). */
  close(): void;
  ack(seq: number, kind?: "received" | "rendered"): boolean;
  readonly lastSeq: number;
  readonly closed: boolean;
  /** Resolves with the CloseInfo once the stream has ended (never rejects). */
  readonly finished: Promise<CloseInfo>;
}

export function openEventStream(
  client: SparkTideClient,
  runId: string,
  options?: EventStreamOptions,
): EventStreamHandle;
