import type { ScanRequest } from "../../core/scan.ts";
import { UNROUTABLE_MARK } from "../../paths/unroutable.ts";
import { HISTORY_REQUESTS_KEPT, storeItem } from "./dispatch-records.ts";
import { enqueueRequests, requestFolder, type MergePolicy } from "./enqueue.ts";
import { lockItemWithFolders } from "./lock-item.ts";
import type { QueueTx } from "./queue-tx.ts";
import type { ItemRow, RequestRow } from "../store-rows.ts";

/**
 * Retry, delete and prune, for the queue page, the API and the maintenance tick. A retried folder is due at once; a
 * finished one has its files checked again (a waiting one keeps the check it passed). A `failed` folder keeps the
 * targets that had finished it (only the others are asked again, their failed deliveries forgotten); a `done` folder
 * is scanned by every target again.
 * When the folder is already waiting, the old item's requests join the waiting one.
 *
 * A retry maps again: each request's received path goes through today's `SERVER_PATH_MAPPINGS` (`remap`, the function
 * intake maps with). A request that now maps to another folder leaves the retried item and waits under that folder as
 * a new request would (`enqueueRequests`: merged with the folder's waiting item, after the scan delay); the retried item
 * keeps the rest, and goes when none is left. So "add the form to SERVER_PATH_MAPPINGS, then Retry" does what it says,
 * instead of checking the disk ten times at the unmapped path.
 */

/**
 * A request's received path in the server's form under the mappings in force now; undefined leaves the request where
 * it is (no form reaches the path, or the path is not one intake maps: a folder watcher's local path).
 */
export type RemapRequest = (request: { readonly receivedPath: string; readonly source: string }) => string | undefined;

export interface RetryPolicy extends MergePolicy {
  readonly remap?: RemapRequest;
}

/** What a retry did; `movedTo`: the folders (merge keys) its requests wait under now, when today's mappings moved them. */
export interface RetryOutcome {
  readonly folder: string;
  readonly movedTo: readonly string[];
}

/** What a retry resets: the folder's failures and backoff. */
const FRESH = { next_at: 0, attempts: 0, unfinished: 0, first_failed_at: null, last_error: null, finished_at: null } as const;

/** Its files are looked at again, and a scan already running does not count for it. */
const recheck = (item: ItemRow): Partial<ItemRow> => ({ rev: item.rev + 1, checks: 0, scan_folder: null, files: null });

/** A request that today's mappings send to another path than the one it waits with, as the request it becomes. */
interface MovedRequest {
  readonly id: number;
  readonly folder: string;
  readonly request: ScanRequest;
}

/** The item's requests that map elsewhere today. A request stored before received paths were kept maps from its path. */
export function movedRequests(rows: readonly RequestRow[], remap: RemapRequest | undefined): MovedRequest[] {
  if (!remap) return [];
  return rows.flatMap((row) => {
    const receivedPath = row.received_path ?? row.path;
    const mapped = remap({ receivedPath, source: row.source });
    if (mapped === undefined) return [];
    const today = requestFolder({ path: mapped, kind: row.kind });
    if (today.path === requestFolder(row).path) return [];
    const request: ScanRequest = { path: today.path, kind: row.kind, source: row.source, event: row.event, receivedPath, ...(row.deleted ? { deleted: true } : {}) };
    return [{ id: row.id, folder: today.folder, request }];
  });
}

export async function retryItem(tx: QueueTx, id: number, policy: RetryPolicy): Promise<RetryOutcome | undefined> {
  const now = tx.now;
  // Where today's mappings send its requests: those folders' locks are taken with the item's, in the one order.
  const planned = policy.remap ? movedRequests(await tx.itemRequests(id), policy.remap) : [];
  // The folder's lock, as for a request: a retry that joins a waiting item must not race a request creating one.
  const item = await lockItemWithFolders(tx, id, planned.map((m) => m.folder));
  if (!item) return undefined;
  // Read again under the lock (another instance may have added one meanwhile); a folder not locked waits for the next retry.
  const locked = new Set(planned.map((m) => m.folder));
  const moved = planned.length === 0 ? [] : movedRequests(await tx.itemRequests(id), policy.remap).filter((m) => locked.has(m.folder));
  const outcome: RetryOutcome = { folder: item.folder, movedTo: [...new Set(moved.map((m) => m.folder))] };
  if (moved.length > 0) {
    for (const m of moved) await tx.deleteRequest(id, m.id);
    await enqueueRequests(tx, moved.map((m) => m.request), policy);
    if ((await tx.countRequests(id)) === 0) {
      await tx.deleteItem(id);
      return outcome;
    }
  }
  if (item.state === "pending") {
    // Every target's wait starts afresh too.
    await tx.clearDeliveries(id);
    await tx.updateItem({ ...item, ...FRESH, ...(moved.length > 0 ? recheck(item) : {}), due_at: Math.min(item.due_at, now) });
    return outcome;
  }
  // A folder retried right as it finished may still hold the requests its History let go: they go now, as they did.
  if ((await tx.countRequests(id)) > HISTORY_REQUESTS_KEPT) await tx.keepFirstRequests(id, HISTORY_REQUESTS_KEPT);
  const waiting = await tx.pendingItem(item.folder);
  if (waiting) {
    await tx.moveRequests(id, waiting.id);
    await tx.deleteItem(id);
    await tx.clearTargets(waiting.id);
    await tx.updateItem({ ...waiting, ...FRESH, ...recheck(waiting), due_at: Math.min(waiting.due_at, now) });
    return outcome;
  }
  if (item.state === "done") await tx.clearTargets(id);
  else await tx.clearDeliveries(id);
  await tx.updateItem({ ...item, ...FRESH, ...recheck(item), state: "pending", due_at: now });
  return outcome;
}

/** Retries every failed folder (see `retryItem`); answers what each retry did. */
export async function retryFailedItems(tx: QueueTx, policy: RetryPolicy): Promise<RetryOutcome[]> {
  const outcomes: RetryOutcome[] = [];
  for (const id of await tx.failedItemIds()) {
    const outcome = await retryItem(tx, id, policy);
    if (outcome) outcomes.push(outcome);
  }
  return outcomes;
}

/**
 * The requests refused for lack of a mapping (History's reason starts with `UNROUTABLE_MARK`) that today's mappings
 * now reach: each such folder is retried (its requests wait under the mapped folder). Those still unmapped stay in
 * History with their reason. Answers what each retry did.
 */
export async function retryRemapped(tx: QueueTx, policy: RetryPolicy): Promise<RetryOutcome[]> {
  const outcomes: RetryOutcome[] = [];
  if (!policy.remap) return outcomes;
  for (const id of await tx.failedItemIds(UNROUTABLE_MARK)) {
    if (movedRequests(await tx.itemRequests(id), policy.remap).length === 0) continue;
    const outcome = await retryItem(tx, id, policy);
    if (outcome) outcomes.push(outcome);
  }
  return outcomes;
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
