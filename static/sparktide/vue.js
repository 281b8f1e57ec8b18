/**
 * Vue 3 composable. `shallowRef` and `onUnmounted` are passed in rather than imported, for the
 * same reason as react.js: plain ES modules, no bundler, no bare `import "vue"`.
 *
 *   import { shallowRef, onUnmounted } from "vue"
 *   const state = useChatSession(session, { shallowRef, onUnmounted })
 *   // template: {{ segment.text }} interpolation for text, a button for citations; never v-html
 *
 * A shallowRef fits: every snapshot is a new frozen object, so replacing `.value` is the change
 * signal and Vue need not deep-proxy it.
 *
 * @module sparktide/vue
 */

/**
 * @param {import("./session.js").ChatSession} session
 * @param {{shallowRef: Function, onUnmounted?: Function}} vue
 * @returns {{value: import("./session.js").Snapshot}} a read-only-by-convention shallow ref
 */
export function useChatSession(session, { shallowRef, onUnmounted } = /** @type {any} */ ({})) {
  if (typeof shallowRef !== "function") {
    throw new TypeError("useChatSession: pass { shallowRef, onUnmounted } from vue");
  }
  const state = shallowRef(session.getSnapshot());
  const unsubscribe = session.subscribe(() => {
    state.value = session.getSnapshot();
  });
  // Stop listening with the component; the session (and its run) belong to whoever created it.
  onUnmounted?.(unsubscribe);
  return state;
}
