export { SparkTideClient, CITATION_ID_PATTERN, isCitationId, isAbortError } from "./client.js";
export type {
  ClientOptions,
  CallOptions,
  TokenSource,
  Run,
  RunStatus,
  EventsPage,
  AnswerBlock,
  SourceRef,
  CitationPreview,
  Feedback,
  FeedbackRating,
} from "./client.js";
export { SparkTideError, ClientErrorCode } from "./errors.js";
export {
  openEventStream,
  backoffDelay,
  CloseCode,
  TERMINAL_EVENT_TYPES,
  isTerminalEventType,
} from "./stream.js";
export type {
  StreamEvent,
  CloseInfo,
  EventStreamOptions,
  EventStreamHandle,
  TerminalEventType,
} from "./stream.js";
export {
  answerSegments,
  splitStreaming,
  contentText,
  citationState,
  blockSourceStatus,
  trustedSources,
} from "./segments.js";
export type {
  Segment,
  TextSegment,
  CitationSegment,
  CitationState,
  BlockSourceStatus,
} from "./segments.js";
export { findMarkers, markerAt, parseMarkers } from "./markers.js";
export type { MarkerMatch } from "./markers.js";
export { parseMarkdown, parseInline, renderMarkdown, inlineText } from "./markdown.js";
export type { Root, Block as MarkdownBlock, Inline, RenderOptions } from "./markdown.js";
export { ChatSession, sameContent } from "./session.js";
export type { Block, Snapshot, SessionStatus } from "./session.js";
export { useChatSession as useReactChatSession } from "./react.js";
export { useChatSession as useVueChatSession } from "./vue.js";
