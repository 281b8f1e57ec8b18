/**
 * 查看来源片段: the source dialog of 运行调试 and 运行详情.
 *
 * Rules (DESIGN.md "Console", seed 管理控制台):
 *   - every open or reload calls the preview endpoint anew with the OWNER's credentials;
 *     nothing is cached, the last excerpt is cleared before each request;
 *   - without owner credentials no request is made at all (the admin's session would get
 *     the same 404 as a stranger, shown as 无权查看 should it ever happen);
 *   - the excerpt is plain text (text nodes, white-space: pre-wrap), never HTML; the ranges the
 *     server computed from what the block cited (`highlights`, UTF-16 offsets) are <mark>s
 *     built from text pieces (highlight.js);
 *   - where the source is reads as page and paragraph (`location`, else `sourceRef.page`); the
 *     UTF-16 locator is only in a small details line;
 *   - a token the endpoint refused (401, or the ownership 404) is forgotten at once and the
 *     dialog asks for another: it never says a refused token is "in use";
 *   - closing the dialog or leaving the page (pagehide) aborts a pending request and
 *     clears the excerpt; a failure never leaves an old excerpt on screen.
 */

import { isAbortError } from "/static/sparktide/index.js";
import { answerStrings, el, format, sourceLocation, sourceOffsets } from "./dom.js";
import { highlightPieces } from "./highlight.js";

/** Refusals that say the credentials themselves are not the owner's (docs/preview.md steps 1–2). */
const CREDENTIAL_REFUSALS = ["AUTHENTICATION_REQUIRED", "RESOURCE_NOT_FOUND"];

export class SourceDialog {
  /**
   * @param {HTMLDialogElement} dialog
   * @param {object} options
   * @param {any} options.strings            the console's translated strings
   * @param {() => string | null} options.runId
   * @param {() => import("/static/sparktide/client.js").SparkTideClient | null} options.client
   *   the owner's client, or null when no owner credentials are at hand
   * @param {string} options.needTokenMessage  what to say when client() is null
   * @param {(token: string) => void} [options.onToken]  detail page: the token form was submitted
   * @param {() => void} [options.onForgetToken]
   * @param {() => boolean} [options.hasToken]
   * @param {() => void} [options.onTokenRefused]  detail page: forget a token the server refused
   */
  constructor(dialog, options) {
    this.dialog = dialog;
    this.options = options;
    this.ui = { ...options.strings.ui, ...answerStrings() };
    this.tokenRefused = false;
    this.messages = options.strings.previewError;
    this.source = null;
    this.controller = null;
    this.generation = 0;
    this.parts = Object.fromEntries(
      [...dialog.querySelectorAll("[data-role]")].map((node) => [node.dataset.role, node]),
    );
    dialog.addEventListener("click", (event) => {
      const action = event.target.closest("[data-action]")?.dataset.action;
      if (action === "close") dialog.close();
      else if (action === "reload") this.load();
      else if (action === "forget-token") {
        this.options.onForgetToken?.();
        this.tokenRefused = false;
        this.load();
      }
    });
    // Esc, the close button, or dialog.close() from anywhere: always the same cleanup.
    dialog.addEventListener("close", () => this.reset());
    this.parts["token-form"]?.addEventListener("submit", (event) => {
      event.preventDefault();
      const input = this.parts["token-input"];
      const token = input.value.trim();
      input.value = "";
      if (!token) return;
      this.options.onToken?.(token);
      this.tokenRefused = false;
      this.load();
    });
    window.addEventListener("pagehide", () => {
      this.reset();
      if (dialog.open) dialog.close();
    });
  }

  /** @param {{id: string, title?: string, knowledgeId?: string, knowledgeVersion?: string, sourceRef?: any}} source */
  open(source) {
    this.source = source;
    this.parts.title.textContent = source.title || source.documentId || source.id;
    this.parts.meta.replaceChildren(...describe(source, this.ui));
    this.tokenRefused = false;
    if (!this.dialog.open) this.dialog.showModal();
    this.load();
  }

  /** One fresh, re-authorized request; everything from the previous one is gone first. */
  async load() {
    const source = this.source;
    if (!source) return;
    this.abort();
    this.clear();
    const generation = ++this.generation;
    const client = this.options.client();
    const runId = this.options.runId();
    this.showTokenState(client !== null);
    if (client === null || !runId) {
      // No owner credentials: say so and make no request.
      this.parts["need-token-message"].textContent = this.options.needTokenMessage;
      this.parts["need-token"].hidden = false;
      if (this.tokenRefused && this.ui.tokenRefused) this.parts["need-token-message"].textContent = this.ui.tokenRefused;
      this.parts["token-form"]?.removeAttribute("hidden");
      this.parts["token-input"]?.focus();
      return;
    }
    const controller = new AbortController();
    this.controller = controller;
    this.parts.status.textContent = this.ui.loading;
    this.parts.status.hidden = false;
    this.dialog.classList.add("is-loading");
    try {
      const excerpt = await client.previewCitation(runId, source.id, { signal: controller.signal });
      if (generation !== this.generation || controller.signal.aborted) return;
      this.showExcerpt(excerpt);
    } catch (error) {
      if (generation !== this.generation || controller.signal.aborted || isAbortError(error)) return;
      this.showError(error);
    } finally {
      if (generation === this.generation) {
        this.controller = null;
        this.parts.status.hidden = true;
        this.dialog.classList.remove("is-loading");
      }
    }
  }

