/**
 * ChatSession: one conversation turn at a time, as an external store (React's
 * useSyncExternalStore, Vue's shallowRef, or plain subscribe/getSnapshot).
 *
 * It folds the run's event log into what a page shows, applying Publication's display rules on
 * the client (docs/publication.md "Display precedence"; this is the rule's one home, specified by
 * the hand-written cases of tests/conformance/display_precedence.json):
 *   - a preview is temporary and never a save; a newer legitimate preview shows over an older
 *     committed revision, which comes back when the preview is never saved (`answer.rejected` or
 *     `answer.save_unknown` naming its candidate, or the run's end);
 *   - a committed receipt beats a preview of the same (or an older) revision;
 *   - a newer revision replaces the older in place; an older one never overwrites a newer one;
 *   - a current source rejection (an event the reader delivers with `state: "protected"`) beats
 *     both: every revision up to the one it names is withheld (`state: "protected"`, no content),
 *     however it was shown before; a newer revision may show again;
 *   - the same publication ID and revision with a different body (receipt or preview) is a
 *     PROTOCOL CONFLICT, not "last one wins": the session goes to status "error" and keeps the
 *     block it had.
 * Block bodies are always the full body carried by the event, never a chunk, so segmentation
 * (answerSegments) always works on whole text.
 *
 * The live text of a model turn (`answer.stream`, docs/events.md "The text stream") is kept
 * apart from the blocks: `streaming` (each live stream's whole text so far) and `text` (the
 * root call's live text, or null). It is shown as plain text — streamSegments() never makes a
 * citation of it — and it goes away when the log closes its stream (the turn's preview or
 * receipt stands in its place) or the run ends.
 *
 * @module sparktide/session
 */

import { ClientErrorCode } from "./errors.js";
import { answerSegments, blockSourceStatus, citationState, contentText, splitStreaming } from "./segments.js";
import { parseMarkdown } from "./markdown.js";

const TERMINAL_STATUS = Object.freeze({
  "run.completed": "completed",
  "run.partial": "partial",
  "run.failed": "failed",
  "run.cancelled": "cancelled",
});

/**
 * @typedef {object} Block
 * @property {string | null} publicationId  null for a preview of a block not yet issued an ID
 * @property {string | null} [candidateId]  previews only
 * @property {number} revision
 * @property {number | null} deliveryOrdinal
 * @property {unknown} content   null when protected (withheld by the viewer's current authorization)
 * @property {"visible" | "protected"} state
 * @property {string} sourceHint
 * @property {boolean} truncated
 * @property {boolean} preview   true = shown before (or instead of) a save; not durable
 *
 * @typedef {object} Snapshot
 * @property {string | null} runId
 * @property {string | null} sessionId  the business session ID, kept across turns
 * @property {"idle"|"running"|"completed"|"partial"|"failed"|"cancelled"|"error"} status
 * @property {string | null} reason     from the terminal event
 * @property {string | null} rootAgentCallId
 * @property {readonly Block[]} blocks  ordered by deliveryOrdinal
 * @property {readonly object[]} rejections  `answer.rejected` data, in order
 * @property {Readonly<Record<string, object>>} citations       id → citation.created data
 * @property {Readonly<Record<string, object>>} citationChecks  agentCallId → citation.verified data
 * @property {{code: string, detail: string} | null} error
 * @property {number} lastSeq
 * @property {readonly {agentCallId: string, streamId: string, text: string, truncated: boolean}[]} streaming
 * @property {string | null} text  the root call's live, unverified text (plain text), or null
 */

export class ChatSession {
  /**
   * @param {import("./client.js").SparkTideClient} client
   * @param {{events?: object}} [options]  `events` is passed to client.events(), e.g.
   *   `{ticket: false}` for the cookie-authenticated console
   */
  constructor(client, { events = {} } = {}) {
    this.client = client;
    this._eventOptions = events;
    this._listeners = new Set();
    this._stream = null;
    this._turn = 0;
    this._sessionId = null;
    this._clear(null, "idle");
    this._snapshot = this._build();
    // Stable identities: useSyncExternalStore resubscribes whenever these change.
    this.subscribe = this.subscribe.bind(this);
    this.getSnapshot = this.getSnapshot.bind(this);
  }

