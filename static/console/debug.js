/**
 * 运行调试: start a run as a business user and watch it live.
 *
 * The run's owner is whoever the pasted bearer token belongs to, as the server verifies it.
 * The token lives only in this module's memory (and the password field) for the page's life:
 * it is never stored.
 *   - pinned version: SDK createRun with the token (exactly what the business app does);
 *   - another published version: the token goes with the request to the staff-only console
 *     endpoint, which verifies it and creates the run for its owner (start_run checks the
 *     membership), then the page follows it with the same token.
 * Events arrive over WebSocket with a single-use ticket obtained with the token. A
 * ChatSession folds them (preview vs receipt, revisions in place, rejections, conflicts).
 */

import { ChatSession, SparkTideClient, SparkTideError, trustedSources } from "/static/sparktide/index.js";
import { answerNode, answerStrings, displayZone, el, format, formatTime, readJson, sourceBadge, sourceLocation, tableNode, zoneLabel } from "./dom.js";
import { SourceDialog } from "./preview.js";

const strings = readJson("console-strings");
const setup = readJson("debug-setup");
const ui = { ...strings.ui, ...answerStrings() };
const root = document.querySelector("[data-debug]");
const zone = displayZone(root.dataset.timeZone);
const appId = root.dataset.app;
const $ = (id) => document.getElementById(id);

const form = $("debug-form");
const tokenInput = $("owner-token");
const agentSelect = $("agent");
const versionSelect = $("version");
const questionInput = $("question");
const startButton = $("start");
const cancelButton = $("cancel");

/**
 * The run being watched. Its client carries the token captured when it started, so editing
 * the field later never changes whose credentials this run's stream and previews use.
 * @type {null | {client: SparkTideClient, session: ChatSession, runId: string|null, agentLabel: string,
 *   blockEls: Map<string, HTMLElement>, eventCount: number, firstAt: number|null, renderedSeq: number,
 *   startedAt: number, timer: number|null, frame: number|null, refused: any}}
 */
let current = null;

// --- agents and versions -----------------------------------------------------------------

function fillAgents() {
  agentSelect.replaceChildren(
    ...setup.agents.map((agent) =>
      el("option", { text: agent.name && agent.name !== agent.key ? `${agent.name} · ${agent.key}` : agent.key, attrs: { value: agent.key } }),
    ),
  );
  fillVersions();
}

function selectedAgent() {
  return setup.agents.find((agent) => agent.key === agentSelect.value) ?? null;
}

function fillVersions() {
  const agent = selectedAgent();
  versionSelect.replaceChildren(
    ...(agent?.versions ?? []).map((version) =>
      el("option", {
        text: version.pinned ? `${version.version}  · ${ui.pinnedVersion ?? "pinned"}` : version.version,
        attrs: { value: String(version.id) },
      }),
    ),
  );
  if (agent) versionSelect.value = String(agent.pinned.id);
}

function selectedVersion() {
  const agent = selectedAgent();
  return agent?.versions.find((version) => String(version.id) === versionSelect.value) ?? null;
}

agentSelect.addEventListener("change", fillVersions);

// --- whose token is it? ---------------------------------------------------------------------

/** Whose token it is, only the server says (when the run is started). */
function showOwner() {
  const token = tokenInput.value.trim();
  $("token-owner").textContent = token ? ui.tokenServerChecked : ui.tokenEmpty;
}

tokenInput.addEventListener("input", showOwner);

// --- starting a run -------------------------------------------------------------------------

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  formError("");
  const token = tokenInput.value.trim();
  const agent = selectedAgent();
  const version = selectedVersion();
  const question = questionInput.value;
  if (!token) return formError(ui.needOwner);
  if (!question.trim()) return formError(ui.needQuestion);
  if (!agent || !version) return;

  stop();
  const client = new SparkTideClient({ baseUrl: location.origin, appId, token });
  const run = {
    client,
    session: /** @type {any} */ (null),
    runId: null,
    agentLabel: `${agent.key}@${version.version}`,
    blockEls: new Map(),
    eventCount: 0,
    firstAt: null,
    renderedSeq: 0,
    startedAt: performance.now(),
    timer: null,
    frame: null,
    refused: null,
    searchesTimer: null,
    searchesAsked: 0,
    searchesShown: 0,
  };
  current = run;
  resetView(run);
  run.session = new ChatSession(teeEvents(client, (streamEvent) => onEvent(run, streamEvent)));
  run.session.subscribe(() => scheduleRender(run));
  setBusy(true);
  run.timer = window.setInterval(() => showElapsed(run), 250);
  try {
    if (version.pinned) {
      const created = await run.session.start({ agent: agent.key, input: question });
      run.runId = created.id;
    } else {
      const created = await createWithVersion({ agent: agent.key, version: version.id, token, input: question });
      if (current !== run) return;
      run.runId = created.id;
      run.session.resume(created.id);
    }
    showRunId(run);
  } catch (error) {
    if (current !== run) return;
    // Refused before any run existed (bad token, 4xx): say so; the badge leaves 运行中 for good.
    run.refused = error;
    showRefusal(run);
  }
});

