import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { inlineText, parseInline, parseMarkdown, renderMarkdown } from "../../static/sparktide/markdown.js";
import { fakeDocument, serialize, wrap } from "./helpers/dom.mjs";
import { citeId } from "./helpers/fakes.mjs";

const A = citeId("a");

function html(text, options = {}) {
  const doc = fakeDocument();
  const root = wrap(renderMarkdown(text, { document: doc, ...options }), doc);
  return { root, doc, out: serialize(root).replace(/^<div>|<\/div>$/g, "") };
}

describe("Markdown blocks", () => {
  test("paragraphs, headings and soft line breaks", () => {
    const { out } = html("## 概要\n\n北辰医药营收增长\n主要来自创新药。\n\n第二段");
    assert.equal(out, "<h4 .md-heading level=2>概要</h4><p>北辰医药营收增长<br></br>主要来自创新药。</p><p>第二段</p>");
  });

  test("unordered, ordered and nested lists keep every item", () => {
    const tree = parseMarkdown("- 一\n- 二\n  - 二之一\n- 三\n\n3. 丙\n4. 丁");
    assert.deepEqual(
      tree.children.map((b) => [b.type, b.ordered, b.start, b.items.length]),
      [
        ["list", false, 1, 3],
        ["list", true, 3, 2],
      ],
    );
    const { out } = html("- 一\n- 二\n  - 二之一\n\n3. 丙");
    assert.equal(out, "<ul .md-list><li>一</li><li>二<ul .md-list><li>二之一</li></ul></li></ul><ol .md-list start=3><li>丙</li></ol>");
  });

  test("a list item's wrapped line continues the item; a top-5 list is five items", () => {
    const tree = parseMarkdown("前五大持仓：\n1. 甲\n2. 乙\n   续行\n3. 丙\n4. 丁\n5. 戊");
    assert.equal(tree.children[1].items.length, 5);
    assert.equal(inlineText(tree.children[1].items[1].children[0].children), "乙\n续行");
  });

  test("GFM pipe tables, with alignment, escaped pipes and missing cells", () => {
    const tree = parseMarkdown("| 指标 | 值 |\n|:---|---:|\n| 营收 | 12% |\n| a \\| b |\n");
    const table = tree.children[0];
    assert.equal(table.type, "table");
    assert.deepEqual(table.align, ["left", "right"]);
    assert.deepEqual(
      table.rows.map((row) => row.map(inlineText)),
      [
        ["营收", "12%"],
        ["a | b", ""],
      ],
    );
    const { out } = html("| a | b |\n|---|---|\n| **x** | `y` |");
    assert.equal(
      out,
      '<div .md-table-wrap><table .md-table><thead><tr><th>a</th><th>b</th></tr></thead><tbody><tr><td><strong>x</strong></td><td><code .md-code-inline>y</code></td></tr></tbody></table></div>',
    );
  });

  test("a line with a pipe but no delimiter row is a paragraph", () => {
    assert.equal(parseMarkdown("a | b\nc | d").children[0].type, "paragraph");
  });

  test("fenced code is literal, markers and markup included; an unclosed fence runs to the end", () => {
    const { out } = html("```html\n<script>alert(1)</script> **x** [[cite:" + A + "]]\n```\n\n```\nopen");
    assert.equal(out, `<pre .md-code><code lang=html><script>alert(1)</script> **x** [[cite:${A}]]</code></pre><pre .md-code><code>open</code></pre>`);
  });

  test("block quotes and thematic breaks", () => {
    const { out } = html("> 引用 **重点**\n\n---\n\n后文");
    assert.equal(out, "<blockquote .md-quote><p>引用 <strong>重点</strong></p></blockquote><hr .md-hr></hr><p>后文</p>");
  });
});

