import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { highlightPieces } from "../../static/console/highlight.js";

const marked = (pieces) => pieces.filter((p) => p.highlighted).map((p) => p.text);

describe("excerpt highlight ranges (UTF-16 offsets within content)", () => {
  test("CJK text: one UTF-16 unit per character", () => {
    const content = "北辰医药2026年三季度营收增长12%，主要来自创新药销售。";
    const start = content.indexOf("营收增长12%");
    const pieces = highlightPieces(content, [{ start, end: start + "营收增长12%".length }]);
    assert.deepEqual(marked(pieces), ["营收增长12%"]);
    assert.equal(pieces.map((p) => p.text).join(""), content);
  });

  test("emoji before a range count two units each; the range still lands on its text", () => {
    const content = "📈📈 净利润 6.2 亿元 👍";
    const start = content.indexOf("6.2 亿元"); // 2 emoji = 4 units, + 5
    assert.equal(start, 9);
    assert.deepEqual(marked(highlightPieces(content, [{ start, end: start + 6 }])), ["6.2 亿元"]);
  });

  test("a range that would cut an emoji in half is widened to the whole emoji", () => {
    const content = "a👍b";
    assert.deepEqual(marked(highlightPieces(content, [{ start: 2, end: 3 }])), ["👍"]);
    assert.deepEqual(marked(highlightPieces(content, [{ start: 0, end: 2 }])), ["a👍"]);
  });

  test("overlapping and unordered ranges are merged", () => {
    assert.deepEqual(marked(highlightPieces("0123456789", [{ start: 6, end: 8 }, { start: 1, end: 3 }, { start: 2, end: 4 }])), ["123", "67"]);
  });

  test("malformed ranges are ignored and the excerpt is shown whole", () => {
    const content = "北辰医药";
    for (const bad of [null, "x", [{ start: -1, end: 2 }], [{ start: 2, end: 2 }], [{ start: 1, end: 9 }], [{ start: 0.5, end: 2 }], [{ start: "0", end: "2" }]]) {
      assert.deepEqual(highlightPieces(content, bad), [{ text: content, highlighted: false }]);
    }
  });
});
