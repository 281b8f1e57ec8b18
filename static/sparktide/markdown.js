/**
 * Safe Markdown for answer text: a small subset parsed to a plain node tree, and a DOM builder
 * that only ever calls createElement / createTextNode / textContent. No HTML is parsed or built.
 *
 * Blocks: paragraphs, ATX headings (# … ######), fenced code (``` or ~~~), unordered and ordered
 * lists (nested by indentation), GFM pipe tables, block quotes and thematic breaks.
 * Inline: *emphasis*, **strong**, ~~strike~~, `code`, hard and soft line breaks, backslash escapes.
 *
 * Untrusted on purpose:
 *   - a link `[text](url)` is a `link` node rendered as its text followed by its URL, both as text:
 *     never an <a>, never a source entry, whatever the URL (javascript:, data:, a cite_ ID…);
 *   - an image `![alt](url)` is an `image` node rendered as its alt text and URL, as text;
 *   - raw HTML (`<img onerror=…>`, `<script>`) is ordinary text and shows literally;
 *   - a citation marker (the grammar of ./markers.js, as on the server) is a `citation` node the
 *     caller renders as a chip from the run's verification (see citationState in ./segments.js);
 *     `[[num:…]]` and `[[block:…]]` are `marker` nodes shown as their literal text.
 * Markers are recognised everywhere except inside code, which is always literal.
 *
 * Nesting is bounded (MAX_DEPTH) so hostile input cannot exhaust the stack, and emphasis uses
 * CommonMark's delimiter algorithm with its "openers bottom", so it stays linear.
 *
 * @module sparktide/markdown
 */

import { markerAt } from "./markers.js";

const MAX_DEPTH = 12;
// Bounds on how far one "[" or "`" looks ahead, so text full of them stays linear.
const MAX_LABEL = 1000;
const MAX_URL = 2048;

/**
 * @typedef {{type: "text", text: string}
 *   | {type: "strong" | "em" | "del", children: Inline[]}
 *   | {type: "code", text: string}
 *   | {type: "break"}
 *   | {type: "link", children: Inline[], url: string}
 *   | {type: "image", alt: string, url: string}
 *   | {type: "citation", id: string, raw: string}
 *   | {type: "marker", kind: "num" | "block", value: string, raw: string}} Inline
 * @typedef {{type: "paragraph", children: Inline[]}
 *   | {type: "heading", level: number, children: Inline[]}
 *   | {type: "code_block", lang: string, text: string}
 *   | {type: "list", ordered: boolean, start: number, items: {children: Block[]}[]}
 *   | {type: "table", align: ("left"|"center"|"right"|null)[], head: Inline[][], rows: Inline[][][]}
 *   | {type: "blockquote", children: Block[]}
 *   | {type: "hr"}} Block
 * @typedef {{type: "root", children: Block[]}} Root
 */

// ---- blocks ---------------------------------------------------------------------------------

const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([^`\s]*)[^`]*$/;
const HEADING = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;
const HR = /^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/;
const QUOTE = /^ {0,3}> ?/;
const ITEM = /^( {0,3})([-+*]|\d{1,9}[.)])(?:([ \t]+)(.*)|$)/;
const TABLE_DELIMITER = /^ {0,3}\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$/;

/**
 * @param {string} text
 * @returns {Root}
 */
export function parseMarkdown(text) {
  const lines = String(text ?? "")
    .replace(/\r\n?/g, "\n")
    .split("\n");
  return { type: "root", children: parseBlocks(lines, 0) };
}

