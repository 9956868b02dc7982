import type { ScanOutcome } from "../../core/target.ts";
import type { AttemptStart, CheckResult, FailureRecord } from "../dispatch/dispatch-port.ts";
import { moveToFolder, requestFolder, type MergePolicy } from "./enqueue.ts";
import { landedColumns, type LandedStart } from "./landed.ts";
import type { QueueTx } from "./queue-tx.ts";
import type { ItemRow } from "../store-rows.ts";

/**
 * What the dispatcher records, as rules over the store port (`QueueTx`). Every record names the item's `rev` as the
 * dispatcher saw it: a result for an item that received new work meanwhile does not count (the new work restarted its
 * wait, and every target scans it again), but the attempt it ends is over either way.
 */

/** Attempts in a row that may start and never end (the process died during them) before a folder is given up. */
export const MAX_UNFINISHED_ATTEMPTS = 3;

/**
 * Requests a finished folder keeps (its first ones; the rest are counted in `requests_dropped`). The history is
 * bounded by its row limit; this bounds what each row holds, so memory does not grow with the number of requests
 * that ever merged into the folders of the history.
 */
export const HISTORY_REQUESTS_KEPT = 10;

/**
 * Files a ready folder carries to its scan (the after-scan analysis, the commands' `AUTOSCAN_FILES`): the first 500 that
 * the check found. A folder a watcher saw 50,000 files appear in wrote its 3.5 MB list into its row at each record
 * (check, attempt, scan), each write holding the event loop ~100 ms; such a list fits in no environment variable
 * (Linux takes 128 KB in one) and no one analyzes it item by item.
 */
export const FILES_KEPT = 500;

/** Extra requests of a finished folder deleted per write (`dropExtraRequests`). */
export const EXTRA_REQUESTS_PER_WRITE = 1_000;

/**
 * Stores an item image; a folder that finishes (done or failed) counts all but its first requests as dropped, and lets
 * go of its claim. The extra requests themselves go afterwards, `dropExtraRequests` a write at a time: a folder a
 * watcher saw 50,000 files appear in deleted 49,990 rows in this write, and held the event loop half a second. Until
 * then the views read a finished folder's first requests only, so nothing shows the difference.
 */
export async function storeItem(tx: QueueTx, row: ItemRow): Promise<void> {
  if (row.state === "pending") return tx.updateItem(row);
  const extra = Math.max(0, (await tx.countRequests(row.id)) - HISTORY_REQUESTS_KEPT);
  await tx.updateItem(extra > 0 ? { ...row, requests_dropped: row.requests_dropped + extra } : row);
  await tx.releaseClaim(row.id);
}

/**
 * Deletes up to `limit` of the requests a finished folder holds beyond its first `HISTORY_REQUESTS_KEPT` (already
 * counted in `requests_dropped`); answers how many. A folder waiting again (retried) is left alone.
 */
export async function dropExtraRequests(tx: QueueTx, id: number, limit = EXTRA_REQUESTS_PER_WRITE): Promise<number> {
  const item = await tx.item(id);
  if (!item || item.state === "pending") return 0;
  return tx.dropRequestsAfter(id, HISTORY_REQUESTS_KEPT, limit);
}

/** The SQL (both engines, `AsyncRows`) of one finished folder still holding extra requests: parameter `HISTORY_REQUESTS_KEPT`. */
export const FOLDER_WITH_EXTRA_REQUESTS_SQL =
  "SELECT id FROM items i WHERE state <> 'pending' AND requests_dropped > 0 AND EXISTS (SELECT 1 FROM requests r WHERE r.item_id = i.id LIMIT 1 OFFSET ?) ORDER BY id LIMIT 1";

/** The waiting item `id` as the dispatcher saw it (`rev`), else nothing. */
async function current(tx: QueueTx, id: number, rev: number): Promise<ItemRow | undefined> {
  const item = await tx.item(id);
  return item?.state === "pending" && item.rev === rev ? item : undefined;
}

