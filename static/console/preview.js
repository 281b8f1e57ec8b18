/**
 * 查看来源片段: the source dialog of 运行调试 and 运行详情.
 *
 * Rules (DESIGN.md "Console", seed 管理控制台):
 *   - every open or reload calls the preview endpoint anew with the OWNER's credentials;
 *     nothing is cached, the last excerpt is cleared before each request;
 *   - without owner credentials no request is made at all (the admin's session would get
 *     the same 404 as a stranger, shown as 无权查看 should it ever happen);
 *   - the excerpt is plain text (textContent, white-space: pre-wrap), never HTML;
 *   - closing the dialog or leaving the page (pagehide) aborts a pending request and
 *     clears the excerpt; a failure never leaves an old excerpt on screen.
 */

import { isAbortError } from "/static/sparktide/index.js";
import { el, sourceLocation } from "./dom.js";

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
   */
  constructor(dialog, options) {
    this.dialog = dialog;
    this.options = options;
    this.ui = options.strings.ui;
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
    this.parts["excerpt-caption"].textContent = this.ui.excerptScope;
    this.parts.excerpt.textContent = content; // plain text only
    this.parts["excerpt-box"].hidden = false;
  }

  showError(error) {
    const code = typeof error?.code === "string" ? error.code : "UNKNOWN";
    const message = Object.hasOwn(this.messages, code) ? this.messages[code] : this.messages.UNKNOWN;
    this.parts["error-message"].textContent = message;
    this.parts["error-code"].textContent = error?.status ? `${code} (${error.status})` : code;
    this.parts.error.hidden = false;
    this.parts.error.dataset.code = code;
  }

  showTokenState(hasClient) {
    const state = this.parts["token-state"];
    if (!state) return;
    const hasToken = this.options.hasToken?.() ?? hasClient;
    state.hidden = !hasToken;
    this.parts["token-state-text"].textContent = this.ui.tokenInUse;
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
    this.parts.excerpt.textContent = "";
    this.parts["excerpt-caption"].textContent = "";
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

/** knowledge@version, page/locator, source version and ID as separate text pieces. */
function describe(source, ui) {
  const parts = [];
  if (source.knowledgeId) parts.push(el("span", { className: "kv", text: `${source.knowledgeId}@${source.knowledgeVersion ?? ""}` }));
  const location = sourceLocation(source.sourceRef, ui);
  if (location) parts.push(el("span", { text: location }));
  if (source.sourceRef?.version) {
    parts.push(el("span", { text: `${ui.sourceVersion} ${String(source.sourceRef.version).slice(0, 20)}` }));
  }
  if (source.id) parts.push(el("code", { className: "cid", text: source.id }));
  return parts;
}