describe("Markdown inline", () => {
  test("emphasis, strong, nested emphasis and strike", () => {
    assert.equal(html("*a* **b** ***c*** **x *y* z** ~~d~~").out, "<p><em>a</em> <strong>b</strong> <em><strong>c</strong></em> <strong>x <em>y</em> z</strong> <del>d</del></p>");
  });

  test("CJK strong text ending in full-width punctuation is still strong", () => {
    assert.equal(html("**概要：**北辰医药营收增长 12%。").out, "<p><strong>概要：</strong>北辰医药营收增长 12%。</p>");
  });

  test("underscores inside words and cite_ IDs are not emphasis", () => {
    assert.equal(html("snake_case_name 与 cite_ab_cd").out, "<p>snake_case_name 与 cite_ab_cd</p>");
  });

  test("unbalanced delimiters stay literal", () => {
    assert.equal(html("**未闭合 与 * 孤星 与 2 * 3").out, "<p>**未闭合 与 * 孤星 与 2 * 3</p>");
  });

  test("inline code and backslash escapes are literal", () => {
    assert.equal(html("`**x**` \\*y\\* \\<b>").out, "<p><code .md-code-inline>**x**</code> *y* <b></p>");
  });

  test("citation markers, legacy markers and numeric markers become nodes of their own", () => {
    const nodes = parseInline(`营收 [[cite:${A}]] 又 [${A}] 值 [[num:n_1]] 承 [[block:pub_x]]`);
    assert.deepEqual(
      nodes.filter((n) => n.type !== "text"),
      [
        { type: "citation", id: A, raw: `[[cite:${A}]]` },
        { type: "citation", id: A, raw: `[${A}]` },
        { type: "marker", kind: "num", value: "n_1", raw: "[[num:n_1]]" },
        { type: "marker", kind: "block", value: "pub_x", raw: "[[block:pub_x]]" },
      ],
    );
  });

  test("a marker inside strong text is still a marker, and its underscores are not emphasis", () => {
    const [strong] = parseInline(`**营收 [[cite:cite_a_b_c]]**`);
    assert.equal(strong.type, "strong");
    assert.deepEqual(strong.children[1], { type: "citation", id: "cite_a_b_c", raw: "[[cite:cite_a_b_c]]" });
  });

  test("a backslash before a marker does not hide it (the server still counts it)", () => {
    assert.equal(parseInline(`\\[[cite:${A}]]`).find((n) => n.type === "citation")?.id, A);
  });

  test("the default renderer shows a citation as a plain span with its marker text", () => {
    assert.equal(html(`x [[cite:${A}]]`).out, `<p>x <span .st-cite citationId=${A}>[[cite:${A}]]</span></p>`);
  });
});

describe("hostile Markdown renders as text and builds no active element", () => {
  const ACTIVE = ["A", "IMG", "SCRIPT", "IFRAME", "OBJECT", "EMBED", "STYLE", "LINK", "FORM", "INPUT", "SVG", "VIDEO", "AUDIO", "META", "BASE"];

  function assertInert(doc) {
    const active = doc.created.filter((tag) => ACTIVE.includes(tag));
    assert.deepEqual(active, []);
  }

  test("a javascript: link is its text and URL, as text", () => {
    const { out, doc } = html("[点我](javascript:alert(1))");
    assert.equal(out, '<p><span .md-link>点我<span .md-url> (javascript:alert(1))</span></span></p>');
    assertInert(doc);
  });

  test("a link whose text is a citation ID is no source entry", () => {
    const nodes = parseInline(`[${A}](https://evil.example/${A})`);
    assert.equal(nodes.length, 1);
    assert.equal(nodes[0].type, "link");
    assert.deepEqual(nodes[0].children, [{ type: "text", text: A }]);
  });

  test("an image is its alt text and URL, as text", () => {
    const { out, doc } = html("![图表](https://evil.example/x.png)", { labels: { image: "图片" } });
    assert.equal(out, '<p><span .md-image>[图片: 图表]<span .md-url> (https://evil.example/x.png)</span></span></p>');
    assertInert(doc);
  });

  test("raw HTML inside Markdown, emphasis and tables is literal text", () => {
    const text = [
      "**<img src=x onerror=window.__pwned=1>**",
      "<script>window.__pwned=2</script>",
      "| <iframe src=javascript:alert(1)> | <a href=javascript:alert(1)>x</a> |",
      "|---|---|",
      "| <svg onload=alert(1)> | <style>*{}</style> |",
    ].join("\n\n");
    const { root, doc } = html(text);
    assertInert(doc);
    assert.match(root.textContent, /<img src=x onerror=window\.__pwned=1>/);
    assert.match(root.textContent, /<script>window\.__pwned=2<\/script>/);
    assert.match(root.textContent, /<a href=javascript:alert\(1\)>x<\/a>/);
  });

  test("data: and vbscript: URLs, autolinks and reference-style links are text", () => {
    const { root, doc } = html("[a](data:text/html,<script>alert(1)</script>) <javascript:alert(1)> [b][1]\n\n[1]: javascript:alert(1)");
    assertInert(doc);
    assert.match(root.textContent, /data:text\/html,<script>alert\(1\)<\/script>/);
    assert.match(root.textContent, /<javascript:alert\(1\)>/);
  });

  test("deep nesting is cut off at a bounded depth and long delimiter runs stay text", () => {
    const tree = parseMarkdown(`${"> ".repeat(3000)}x\n\n${"- ".repeat(3000)}y\n\n${"[".repeat(2000)}${"*".repeat(2000)}`);
    const depth = (node) => Math.max(0, ...[...(node.children ?? []), ...(node.items ?? [])].map(depth)) + 1;
    assert.ok(depth(tree) < 40, `depth ${depth(tree)}`);
    assert.equal(inlineText(tree.children.at(-1).children), `${"[".repeat(2000)}${"*".repeat(2000)}`);
  });

  test("the renderer never touches innerHTML (the fake DOM throws if it did)", () => {
    assert.doesNotThrow(() => html("# t\n\n**x** `y` [z](u) ![i](j) <b>k</b>\n\n| a |\n|---|\n| b |"));
  });
});