function showRefusal(run) {
  finishTimers(run);
  setBusy(false);
  setStatus("refused", ui.refused);
  $("sources-pending").hidden = true;
  showRunError(ui.createError, run.refused);
}

cancelButton.addEventListener("click", async () => {
  const run = current;
  if (!run?.runId) return;
  cancelButton.disabled = true;
  try {
    await run.session.cancel();
    cancelButton.textContent = ui.cancelRequested;
  } catch (error) {
    showRunError(ui.streamError, error);
    cancelButton.disabled = false;
  }
});

/** Console endpoint for "try another version": staff session + CSRF; the owner's token in the body. */
async function createWithVersion(fields) {
  const csrf = form.querySelector("[name=csrfmiddlewaretoken]").value;
  const response = await fetch(root.dataset.tryUrl, {
    method: "POST",
    credentials: "same-origin",
    headers: { "X-CSRFToken": csrf, Accept: "application/json" },
    body: new URLSearchParams(Object.entries(fields).map(([k, v]) => [k, String(v)])),
  });
  let data = null;
  try {
    data = await response.json();
  } catch {
    data = null;
  }
  if (!response.ok || !data) {
    throw new SparkTideError({ code: data?.code ?? "HTTP_ERROR", status: response.status, detail: data?.detail ?? response.statusText });
  }
  return data;
}

/** A client whose event streams also feed the timeline (the session sees the same events). */
function teeEvents(client, onEvent) {
  return {
    createRun: (...args) => client.createRun(...args),
    cancelRun: (...args) => client.cancelRun(...args),
    events: (runId, options) =>
      client.events(runId, {
        ...options,
        onEvent: (streamEvent) => {
          onEvent(streamEvent);
          options.onEvent?.(streamEvent);
        },
      }),
  };
}

function stop() {
  const run = current;
  current = null;
  dialog.reset();
  if ($("source-dialog").open) $("source-dialog").close();
  if (!run) return;
  run.session?.close();
  finishTimers(run);
}

function finishTimers(run) {
  if (run.timer !== null) window.clearInterval(run.timer);
  run.timer = null;
  if (run.frame !== null) window.cancelAnimationFrame(run.frame);
  run.frame = null;
}

window.addEventListener("pagehide", () => {
  stop();
  tokenInput.value = "";
});

// --- the view -------------------------------------------------------------------------------

function formError(message) {
  const node = $("form-error");
  node.textContent = message;
  node.hidden = !message;
}

function setBusy(busy) {
  startButton.disabled = busy;
  cancelButton.hidden = !busy;
  cancelButton.disabled = false;
  if (busy) cancelButton.textContent = cancelButton.dataset.label ?? cancelButton.textContent;
}
cancelButton.dataset.label = cancelButton.textContent;

function resetView(run) {
  $("blocks").replaceChildren(el("p", { className: "empty", text: ui.noBlocks, dataset: { empty: "" } }));
  $("debug-searches").replaceChildren(emptySearches.cloneNode(true));
  $("rejection-list").replaceChildren();
  $("rejections").hidden = true;
  $("timeline").replaceChildren(el("li", { className: "empty", text: ui.noEvents, dataset: { empty: "" } }));
  $("event-count").textContent = "";
  $("verified-sources").replaceChildren();
  $("unverified-sources").replaceChildren();
  delete $("verified-sources").dataset.count;
  delete $("unverified-sources").dataset.count;
  $("unverified-box").hidden = true;
  $("sources-pending").hidden = false;
  $("sources-pending").textContent = ui.waitingVerification;
  $("sources-summary").textContent = "";
  $("verification").hidden = true;
  $("run-error").hidden = true;
  $("run-link").hidden = true;
  $("run-agent").textContent = run.agentLabel;
  setStatus("running", ui.starting);
  showElapsed(run);
}