/**
 * A file check's result. A folder keyed by a path of unknown kind that the check found to be a file is not scanned as
 * it is: its requests go to the file's folder (`moveToFolder`), to merge with the season's other files, and are
 * checked there. Answers where they went, then.
 */
export async function recordCheck(
  tx: QueueTx,
  id: number,
  rev: number,
  result: CheckResult,
  policy: MergePolicy,
): Promise<{ readonly movedTo: string; readonly waitMs: number } | undefined> {
  const item = await current(tx, id, rev);
  if (!item) return undefined;
  if (result.kind === "ready") {
    const folder = requestFolder({ path: result.scanFolder, kind: "folder" }).folder;
    const moved = folder === item.folder ? undefined : await moveToFolder(tx, id, folder, tx.now, policy);
    if (moved) {
      await tx.releaseClaim(moved.id);
      return { movedTo: folder, waitMs: Math.max(0, moved.dueAt - tx.now) };
    }
  }
  await storeItem(tx, afterCheck(item, result, tx.now));
  // Checked: its scans go to whichever instance asks first, so no instance builds a backlog only it may send.
  await tx.releaseClaim(id);
  return undefined;
}

/**
 * Marks an attempt as started before it starts (a scan that takes the process down still counts), or gives the
 * folder up when its last attempts all started and never ended. Only the instance that holds the folder's claim
 * starts a scan of it.
 */
export async function beginAttempt(tx: QueueTx, id: number, rev: number, targets = 1): Promise<AttemptStart | undefined> {
  const item = await current(tx, id, rev);
  if (!item || !tx.holdsClaim(item)) return undefined;
  if (item.unfinished >= MAX_UNFINISHED_ATTEMPTS * Math.max(1, targets)) {
    const reason =
      `The last ${String(item.unfinished)} scan attempts of this folder started and never finished: autoscan ` +
      "stopped or crashed during each. Retry it once the cause is fixed.";
    await storeItem(tx, { ...item, state: "failed", finished_at: tx.now, last_error: reason });
    return { go: false, reason };
  }
  await storeItem(tx, { ...item, unfinished: item.unfinished + 1 });
  return { go: true, attempt: item.attempts + 1 };
}

/**
 * A target scanned (or skipped) the folder: its failed delivery, if any, is over. The folder is finished once every
 * target has either delivered it or been given up (`settle`). `undefined`: stale (new work) or removed.
 */
export async function recordScan(
  tx: QueueTx,
  id: number,
  rev: number,
  target: string,
  outcome: ScanOutcome,
  allTargets: readonly string[],
  landed?: LandedStart,
): Promise<{ readonly completed: boolean } | undefined> {
  const item = await tx.item(id);
  if (item?.state !== "pending") return undefined;
  if (item.rev !== rev) {
    await closeAttempt(tx, item);
    return undefined;
  }
  await tx.dropDelivery(id, target);
  const check = outcome.status === "scanned" ? landedColumns(landed, tx.now, (item.refresh ?? 0) > 0) : {};
  await tx.putTarget({ item_id: id, target, ...outcomeColumns(outcome), at: tx.now, ...check });
  const settled = await settle(tx, { ...item, unfinished: ended(item) }, allTargets);
  return { completed: settled.state !== "pending" };
}

/**
 * A target failed the folder (it is down, refused us, or failed this folder): that delivery alone waits, with its own
 * backoff (`retryInMs`), stored so that a restart keeps it; the other targets deliver the folder meanwhile. A delivery
 * that has failed for `retryMaxMs` is given up, alone: the folder finishes as `failed` once the other targets are
 * through with it. `failed`: this delivery was given up now.
 */
