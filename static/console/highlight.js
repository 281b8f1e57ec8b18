/**
 * Highlight ranges of a source excerpt, as text pieces.
 *
 * The preview response may carry `highlights: [{start, end}]`: UTF-16 code unit offsets into
 * `content` (what JavaScript string indices are, so no conversion is needed — but never count
 * code points, or every emoji before a range shifts it). Ranges are checked (integers inside the
 * content, start < end), widened rather than split where they would cut a surrogate pair in
 * half, sorted and merged. Anything malformed is ignored: the excerpt is always shown in full.
 */

const isHigh = (code) => code >= 0xd800 && code <= 0xdbff;
const isLow = (code) => code >= 0xdc00 && code <= 0xdfff;

/**
 * @param {string} content
 * @param {unknown} highlights
 * @returns {{text: string, highlighted: boolean}[]}  concatenated, the pieces are `content`
 */
export function highlightPieces(content, highlights) {
  const text = String(content ?? "");
  const ranges = [];
  for (const range of Array.isArray(highlights) ? highlights : []) {
    if (!range || typeof range !== "object") continue;
    let { start, end } = /** @type {any} */ (range);
    if (!Number.isInteger(start) || !Number.isInteger(end) || start < 0 || end > text.length || start >= end) continue;
    if (start > 0 && isLow(text.charCodeAt(start)) && isHigh(text.charCodeAt(start - 1))) start -= 1;
    if (end < text.length && isHigh(text.charCodeAt(end - 1)) && isLow(text.charCodeAt(end))) end += 1;
    ranges.push([start, end]);
  }
  ranges.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const merged = [];
  for (const range of ranges) {
    const last = merged[merged.length - 1];
    if (last && range[0] <= last[1]) last[1] = Math.max(last[1], range[1]);
    else merged.push([...range]);
  }
  const pieces = [];
  let position = 0;
  for (const [start, end] of merged) {
    if (start > position) pieces.push({ text: text.slice(position, start), highlighted: false });
    pieces.push({ text: text.slice(start, end), highlighted: true });
    position = end;
  }
  if (position < text.length || pieces.length === 0) pieces.push({ text: text.slice(position), highlighted: false });
  return pieces.filter((piece, index) => piece.text !== "" || (index === 0 && pieces.length === 1));
}