function showRunId(run) {
  const link = $("run-link");
  link.href = root.dataset.runUrl.replace("RUN_ID", encodeURIComponent(run.runId));
  $("run-id").textContent = run.runId;
  link.hidden = false;
  root.dataset.runId = run.runId;
}

function showRunError(prefix, error) {
  const node = $("run-error");
  const code = error?.code ?? "UNKNOWN";
  const detail = code === "RESOURCE_NOT_FOUND" ? ui.ownerMismatch : error?.detail || error?.message || "";
  node.replaceChildren(`${prefix}: `, el("code", { text: code }), detail ? ` — ${detail}` : "");
  node.hidden = false;
}

function setStatus(status, label) {
  const badge = $("run-status");
  badge.className = `badge status-${status}`;
  badge.textContent = label ?? strings.sessionStatus[status] ?? status;
}

function showElapsed(run) {
  const seconds = ((performance.now() - run.startedAt) / 1000).toFixed(1);
  $("run-elapsed").textContent = format(ui.elapsed, { seconds });
}

function scheduleRender(run) {
  if (run.frame !== null || current !== run) return;
  run.frame = window.requestAnimationFrame(() => {
    run.frame = null;
    if (current === run) render(run);
  });
}

function render(run) {
  if (run.refused) {
    showRefusal(run); // the session's own "error" for the refused start says nothing more
    return;
  }
  const snapshot = run.session.getSnapshot();
  if (!run.runId && snapshot.runId) {
    run.runId = snapshot.runId;
    showRunId(run);
  }
  setStatus(snapshot.status);
  const running = snapshot.status === "running";
  if (!running) {
    finishTimers(run);
    setBusy(false);
  }
  if (snapshot.reason) {
    const agent = $("run-agent");
    agent.textContent = `${run.agentLabel} · ${strings.runReason[snapshot.reason] ?? snapshot.reason}`;
    agent.title = snapshot.reason;
  }
  if (snapshot.error) showRunError(ui.streamError, snapshot.error);

  const sources = answerSources(snapshot);
  const numbers = new Map(sources.verified.map((source, index) => [source.id, index + 1]));
  renderBlocks(run, snapshot, numbers);
  renderStream(run);
  renderRejections(snapshot);
  renderSources(sources, run.session.settled());

  // The client's own statement that it showed these events (delivery evidence).
  if (snapshot.lastSeq > run.renderedSeq && run.session.ackRendered(snapshot.lastSeq)) {
    run.renderedSeq = snapshot.lastSeq;
  }
}

/**
 * The live text of the model turn being generated (answer.stream): plain text nodes only, shown
 * after the blocks and marked as unverified; gone once the log closes the stream.
 */
function renderStream(run) {
  const container = $("blocks");
  let node = container.querySelector("[data-stream]");
  const segments = run.session.streamSegments();
  if (!segments.length) {
    node?.remove();
    return;
  }
  if (!node) {
    node = document.createElement("div");
    node.dataset.stream = "";
    node.className = "debug-stream";
    node.title = "生成中（未核验）";
    container.append(node);
  }
  node.textContent = segments.map((segment) => segment.text ?? "").join("");
}

/** The 回答来源区: the SDK's one trusted-source rule (segments.js trustedSources). */
function answerSources(snapshot) {
  return trustedSources(snapshot.rootAgentCallId, snapshot.citationChecks, snapshot.citations);
}

const keyOf = (block) => (block.publicationId ? `pub:${block.publicationId}` : `cand:${block.candidateId}`);

