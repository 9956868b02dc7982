import type { StoreTransaction } from "./open-store.ts";
import { applyChange, type RowAccess, type RowChange } from "./rows.ts";
import type { Waiting } from "./write-queue.ts";

export type Outcome = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly error: unknown };

/**
 * Learns what a batch of writes changes, without changing anything: runs each write's `build` in its own savepoint
 * of one transaction (so one that throws fails alone, and later ones see the earlier ones' rows), collects the row
 * changes they apply, and rolls the whole transaction back. The store logs the changes, then applies the same values
 * for good. `ids` hands out new row ids (a write that throws gives its ids back; a record the disk refuses leaves a
 * gap, which is harmless).
 *
 * A build may be async (the queue's rules are written once for both stores, over an async port), but it never waits
 * on I/O here: every read and change answers at once. The store keeps its other readers out until the transaction is
 * rolled back (`store-writer.ts`), so nothing reads a write still being built.
 */
export async function buildChanges(
  rows: RowAccess,
  ids: { item: number; request: number },
  batch: readonly Waiting<StoreTransaction>[],
): Promise<{ changes: RowChange[]; outcomes: Outcome[] }> {
  const changes: RowChange[] = [];
  const tx: StoreTransaction = {
    rows,
    apply(change) {
      applyChange(rows, change);
      changes.push(change);
    },
    newItemId: () => ids.item++,
    newRequestId: () => ids.request++,
  };
  const outcomes: Outcome[] = [];
  rows.run("BEGIN");
  try {
    for (const entry of batch) {
      const mark = { changes: changes.length, item: ids.item, request: ids.request };
      rows.run("SAVEPOINT write");
      try {
        outcomes.push({ ok: true, value: await entry.build(tx) });
      } catch (error) {
        rows.run("ROLLBACK TO write");
        changes.length = mark.changes;
        ids.item = mark.item;
        ids.request = mark.request;
        outcomes.push({ ok: false, error });
      }
      rows.run("RELEASE write");
    }
  } finally {
    rows.run("ROLLBACK");
  }
  return { changes, outcomes };
}
