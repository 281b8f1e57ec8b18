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
export { answerSegments, splitStreaming, contentText } from "./segments.js";
export type { Segment, TextSegment, CitationSegment } from "./segments.js";
export { ChatSession, sameContent } from "./session.js";
export type { Block, Snapshot, SessionStatus } from "./session.js";
export { useChatSession as useReactChatSession } from "./react.js";
export { useChatSession as useVueChatSession } from "./vue.js";