function renderBlocks(run, snapshot, numbers) {
  const container = $("blocks");
  const keys = new Set(snapshot.blocks.map(keyOf));
  container.querySelector("[data-empty]")?.remove();
  for (const block of snapshot.blocks) {
    const key = keyOf(block);
    let node = run.blockEls.get(key);
    if (!node && block.publicationId) {
      // The preview of a brand-new block had only a candidate ID; its receipt takes its place.
      const orphan = [...run.blockEls.keys()].find((k) => k.startsWith("cand:") && !keys.has(k));
      if (orphan) {
        node = run.blockEls.get(orphan);
        run.blockEls.delete(orphan);
        run.blockEls.set(key, node);
      }
    }
    if (!node) {
      node = el("article", { className: "block is-new" });
      node.addEventListener("animationend", () => node.classList.remove("is-new", "is-revised"));
      run.blockEls.set(key, node);
    }
    updateBlock(node, block, snapshot, numbers, run.session);
    container.append(node); // same element, moved into delivery order
  }
  for (const [key, node] of run.blockEls) {
    if (!keys.has(key)) {
      node.remove(); // an unsaved preview that was rejected, or dropped at the run's end
      run.blockEls.delete(key);
    }
  }
  if (snapshot.blocks.length === 0) container.replaceChildren(el("p", { className: "empty", text: ui.noBlocks, dataset: { empty: "" } }));
}

function updateBlock(node, block, snapshot, numbers, session) {
  const rejection = block.publicationId
    ? [...snapshot.rejections].reverse().find((r) => r.publicationId === block.publicationId)
    : undefined;
  const status = session.blockSourceStatus(block);
  const checked = answerSources(snapshot).checked;
  const signature = JSON.stringify([block.revision, block.preview, block.state, status, block.content, block.truncated, rejection?.candidateId, [...numbers], checked, session.settled()]);
  if (node.dataset.signature === signature) return;
  const previous = Number(node.dataset.revision || 0);
  node.dataset.signature = signature;
  node.dataset.revision = String(block.revision);
  if (block.publicationId) node.dataset.publicationId = block.publicationId;
  node.dataset.state = block.preview ? "preview" : block.state;
  node.classList.toggle("is-preview", block.preview);
  node.classList.toggle("is-protected", block.state === "protected");
  if (previous && block.revision > previous) {
    node.classList.remove("is-revised");
    void node.offsetWidth; // restart the highlight animation
    node.classList.add("is-revised");
  }

  const head = el("header", { className: "block-head" }, [
    el("span", { className: "ordinal", text: block.deliveryOrdinal ? `#${block.deliveryOrdinal}` : "#—" }),
    el("code", { className: "pubid", text: block.publicationId ?? block.candidateId ?? "" }),
    el("span", { className: "badge badge-rev", text: `r${block.revision}`, dataset: { role: "revision" } }),
    block.preview ? el("span", { className: "badge badge-warn", text: ui.unsaved, dataset: { role: "unsaved" } }) : null,
    sourceBadge(status, strings, ui),
    block.truncated ? el("span", { className: "badge", text: ui.truncated }) : null,
    rejection
      ? el("span", { className: "badge badge-bad", text: `${ui.revisionRejected} · ${rejection.code}`, dataset: { role: "rejected" } })
      : null,
  ]);
  const body = el("div", { className: "block-body" });
  if (block.state === "protected") {
    body.append(el("p", { className: "protected-note", text: ui.protectedBody }));
  } else {
    const options = { stateOf: (id) => session.citationState(id), numbers, ui };
    const tree = session.markdownFor(block);
    if (tree !== null) {
      body.append(answerNode(tree, options));
    } else if (block.content && block.content.type === "table") {
      body.append(tableNode(block.content, options));
    }
  }
  node.replaceChildren(head, body);
}

function renderRejections(snapshot) {
  const list = $("rejection-list");
  if (list.childElementCount === snapshot.rejections.length) return;
  list.replaceChildren(
    ...snapshot.rejections.map((r) =>
      el("li", { className: "rejection" }, [
        el("span", { className: "badge badge-bad", text: r.code }),
        el("span", { text: ` ${strings.rejection[r.code] ?? ""} · ${strings.effect[r.effect] ?? r.effect ?? ""} · ` }),
        el("code", { text: r.publicationId ?? r.candidateId ?? "" }),
      ]),
    ),
  );
  $("rejections").hidden = snapshot.rejections.length === 0;
}

