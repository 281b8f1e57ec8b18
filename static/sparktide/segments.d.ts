export interface TextSegment {
  readonly type: "text";
  readonly text: string;
}

export interface CitationSegment {
  readonly type: "citation";
  readonly id: string;
  readonly status: "VERIFIED";
  /** The run's citation.created data for this ID. */
  readonly citation: Record<string, unknown>;
}

export type Segment = TextSegment | CitationSegment;

type Lookup<T> = Map<string, T> | Record<string, T> | null | undefined;

/**
 * The FULL body of one block → text segments and VERIFIED citation entries (only IDs the root
 * agent call's own citation.verified lists as VERIFIED, announced by citation.created).
 */
export function answerSegments(
  text: string,
  rootAgentCallId: string | null | undefined,
  citationChecks: Lookup<object>,
  citations: Lookup<object>,
  options?: { streaming?: boolean },
): readonly Segment[];

/** Split a stream buffer into a settled part and a trailing fragment that may become a marker. */
export function splitStreaming(buffer: string): { settled: string; pending: string };

/** The text of a block's content (a string or {type: "text", text}); null otherwise. */
export function contentText(content: unknown): string | null;

/** What one cited ID may show now. */
export interface CitationState {
  readonly status: "pending" | "verified" | "unverified";
  readonly citation?: Record<string, unknown>;
}

export function citationState(
  id: string,
  rootAgentCallId: string | null | undefined,
  citationChecks: Lookup<object>,
  citations: Lookup<object>,
  options?: { settled?: boolean },
): CitationState;

/** The 回答来源区: the one trusted-source rule of the browser (citations/trusted.py's twin). */
export function trustedSources(
  rootAgentCallId: string | null | undefined,
  citationChecks: Lookup<object>,
  citations: Lookup<object>,
): {
  checked: boolean;
  verified: { id: string; citation: Record<string, unknown> }[];
  unverified: { id: string }[];
};

export type BlockSourceStatus =
  | "protected"
  | "none"
  | "unknown"
  | "pending"
  | "verified"
  | "sources_partial"
  | "sources_unverified";

/** The source badge one block may show now: never "verified" before the root call's check. */
export function blockSourceStatus(
  block: { content: unknown; state?: string; sourceHint?: string },
  context?: {
    rootAgentCallId?: string | null;
    citationChecks?: Lookup<object>;
    citations?: Lookup<object>;
    settled?: boolean;
  },
): BlockSourceStatus;