/** @param {string[]} lines @param {number} depth @returns {Block[]} */
function parseBlocks(lines, depth) {
  /** @type {Block[]} */
  const blocks = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (isBlank(line)) {
      i += 1;
      continue;
    }
    let match;
    if ((match = FENCE.exec(line))) {
      const fence = match[1];
      const indent = line.length - line.trimStart().length;
      const body = [];
      i += 1;
      while (i < lines.length && !closesFence(lines[i], fence)) {
        body.push(stripIndent(lines[i], indent));
        i += 1;
      }
      i += 1; // the closing fence (or the end: an unclosed fence runs to the end of the text)
      blocks.push({ type: "code_block", lang: match[2], text: body.join("\n") });
      continue;
    }
    if ((match = HEADING.exec(line))) {
      blocks.push({ type: "heading", level: match[1].length, children: parseInline(match[2] ?? "") });
      i += 1;
      continue;
    }
    if (HR.test(line)) {
      blocks.push({ type: "hr" });
      i += 1;
      continue;
    }
    if (QUOTE.test(line) && depth < MAX_DEPTH) {
      const body = [];
      while (i < lines.length && !isBlank(lines[i]) && (QUOTE.test(lines[i]) || !startsBlock(lines[i]))) {
        body.push(lines[i].replace(QUOTE, ""));
        i += 1;
      }
      blocks.push({ type: "blockquote", children: parseBlocks(body, depth + 1) });
      continue;
    }
    if (ITEM.test(line) && depth < MAX_DEPTH) {
      const parsed = parseList(lines, i, depth);
      blocks.push(parsed.list);
      i = parsed.next;
      continue;
    }
    if (isTableStart(lines, i)) {
      const parsed = parseTable(lines, i);
      blocks.push(parsed.table);
      i = parsed.next;
      continue;
    }
    const body = [line];
    i += 1;
    while (i < lines.length && !isBlank(lines[i]) && !startsBlock(lines[i]) && !isTableStart(lines, i)) {
      body.push(lines[i]);
      i += 1;
    }
    blocks.push({ type: "paragraph", children: parseInline(body.map((l) => l.trim()).join("\n")) });
  }
  return blocks;
}

function isBlank(line) {
  return line.trim() === "";
}

function startsBlock(line) {
  return FENCE.test(line) || HEADING.test(line) || HR.test(line) || QUOTE.test(line) || ITEM.test(line);
}

function closesFence(line, fence) {
  const trimmed = line.trim();
  return trimmed.length >= fence.length && trimmed === fence[0].repeat(trimmed.length) && /^ {0,3}\S/.test(line);
}

function stripIndent(line, count) {
  let n = 0;
  while (n < count && line[n] === " ") n += 1;
  return line.slice(n);
}

/** A list: consecutive items of the same kind; an item's lines are those indented under it. */
function parseList(lines, start, depth) {
  const first = ITEM.exec(lines[start]);
  const ordered = /\d/.test(first[2]);
  const delimiter = first[2].slice(-1);
  const items = [];
  let i = start;
  while (i < lines.length) {
    const match = ITEM.exec(lines[i]);
    if (!match || /\d/.test(match[2]) !== ordered || match[2].slice(-1) !== delimiter) break;
    const content = match[1].length + match[2].length + Math.min((match[3] ?? " ").length, 4);
    const body = [match[4] ?? ""];
    i += 1;
    let blankBefore = false;
    while (i < lines.length) {
      const line = lines[i];
      if (isBlank(line)) {
        blankBefore = true;
        body.push("");
        i += 1;
        continue;
      }
      const indent = line.length - line.trimStart().length;
      if (indent >= content) {
        body.push(line.slice(content));
      } else if (!blankBefore && !startsBlock(line) && !isTableStart(lines, i)) {
        body.push(line); // a lazy continuation of the item's paragraph
      } else {
        break;
      }
      blankBefore = false;
      i += 1;
    }
    while (body.length && isBlank(body[body.length - 1])) body.pop();
    items.push({ children: parseBlocks(body, depth + 1) });
    // A blank line then something that is not an item of this list ends it.
    if (i < lines.length && !ITEM.test(lines[i])) break;
  }
  // Trailing blank lines consumed inside the last item are not part of the list.
  return { list: { type: "list", ordered, start: ordered ? Number.parseInt(first[2], 10) : 1, items }, next: i };
}

function splitRow(line) {
  let row = line.trim();
  if (row.startsWith("|")) row = row.slice(1);
  if (row.endsWith("|") && !row.endsWith("\\|")) row = row.slice(0, -1);
  const cells = [];
  let cell = "";
  let code = 0;
  for (let k = 0; k < row.length; k += 1) {
    const ch = row[k];
    if (ch === "\\" && row[k + 1] === "|") {
      cell += "|";
      k += 1;
    } else if (ch === "`") {
      code ^= 1;
      cell += ch;
    } else if (ch === "|" && !code) {
      cells.push(cell.trim());
      cell = "";
    } else {
      cell += ch;
    }
  }
  cells.push(cell.trim());
  return cells;
}

