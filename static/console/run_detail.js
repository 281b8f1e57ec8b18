/**
 * 运行详情: the page is server-rendered; this script renders the answer bodies as safe Markdown
 * (with citation chips in their verified / 来源未核验 / pending state and block badges that agree
 * with the 回答来源区), shows times in the display time zone, and runs the source dialog.
 *
 * The admin's session never suffices for a preview (the endpoint answers 404 to anyone but
 * the run's owner), so 查看来源片段 asks for the owner's token by hand. The token is kept in
 * this module's memory for the page only — never stored, forgotten on pagehide or as soon as the
 * server refuses it — and without it no request is made at all.
 */

import { SparkTideClient, blockSourceStatus, citationState } from "/static/sparktide/index.js";
import { answerNode, answerStrings, displayZone, format, formatTime, readJson, sourceBadge, tableNode, zoneLabel } from "./dom.js";
import { SourceDialog } from "./preview.js";

const strings = readJson("console-strings");
const ui = { ...strings.ui, ...answerStrings() };
const verifiedSources = readJson("run-sources") ?? [];
const sources = new Map(verifiedSources.map((citation) => [citation.id, citation]));
const root = document.querySelector("[data-run-detail]");
const runId = root.dataset.run;
const zone = displayZone(root.dataset.timeZone);

// --- answer bodies ---------------------------------------------------------------------------

// The page's 回答来源区 in the SDK's terms, so chips and badges follow the one rule of the SDK:
// the sources listed VERIFIED are the root check's VERIFIED references announced exactly.
const ROOT = "root";
const checked = root.dataset.checked === "true";
const context = {
  rootAgentCallId: ROOT,
  citationChecks: checked ? { [ROOT]: { agentCallId: ROOT, references: verifiedSources.map(({ id }) => ({ id, status: "VERIFIED" })) } } : {},
  citations: Object.fromEntries(sources),
  // A run that ended without a check will never get one; a running run's page is a snapshot.
  settled: root.dataset.terminal === "true",
};
const numbers = new Map(verifiedSources.map((citation, index) => [citation.id, index + 1]));
const options = {
  stateOf: (id) => citationState(id, context.rootAgentCallId, context.citationChecks, context.citations, { settled: context.settled }),
  numbers,
  ui,
};

for (const body of document.querySelectorAll("[data-answer-body]")) {
  const data = body.querySelector('script[type="application/json"]');
  if (!data) continue;
  const content = JSON.parse(data.textContent);
  let rendered = null;
  if (content && content.type === "text" && typeof content.text === "string") rendered = answerNode(content.text, options);
  else if (content && content.type === "table") rendered = tableNode(content, options);
  if (!rendered) continue;
  body.replaceChildren(rendered);
  // The badge of this block (or revision) is the SDK's, from its receipt and the final check.
  const holder = body.closest("[data-source-hint]");
  const badge = holder?.querySelector(":scope > header [data-role=hint], :scope > .revision-head [data-role=hint]");
  if (holder && badge && holder.dataset.state !== "protected") {
    const status = blockSourceStatus({ state: holder.dataset.state, sourceHint: holder.dataset.sourceHint, content }, context);
    badge.replaceWith(sourceBadge(status, strings, ui));
  }
}

// --- times -----------------------------------------------------------------------------------

for (const node of document.querySelectorAll("time[data-time]")) {
  const value = node.getAttribute("datetime");
  const text = formatTime(value, zone, { withDate: node.dataset.time === "full" });
  if (!text) continue;
  const ms = node.dataset.time === "clock-ms" ? `.${String(new Date(value).getUTCMilliseconds()).padStart(3, "0")}` : "";
  node.textContent = text + ms;
  node.title = zoneLabel(zone, new Date(value));
}
document.getElementById("time-zone").textContent = format(ui.timeZoneLabel, { zone: zoneLabel(zone) });

// --- the source dialog -----------------------------------------------------------------------

let ownerToken = "";
let client = null;

const dialog = new SourceDialog(/** @type {HTMLDialogElement} */ (document.getElementById("source-dialog")), {
  strings,
  runId: () => runId,
  client: () => client,
  hasToken: () => Boolean(ownerToken),
  needTokenMessage: strings.ui.needToken,
  onToken: (token) => {
    ownerToken = token;
    client = new SparkTideClient({ baseUrl: location.origin, appId: root.dataset.app, token: () => ownerToken || null });
  },
  onForgetToken: forget,
  onTokenRefused: forget,
});

function forget() {
  ownerToken = "";
  client = null;
}

window.addEventListener("pagehide", forget);

root.addEventListener("click", (event) => {
  const button = event.target.closest('[data-action="preview"]');
  if (!button) return;
  const id = button.dataset.citationId;
  // Only VERIFIED sources have a button; the page lists nothing else as previewable.
  const citation = sources.get(id);
  if (!citation) return;
  dialog.open(citation);
});