  /** @returns {Snapshot} the same object until something changes */
  getSnapshot() {
    return this._snapshot;
  }

  /** @param {() => void} listener @returns {() => void} unsubscribe */
  subscribe(listener) {
    this._listeners.add(listener);
    return () => this._listeners.delete(listener);
  }

  /**
   * Start a new turn: create a run and follow its events. Citations, checks, blocks and
   * rejections of the previous turn are cleared (their IDs must never verify this turn);
   * the business session ID is kept unless a new one is given.
   * Rejects with the SparkTideError of createRun, which is also recorded in the snapshot.
   */
  async start({ agent, input, sessionId } = /** @type {any} */ ({})) {
    const turn = this._newTurn();
    if (sessionId !== undefined) this._sessionId = sessionId;
    this._clear(null, "running");
    this._emit();
    let run;
    try {
      run = await this.client.createRun({ agent, input, sessionId: this._sessionId ?? undefined });
    } catch (error) {
      if (turn === this._turn) this._fail(error);
      throw error;
    }
    if (turn !== this._turn) return run; // superseded by a newer start/resume
    this.runId = run.id;
    this._emit();
    this._follow(turn, run.id);
    return run;
  }

  /**
   * Show an existing run (history, page reload): re-read its events from seq 0 and keep
   * following them if it is still running. Creates nothing and never re-executes the run.
   * @param {string} runId
   */
  resume(runId) {
    const turn = this._newTurn();
    this._clear(runId, "running");
    this._emit();
    this._follow(turn, runId);
  }

  /** Stop reading events (page unload). The run keeps going server-side; see cancel(). */
  close() {
    this._newTurn();
  }

  /** Ask the server to cancel the current run; its terminal event arrives on the stream. */
  cancel() {
    if (!this.runId) return Promise.resolve(null);
    return this.client.cancelRun(this.runId);
  }

  /** Tell the server an event was shown to the user (best-effort, recorded separately). */
  ackRendered(seq) {
    return this._stream ? this._stream.ack(seq, "rendered") : false;
  }

  /**
   * Segments of one block against this turn's root check and citations; null when the block
   * has no text (protected, or a table: segment its cells with answerSegments).
   * @param {Block} block
   */
  segmentsFor(block, { streaming = false } = {}) {
    const text = contentText(block.content);
    if (text === null) return null;
    const s = this._snapshot;
    return answerSegments(text, s.rootAgentCallId, s.citationChecks, s.citations, { streaming });
  }

  /**
   * Has this turn ended, so that no `citation.verified` can still arrive? (A terminal event,
   * or the stream/session failed.) Until then a marker without a check is *pending*.
   */
  settled() {
    const { status } = this._snapshot;
    return status !== "running" && status !== "idle";
  }

  /**
   * The display state of one cited ID now: pending → verified | unverified (see citationState).
   * @param {string} id
   */
  citationState(id) {
    const s = this._snapshot;
    return citationState(id, s.rootAgentCallId, s.citationChecks, s.citations, { settled: this.settled() });
  }

  /**
   * The source badge a block may show now (see blockSourceStatus): never "verified" before the
   * root call's own final check.
   * @param {Block} block
   */
  blockSourceStatus(block) {
    const s = this._snapshot;
    return blockSourceStatus(block, {
      rootAgentCallId: s.rootAgentCallId,
      citationChecks: s.citationChecks,
      citations: s.citations,
      settled: this.settled(),
    });
  }

  /**
   * A block's text as a Markdown tree (parseMarkdown), or null when it has no text. Citation
   * nodes carry only their ID: render each as a chip in the state citationState(id) gives.
   * A preview still streaming holds back a trailing, unfinished marker.
   * @param {Block} block
   */
  markdownFor(block, { streaming = block.preview && !this.settled() } = {}) {
    const text = contentText(block.content);
    if (text === null) return null;
    return parseMarkdown(streaming ? splitStreaming(text).settled : text);
  }

  // ---- internals -------------------------------------------------------------------------

  _newTurn() {
    this._turn += 1;
    const stream = this._stream;
    this._stream = null;
    stream?.close();
    return this._turn;
  }