function isTableStart(lines, i) {
  if (i + 1 >= lines.length || !lines[i].includes("|") || !TABLE_DELIMITER.test(lines[i + 1])) return false;
  return splitRow(lines[i]).length === splitRow(lines[i + 1]).length;
}

function parseTable(lines, start) {
  const head = splitRow(lines[start]);
  const align = splitRow(lines[start + 1]).map((cell) => {
    const left = cell.startsWith(":");
    const right = cell.endsWith(":");
    return left && right ? "center" : right ? "right" : left ? "left" : null;
  });
  const rows = [];
  let i = start + 2;
  while (i < lines.length && !isBlank(lines[i]) && lines[i].includes("|") && !startsBlock(lines[i])) {
    const cells = splitRow(lines[i]);
    rows.push(head.map((_, column) => parseInline(cells[column] ?? "")));
    i += 1;
  }
  return { table: { type: "table", align, head: head.map((cell) => parseInline(cell)), rows }, next: i };
}

// ---- inline ---------------------------------------------------------------------------------

const ESCAPABLE = /[!-/:-@[-`{-~]/;
const SPACE = /\s/u;
const PUNCTUATION = /[\p{P}\p{S}]/u;
const WORD = /[\p{L}\p{N}]/u;

/**
 * @param {string} text
 * @returns {Inline[]}
 */
export function parseInline(text) {
  return new InlineParser(String(text ?? ""), 0).parse();
}

class InlineParser {
  constructor(text, depth) {
    this.text = text;
    this.depth = depth;
    /** Nodes in a doubly linked list, so emphasis can wrap a range without reindexing. */
    this.head = null;
    this.tail = null;
    this.delimiters = [];
    this.buffer = "";
    /** Backtick run lengths known to have no closer further on (the rest only gets shorter). */
    this.unclosed = new Set();
  }

  parse() {
    const { text } = this;
    let i = 0;
    while (i < text.length) {
      const ch = text[i];
      if (ch === "[") {
        const marker = markerAt(text, i);
        if (marker) {
          this.push(
            marker.kind === "cite"
              ? { type: "citation", id: marker.value, raw: marker.raw }
              : { type: "marker", kind: marker.kind, value: marker.value, raw: marker.raw },
          );
          i = marker.end;
          continue;
        }
        const link = this.depth < MAX_DEPTH ? linkAt(text, i) : null;
        if (link) {
          this.push({ type: "link", children: new InlineParser(link.label, this.depth + 1).parse(), url: link.url });
          i = link.end;
          continue;
        }
      } else if (ch === "!" && text[i + 1] === "[") {
        const link = linkAt(text, i + 1);
        if (link) {
          this.push({ type: "image", alt: link.label, url: link.url });
          i = link.end;
          continue;
        }
      } else if (ch === "\\") {
        const next = text[i + 1];
        if (next === "\n") {
          this.push({ type: "break" });
          i += 2;
          continue;
        }
        // "\[[cite:…]]" is still a marker to the server: keep the backslash, read the marker.
        if (next !== undefined && ESCAPABLE.test(next) && !(next === "[" && markerAt(text, i + 1))) {
          this.buffer += next;
          i += 2;
          continue;
        }
      } else if (ch === "`") {
        const code = codeSpanAt(text, i, this.unclosed);
        if (code) {
          this.push({ type: "code", text: code.text });
          i = code.end;
          continue;
        }
        const run = runLength(text, i, "`");
        this.buffer += text.slice(i, i + run); // unmatched backticks are literal
        i += run;
        continue;
      } else if (ch === "\n") {
        this.buffer = this.buffer.replace(/ +$/, "");
        this.push({ type: "break" });
        i += 1;
        while (text[i] === " ") i += 1;
        continue;
      } else if (ch === "*" || ch === "_" || ch === "~") {
        const run = runLength(text, i, ch);
        if (ch !== "~" || run === 2) {
          this.delimiter(ch, run, text[i - 1], text[i + run]);
          i += run;
          continue;
        }
        this.buffer += text.slice(i, i + run);
        i += run;
        continue;
      }
      this.buffer += ch;
      i += 1;
    }
    this.flush();
    this.processEmphasis();
    return this.collect(this.head, null);
  }

  flush() {
    if (this.buffer === "") return;
    const text = this.buffer;
    this.buffer = "";
    this.link({ type: "text", text });
  }

  push(node) {
    this.flush();
    this.link(node);
  }

  link(node) {
    const item = { node, prev: this.tail, next: null };
    if (this.tail) this.tail.next = item;
    else this.head = item;
    this.tail = item;
    return item;
  }

  delimiter(char, count, before, after) {
    this.flush();
    const prevSpace = before === undefined || SPACE.test(before);
    const nextSpace = after === undefined || SPACE.test(after);
    let canOpen;
    let canClose;
    if (char === "_") {
      // Never inside a word: snake_case and cite_ IDs stay text.
      canOpen = !nextSpace && !(before !== undefined && WORD.test(before));
      canClose = !prevSpace && !(after !== undefined && WORD.test(after));
    } else if (char === "*") {
      // Relaxed for CJK: "**营收：**12%" is strong although "：" is punctuation.
      canOpen = !nextSpace;
      canClose = !prevSpace;
    } else {
      canOpen = !nextSpace;
      canClose = !prevSpace;
    }
    const item = this.link({ type: "text", text: char.repeat(count) });
    if (canOpen || canClose) this.delimiters.push({ char, count, original: count, item, canOpen, canClose, active: true });
  }

  /** CommonMark "process emphasis" over the whole delimiter list. */
  processEmphasis() {
    const list = this.delimiters;
    const bottoms = new Map(); // char + closer-kind → lowest index an opener may be found at
    for (let c = 0; c < list.length; c += 1) {
      const closer = list[c];
      if (!closer.canClose || !closer.active) continue;
      while (closer.count > 0) {
        const key = `${closer.char}${closer.canOpen ? 1 : 0}${closer.original % 3}`;
        const bottom = bottoms.get(key) ?? -1;
        let o = c - 1;
        let opener = null;
        for (; o > bottom; o -= 1) {
          const candidate = list[o];
          if (!candidate.active || candidate.char !== closer.char || !candidate.canOpen || candidate.count === 0) continue;
          const oddMatch =
            (candidate.canClose || closer.canOpen) &&
            (candidate.original + closer.original) % 3 === 0 &&
            !(candidate.original % 3 === 0 && closer.original % 3 === 0);
          if (candidate.char !== "~" && oddMatch) continue;
          opener = candidate;
          break;
        }
        if (!opener) {
          bottoms.set(key, c - 1);
          break;
        }
        const use = closer.char === "~" ? 2 : opener.count >= 2 && closer.count >= 2 ? 2 : 1;
        if (closer.char === "~" && (opener.count < 2 || closer.count < 2)) break;
        opener.count -= use;
        closer.count -= use;
        opener.item.node.text = opener.item.node.text.slice(use);
        closer.item.node.text = closer.item.node.text.slice(use);
        const type = closer.char === "~" ? "del" : use === 2 ? "strong" : "em";
        this.wrap(opener.item, closer.item, type);
        for (let k = o + 1; k < c; k += 1) list[k].active = false; // delimiters inside are spent
        if (opener.count === 0) opener.active = false;
      }
      if (closer.count === 0) closer.active = false;
    }
  }

  /** Move the nodes strictly between two delimiter items into one new element node. */
  wrap(openerItem, closerItem, type) {
    const children = this.collect(openerItem.next, closerItem);
    const item = { node: { type, children }, prev: openerItem, next: closerItem };
    openerItem.next = item;
    closerItem.prev = item;
  }

  /** The nodes from `start` up to (not including) `end`, empty delimiter texts dropped, texts merged. */
  collect(start, end) {
    const nodes = [];
    for (let item = start; item && item !== end; item = item.next) {
      const { node } = item;
      if (node.type === "text") {
        if (node.text === "") continue;
        const last = nodes[nodes.length - 1];
        if (last && last.type === "text") {
          nodes[nodes.length - 1] = { type: "text", text: last.text + node.text };
          continue;
        }
        nodes.push({ type: "text", text: node.text });
      } else {
        nodes.push(node);
      }
    }
    return nodes;
  }
}