export async function recordFailure(
  tx: QueueTx,
  id: number,
  rev: number,
  target: string,
  failure: FailureRecord,
  allTargets: readonly string[],
): Promise<{ readonly failed: boolean }> {
  const item = await tx.item(id);
  if (item?.state !== "pending") return { failed: false };
  if (item.rev !== rev) {
    await closeAttempt(tx, item);
    return { failed: false };
  }
  const at = tx.now;
  const before = (await tx.deliveries(id)).find((d) => d.target === target);
  const firstFailedAt = before?.first_failed_at ?? at;
  const givenUp = at - firstFailedAt >= failure.retryMaxMs;
  await tx.putDelivery({
    item_id: id,
    target,
    attempts: (before?.attempts ?? 0) + 1,
    next_at: givenUp ? 0 : at + failure.retryInMs,
    first_failed_at: firstFailedAt,
    last_error: failure.error,
    failed: givenUp ? 1 : 0,
  });
  const updated = { ...item, attempts: item.attempts + 1, unfinished: ended(item), last_error: failure.error };
  if (givenUp) await settle(tx, updated, allTargets);
  else await storeItem(tx, updated);
  return { failed: givenUp };
}

/** An attempt cut off by a shutdown: it did not fail, and it did not crash the process. */
export async function recordInterrupted(tx: QueueTx, id: number): Promise<void> {
  const item = await tx.item(id);
  if (item?.state === "pending") await closeAttempt(tx, item);
}

/**
 * `target` has been down for `waitedMs`: its deliveries that have failed all that time are given up (a folder it never
 * tried, one held for an anchor or a mount, is not failed by this). Answers how many.
 */
export async function failWaitingFor(
  tx: QueueTx,
  target: string,
  waitedMs: number,
  reason: string,
  allTargets: readonly string[],
): Promise<number> {
  const failing = await tx.deliveriesFailingSince(target, tx.now - waitedMs);
  for (const delivery of failing) {
    await tx.putDelivery({ ...delivery, failed: 1, next_at: 0, last_error: reason });
    const item = await tx.item(delivery.item_id);
    if (item?.state === "pending") await settle(tx, { ...item, last_error: reason }, allTargets);
  }
  return failing.length;
}

/**
 * Stores the item, finished when every target has delivered it or been given up: `failed` (naming what failed) when
 * any was given up, `done` otherwise; still waiting else.
 */
async function settle(tx: QueueTx, item: ItemRow, allTargets: readonly string[]): Promise<ItemRow> {
  const finished = new Set(await tx.finishedTargets(item.id));
  const givenUp = (await tx.deliveries(item.id)).filter((d) => d.failed === 1);
  const through = new Set([...finished, ...givenUp.map((d) => d.target)]);
  if (!allTargets.every((name) => through.has(name))) {
    await storeItem(tx, item);
    return item;
  }
  const failedError = givenUp.map((d) => (d.last_error.startsWith(`${d.target}:`) ? d.last_error : `${d.target}: ${d.last_error}`)).join("; ");
  const done: ItemRow =
    givenUp.length > 0
      ? { ...item, state: "failed", finished_at: tx.now, last_error: failedError }
      : { ...item, state: "done", finished_at: tx.now, last_error: null };
  await storeItem(tx, done);
  return done;
}

function afterCheck(item: ItemRow, result: CheckResult, at: number): ItemRow {
  switch (result.kind) {
    case "ready":
      return { ...item, checks: result.checks, scan_folder: result.scanFolder, files: JSON.stringify(result.files.slice(0, FILES_KEPT)) };
    case "wait":
      return { ...item, checks: result.checks, next_at: at + result.waitMs };
    case "failed":
      return { ...item, checks: result.checks, state: "failed", finished_at: at, last_error: result.reason };
  }
}

/** An attempt ended, whatever its outcome: it takes back the start `beginAttempt` counted for it. */
async function closeAttempt(tx: QueueTx, item: ItemRow): Promise<void> {
  if (item.unfinished > 0) await storeItem(tx, { ...item, unfinished: ended(item) });
}

/** Each target's attempt counts on its own, so one target finishing does not hide another's attempt that never ended. */
function ended(item: ItemRow): number {
  return Math.max(0, item.unfinished - 1);
}

function outcomeColumns(outcome: ScanOutcome): { status: "scanned" | "skipped"; detail: string | null } {
  return outcome.status === "scanned" ? { status: "scanned", detail: outcome.detail ?? null } : { status: "skipped", detail: outcome.reason };
}
