/** Python's `\s` for str patterns, as a character-class body. */
export const PY_SPACE_CLASS: string;
export const CITE_MARKER_SOURCE: string;
export const NUM_MARKER_SOURCE: string;
export const BLOCK_MARKER_SOURCE: string;
export const LEGACY_CITE_MARKER_SOURCE: string;

/** One marker found in a text; `start`/`end` are UTF-16 offsets (JavaScript string indices). */
export interface MarkerMatch {
  readonly kind: "cite" | "num" | "block";
  readonly value: string;
  readonly legacy: boolean;
  readonly raw: string;
  readonly start: number;
  readonly end: number;
}

/** A fresh global regex over every marker. */
export function anyMarkerPattern(options?: { sticky?: boolean }): RegExp;
/** Every marker in `text`, left to right (as citations/markers.py finds them). */
export function findMarkers(text: string): MarkerMatch[];
/** The marker starting exactly at `index`, or null. */
export function markerAt(text: string, index: number): MarkerMatch | null;
/** Distinct values in order of first appearance. */
export function parseMarkers(text: string): {
  citedIds: string[];
  numericHandles: string[];
  blockIds: string[];
};
