import type { SparkTideClient, Run } from "./client.js";
import type { EventStreamOptions } from "./stream.js";
import type { BlockSourceStatus, CitationState, Segment } from "./segments.js";
import type { Root } from "./markdown.js";

export interface Block {
  readonly publicationId: string | null;
  readonly candidateId?: string | null;
  readonly revision: number;
  readonly deliveryOrdinal: number | null;
  /** null when protected (withheld by the viewer's current authorization). */
  readonly content: unknown;
  readonly state: "visible" | "protected";
  readonly sourceHint: string;
  readonly truncated: boolean;
  /** true = shown before (or instead of) a save; not durable. */
  readonly preview: boolean;
}

export type SessionStatus =
  | "idle"
  | "running"
  | "completed"
  | "partial"
  | "failed"
  | "cancelled"
  | "error";

export interface Snapshot {
  readonly runId: string | null;
  readonly sessionId: string | null;
  readonly status: SessionStatus;
  readonly reason: string | null;
  readonly rootAgentCallId: string | null;
  readonly blocks: readonly Block[];
  readonly rejections: readonly object[];
  readonly citations: Readonly<Record<string, object>>;
  readonly citationChecks: Readonly<Record<string, object>>;
  readonly error: { readonly code: string; readonly detail: string } | null;
  readonly lastSeq: number;
}

export class ChatSession {
  constructor(client: SparkTideClient, options?: { events?: Partial<EventStreamOptions> });
  readonly client: SparkTideClient;
  runId: string | null;
  getSnapshot(): Snapshot;
  subscribe(listener: () => void): () => void;
  start(turn: { agent: string; input: string; sessionId?: string }): Promise<Run>;
  resume(runId: string): void;
  close(): void;
  cancel(): Promise<null>;
  ackRendered(seq: number): boolean;
  segmentsFor(block: Block, options?: { streaming?: boolean }): readonly Segment[] | null;
  /** Has this turn ended, so that no citation.verified can still arrive? */
  settled(): boolean;
  citationState(id: string): CitationState;
  blockSourceStatus(block: Block): BlockSourceStatus;
  /** A block's text as a safe Markdown tree, or null when it has no text. */
  markdownFor(block: Block, options?: { streaming?: boolean }): Root | null;
}

export function sameContent(a: unknown, b: unknown): boolean;
