/**
 * The marker grammar of answer text, exactly as the server has it (citations/markers.py):
 *
 *   [[cite:cite_…]]   cites a source          legacy [cite_…] (not "[cite_…](…)", a Markdown link)
 *   [[num:…]]         uses a numeric handle   [[block:pub_…]]  inherits another block's sources
 *
 * A marker is only a claim; whether it resolves is decided by the run's `citation.verified`.
 * Both sides are checked against the same cases: tests/conformance/markers.json (pytest runs them
 * against citations/markers.py, node against this module).
 *
 * Two details keep the regular expressions byte-for-byte equivalent to Python's:
 *   - the `u` flag, so `{0,200}` counts code points as Python does (an emoji is one, not two);
 *   - an explicit whitespace class: Python's `\s` also matches U+001C–U+001F and U+0085 and not
 *     U+FEFF, JavaScript's `\s` the other way round.
 *
 * @module sparktide/markers
 */

/** Python's `\s` for str patterns (`re.match(r"\s", c)` over every code point). */
export const PY_SPACE_CLASS = "\\t\\n\\v\\f\\r\\u001c-\\u001f \\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000";
const VALUE = `[^\\[\\]${PY_SPACE_CLASS}]{0,200}`;

export const CITE_MARKER_SOURCE = `\\[\\[cite:(${VALUE})\\]\\]`;
export const NUM_MARKER_SOURCE = `\\[\\[num:(${VALUE})\\]\\]`;
export const BLOCK_MARKER_SOURCE = `\\[\\[block:(${VALUE})\\]\\]`;
/** Not when preceded by "[" or followed by "]" or "(" (that is a Markdown link). */
export const LEGACY_CITE_MARKER_SOURCE = "(?<!\\[)\\[(cite_[A-Za-z0-9_\\-]{0,200})\\](?![\\]\\(])";

/** One alternative per kind, so the capturing group tells which kind matched. */
const ANY_SOURCE = `\\[\\[(cite|num|block):(${VALUE})\\]\\]|${LEGACY_CITE_MARKER_SOURCE}`;

/** A fresh global regex over every marker (callers must not share `lastIndex`). */
export function anyMarkerPattern({ sticky = false } = {}) {
  return new RegExp(ANY_SOURCE, sticky ? "uy" : "gu");
}

/**
 * @typedef {{kind: "cite" | "num" | "block", value: string, legacy: boolean, raw: string, start: number, end: number}} MarkerMatch
 *   `start`/`end` are UTF-16 offsets into the text (JavaScript string indices).
 */

/** @param {RegExpExecArray} match @returns {MarkerMatch} */
function toMarker(match) {
  const legacy = match[3] !== undefined;
  return Object.freeze({
    kind: legacy ? "cite" : /** @type {"cite"|"num"|"block"} */ (match[1]),
    value: legacy ? match[3] : match[2],
    legacy,
    raw: match[0],
    start: match.index,
    end: match.index + match[0].length,
  });
}

/**
 * Every marker in `text`, left to right (Python's `ANY_MARKER.finditer`).
 * @param {string} text
 * @returns {MarkerMatch[]}
 */
export function findMarkers(text) {
  return [...String(text ?? "").matchAll(anyMarkerPattern())].map(toMarker);
}

/**
 * The marker starting exactly at `index` of `text`, or null. The whole text is searched, so
 * the legacy form's look-behind sees the real preceding character.
 * @param {string} text @param {number} index @returns {MarkerMatch | null}
 */
export function markerAt(text, index) {
  const pattern = anyMarkerPattern({ sticky: true });
  pattern.lastIndex = index;
  const match = pattern.exec(text);
  return match ? toMarker(match) : null;
}

/**
 * Distinct values in order of first appearance, like `parse_markers` in citations/markers.py.
 * @param {string} text
 * @returns {{citedIds: string[], numericHandles: string[], blockIds: string[]}}
 */
export function parseMarkers(text) {
  const result = { citedIds: new Set(), numericHandles: new Set(), blockIds: new Set() };
  for (const marker of findMarkers(text)) {
    const set = marker.kind === "cite" ? result.citedIds : marker.kind === "num" ? result.numericHandles : result.blockIds;
    set.add(marker.value);
  }
  return { citedIds: [...result.citedIds], numericHandles: [...result.numericHandles], blockIds: [...result.blockIds] };
}
