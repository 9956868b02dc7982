import type { StoreMetrics } from "../../core/metrics.ts";
import { WriteAbandonedError } from "../store-port.ts";
import type { PgClient, PgPool } from "./pool.ts";
import { inTransaction } from "./transaction.ts";

/**
 * One write, one short transaction. Each write locks only its own rows (a request: its folders' advisory locks in
 * sorted order, then their items; a retry or a file check's move: the same, `rules/lock-item.ts`; a dispatcher record: one item), so two instances writing overlapping folders in
 * different orders cannot wait on each other in a circle; a transaction PostgreSQL still picks as a deadlock victim
 * runs again (`inTransaction`). A write is answered only after its COMMIT; when it rejects, nothing was stored.
 * PostgreSQL flushes the commits of concurrent transactions together, so a burst of webhooks needs no batching here.
 *
 * A caller that stops waiting (`signal`) before the write has a connection leaves without anything stored.
 */
export async function writeInTransaction<T>(
  pool: PgPool,
  work: (client: PgClient) => Promise<T>,
  options: { readonly signal?: AbortSignal; readonly metrics?: StoreMetrics } = {},
): Promise<T> {
  const { signal, metrics } = options;
  const abandoned = (): WriteAbandonedError => new WriteAbandonedError("The caller stopped waiting before the write was taken");
  if (signal?.aborted) throw abandoned();
  const started = performance.now();
  try {
    const result = await inTransaction(pool, async (client) => {
      if (signal?.aborted) throw abandoned();
      return work(client);
    });
    metrics?.storeWrite((performance.now() - started) / 1000, true);
    return result;
  } catch (error) {
    if (!(error instanceof WriteAbandonedError)) metrics?.storeWrite((performance.now() - started) / 1000, false);
    throw error;
  }
}