function runLength(text, i, char) {
  let n = i;
  while (text[n] === char) n += 1;
  return n - i;
}

function codeSpanAt(text, i, unclosed) {
  const run = runLength(text, i, "`");
  if (unclosed.has(run)) return null;
  let k = i + run;
  while (k < text.length) {
    const next = text.indexOf("`", k);
    if (next === -1) break;
    const closing = runLength(text, next, "`");
    if (closing === run) {
      let body = text.slice(i + run, next).replace(/\n/g, " ");
      if (body.length > 2 && body.startsWith(" ") && body.endsWith(" ") && body.trim() !== "") body = body.slice(1, -1);
      return { text: body, end: next + closing };
    }
    k = next + closing;
  }
  unclosed.add(run);
  return null;
}

/** `[label](url "title")` starting at `i` (the "["), or null. Nested brackets are balanced. */
function linkAt(text, i) {
  let depth = 0;
  let k = i;
  const labelEnd = Math.min(text.length, i + MAX_LABEL);
  for (; k < labelEnd; k += 1) {
    const ch = text[k];
    if (ch === "\\") {
      k += 1;
    } else if (ch === "[") {
      depth += 1;
    } else if (ch === "]") {
      depth -= 1;
      if (depth === 0) break;
    } else if (ch === "\n" && text[k + 1] === "\n") {
      return null;
    }
  }
  if (depth !== 0 || text[k + 1] !== "(") return null;
  const label = text.slice(i + 1, k);
  let m = k + 2;
  let parens = 0;
  let url = "";
  if (text[m] === "<") {
    const close = text.indexOf(">", m);
    if (close === -1) return null;
    url = text.slice(m + 1, close);
    m = close + 1;
  } else {
    const urlEnd = Math.min(text.length, m + MAX_URL);
    for (; m < urlEnd; m += 1) {
      const ch = text[m];
      if (SPACE.test(ch)) break;
      if (ch === "(") parens += 1;
      if (ch === ")") {
        if (parens === 0) break;
        parens -= 1;
      }
      url += ch;
    }
  }
  // An optional title, ignored (it is never shown as anything but text anyway).
  const rest = /^[ \t]*(?:"[^"]*"|'[^']*'|\([^)]*\))?[ \t]*\)/.exec(text.slice(m));
  if (!rest) return null;
  return { label, url, end: m + rest[0].length };
}

