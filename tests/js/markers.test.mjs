import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, test } from "node:test";

import { findMarkers, markerAt, parseMarkers } from "../../static/sparktide/markers.js";

const { cases } = JSON.parse(readFileSync(new URL("../conformance/markers.json", import.meta.url), "utf-8"));

describe("the SDK's marker grammar agrees with citations/markers.py on every shared case", () => {
  for (const c of cases) {
    test(c.name, () => {
      assert.deepEqual(
        findMarkers(c.text).map((m) => m.raw),
        c.markers,
      );
      assert.deepEqual(parseMarkers(c.text), {
        citedIds: c.citedIds,
        numericHandles: c.numericHandles,
        blockIds: c.blockIds,
      });
    });
  }
});

describe("markerAt", () => {
  test("finds a marker only where it starts, with the real preceding character", () => {
    const id = `cite_${"a".repeat(24)}`;
    const text = `x[${id}] [[${id}]`;
    assert.equal(markerAt(text, 1)?.value, id);
    assert.equal(markerAt(text, 0), null);
    // "[[cite_…]" at 31: the second "[" is preceded by "[", so it is no legacy marker.
    assert.equal(markerAt(text, text.lastIndexOf("[")), null);
  });

  test("reports UTF-16 offsets and the kind", () => {
    const text = "😀[[num:h1]]";
    const marker = markerAt(text, 2);
    assert.deepEqual({ kind: marker.kind, value: marker.value, start: marker.start, end: marker.end }, { kind: "num", value: "h1", start: 2, end: 12 });
  });
});