  _clear(runId, status) {
    this.runId = runId;
    this._status = status;
    this._reason = null;
    this._root = null;
    /** @type {Map<string, Block>} publicationId → committed block */
    this._committed = new Map();
    /** @type {Map<string, Block & {arrival: number}>} publicationId ?? candidateId → preview */
    this._previews = new Map();
    this._arrival = 0;
    /** @type {Map<string, number>} publicationId → a current source rejection covers revisions up to this */
    this._withheldThrough = new Map();
    this._rejections = [];
    this._citations = {};
    this._checks = {};
    this._error = null;
    this._lastSeq = 0;
    /** @type {Map<string, {agentCallId: string, streamId: string, text: string, length: number, truncated: boolean}>} */
    this._streams = new Map();
    /** @type {Set<string>} streams the log has closed: later deltas are ignored */
    this._closedStreams = new Set();
  }

  _follow(turn, runId) {
    const guard = (fn) => (arg) => {
      if (turn === this._turn) fn(arg);
    };
    this._stream = this.client.events(runId, {
      ...this._eventOptions,
      after: 0,
      onEvent: guard((event) => this._onEvent(event)),
      onStream: guard((frame) => this._onStream(frame.data)),
      onError: guard((error) => this._fail(error)),
      onClose: guard(() => {
        this._stream = null;
      }),
    });
  }

  _onEvent(event) {
    if (!(event.seq > this._lastSeq)) return; // the stream dedups; this also covers REST feeds
    this._lastSeq = event.seq;
    this._apply(event.type, event.data ?? {});
    this._emit();
  }

  /**
   * One `answer.stream` delta (or snapshot, offset 0): text = text[:offset] + delta, in code
   * points. A delta past the text held (a gap) or of a closed stream is ignored.
   * @param {any} data
   */
  _onStream(data) {
    if (!applyStreamDelta(this._streams, this._closedStreams, data)) return;
    this._emit();
  }

  /**
   * The root call's live text as segments: always plain text (nothing in a stream is
   * verified), a trailing, still-incomplete marker held back.
   */
  streamSegments() {
    const text = this._snapshot.text;
    return text === null ? Object.freeze([]) : answerSegments(text, null, null, null, { streaming: true });
  }

  /** Fold one event into the model. Unknown types only advance lastSeq (the API may grow). */
  _apply(type, data) {
    switch (type) {
      case "run.started":
        if (this._status === "idle") this._status = "running";
        return;
      case "agent.started":
      case "agent.completed":
        // Only this run's depth-0 call is the root; never an ID from an old session.
        if (data.depth === 0 && !this._root && typeof data.agentCallId === "string") this._root = data.agentCallId;
        return;
      case "citation.created":
        if (typeof data.id === "string") this._citations = { ...this._citations, [data.id]: data };
        return;
      case "citation.verified":
        if (typeof data.agentCallId === "string") this._checks = { ...this._checks, [data.agentCallId]: data };
        return;
      case "answer.preview":
        this._preview(data);
        return;
      case "answer.published":
        this._publish(data);
        return;
      case "answer.rejected":
        this._reject(data);
        return;
      case "answer.save_unknown":
        // Not saved as far as anyone knows, and not a rejection: the preview goes away.
        this._dropPreview(data);
        return;
      case "answer.stream":
        // The turn ended: what Publication said about it now stands where its text stood.
        if (data.state === "closed" && typeof data.streamId === "string") {
          this._streams.delete(data.streamId);
          this._closedStreams.add(data.streamId);
        }
        return;
      default:
        if (Object.hasOwn(TERMINAL_STATUS, type)) {
          // A protocol conflict stays visible even though the run itself ended.
          if (this._status !== "error") this._status = TERMINAL_STATUS[type];
          this._reason = data.reason ?? null;
          this._previews.clear(); // never saved: after the end only receipts are the answer
          this._streams.clear();
        }
    }
  }