function renderSources(sources, settled) {
  const verifiedList = $("verified-sources");
  $("sources-pending").hidden = sources.checked;
  if (!sources.checked) {
    // Pending while the run goes on; once it ended without a check, say that instead.
    $("sources-pending").textContent = settled ? ui.noFinalCheck : ui.waitingVerification;
    return;
  }
  const summary = format(ui.verifiedCount, { verified: sources.verified.length, unverified: sources.unverified.length });
  $("sources-summary").textContent = summary;
  const badge = $("verification");
  badge.textContent = summary;
  badge.className = `verification badge ${sources.unverified.length ? "badge-warn" : "badge-ok"}`;
  badge.hidden = false;
  if (verifiedList.dataset.count === String(sources.verified.length) && $("unverified-sources").dataset.count === String(sources.unverified.length)) return;
  verifiedList.dataset.count = String(sources.verified.length);
  verifiedList.replaceChildren(
    ...sources.verified.map(({ id, citation }, index) => {
      const meta = [el("span", { className: "kv", text: `${citation.knowledgeId}@${citation.knowledgeVersion}` })];
      const location = sourceLocation(citation.sourceRef, ui);
      if (location) meta.push(el("span", { text: location }));
      if (citation.sourceRef?.version) meta.push(el("span", { text: `${ui.sourceVersion} ${String(citation.sourceRef.version).slice(0, 20)}` }));
      meta.push(el("code", { className: "cid", text: id }));
      return el("li", { className: "source", dataset: { citationId: id } }, [
        el("span", { className: "source-num", text: String(index + 1) }),
        el("div", { className: "source-body" }, [
          el("div", { className: "source-title", text: citation.title || citation.documentId || id }),
          el("div", { className: "source-meta" }, meta),
        ]),
        el("button", { className: "button small", text: ui.viewExcerpt, attrs: { type: "button" }, dataset: { action: "preview", citationId: id } }),
      ]);
    }),
  );
  if (sources.verified.length === 0) verifiedList.append(el("li", { className: "muted", text: ui.noVerifiedSources }));
  const unverifiedList = $("unverified-sources");
  unverifiedList.dataset.count = String(sources.unverified.length);
  unverifiedList.replaceChildren(
    ...sources.unverified.map(({ id }) =>
      el("li", { className: "source-unverified", dataset: { citationId: id } }, [
        el("code", { text: id || "∅" }),
        " ",
        el("span", { className: "badge badge-warn", text: strings.sourceHint.sources_unverified }),
      ]),
    ),
  );
  $("unverified-box").hidden = sources.unverified.length === 0;
}

// --- the event timeline ---------------------------------------------------------------------

const TONES = {
  "run.completed": "ok",
  "answer.published": "ok",
  "citation.verified": "ok",
  "run.failed": "bad",
  "answer.rejected": "bad",
  "run.partial": "warn",
  "run.cancelled": "warn",
  "answer.preview": "warn",
  "citation.created": "info",
};

function onEvent(run, streamEvent) {
  if (current !== run) return;
  const list = $("timeline");
  list.querySelector("[data-empty]")?.remove();
  const at = Date.parse(streamEvent.at);
  if (run.firstAt === null && Number.isFinite(at)) run.firstAt = at;
  const offset = Number.isFinite(at) && run.firstAt !== null ? `+${((at - run.firstAt) / 1000).toFixed(2)}s` : "";
  const nearBottom = list.scrollHeight - list.scrollTop - list.clientHeight < 40;
  list.append(
    el("li", { className: `tl-item tone-${TONES[streamEvent.type] ?? "muted"}`, dataset: { seq: String(streamEvent.seq), type: streamEvent.type } }, [
      el("span", { className: "tl-seq", text: `#${streamEvent.seq}` }),
      el("div", { className: "tl-main" }, [
        el("div", { className: "tl-line" }, [
          el("span", { className: `pill pill-${TONES[streamEvent.type] ?? "muted"}`, text: streamEvent.type }),
          el("span", { className: "tl-label", text: strings.eventType[streamEvent.type] ?? "" }),
          el("span", { className: "tl-time" }, [
            el("time", { className: "tl-clock", text: formatTime(streamEvent.at, zone, { withDate: false }), attrs: { datetime: String(streamEvent.at ?? ""), title: zoneLabel(zone) } }),
            offset ? ` ${offset}` : "",
          ]),
        ]),
        el("div", { className: "tl-summary", text: summarize(streamEvent) }),
      ]),
    ]),
  );
  run.eventCount += 1;
  $("event-count").textContent = String(run.eventCount);
  if (nearBottom) list.scrollTop = list.scrollHeight;
  if (SEARCH_EVENTS.has(streamEvent.type)) scheduleSearches(run);
}

