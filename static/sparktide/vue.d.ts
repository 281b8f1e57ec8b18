import type { ChatSession, Snapshot } from "./session.js";

/** Vue 3: pass { shallowRef, onUnmounted } from "vue". */
export function useChatSession(
  session: ChatSession,
  vue: {
    shallowRef: <T>(value: T) => { value: T };
    onUnmounted?: (hook: () => void) => void;
  },
): { readonly value: Snapshot };