// ---- DOM ------------------------------------------------------------------------------------

const BLOCK_TAGS = { paragraph: "p", blockquote: "blockquote", hr: "hr" };
const INLINE_TAGS = { strong: "strong", em: "em", del: "del", code: "code" };

/**
 * Build DOM nodes for a parsed tree (or Markdown text). Everything untrusted becomes a text node.
 * @param {Root | string} tree
 * @param {object} [options]
 * @param {Document} [options.document]  defaults to globalThis.document
 * @param {(node: {id: string, raw: string}) => Node} [options.citation]  builds a chip; by default
 *   a `<span class="st-cite" data-citation-id>` with the marker text
 * @param {(node: {kind: string, value: string, raw: string}) => Node} [options.marker]
 * @param {{image?: string}} [options.labels]  the word shown before an image's alt text
 * @returns {DocumentFragment}
 */
export function renderMarkdown(tree, options = {}) {
  const doc = options.document ?? globalThis.document;
  const root = typeof tree === "string" ? parseMarkdown(tree) : tree;
  const build = new Builder(doc, options);
  const fragment = doc.createDocumentFragment();
  for (const block of root.children ?? []) fragment.append(build.block(block));
  return fragment;
}

class Builder {
  constructor(doc, options) {
    this.doc = doc;
    this.options = options;
    this.imageLabel = options.labels?.image ?? "image";
  }

  el(tag, className) {
    const node = this.doc.createElement(tag);
    if (className) node.className = className;
    return node;
  }

  text(value) {
    return this.doc.createTextNode(String(value));
  }

