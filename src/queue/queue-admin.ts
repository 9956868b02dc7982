import { pendingItem } from "./enqueue-requests.ts";
import type { StoreTransaction } from "./store/queue-store.ts";
import type { ItemRow, RequestRow } from "./store/rows.ts";

/**
 * Retry and delete, for the queue page and API. A retried folder is due at once; a finished one has its files checked
 * again (a waiting one keeps the check it passed).
 * A `failed` folder keeps the targets that had finished it (only the others are asked again); a `done` folder is
 * scanned by every target again. When the folder is already waiting, the old item's requests join the waiting one.
 */
/** What a retry resets: the folder's failures and backoff. */
export const RETRY_FRESH = { next_at: 0, attempts: 0, unfinished: 0, first_failed_at: null, last_error: null, finished_at: null } as const;

export function retryItem(tx: StoreTransaction, id: number, now: number): boolean {
  const item = tx.rows.get<ItemRow>("SELECT * FROM items WHERE id = ?", [id]);
  if (!item) return false;
  const fresh = RETRY_FRESH;
  if (item.state === "pending") {
    tx.apply({ k: "item", r: { ...item, ...fresh, due_at: Math.min(item.due_at, now) } });
    return true;
  }
  const waiting = pendingItem(tx, item.folder);
  if (waiting) {
    const requests = tx.rows.all<RequestRow>("SELECT * FROM requests WHERE item_id = ?", [id]);
    for (const request of requests) tx.apply({ k: "req", r: { ...request, item_id: waiting.id } });
    tx.apply({ k: "del", id });
    tx.apply({ k: "clr", id: waiting.id });
    tx.apply({ k: "item", r: { ...waiting, ...fresh, ...recheck(waiting), due_at: Math.min(waiting.due_at, now) } });
    return true;
  }
  if (item.state === "done") tx.apply({ k: "clr", id });
  tx.apply({ k: "item", r: { ...item, ...fresh, ...recheck(item), state: "pending", due_at: now } });
  return true;
}

/** Retries every failed folder (see `retryItem`); returns how many. */
export function retryFailedItems(tx: StoreTransaction, now: number): number {
  const ids = tx.rows.all<{ id: number }>("SELECT id FROM items WHERE state = 'failed' ORDER BY id");
  for (const { id } of ids) retryItem(tx, id, now);
  return ids.length;
}

export function removeItem(tx: StoreTransaction, id: number): boolean {
  const item = tx.rows.get<{ id: number }>("SELECT id FROM items WHERE id = ?", [id]);
  if (!item) return false;
  tx.apply({ k: "del", id });
  return true;
}

/** History beyond `maxDays` or `maxRows` (newest kept). Returns whether there was anything to drop. */
export function pruneHistory(tx: StoreTransaction, now: number, maxDays: number, maxRows: number): boolean {
  const before = now - maxDays * 24 * 60 * 60 * 1000;
  const stats = tx.rows.get<{ n: number; oldest: number | null }>(
    "SELECT COUNT(*) AS n, MIN(finished_at) AS oldest FROM items WHERE state <> 'pending'",
  );
  if (!stats || (stats.n <= maxRows && (stats.oldest === null || stats.oldest >= before))) return false;
  tx.apply({ k: "prune", before, keep: maxRows });
  return true;
}

export function recheck(item: ItemRow): Partial<ItemRow> {
  return { rev: item.rev + 1, checks: 0, scan_folder: null, files: null };
}
