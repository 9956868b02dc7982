import { outsideLogContext } from "../../core/log-context.ts";
import { WriteAbandonedError } from "../store-port.ts";

/**
 * The waiting line in front of the store's one write path. Writes asked for while a record is on its way to the disk
 * wait here and go together in the next record (group commit). A waiting write whose sender gives up (`signal`)
 * before it is taken leaves the line and is never stored; once taken, it is stored or refused as a whole, and its
 * promise tells which.
 */
export interface Waiting<C> {
  readonly build: (context: C) => unknown;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

export interface WriteQueue<C> {
  push<T>(build: (context: C) => T | Promise<T>, signal?: AbortSignal): Promise<T>;
  /** Resolves once every write pushed so far has been settled. */
  idle(): Promise<void>;
}

/** `commit` gets up to `maxBatch` waiting writes at a time, one batch after the other, and settles each of them. */
export function createWriteQueue<C>(
  commit: (batch: readonly Waiting<C>[]) => Promise<void>,
  maxBatch = 1000,
): WriteQueue<C> {
  const waiting: Waiting<C>[] = [];
  let draining: Promise<void> | undefined;

  async function drain(): Promise<void> {
    try {
      // Writes asked for in the same turn of the event loop go in one record.
      await new Promise((resolve) => setImmediate(resolve));
      while (waiting.length > 0) await commit(waiting.splice(0, maxBatch));
    } finally {
      // Cleared in the same tick as the last check of `waiting`: a write pushed after it starts a new drain.
      draining = undefined;
    }
  }

  return {
    push<T>(build: (context: C) => T | Promise<T>, signal?: AbortSignal): Promise<T> {
      if (signal?.aborted) return Promise.reject(new WriteAbandonedError("The write was given up before it was stored"));
      return new Promise<T>((resolve, reject) => {
        const entry: Waiting<C> = { build, resolve: resolve as (value: unknown) => void, reject };
        waiting.push(entry);
        signal?.addEventListener(
          "abort",
          () => {
            const at = waiting.indexOf(entry);
            if (at < 0) return; // already taken: it is stored or refused as a whole
            waiting.splice(at, 1);
            reject(new WriteAbandonedError("The write was given up before it was stored"));
          },
          { once: true },
        );
        // The drain serves every caller: its lines (a disk fault, a checkpoint) are not about the first caller's item.
        draining ??= outsideLogContext(drain);
      });
    },
    async idle() {
      while (draining) await draining;
    },
  };
}
