/**
 * 运行详情: the page is server-rendered; this script only runs the source dialog.
 *
 * The admin's session never suffices for a preview (the endpoint answers 404 to anyone but
 * the run's owner), so 查看来源片段 asks for the owner's token by hand. The token is kept in
 * this module's memory for the page only — never stored, forgotten on pagehide — and without
 * it no request is made at all.
 */

import { SparkTideClient } from "/static/sparktide/index.js";
import { readJson } from "./dom.js";
import { SourceDialog } from "./preview.js";

const strings = readJson("console-strings");
const sources = new Map((readJson("run-sources") ?? []).map((citation) => [citation.id, citation]));
const root = document.querySelector("[data-run-detail]");
const runId = root.dataset.run;

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
