import { AsyncLocalStorage } from "node:async_hooks";

/**
 * The queue item a piece of work is about, carried through its async calls so that every log line written on its
 * behalf — file checks, the target's calls, analysis, the trash, RUN_COMMAND hooks — carries `id` (the `[<id>]` of
 * the classic line) without each module being handed it. The logger reads it (create-logger.ts); the dispatcher sets
 * it around each check and scan.
 */
const current = new AsyncLocalStorage<{ readonly id: number }>();

export function withLogId<T>(id: number, work: () => T): T {
  return current.run({ id }, work);
}

/** Runs work that serves every item (the store's write queue, its timers) outside any item's context. */
export function outsideLogContext<T>(work: () => T): T {
  return current.exit(work);
}

/** Fields to add to a log line written now: `{ id }` inside an item's work, else none. A new object each time: pino
 *  merges the call's fields into it. */
export function logContextFields(): { id?: number } {
  const store = current.getStore();
  return store ? { id: store.id } : {};
}
