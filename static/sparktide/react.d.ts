import type { ChatSession, Snapshot } from "./session.js";

/** React 18+: pass the React you render with (defaults to globalThis.React). */
export function useChatSession(
  session: ChatSession,
  React?: {
    useSyncExternalStore: <T>(
      subscribe: (listener: () => void) => () => void,
      getSnapshot: () => T,
      getServerSnapshot?: () => T,
    ) => T;
  },
): Snapshot;