  _preview(data) {
    const key = data.publicationId ?? data.candidateId;
    if (typeof key !== "string" || !Number.isInteger(data.revision)) return;
    const withheld = data.state === "protected";
    const content = withheld ? null : (data.content ?? null);
    if (withheld && data.publicationId) this._withhold(data.publicationId, data.revision);
    const committed = data.publicationId ? this._committed.get(data.publicationId) : undefined;
    if (committed && committed.revision >= data.revision) {
      if (committed.revision === data.revision && differs(committed.content, content)) this._conflict(data.publicationId, data.revision);
      return; // a receipt beats its preview
    }
    const current = this._previews.get(key);
    if (current && current.revision > data.revision) return;
    if (current && current.revision === data.revision && data.publicationId && differs(current.content, content)) {
      this._conflict(data.publicationId, data.revision);
      return;
    }
    this._previews.set(key, {
      publicationId: data.publicationId ?? null,
      candidateId: data.candidateId ?? null,
      revision: data.revision,
      deliveryOrdinal: data.deliveryOrdinal ?? null,
      content,
      state: withheld ? "protected" : "visible",
      sourceHint: data.sourceHint ?? "unknown",
      truncated: false,
      preview: true,
      arrival: current?.arrival ?? this._arrival++,
    });
  }

  _publish(data) {
    const { publicationId, revision } = data;
    if (typeof publicationId !== "string" || !Number.isInteger(revision)) return;
    const incoming = {
      publicationId,
      revision,
      deliveryOrdinal: data.deliveryOrdinal ?? null,
      content: data.state === "protected" ? null : (data.content ?? null),
      state: data.state === "protected" ? "protected" : "visible",
      sourceHint: data.sourceHint ?? "unknown",
      truncated: Boolean(data.truncated),
      preview: false,
    };
    if (incoming.state === "protected") this._withhold(publicationId, revision);
    // The protected preview of a brand-new block (candidate ID only) was a rejection of this block.
    const candidatePreview = typeof data.candidateId === "string" ? this._previews.get(data.candidateId) : undefined;
    if (candidatePreview?.state === "protected") this._withhold(publicationId, candidatePreview.revision);
    const ownPreview = this._previews.get(publicationId);
    if (ownPreview && ownPreview.revision === revision && differs(ownPreview.content, incoming.content)) {
      this._conflict(publicationId, revision);
      return;
    }
    const existing = this._committed.get(publicationId);
    if (existing) {
      if (revision < existing.revision) return; // stale: never overwrite a newer revision
      if (revision === existing.revision && differs(existing.content, incoming.content)) {
        this._conflict(publicationId, revision);
        return;
      }
      // Same revision + same body is a replay or UNCHANGED; a change between visible and
      // protected is the reader applying the viewer's current authorization. In place either way.
      incoming.deliveryOrdinal = existing.deliveryOrdinal ?? incoming.deliveryOrdinal;
    }
    this._committed.set(publicationId, incoming);
    // The receipt names the candidate it saved: its preview is replaced exactly.
    if (typeof data.candidateId === "string") this._previews.delete(data.candidateId);
    this._dropPreviewsCommittedBy(incoming);
  }

  /** The candidate named by an `answer.rejected` / `answer.save_unknown` was never saved. */
  _dropPreview(data) {
    if (typeof data.candidateId !== "string") return;
    for (const [key, preview] of this._previews) {
      if (preview.candidateId === data.candidateId) this._previews.delete(key);
    }
  }

  /** A current source rejection covers this block's revisions up to `revision`. */
  _withhold(publicationId, revision) {
    if (!Number.isInteger(revision)) return;
    this._withheldThrough.set(publicationId, Math.max(this._withheldThrough.get(publicationId) ?? 0, revision));
  }

  /** Same publication ID and revision, another body: never "last one wins". */
  _conflict(publicationId, revision) {
    this._error = {
      code: ClientErrorCode.PROTOCOL_CONFLICT,
      detail: `${publicationId} revision ${revision} arrived with two different bodies.`,
    };
    this._status = "error";
  }

  /** What a block shows: withheld (protected, no content) when a current rejection covers it. */
  _shown(block) {
    const through = block.publicationId ? (this._withheldThrough.get(block.publicationId) ?? 0) : 0;
    return block.revision <= through ? { ...block, state: "protected", content: null } : block;
  }

