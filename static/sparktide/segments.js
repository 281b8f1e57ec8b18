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
 * The marker grammar is the server's (citations/markers.py), kept in ./markers.js and checked
 * against the shared cases of tests/conformance/markers.json.
 *
 * For display while a run streams, citationState and blockSourceStatus say what a marker or a
 * block may claim *now*: nothing is "verified" before the root call's own `citation.verified`.
 *
 * @module sparktide/segments
 */

import { isCitationId } from "./client.js";
import { findMarkers, parseMarkers, PY_SPACE_CLASS } from "./markers.js";

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
    for (const marker of findMarkers(body)) {
      if (marker.kind !== "cite") continue;
      const id = marker.value;
      const citation = verified.has(id) ? trustedCitation(id, citations) : null;
      if (!citation) continue; // stays part of the surrounding literal text
      pushText(segments, body.slice(textStart, marker.start));
      segments.push(Object.freeze({ type: "citation", id, status: "VERIFIED", citation }));
      textStart = marker.end;
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
  // A marker is at most "[[block:" + 200 code points + "]]" long (up to 410 UTF-16 units);
  // nothing further back can still change.
  const windowStart = Math.max(0, text.length - 410);
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

/**
 * What one cited ID may show now.
 *   "pending"     the root call's final check has not arrived (yet);
 *   "verified"    that check lists it VERIFIED and the run announced it exactly (`citation` set);
 *   "unverified"  anything else — or the run ended (`settled`) without a check ever arriving.
 * @param {string} id
 * @param {string | null | undefined} rootAgentCallId
 * @param {Map<string, object> | Record<string, object> | null | undefined} citationChecks
 * @param {Map<string, object> | Record<string, object> | null | undefined} citations
 * @param {{settled?: boolean}} [options]  settled: the run has ended (no check will come)
 * @returns {{status: "pending" | "verified" | "unverified", citation?: object}}
 */
export function citationState(id, rootAgentCallId, citationChecks, citations, { settled = false } = {}) {
  if (!rootCheck(rootAgentCallId, citationChecks)) return Object.freeze({ status: settled ? "unverified" : "pending" });
  const citation = verifiedIds(rootAgentCallId, citationChecks).has(id) ? trustedCitation(id, citations) : null;
  return Object.freeze(citation ? { status: "verified", citation } : { status: "unverified" });
}

/**
 * The 回答来源区 of a run: every reference of the root call's own final check, VERIFIED when that
 * check lists it VERIFIED, its ID is well formed and the run announced it with an exact knowledge
 * version and chunk; UNVERIFIED otherwise. The one trusted-source rule of the browser (console
 * included); the server's twin is citations/trusted.py, pinned with it by
 * tests/conformance/trusted_sources.json.
 * @param {string | null | undefined} rootAgentCallId
 * @param {Map<string, object> | Record<string, object> | null | undefined} citationChecks
 * @param {Map<string, object> | Record<string, object> | null | undefined} citations
 * @returns {{checked: boolean, verified: {id: string, citation: object}[], unverified: {id: string}[]}}
 */
export function trustedSources(rootAgentCallId, citationChecks, citations) {
  const check = rootCheck(rootAgentCallId, citationChecks);
  const result = { checked: Boolean(check), verified: [], unverified: [] };
  if (!check) return result;
  const verified = verifiedIds(rootAgentCallId, citationChecks);
  for (const reference of Array.isArray(check.references) ? check.references : []) {
    const id = reference && typeof reference.id === "string" ? reference.id : "";
    const citation = verified.has(id) ? trustedCitation(id, citations) : null;
    if (citation) result.verified.push({ id, citation });
    else result.unverified.push({ id: String(reference?.id ?? "") });
  }
  return result;
}

const HINT_RANK = { verified: 3, sources_partial: 2, sources_unverified: 1 };

/**
 * The source badge one block may show now. It follows the block's receipt (`sourceHint` of
 * answer.published, or of the preview) and the run's final check, and never claims more than
 * either:
 *   - "protected" for a withheld body; "none" / "unknown" as the receipt says;
 *   - "sources_unverified" as soon as the receipt says so (bad news needs no wait);
 *   - "pending" while a receipt claims (some) verified sources but the root check has not come;
 *   - after the check: the weaker of the receipt and the check of the block's own cited IDs
 *     (all VERIFIED → "verified", some → "sources_partial", none → "sources_unverified");
 *   - a run that ended without a check: "sources_unverified".
 * @param {{content: unknown, state?: string, sourceHint?: string}} block
 * @param {{rootAgentCallId?: string | null, citationChecks?: any, citations?: any, settled?: boolean}} context
 * @returns {"protected" | "none" | "unknown" | "pending" | "verified" | "sources_partial" | "sources_unverified"}
 */
export function blockSourceStatus(block, { rootAgentCallId, citationChecks, citations, settled = false } = {}) {
  if (block.state === "protected") return "protected";
  const hint = block.sourceHint ?? "unknown";
  if (!Object.hasOwn(HINT_RANK, hint)) return hint === "none" ? "none" : "unknown";
  if (hint === "sources_unverified") return hint;
  if (!rootCheck(rootAgentCallId, citationChecks)) return settled ? "sources_unverified" : "pending";
  const ids = citedIdsOf(block.content);
  if (ids.length === 0) return hint; // its sources are numeric or block references: the receipt says
  const verified = ids.filter((id) => citationState(id, rootAgentCallId, citationChecks, citations).status === "verified").length;
  const fromCheck = verified === ids.length ? "verified" : verified > 0 ? "sources_partial" : "sources_unverified";
  return HINT_RANK[fromCheck] < HINT_RANK[hint] ? fromCheck : hint;
}

/** Distinct cited IDs of a block's body: its text, or every cell of a table. */
function citedIdsOf(content) {
  const text = contentText(content);
  if (text !== null) return parseMarkers(text).citedIds;
  if (content && typeof content === "object" && /** @type {any} */ (content).type === "table") {
    const { columns = [], rows = [] } = /** @type {any} */ (content);
    const cells = [...columns, ...rows.flatMap((row) => (Array.isArray(row) ? row : []))];
    return parseMarkers(cells.map(String).join("\n")).citedIds;
  }
  return [];
}

/** The root agent call's own check, or null. */
function rootCheck(rootAgentCallId, citationChecks) {
  if (!rootAgentCallId) return null;
  const check = lookup(citationChecks, rootAgentCallId);
  // The check must be the root call's own: a check filed under the key but naming another call
  // proves nothing about the root answer.
  if (!check || (check.agentCallId !== undefined && check.agentCallId !== rootAgentCallId)) return null;
  return check;
}

/** IDs VERIFIED by the root agent call's own check; empty before that check exists. */
function verifiedIds(rootAgentCallId, citationChecks) {
  const ids = new Set();
  const check = rootCheck(rootAgentCallId, citationChecks);
  if (!check) return ids;
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

const PENDING_VALUE = new RegExp(`^[^\\[\\]${PY_SPACE_CLASS}]{0,200}\\]?$`, "u");
const DOUBLE_MARKER_OPENINGS = ["[[cite:", "[[num:", "[[block:"];
const LEGACY_OPENING = "[cite_";

/** Is `tail` (starting at "[" and running to the end of the buffer) an unfinished marker? */
function couldBecomeMarker(tail) {
  for (const opening of DOUBLE_MARKER_OPENINGS) {
    if (tail.length <= opening.length) {
      if (opening.startsWith(tail)) return true;
    } else if (tail.startsWith(opening)) {
      return PENDING_VALUE.test(tail.slice(opening.length));
    }
  }
  if (tail.length <= LEGACY_OPENING.length) return LEGACY_OPENING.startsWith(tail);
  return tail.startsWith(LEGACY_OPENING) && /^[A-Za-z0-9_-]{0,200}\]?$/.test(tail.slice(LEGACY_OPENING.length));
}
