/**
 * Answer text → display segments: plain text, or a trusted source entry.
 *
 * A marker in model output is only a claim. The SDK turns it into a clickable source entry
 * only when the run's own `citation.verified` for the ROOT agent call lists that exact ID as
 * VERIFIED and the run announced the source (`citation.created` with an exact knowledge version
 * and chunk). Everything else — unverified or unknown IDs, IDs verified only under another agent
 * call, URIs, Markdown links, `[[num:…]]` / `[[block:…]]` markers — is returned as literal text.
 * Segments are data: render `text` as a text node; the SDK never builds HTML or links.
 *
 * The marker grammar mirrors the server's (citations/markers.py) so both sides agree on what
 * a marker is.
 *
 * @module sparktide/segments
 */

import { isCitationId } from "./client.js";

/** `[[cite:cite_…]]` */
const CITE_MARKER = /\[\[cite:([^[\]\s]{0,200})\]\]/;
/** Legacy `[cite_…]`; not when preceded by `[` or followed by `]` or `(` (that is a Markdown link). */
const LEGACY_CITE_MARKER = /(?<!\[)\[(cite_[A-Za-z0-9_-]{0,200})\](?![\](])/;
const ANY_CITE_MARKER = new RegExp(`${CITE_MARKER.source}|${LEGACY_CITE_MARKER.source}`, "g");

/**
 * @typedef {{type: "text", text: string}} TextSegment
 * @typedef {{type: "citation", id: string, status: "VERIFIED", citation: object}} CitationSegment
 * @typedef {TextSegment | CitationSegment} Segment
 */

/**
 * @param {string} text  the FULL accumulated body of one block (never a single stream chunk)
 * @param {string | null | undefined} rootAgentCallId  from this run's depth-0 agent.started
 * @param {Map<string, object> | Record<string, object> | null | undefined} citationChecks
 *   agentCallId → `citation.verified` data `{agentCallId, references: [{id, status}]}`
 * @param {Map<string, object> | Record<string, object> | null | undefined} citations
 *   citation ID → `citation.created` data
 * @param {{streaming?: boolean}} [options]  streaming: hold back a trailing, still-incomplete
 *   marker (see splitStreaming) instead of showing half of it
 * @returns {Segment[]}
 */
export function answerSegments(text, rootAgentCallId, citationChecks, citations, { streaming = false } = {}) {
  const body = streaming ? splitStreaming(String(text ?? "")).settled : String(text ?? "");
  const verified = verifiedIds(rootAgentCallId, citationChecks);
  /** @type {Segment[]} */
  const segments = [];
  let textStart = 0;
  if (verified.size > 0) {
    for (const match of body.matchAll(ANY_CITE_MARKER)) {
      const id = match[1] ?? match[2];
      const citation = verified.has(id) ? trustedCitation(id, citations) : null;
      if (!citation) continue; // stays part of the surrounding literal text
      pushText(segments, body.slice(textStart, match.index));
      segments.push(Object.freeze({ type: "citation", id, status: "VERIFIED", citation }));
      textStart = match.index + match[0].length;
    }
  }
  pushText(segments, body.slice(textStart));
  return Object.freeze(segments);
}

/**
 * Split an accumulating stream buffer into the part that can be segmented now and a trailing
 * fragment that may still become a marker once more text arrives (`"… [[cite:ci"` is held
 * back until `"te_…]]"` completes it). Segment the settled part only, and always re-segment
 * the whole accumulated buffer: never segment chunk by chunk, or a marker split across two
 * chunks would be shown as two pieces of text and never recognized.
 *
 * A legacy `[cite_…]` at the very end is still pending: the next character decides whether it
 * is a marker or the start of a Markdown link `[cite_…](…)`.
 *
 * @param {string} buffer
 * @returns {{settled: string, pending: string}}
 */
export function splitStreaming(buffer) {
  const text = String(buffer ?? "");
  // A marker is at most "[[block:" + 200 + "]]" long; nothing further back can still change.
  const windowStart = Math.max(0, text.length - 212);
  for (let i = text.indexOf("[", windowStart); i !== -1; i = text.indexOf("[", i + 1)) {
    if (couldBecomeMarker(text.slice(i))) return { settled: text.slice(0, i), pending: text.slice(i) };
  }
  return { settled: text, pending: "" };
}

/**
 * The text of a block's content: a string, or `{type: "text", text}`; null for anything else
 * (a table's cells are segmented one by one by the caller, a protected block has no content).
 * @param {unknown} content
 */
export function contentText(content) {
  if (typeof content === "string") return content;
  if (content && typeof content === "object" && /** @type {any} */ (content).type === "text") {
    const { text } = /** @type {any} */ (content);
    return typeof text === "string" ? text : null;
  }
  return null;
}

/** IDs VERIFIED by the root agent call's own check; empty before that check exists. */
function verifiedIds(rootAgentCallId, citationChecks) {
  const ids = new Set();
  if (!rootAgentCallId) return ids;
  const check = lookup(citationChecks, rootAgentCallId);
  // The check must be the root call's own: a check filed under the key but naming another call
  // proves nothing about the root answer.
  if (!check || (check.agentCallId !== undefined && check.agentCallId !== rootAgentCallId)) return ids;
  for (const reference of Array.isArray(check.references) ? check.references : []) {
    if (reference && reference.status === "VERIFIED" && isCitationId(reference.id)) ids.add(reference.id);
  }
  return ids;
}

/**
 * The announced source of a verified ID, or null. Old events without an exact knowledge version
 * and chunk stay in the log but never create an entry (seed: 旧不含精确版本/片段的事件…不自动建立入口).
 */
function trustedCitation(id, citations) {
  const citation = lookup(citations, id);
  if (!citation || typeof citation !== "object") return null;
  if (citation.id !== undefined && citation.id !== id) return null;
  if (!present(citation.knowledgeVersion) || !present(citation.chunkId)) return null;
  return citation;
}

function present(value) {
  return value !== undefined && value !== null && value !== "";
}

/** Map or plain object; own keys only, so "constructor" or "__proto__" are not sources. */
function lookup(collection, key) {
  if (!collection || typeof key !== "string") return undefined;
  if (collection instanceof Map) return collection.get(key);
  return Object.hasOwn(collection, key) ? collection[key] : undefined;
}

function pushText(segments, text) {
  if (text === "") return;
  const last = segments[segments.length - 1];
  if (last && last.type === "text") segments[segments.length - 1] = Object.freeze({ type: "text", text: last.text + text });
  else segments.push(Object.freeze({ type: "text", text }));
}

const DOUBLE_MARKER_OPENINGS = ["[[cite:", "[[num:", "[[block:"];
const LEGACY_OPENING = "[cite_";

/** Is `tail` (starting at "[" and running to the end of the buffer) an unfinished marker? */
function couldBecomeMarker(tail) {
  for (const opening of DOUBLE_MARKER_OPENINGS) {
    if (tail.length <= opening.length) {
      if (opening.startsWith(tail)) return true;
    } else if (tail.startsWith(opening)) {
      return /^[^[\]\s]{0,200}\]?$/.test(tail.slice(opening.length));
    }
  }
  if (tail.length <= LEGACY_OPENING.length) return LEGACY_OPENING.startsWith(tail);
  return tail.startsWith(LEGACY_OPENING) && /^[A-Za-z0-9_-]{0,200}\]?$/.test(tail.slice(LEGACY_OPENING.length));
}
