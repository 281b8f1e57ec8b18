import { parseInline, parseMarkdown, renderMarkdown } from "/static/sparktide/index.js";

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

/** Strings of the answer renderer and source dialog (templates/console/_answer_strings.html). */
export function answerStrings() {
  const node = document.getElementById("answer-strings");
  return node ? { ...node.dataset } : {};
}

/**
 * "第 1 页 · 第 3 段": where a source is, for a reader. UTF-16 offsets are not a place a person
 * can find; they go to sourceOffsets (the dialog's details line).
 * @param {any} sourceRef  public sourceRef of citation.created / the preview
 * @param {any} ui  console strings (ui.page, ui.paragraph)
 * @param {{page?: number, paragraph?: number} | null} [location]  the preview's `location`, if any
 */
export function sourceLocation(sourceRef, ui, location = null) {
  const parts = [];
  const page = present(location?.page) ? location.page : sourceRef && typeof sourceRef === "object" ? sourceRef.page : undefined;
  if (present(page)) parts.push(format(ui.page, { page }));
  if (present(location?.paragraph) && ui.paragraph) parts.push(format(ui.paragraph, { paragraph: location.paragraph }));
  return parts.join(" · ");
}

/** "UTF-16 位置 0–120" from a sourceRef's locator, or "". */
export function sourceOffsets(sourceRef, ui) {
  const locator = sourceRef && typeof sourceRef === "object" ? sourceRef.locator : null;
  if (!locator || typeof locator !== "object" || !("start" in locator) || !("end" in locator)) return "";
  return format(ui.offsets ?? ui.locator, { start: locator.start, end: locator.end });
}

function present(value) {
  return value !== undefined && value !== null && value !== "";
}

/**
 * An answer body as safe Markdown (the SDK's parseMarkdown/renderMarkdown) in a
 * `div.answer-text`, with every citation marker a chip in the state `stateOf(id)` gives:
 *   pending     a span "待核验" — no source entry before the root call's final check;
 *   verified    a button with the source's number in the 回答来源区 → 查看来源片段;
 *   unverified  a span "来源未核验", not clickable.
 * `[[num:…]]` / `[[block:…]]` markers are their literal text, styled as a marker.
 * @param {string | object} text  Markdown text, or a tree the SDK already parsed (markdownFor)
 * @param {{stateOf: (id: string) => {status: string, citation?: any}, numbers: Map<string, number>, ui: any}} options
 */
export function answerNode(text, { stateOf, numbers, ui }) {
  const node = el("div", { className: "answer-text md" });
  node.append(
    renderMarkdown(typeof text === "string" ? parseMarkdown(text) : text, {
      document,
      citation: (marker) => citationChip(marker, stateOf(marker.id), numbers, ui),
      marker: (marker) => markerNode(marker, ui),
      labels: { image: ui.image },
    }),
  );
  return node;
}

/** One cell of a table block: inline Markdown with the same chips. */
function cellNodes(text, options) {
  const fragment = document.createDocumentFragment();
  const paragraph = { type: "root", children: [{ type: "paragraph", children: parseInline(text) }] };
  const rendered = renderMarkdown(paragraph, {
    document,
    citation: (marker) => citationChip(marker, options.stateOf(marker.id), options.numbers, options.ui),
    marker: (marker) => markerNode(marker, options.ui),
    labels: { image: options.ui.image },
  });
  // Unwrap the <p>: a cell is one line of inline content.
  for (const p of [...rendered.childNodes]) fragment.append(...p.childNodes);
  return fragment;
}