  _dropPreviewsCommittedBy(block) {
    const own = this._previews.get(block.publicationId);
    if (own && own.revision <= block.revision) this._previews.delete(block.publicationId);
    // A preview of a brand-new block may only have had a candidate ID; match it by ordinal or body.
    for (const [key, preview] of this._previews) {
      if (preview.publicationId !== null) continue;
      const sameSlot = preview.deliveryOrdinal !== null && preview.deliveryOrdinal === block.deliveryOrdinal;
      if (sameSlot || (block.content !== null && sameContent(preview.content, block.content))) this._previews.delete(key);
    }
  }

  _reject(data) {
    this._rejections = [...this._rejections, data];
    // The candidate it names was never saved: its preview goes, the committed body (if any) shows.
    this._dropPreview(data);
  }

  _fail(error) {
    this._status = "error";
    this._error = { code: String(error?.code ?? "UNKNOWN"), detail: String(error?.detail ?? error?.message ?? "") };
    this._emit();
  }

  /** Committed blocks (or a newer preview of them, in their place), then new-block previews. */
  _rootStreamText() {
    let found = null;
    for (const stream of this._streams.values()) {
      if (this._root === null || stream.agentCallId === this._root) found = stream.text;
    }
    return found;
  }

  _blocks() {
    const shown = [];
    for (const block of this._committed.values()) {
      const preview = this._previews.get(block.publicationId);
      if (preview && preview.revision > block.revision) {
        shown.push(this._shown({ ...preview, deliveryOrdinal: block.deliveryOrdinal, arrival: -1 }));
      } else {
        shown.push(this._shown({ ...block, arrival: -1 }));
      }
    }
    for (const [key, preview] of this._previews) {
      if (!this._committed.has(key)) shown.push(this._shown(preview));
    }
    const ordinal = (b) => (b.deliveryOrdinal === null ? Infinity : b.deliveryOrdinal);
    shown.sort((a, b) => ordinal(a) - ordinal(b) || a.arrival - b.arrival);
    return shown.map(({ arrival, ...block }) => deepFreeze(block));
  }

  _build() {
    return deepFreeze({
      runId: this.runId,
      sessionId: this._sessionId,
      status: this._status,
      reason: this._reason,
      rootAgentCallId: this._root,
      blocks: this._blocks(),
      rejections: this._rejections,
      citations: this._citations,
      citationChecks: this._checks,
      error: this._error,
      lastSeq: this._lastSeq,
      streaming: [...this._streams.values()].map(({ agentCallId, streamId, text, truncated }) => ({ agentCallId, streamId, text, truncated })),
      text: this._rootStreamText(),
    });
  }

  _emit() {
    this._snapshot = this._build();
    for (const listener of [...this._listeners]) listener();
  }
}

/** Two bodies of one revision that are both known and not the same. */
/**
 * Apply one `answer.stream` delta to `streams` (streamId → stream); false when it changes nothing.
 * Offsets count code points, as the server's do.
 */
export function applyStreamDelta(streams, closed, data) {
  if (!data || typeof data !== "object" || data.state === "closed") return false;
  const { streamId, offset, delta } = data;
  if (typeof streamId !== "string" || !Number.isSafeInteger(offset) || offset < 0 || typeof delta !== "string") return false;
  if (closed.has(streamId)) return false;
  const held = streams.get(streamId);
  const length = held?.length ?? 0;
  if (offset > length) return false; // a gap: the server resends from its row
  const added = [...delta];
  if (offset + added.length <= length && held) return false; // nothing new
  const kept = offset === length ? (held?.text ?? "") : [...(held?.text ?? "")].slice(0, offset).join("");
  streams.set(streamId, {
    agentCallId: typeof data.agentCallId === "string" ? data.agentCallId : (held?.agentCallId ?? ""),
    streamId,
    text: kept + delta,
    length: offset + added.length,
    truncated: Boolean(data.truncated) || Boolean(held?.truncated),
  });
  return true;
}

function differs(a, b) {
  return a !== null && b !== null && !sameContent(a, b);
}

/** Structural equality of two JSON bodies (key order does not matter). */
export function sameContent(a, b) {
  return canonical(a) === canonical(b);
}

function canonical(value) {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value && typeof value === "object") {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(value[k])}`)
      .join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

/** Snapshots are shared with UI code; freezing makes accidental mutation fail loudly. */
function deepFreeze(value) {
  if (value && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
