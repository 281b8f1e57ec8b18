/**
 * SparkTide browser SDK: plain ES modules, no build step, no dependencies.
 *
 *   import { SparkTideClient, ChatSession, answerSegments } from "/static/sparktide/index.js"
 *
 * The framework bindings have the same name, so they are re-exported under distinct names;
 * import them from ./react.js or ./vue.js directly if you prefer `useChatSession`.
 *
 * @module sparktide
 */

export { SparkTideClient, CITATION_ID_PATTERN, isCitationId, isAbortError } from "./client.js";
export { SparkTideError, ClientErrorCode } from "./errors.js";
export { openEventStream, backoffDelay, CloseCode, TERMINAL_EVENT_TYPES, isTerminalEventType } from "./stream.js";
export { answerSegments, splitStreaming, contentText, citationState, blockSourceStatus, trustedSources } from "./segments.js";
export { findMarkers, markerAt, parseMarkers } from "./markers.js";
export { parseMarkdown, parseInline, renderMarkdown, inlineText } from "./markdown.js";
export { ChatSession, sameContent } from "./session.js";
export { useChatSession as useReactChatSession } from "./react.js";
export { useChatSession as useVueChatSession } from "./vue.js";
