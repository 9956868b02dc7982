import { describeError, StoreUnavailableError } from "../../core/errors.ts";
import type { StoreMetrics } from "../../core/metrics.ts";
import { WriteAbandonedError } from "../store/store-fault.ts";
import type { PgClient, PgPool } from "./pool.ts";
import { classifyDatabaseError, isDatabaseUnavailable } from "./pool.ts";
import { inTransaction } from "./transaction.ts";

/**
 * This instance's writes, in the order they were made, as few transactions as the database's speed allows: writes
 * made while a transaction is committing go together in the next one (one commit, one flush of PostgreSQL's WAL, for
 * a burst of webhooks), as the embedded store puts them in one log record. Each write runs under its own SAVEPOINT:
 * one that throws is rolled back alone and rejects alone; the others commit. A write is answered only after its
 * transaction committed; when the commit fails (the database went away), every write of it rejects: none is stored.
 */
export interface WriteBatcher {
  write<T>(work: (client: PgClient) => Promise<T>, options?: { readonly signal?: AbortSignal }): Promise<T>;
  /** Waits for the writes already made. */
  drain(): Promise<void>;
}

interface Pending {
  readonly work: (client: PgClient) => Promise<unknown>;
  readonly signal: AbortSignal | undefined;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

/** SQLSTATE of a statement cancelled by `statement_timeout` (or an operator): an ordinary error, the transaction lives. */
const QUERY_CANCELED = "57014";

/** At most this many writes per transaction (a very long burst still commits in steps). */
const MAX_BATCH = 500;

export function createWriteBatcher(pool: PgPool, metrics?: StoreMetrics): WriteBatcher {
  const queue: Pending[] = [];
  let running: Promise<void> | undefined;

  async function runBatch(batch: Pending[]): Promise<void> {
    let outcomes: ({ ok: true; value: unknown } | { ok: false; error: unknown })[] = [];
    const started = performance.now();
    try {
      await inTransaction(pool, async (client) => {
        outcomes = [];
        for (const [index, entry] of batch.entries()) {
          await client.query(`SAVEPOINT w${String(index)}`);
          try {
            const value = await entry.work(client);
            await client.query(`RELEASE SAVEPOINT w${String(index)}`);
            outcomes.push({ ok: true, value });
          } catch (error) {
            // Out of reach, or PostgreSQL chose this transaction to end a deadlock: the whole batch fails or runs again.
            // A cancelled statement (statement_timeout: one write waited too long on a busy row) fails that write alone.
            const code = (error as { code?: unknown }).code;
            const cancelled = code === QUERY_CANCELED;
            if ((isDatabaseUnavailable(error) && !cancelled) || code === "40001" || code === "40P01") throw error;
            await client.query(`ROLLBACK TO SAVEPOINT w${String(index)}`);
            outcomes.push({ ok: false, error: cancelled ? classifyDatabaseError(error) : error });
          }
        }
      });
    } catch (error) {
      const failure =
        error instanceof StoreUnavailableError ? error : new StoreUnavailableError(`The queue database refused the write: ${describeError(error)}`, { cause: error });
      metrics?.storeWrite((performance.now() - started) / 1000, false);
      for (const entry of batch) entry.reject(error instanceof StoreUnavailableError ? error : failure);
      return;
    }
    metrics?.storeWrite((performance.now() - started) / 1000, true);
    batch.forEach((entry, i) => {
      const outcome = outcomes[i];
      if (outcome?.ok) entry.resolve(outcome.value);
      else entry.reject(outcome?.error);
    });
  }

  function kick(): void {
    if (running || queue.length === 0) return;
    running = (async () => {
      while (queue.length > 0) {
        const taken = queue.splice(0, MAX_BATCH);
        const batch: Pending[] = [];
        for (const entry of taken) {
          if (entry.signal?.aborted) entry.reject(new WriteAbandonedError("The caller stopped waiting before the write was taken"));
          else batch.push(entry);
        }
        if (batch.length > 0) await runBatch(batch);
      }
    })().finally(() => {
      running = undefined;
      kick();
    });
  }

  return {
    write<T>(work: (client: PgClient) => Promise<T>, options: { readonly signal?: AbortSignal } = {}): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        queue.push({ work, signal: options.signal, resolve: resolve as (value: unknown) => void, reject });
        kick();
      });
    },
    async drain() {
      while (running) await running;
    },
  };
}
