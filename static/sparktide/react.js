/**
 * React binding. React is passed in (or read from `globalThis.React`) rather than imported,
 * because these are plain browser ES modules with no build step: a bare `import "react"` would
 * need a bundler or an import map. Pass the React you render with so there is exactly one copy.
 *
 *   const state = useChatSession(session, React)
 *   state.blocks.map((b) => session.markdownFor(b)) // a Markdown node tree → JSX elements, never innerHTML
 *   // (or session.segmentsFor(b) for plain text segments); chips: session.citationState(id)
 *
 * The hook only reads; disconnecting on page unload is the owner's call (`session.close()`),
 * and it never cancels the run server-side.
 *
 * @module sparktide/react
 */

/**
 * @param {import("./session.js").ChatSession} session
 * @param {{useSyncExternalStore: Function}} [React]
 * @returns {import("./session.js").Snapshot}
 */
export function useChatSession(session, React = globalThis.React) {
  if (!React || typeof React.useSyncExternalStore !== "function") {
    throw new TypeError("useChatSession: pass React (18+) as the second argument");
  }
  // subscribe/getSnapshot are bound once in ChatSession, so React never resubscribes needlessly;
  // getSnapshot doubles as the server snapshot (the store starts idle, identical on both sides).
  return React.useSyncExternalStore(session.subscribe, session.getSnapshot, session.getSnapshot);
}