  block(block) {
    switch (block.type) {
      case "heading": {
        // Answer headings sit inside a page that has its own h1/h2: shift them down.
        const node = this.el(`h${Math.min(6, block.level + 2)}`, "md-heading");
        node.dataset.level = String(block.level);
        this.inlines(node, block.children);
        return node;
      }
      case "code_block": {
        const pre = this.el("pre", "md-code");
        const code = this.el("code");
        code.textContent = block.text;
        if (block.lang) code.dataset.lang = block.lang;
        pre.append(code);
        return pre;
      }
      case "list": {
        const list = this.el(block.ordered ? "ol" : "ul", "md-list");
        if (block.ordered && block.start !== 1) list.setAttribute("start", String(block.start));
        for (const item of block.items) {
          const li = this.el("li");
          // Lists are shown tight: an item's paragraphs are lines of the item, not <p>s.
          item.children.forEach((child, index) => {
            if (child.type !== "paragraph") return li.append(this.block(child));
            if (index > 0) li.append(this.el("br"));
            this.inlines(li, child.children);
          });
          list.append(li);
        }
        return list;
      }
      case "table": {
        const wrap = this.el("div", "md-table-wrap");
        const table = this.el("table", "md-table");
        const headRow = this.el("tr");
        block.head.forEach((cell, column) => headRow.append(this.cell("th", cell, block.align[column])));
        const thead = this.el("thead");
        thead.append(headRow);
        const tbody = this.el("tbody");
        for (const row of block.rows) {
          const tr = this.el("tr");
          row.forEach((cell, column) => tr.append(this.cell("td", cell, block.align[column])));
          tbody.append(tr);
        }
        table.append(thead, tbody);
        wrap.append(table);
        return wrap;
      }
      case "blockquote": {
        const node = this.el("blockquote", "md-quote");
        for (const child of block.children) node.append(this.block(child));
        return node;
      }
      case "hr":
        return this.el("hr", "md-hr");
      default: {
        const node = this.el(BLOCK_TAGS[block.type] ?? "p");
        this.inlines(node, block.children ?? []);
        return node;
      }
    }
  }

  cell(tag, inlines, align) {
    // A class, not a style attribute: pages may forbid inline styles (CSP style-src 'self').
    const node = this.el(tag, align ? `md-align-${align}` : "");
    this.inlines(node, inlines);
    return node;
  }

  inlines(parent, nodes) {
    for (const node of nodes) parent.append(this.inline(node));
  }

  inline(node) {
    switch (node.type) {
      case "text":
        return this.text(node.text);
      case "break":
        return this.el("br");
      case "code": {
        const code = this.el("code", "md-code-inline");
        code.textContent = node.text;
        return code;
      }
      case "strong":
      case "em":
      case "del": {
        const element = this.el(INLINE_TAGS[node.type]);
        this.inlines(element, node.children);
        return element;
      }
      case "link": {
        // Text and URL, both as text: never a link, never a source entry.
        const span = this.el("span", "md-link");
        this.inlines(span, node.children);
        const url = this.el("span", "md-url");
        url.textContent = ` (${node.url})`;
        span.append(url);
        return span;
      }
      case "image": {
        const span = this.el("span", "md-image");
        span.textContent = `[${this.imageLabel}: ${node.alt}]`;
        const url = this.el("span", "md-url");
        url.textContent = ` (${node.url})`;
        span.append(url);
        return span;
      }
      case "citation":
        if (this.options.citation) return this.options.citation(node);
        return this.chip("st-cite", node.raw, { citationId: node.id });
      case "marker":
        if (this.options.marker) return this.options.marker(node);
        return this.chip("st-marker", node.raw, { markerKind: node.kind });
      default:
        return this.text("");
    }
  }

  chip(className, text, dataset) {
    const span = this.el("span", className);
    span.textContent = text;
    for (const [key, value] of Object.entries(dataset)) span.dataset[key] = value;
    return span;
  }
}

/**
 * The plain text of inline nodes (a chip is its marker text): for titles, tests and search.
 * @param {Inline[]} nodes
 */
export function inlineText(nodes) {
  return nodes
    .map((node) => {
      if (node.type === "text" || node.type === "code") return node.text;
      if (node.type === "break") return "\n";
      if (node.type === "citation" || node.type === "marker") return node.raw;
      if (node.type === "image") return node.alt;
      if ("children" in node) return inlineText(node.children);
      return "";
    })
    .join("");
}