// --- 检索记录 ------------------------------------------------------------------------------------

// A search announces its hits (citation.created); which of them the answer cites changes when a
// block is saved or the run ends. The panel is the server's (templates/console/_searches.html, the
// one 运行详情 shows), read with the staff session: titles, pages and scores, never excerpt text.
const SEARCH_EVENTS = new Set(["citation.created", "answer.published", "citation.verified", "run.completed", "run.partial", "run.failed", "run.cancelled"]);
const emptySearches = $("debug-searches").firstElementChild.cloneNode(true);

function scheduleSearches(run) {
  if (run.searchesTimer) return;
  run.searchesTimer = window.setTimeout(() => {
    run.searchesTimer = null;
    loadSearches(run);
  }, 150);
}

async function loadSearches(run) {
  const runId = run.runId ?? run.session?.getSnapshot().runId;
  if (current !== run || !runId) return;
  const url = root.dataset.searchesUrl.replace("RUN_ID", encodeURIComponent(runId));
  run.searchesAsked += 1;
  const asked = run.searchesAsked;
  let html = "";
  try {
    const response = await fetch(url, { credentials: "same-origin", headers: { Accept: "text/html" } });
    if (!response.ok) return;
    html = await response.text();
  } catch {
    return; // the next search event (or the run's end) reads it again
  }
  // A read answered after a later one was shown is older: the later one stands.
  if (current !== run || asked < run.searchesShown) return;
  run.searchesShown = asked;
  const panel = new DOMParser().parseFromString(html, "text/html").getElementById("searches");
  if (panel) $("debug-searches").replaceChildren(document.importNode(panel, true));
}

function summarize({ type, data = {} }) {
  switch (type) {
    case "agent.started":
    case "agent.completed":
      return [`${data.agent ?? ""}${data.agentVersion ? `@${data.agentVersion}` : ""}`, data.agentCallId, `depth ${data.depth}`, data.status]
        .filter(Boolean)
        .join(" · ");
    case "citation.created":
      return [data.title, `${data.knowledgeId}@${data.knowledgeVersion}`, sourceLocation(data.sourceRef, ui)].filter(Boolean).join(" · ");
    case "answer.preview":
      return `${data.publicationId ?? data.candidateId ?? ""} r${data.revision} · ${ui.unsaved}`;
    case "answer.published":
      // The receipt's hint is what publishing knew, not the final check: shown as its code.
      return `${data.publicationId} r${data.revision} · #${data.deliveryOrdinal} · ${
        strings.outcome[data.outcome] ?? data.outcome ?? ""
      } · ${
        data.state === "protected"
          ? ui.protected
          : format(ui.receiptHint, { hint: strings.sourceHint[data.sourceHint] ?? data.sourceHint ?? "" })
      }`;
    case "answer.rejected":
      return `${data.code} · ${strings.rejection[data.code] ?? ""} · ${strings.effect[data.effect] ?? data.effect ?? ""}`;
    case "citation.verified": {
      const references = Array.isArray(data.references) ? data.references : [];
      const verified = references.filter((r) => r.status === "VERIFIED").length;
      return format(ui.verifiedCount, { verified, unverified: references.length - verified });
    }
    default:
      return [strings.runStatus[data.status] ?? data.status, strings.runReason[data.reason] ?? data.reason]
        .filter(Boolean)
        .join(" · ");
  }
}

// --- the source dialog ------------------------------------------------------------------------

const dialog = new SourceDialog(/** @type {HTMLDialogElement} */ ($("source-dialog")), {
  strings,
  runId: () => current?.runId ?? null,
  client: () => current?.client ?? null,
  needTokenMessage: ui.noTokenForRun,
});

root.addEventListener("click", (event) => {
  const button = event.target.closest('[data-action="preview"]');
  if (!button || !current) return;
  const id = button.dataset.citationId;
  const snapshot = current.session.getSnapshot();
  const citation = Object.hasOwn(snapshot.citations, id) ? snapshot.citations[id] : { id };
  dialog.open({ ...citation, id });
});

fillAgents();
showOwner();
$("time-zone").textContent = format(ui.timeZoneLabel, { zone: zoneLabel(zone) });
