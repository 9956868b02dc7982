import { HISTORY_REQUESTS_KEPT, storeItem } from "./dispatch-records.ts";
import { lockItemWithFolders } from "./lock-item.ts";
import type { QueueTx } from "./queue-tx.ts";
import type { ItemRow } from "../store-rows.ts";

/**
 * Retry, delete and prune, for the queue page, the API and the maintenance tick. A retried folder is due at once; a
 * finished one has its files checked again (a waiting one keeps the check it passed). A `failed` folder keeps the
 * targets that had finished it (only the others are asked again, their failed deliveries forgotten); a `done` folder
 * is scanned by every target again.
 * When the folder is already waiting, the old item's requests join the waiting one.
 */

/** What a retry resets: the folder's failures and backoff. */
const FRESH = { next_at: 0, attempts: 0, unfinished: 0, first_failed_at: null, last_error: null, finished_at: null } as const;

/** Its files are looked at again, and a scan already running does not count for it. */
const recheck = (item: ItemRow): Partial<ItemRow> => ({ rev: item.rev + 1, checks: 0, scan_folder: null, files: null });

export async function retryItem(tx: QueueTx, id: number): Promise<boolean> {
  const now = tx.now;
  // The folder's lock, as for a request: a retry that joins a waiting item must not race a request creating one.
  const item = await lockItemWithFolders(tx, id);
  if (!item) return false;
  if (item.state === "pending") {
    // Every target's wait starts afresh too.
    await tx.clearDeliveries(id);
    await tx.updateItem({ ...item, ...FRESH, due_at: Math.min(item.due_at, now) });
    return true;
  }
  // A folder retried right as it finished may still hold the requests its History let go: they go now, as they did.
  if ((await tx.countRequests(id)) > HISTORY_REQUESTS_KEPT) await tx.keepFirstRequests(id, HISTORY_REQUESTS_KEPT);
  const waiting = await tx.pendingItem(item.folder);
  if (waiting) {
    await tx.moveRequests(id, waiting.id);
    await tx.deleteItem(id);
    await tx.clearTargets(waiting.id);
    await tx.updateItem({ ...waiting, ...FRESH, ...recheck(waiting), due_at: Math.min(waiting.due_at, now) });
    return true;
  }
  if (item.state === "done") await tx.clearTargets(id);
  else await tx.clearDeliveries(id);
  await tx.updateItem({ ...item, ...FRESH, ...recheck(item), state: "pending", due_at: now });
  return true;
}

/** Retries every failed folder (see `retryItem`); answers how many. */
export async function retryFailedItems(tx: QueueTx): Promise<number> {
  const ids = await tx.failedItemIds();
  for (const id of ids) await retryItem(tx, id);
  return ids.length;
}

/**
 * A waiting folder judged, once stored, to be one no server can scan (its path matches no `SERVER_PATH_MAPPINGS` form
 * and lies in no library: `intake/unroutable-guard.ts`): it goes to History as failed with `reason`, and a file check
 * or scan that began meanwhile no longer counts (`rev`). Retry works as for any failed folder. A folder no longer
 * waiting (finished, removed) is left as it is. Answers whether it was failed.
 */
export async function refuseWaiting(tx: QueueTx, id: number, reason: string): Promise<boolean> {
  const item = await lockItemWithFolders(tx, id);
  if (item?.state !== "pending") return false;
  await storeItem(tx, { ...item, rev: item.rev + 1, state: "failed", finished_at: tx.now, last_error: reason });
  return true;
}

export async function removeItem(tx: QueueTx, id: number): Promise<boolean> {
  if (!(await tx.item(id))) return false;
  await tx.deleteItem(id);
  return true;
}

/**
 * The history rows pruning drops, in SQL both engines read alike: finished before ?1, or beyond the newest ?2. The
 * adapters delete these items with their requests, target results and deliveries (`QueueTx.pruneHistory`).
 */
export const PRUNED_IDS = `
  SELECT id FROM items WHERE state <> 'pending' AND finished_at < ?1
  UNION
  SELECT id FROM (
    SELECT id, ROW_NUMBER() OVER (ORDER BY finished_at DESC, id DESC) AS newest FROM items WHERE state <> 'pending'
  ) ranked WHERE newest > ?2`;

/** History beyond `maxDays` or `maxRows` (newest kept); answers how many folders were dropped. */
export async function pruneHistory(tx: QueueTx, maxDays: number, maxRows: number): Promise<number> {
  const before = tx.now - maxDays * 24 * 60 * 60 * 1000;
  const stats = await tx.historyStats();
  if (stats.count <= maxRows && (stats.oldest === null || stats.oldest >= before)) return 0;
  return tx.pruneHistory(before, maxRows);
}