export function citationChip(marker, state, numbers, ui) {
  const status = state?.status ?? "pending";
  if (status === "verified") {
    const number = numbers.get(marker.id) ?? "?";
    const unavailable = state.citation?.unavailable;
    if (unavailable) {
      // Its source may not be previewed now (checked when the page rendered): a disabled chip
      // with the reason; the number still points at its entry in the 回答来源区.
      return el("button", {
        className: "cite-chip is-verified is-unavailable",
        text: String(number),
        attrs: { type: "button", disabled: "", title: `${state.citation?.title ?? ""} — ${unavailable.reason ?? ""}`, "aria-label": `${ui.viewExcerpt} ${number}: ${unavailable.reason ?? ""}` },
        dataset: { citationId: marker.id, state: "verified", refusal: String(unavailable.code ?? "") },
      });
    }
    return el("button", {
      className: "cite-chip is-verified",
      text: String(number),
      attrs: { type: "button", title: state.citation?.title ?? "", "aria-label": `${ui.viewExcerpt} ${number}` },
      dataset: { action: "preview", citationId: marker.id, state: "verified" },
    });
  }
  if (status === "unverified") {
    return el("span", {
      className: "cite-chip is-unverified",
      text: ui.citeUnverified,
      attrs: { title: `${ui.citeUnverifiedTitle} ${marker.id}` },
      dataset: { citationId: marker.id, state: "unverified" },
    });
  }
  return el("span", {
    className: "cite-chip is-pending",
    text: ui.citePending,
    attrs: { title: ui.citePendingTitle },
    dataset: { citationId: marker.id, state: "pending" },
  });
}

function markerNode(marker, ui) {
  return el("span", {
    className: "marker",
    text: marker.raw,
    attrs: { title: marker.kind === "num" ? ui.numMarkerTitle : ui.blockMarkerTitle },
    dataset: { markerKind: marker.kind },
  });
}

/** A table block: every cell is inline Markdown (text, emphasis, code, chips). */
export function tableNode(content, options) {
  const head = el("tr", {}, (content.columns ?? []).map((c) => el("th", {}, [cellNodes(String(c), options)])));
  const rows = (content.rows ?? []).map((row) =>
    el("tr", {}, (Array.isArray(row) ? row : []).map((c) => el("td", {}, [cellNodes(String(c), options)]))),
  );
  return el("div", { className: "table-wrap" }, [
    el("table", { className: "list compact answer-table" }, [el("thead", {}, [head]), el("tbody", {}, rows)]),
  ]);
}

/** The source badge of a block, in the state the SDK's blockSourceStatus gives. */
export function sourceBadge(status, strings, ui) {
  if (status === "protected") return el("span", { className: "badge badge-bad", text: ui.protected, dataset: { role: "hint", status } });
  const label = status === "pending" ? ui.hintPending : (strings.sourceHint[status] ?? status);
  return el("span", { className: `badge hint-${status}`, text: label, dataset: { role: "hint", status } });
}

// --- times ---------------------------------------------------------------------------------

const formatters = new Map();

function formatter(zone, withDate) {
  const key = `${zone}|${withDate}`;
  if (!formatters.has(key)) {
    const options = { timeZone: zone, hour: "2-digit", minute: "2-digit", second: "2-digit", hourCycle: "h23" };
    if (withDate) Object.assign(options, { year: "numeric", month: "2-digit", day: "2-digit" });
    formatters.set(key, new Intl.DateTimeFormat("sv-SE", options)); // ISO-like "2026-12-01 17:05:09"
  }
  return formatters.get(key);
}

/** A valid IANA zone name, or the console's default. */
export function displayZone(zone) {
  const fallback = "Asia/Shanghai";
  try {
    new Intl.DateTimeFormat("en", { timeZone: zone || fallback });
    return zone || fallback;
  } catch {
    return fallback;
  }
}

/** "2026-12-01 17:05:09" (or "17:05:09" without the date) in `zone`; "" for a bad date. */
export function formatTime(value, zone, { withDate = true } = {}) {
  const date = value instanceof Date ? value : new Date(value);
  if (Number.isNaN(date.getTime())) return "";
  return formatter(zone, withDate).format(date);
}

/** "Asia/Shanghai (GMT+8)" */
export function zoneLabel(zone, at = new Date()) {
  try {
    const part = new Intl.DateTimeFormat("en", { timeZone: zone, timeZoneName: "shortOffset" })
      .formatToParts(at)
      .find((p) => p.type === "timeZoneName");
    return part ? `${zone} (${part.value})` : zone;
  } catch {
    return zone;
  }
}
