import type { EventStreamHandle, EventStreamOptions, StreamEvent } from "./stream.js";

export { SparkTideError } from "./errors.js";

/** `cite_` + 24 lowercase base-36 characters: the only IDs previewCitation sends. */
export declare const CITATION_ID_PATTERN: RegExp;
export function isCitationId(value: unknown): value is string;
export function isAbortError(error: unknown): boolean;

export type TokenSource =
  | string
  | (() => string | null | undefined | Promise<string | null | undefined>);

export interface ClientOptions {
  /** Origin (optionally with a path prefix) of the platform; "" = same origin. */
  baseUrl?: string;
  /** The app slug, e.g. "research-desk". */
  appId: string;
  /** Bearer token, or a function returning the current one (called per request). */
  token?: TokenSource;
  fetch?: typeof fetch;
  WebSocket?: typeof WebSocket;
  headers?: Record<string, string> | (() => Record<string, string>);
}

export interface CallOptions {
  signal?: AbortSignal;
}

export type RunStatus = "QUEUED" | "RUNNING" | "COMPLETED" | "PARTIAL" | "FAILED" | "CANCELLED";

export interface Run {
  id: string;
  status: RunStatus;
  reason?: string;
  agent: string;
  agentVersion: string;
  createdAt: string;
  completedAt?: string;
  sessionId: string;
}

export interface EventsPage {
  events: StreamEvent[];
  nextAfter: number;
  terminal: boolean;
}

export interface AnswerBlock {
  id: string;
  revision: number;
  deliveryOrdinal: number;
  state: "visible" | "protected";
  content?: unknown;
  sourceHint: string;
  truncated: boolean;
}

export interface SourceRef {
  type: string;
  id: string;
  version?: string;
  page?: number;
  locator?: { start: number; end: number };
  /** Data only: never a trusted link, never fetched. */
  uri?: string;
}

export interface CitationPreview {
  id: string;
  knowledgeId: string;
  knowledgeVersion: string;
  documentId: string;
  chunkId: string;
  title: string;
  sourceRef: SourceRef;
  /** Untrusted plain text: render it as text, never as HTML. */
  content: string;
  scope: "RETRIEVED_EXCERPT";
}

export type FeedbackRating = "up" | "down";

export interface Feedback {
  rating: FeedbackRating;
  note: string;
  /** The answer block rated, or null for the whole run. */
  block: string | null;
  createdAt: string;
  updatedAt: string;
}

export class SparkTideClient {
  constructor(options: ClientOptions);
  readonly baseUrl: string;
  readonly appId: string;
  createRun(
    run: { agent: string; input: string; sessionId?: string | null },
    options?: CallOptions,
  ): Promise<Run>;
  getRun(runId: string, options?: CallOptions): Promise<Run>;
  getEvents(
    runId: string,
    options?: { after?: number; limit?: number; signal?: AbortSignal },
  ): Promise<EventsPage>;
  getAnswer(runId: string, options?: CallOptions): Promise<{ blocks: AnswerBlock[] }>;
  /** 202, resolves null. */
  cancelRun(runId: string, options?: CallOptions): Promise<null>;
  /** The owner's 👍/👎 on the run, or on one of its blocks; replaces the previous one. */
  sendFeedback(
    runId: string,
    feedback: { rating: FeedbackRating; note?: string | null; block?: string | null },
    options?: CallOptions,
  ): Promise<Feedback>;
  listFeedback(runId: string, options?: CallOptions): Promise<{ feedback: Feedback[] }>;
  createEventTicket(
    runId: string,
    options?: CallOptions,
  ): Promise<{ ticket: string; expiresAt: string }>;
  /**
   * Re-authorized excerpt of one VERIFIED citation. A malformed ID rejects with
   * SparkTideError CITATION_NOT_AVAILABLE, status 0, before any request. Never retried.
   */
  previewCitation(runId: string, citationId: string, options?: CallOptions): Promise<CitationPreview>;
  events(runId: string, options?: EventStreamOptions): EventStreamHandle;
  eventsSocketUrl(runId: string, options?: { after?: number; ticket?: string }): string;
}