  showExcerpt(excerpt) {
    const content = typeof excerpt?.content === "string" ? excerpt.content : "";
    this.parts.title.textContent = excerpt.title || this.source.title || excerpt.documentId || excerpt.id;
    this.parts.meta.replaceChildren(...describe(excerpt, this.ui));
    this.showPlace(excerpt);
    const pieces = highlightPieces(content, excerpt?.highlights);
    const highlighted = pieces.some((piece) => piece.highlighted);
    this.parts["excerpt-caption"].textContent = highlighted && this.ui.highlighted ? `${this.ui.excerptScope} · ${this.ui.highlighted}` : this.ui.excerptScope;
    // Text nodes and <mark>s of text: the excerpt is never parsed as HTML.
    this.parts.excerpt.replaceChildren(
      ...pieces.map((piece) => (piece.highlighted ? el("mark", { className: "cited", text: piece.text }) : document.createTextNode(piece.text))),
    );
    this.parts["excerpt-box"].hidden = false;
  }

  /** Page and paragraph up front; offsets, chunk and version in the small details line. */
  showPlace(source) {
    const location = source?.location && typeof source.location === "object" ? source.location : null;
    if (this.parts.location) {
      this.parts.location.textContent = sourceLocation(source?.sourceRef, this.ui, location);
      this.parts.location.hidden = this.parts.location.textContent === "";
    }
    if (this.parts.details) {
      const details = [sourceOffsets(source?.sourceRef, this.ui)];
      if (source?.chunkId !== undefined && source?.chunkId !== null && this.ui.chunk) details.push(format(this.ui.chunk, { chunk: source.chunkId }));
      if (source?.sourceRef?.version) details.push(`${this.ui.sourceVersion} ${String(source.sourceRef.version).slice(0, 20)}`);
      this.parts.details.textContent = details.filter(Boolean).join(" · ");
      this.parts.details.hidden = this.parts.details.textContent === "";
    }
  }

  showError(error) {
    const code = typeof error?.code === "string" ? error.code : "UNKNOWN";
    const message = Object.hasOwn(this.messages, code) ? this.messages[code] : this.messages.UNKNOWN;
    this.parts["error-message"].textContent = message;
    this.parts["error-code"].textContent = error?.status ? `${code} (${error.status})` : code;
    this.parts.error.hidden = false;
    this.parts.error.dataset.code = code;
    if (CREDENTIAL_REFUSALS.includes(code) && this.options.onTokenRefused && this.options.hasToken?.()) {
      // The token is not the owner's (or not valid at all): forget it, never call it "in use".
      this.options.onTokenRefused();
      this.tokenRefused = true;
      this.showTokenState(false);
      if (this.parts["token-form"]) {
        this.parts["need-token-message"].textContent = this.ui.tokenRefused ?? this.options.needTokenMessage;
        this.parts["need-token"].hidden = false;
        this.parts["token-form"].hidden = false;
      }
    }
  }

  showTokenState(hasClient) {
    const state = this.parts["token-state"];
    if (!state) return;
    const hasToken = this.options.hasToken?.() ?? hasClient;
    state.hidden = !hasToken;
    state.dataset.state = hasToken ? "in-use" : this.tokenRefused ? "refused" : "none";
    // Only a token the page still holds is "in use"; a refused or forgotten one says nothing.
    this.parts["token-state-text"].textContent = hasToken ? this.ui.tokenInUse : "";
    this.parts["token-form"].hidden = hasToken;
  }

  abort() {
    this.generation += 1;
    this.controller?.abort();
    this.controller = null;
    this.dialog.classList.remove("is-loading");
  }

  /** Nothing of an earlier answer stays on screen. */
  clear() {
    this.parts.excerpt.replaceChildren();
    this.parts["excerpt-caption"].textContent = "";
    if (this.parts.location) {
      this.parts.location.textContent = "";
      this.parts.location.hidden = true;
    }
    if (this.parts.details) {
      this.parts.details.textContent = "";
      this.parts.details.hidden = true;
    }
    this.parts["excerpt-box"].hidden = true;
    this.parts["error-message"].textContent = "";
    this.parts["error-code"].textContent = "";
    this.parts.error.hidden = true;
    delete this.parts.error.dataset.code;
    this.parts["need-token"].hidden = true;
    this.parts.status.hidden = true;
    if (this.parts["token-form"]) this.parts["token-form"].hidden = true;
  }

  reset() {
    this.abort();
    this.clear();
    if (this.parts["token-input"]) this.parts["token-input"].value = "";
  }
}

/** knowledge@version and the citation ID as separate text pieces (place and details are apart). */
function describe(source, ui) {
  const parts = [];
  if (source.knowledgeId) parts.push(el("span", { className: "kv", text: `${source.knowledgeId}@${source.knowledgeVersion ?? ""}` }));
  if (source.id) parts.push(el("code", { className: "cid", text: source.id }));
  return parts;
}

