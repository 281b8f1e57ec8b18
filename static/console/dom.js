/**
 * Small DOM helpers of the console pages. Untrusted text (model output, source excerpts,
 * titles) only ever becomes a text node or an attribute value: nothing here parses HTML.
 */

/**
 * @param {string} tag
 * @param {{className?: string, text?: string, attrs?: Record<string,string>, dataset?: Record<string,string>, hidden?: boolean}} [options]
 * @param {(Node|string|null|undefined)[]} [children]
 */
export function el(tag, { className, text, attrs, dataset, hidden } = {}, children = []) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined && text !== null) node.textContent = String(text);
  for (const [name, value] of Object.entries(attrs ?? {})) node.setAttribute(name, String(value));
  for (const [name, value] of Object.entries(dataset ?? {})) node.dataset[name] = String(value);
  if (hidden) node.hidden = true;
  for (const child of children) {
    if (child === null || child === undefined) continue;
    node.append(typeof child === "string" ? document.createTextNode(child) : child);
  }
  return node;
}

/** Data the server put on the page with json_script (a non-executable JSON block). */
export function readJson(id) {
  const node = document.getElementById(id);
  return node ? JSON.parse(node.textContent) : null;
}

/** "第 %(page)s 页" + {page: 2} → "第 2 页" (Django's named-placeholder style). */
export function format(template, params = {}) {
  return String(template).replace(/%\(([a-z_]+)\)s/gi, (whole, name) =>
    Object.hasOwn(params, name) ? String(params[name]) : whole,
  );
}

/** "第 1 页 · 位置 0–120" from a public sourceRef. */
export function sourceLocation(sourceRef, ui) {
  if (!sourceRef || typeof sourceRef !== "object") return "";
  const parts = [];
  if (sourceRef.page !== undefined && sourceRef.page !== null) parts.push(format(ui.page, { page: sourceRef.page }));
  const locator = sourceRef.locator;
  if (locator && typeof locator === "object" && "start" in locator && "end" in locator) {
    parts.push(format(ui.locator, { start: locator.start, end: locator.end }));
  }
  return parts.join(" · ");
}

// The marker grammar of citations/markers.py: any such marker left in a *text* segment is
// an untrusted claim (unverified, unknown, another call's, a numeric or block marker). It is
// shown literally, only styled apart, so a reader sees it is not a source entry.
const LEFTOVER_MARKER = /\[\[(?:cite|num|block):[^[\]\s]{0,200}\]\]|(?<!\[)\[cite_[A-Za-z0-9_-]{0,200}\](?![\](])/g;

/**
 * Append answer segments (from the SDK's answerSegments) to `container` as text nodes and
 * source chips. `numbers` maps a VERIFIED citation ID to its number in the 回答来源区.
 * @param {HTMLElement} container
 * @param {readonly {type: string, text?: string, id?: string, citation?: any}[]} segments
 * @param {{numbers: Map<string, number>, ui: any}} options
 */
export function appendSegments(container, segments, { numbers, ui }) {
  for (const segment of segments) {
    if (segment.type === "citation") {
      const number = numbers.get(segment.id) ?? "?";
      container.append(
        el("button", {
          className: "cite-chip",
          text: String(number),
          attrs: { type: "button", title: segment.citation?.title ?? "", "aria-label": `${ui.viewExcerpt} ${number}` },
          dataset: { action: "preview", citationId: segment.id },
        }),
      );
    } else {
      appendTextWithMarkers(container, segment.text ?? "", ui);
    }
  }
}

function appendTextWithMarkers(container, text, ui) {
  let position = 0;
  for (const match of text.matchAll(LEFTOVER_MARKER)) {
    if (match.index > position) container.append(document.createTextNode(text.slice(position, match.index)));
    container.append(el("span", { className: "marker", text: match[0], attrs: { title: ui.unverifiedMarker } }));
    position = match.index + match[0].length;
  }
  if (position < text.length) container.append(document.createTextNode(text.slice(position)));
}

/** A table block: every cell is text. */
export function tableNode(content) {
  const head = el("tr", {}, (content.columns ?? []).map((c) => el("th", { text: String(c) })));
  const rows = (content.rows ?? []).map((row) => el("tr", {}, (Array.isArray(row) ? row : []).map((c) => el("td", { text: String(c) }))));
  return el("div", { className: "table-wrap" }, [
    el("table", { className: "list compact answer-table" }, [el("thead", {}, [head]), el("tbody", {}, rows)]),
  ]);
}
