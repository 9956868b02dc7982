import type { ScanOutcome } from "../core/target.ts";
import type { AttemptStart, CheckResult, DispatchQueue, FailureRecord, WorkItem } from "./dispatch/dispatch-port.ts";
import type { QueueStore, StoreTransaction } from "./store/queue-store.ts";
import type { ItemRow, RequestRow, RowReader } from "./store/rows.ts";

/** Attempts in a row that may start and never end (the process died during them) before a folder is given up. */
export const MAX_UNFINISHED_ATTEMPTS = 3;

/**
 * Requests a finished folder keeps (its first ones; the rest are counted in `requests_dropped`). The history is
 * bounded by its row limit; this bounds what each row holds, so memory does not grow with the number of requests
 * that ever merged into the folders of the history.
 */
export const HISTORY_REQUESTS_KEPT = 10;

/** Stores an item image; a folder that finishes (done or failed) lets go of all but its first requests. */
function put(tx: StoreTransaction, row: ItemRow): void {
  if (row.state === "pending") return tx.apply({ k: "item", r: row });
  const count = tx.rows.get<{ n: number }>("SELECT COUNT(*) AS n FROM requests WHERE item_id = ?", [row.id])?.n ?? 0;
  const extra = Math.max(0, count - HISTORY_REQUESTS_KEPT);
  tx.apply({ k: "item", r: extra > 0 ? { ...row, requests_dropped: row.requests_dropped + extra } : row });
  if (extra > 0) tx.apply({ k: "trim", id: row.id, keep: HISTORY_REQUESTS_KEPT });
}

/**
 * The dispatcher's side of the queue (see `DispatchQueue`), on top of the store. Which items are due comes from the
 * store's in-memory schedule (`DueIndex`), so a dispatch costs O(log n) however many folders wait; the items
 * themselves are read by id.
 */
export function createQueueWork(store: QueueStore, now: () => number): Omit<DispatchQueue, "onWork"> {
  const { rows, due } = store;
  const pendingItem = (id: number): ItemRow | undefined =>
    rows.get<ItemRow>("SELECT * FROM items WHERE id = ? AND state = 'pending'", [id]);
  const workItems = (ids: readonly number[]): WorkItem[] =>
    ids.flatMap((id) => {
      const item = pendingItem(id);
      return item ? [toWorkItem(rows, item)] : [];
    });

  return {
    dueForCheck: (at, limit, skip) => Promise.resolve(workItems(due.dueForCheck(at, limit, skip))),
    dueForTarget: (target, at, limit, skip) => Promise.resolve(workItems(due.dueForTarget(target, at, limit, skip))),
    nextWakeAt: (at) => Promise.resolve(due.nextWakeAt(at)),
    async recordCheck(id, rev, result) {
      await store.write((tx) => {
        const item = pendingItem(id);
        if (!item || item.rev !== rev) return;
        put(tx, afterCheck(item, result, now()));
      });
    },
    beginAttempt(id, rev, targets = 1) {
      return store.write((tx): AttemptStart | undefined => {
        const item = pendingItem(id);
        if (!item || item.rev !== rev) return undefined;
        if (tooManyUnfinished(item, targets)) {
          const reason = neverFinishedReason(item.unfinished);
          put(tx, { ...item, state: "failed", finished_at: now(), last_error: reason });
          return { go: false, reason };
        }
        // Counted before the scan starts, and on disk before it does: a scan that takes the process down still counts.
        put(tx, { ...item, unfinished: item.unfinished + 1 });
        return { go: true, attempt: item.attempts + 1 };
      });
    },
    recordScan(id, rev, target, outcome, allTargets) {
      return store.write((tx) => {
        const item = pendingItem(id);
        if (!item) return undefined;
        if (item.rev !== rev) {
          // New work arrived during the scan: it does not count, but its attempt is over.
          if (item.unfinished > 0) put(tx, { ...item, unfinished: ended(item) });
          return undefined;
        }
        const at = now();
        tx.apply({ k: "tgt", r: { item_id: id, target, ...outcomeColumns(outcome), at } });
        const done = new Set(
          tx.rows.all<{ target: string }>("SELECT target FROM item_targets WHERE item_id = ?", [id]).map((r) => r.target),
        );
        const completed = allTargets.every((name) => done.has(name));
        const finished = completed ? { state: "done" as const, finished_at: at, last_error: null } : {};
        put(tx, { ...item, unfinished: ended(item), ...finished });
        return { completed };
      });
    },
    recordFailure(id, rev, failure) {
      return store.write((tx) => {
        const item = pendingItem(id);
        if (!item) return { failed: false };
        if (item.rev !== rev) {
          if (item.unfinished > 0) put(tx, { ...item, unfinished: ended(item) });
          return { failed: false };
        }
        const updated = afterFailure(item, failure, now());
        put(tx, updated);
        return { failed: updated.state === "failed" };
      });
    },
    async recordInterrupted(id) {
      await store.write((tx) => {
        const item = pendingItem(id);
        if (item && item.unfinished > 0) put(tx, { ...item, unfinished: ended(item) });
      });
    },
    failWaitingFor(target, waitedMs, reason) {
      return store.write((tx) => {
        const dueBefore = now() - waitedMs;
        const items = tx.rows.all<ItemRow>(
          `SELECT * FROM items WHERE state = 'pending' AND due_at <= ?1
             AND NOT EXISTS (SELECT 1 FROM item_targets t WHERE t.item_id = items.id AND t.target = ?2)`,
          [dueBefore, target],
        );
        const at = now();
        for (const item of items) {
          put(tx, { ...item, state: "failed", finished_at: at, last_error: reason });
        }
        return items.length;
      });
    },
    pendingCount: () => Promise.resolve(due.size),
    writable: () => store.health().writable,
  };
}

/** Whether a folder's attempts that never ended (the process died during each) reached the limit: it is given up. */
export function tooManyUnfinished(item: ItemRow, targets: number): boolean {
  return item.unfinished >= MAX_UNFINISHED_ATTEMPTS * Math.max(1, targets);
}

export function neverFinishedReason(unfinished: number): string {
  return (
    `The last ${String(unfinished)} scan attempts of this folder started and never finished: autoscan ` +
    "stopped or crashed during each. Retry it once the cause is fixed."
  );
}

export function afterCheck(item: ItemRow, result: CheckResult, at: number): ItemRow {
  switch (result.kind) {
    case "ready":
      return { ...item, checks: result.checks, scan_folder: result.scanFolder, files: JSON.stringify(result.files) };
    case "wait":
      return { ...item, checks: result.checks, next_at: at + result.waitMs };
    case "failed":
      return { ...item, checks: result.checks, state: "failed", finished_at: at, last_error: result.reason };
  }
}

/** An attempt ended (whatever its outcome): it takes back the start `beginAttempt` counted for it. Each target's
 *  attempt counts on its own, so one target finishing does not hide another's attempt that never ended. */
export function ended(item: ItemRow): number {
  return Math.max(0, item.unfinished - 1);
}

export function afterFailure(item: ItemRow, failure: FailureRecord, at: number): ItemRow {
  const firstFailedAt = item.first_failed_at ?? at;
  const base = { ...item, attempts: item.attempts + 1, unfinished: ended(item), first_failed_at: firstFailedAt, last_error: failure.error };
  if (at - firstFailedAt >= failure.retryMaxMs) return { ...base, state: "failed", finished_at: at };
  return { ...base, next_at: at + failure.retryInMs };
}

export function outcomeColumns(outcome: ScanOutcome): { status: "scanned" | "skipped"; detail: string | null } {
  return outcome.status === "scanned"
    ? { status: "scanned", detail: outcome.detail ?? null }
    : { status: "skipped", detail: outcome.reason };
}

/** The columns of a folder's requests a check and a scan use: a busy folder holds hundreds, read at every dispatch. */
export const WORK_REQUESTS_SQL = "SELECT path, kind, deleted, source, event FROM requests WHERE item_id = ? ORDER BY id";
export type WorkRequestRow = Pick<RequestRow, "path" | "kind" | "deleted" | "source" | "event">;

export function toWorkItem(rows: RowReader, item: ItemRow): WorkItem {
  return workItemOf(item, rows.all<WorkRequestRow>(WORK_REQUESTS_SQL, [item.id]));
}

/** A pending row and its requests as the dispatcher sees them. */
export function workItemOf(item: ItemRow, requests: readonly WorkRequestRow[]): WorkItem {
  return {
    id: item.id,
    rev: item.rev,
    folder: item.folder,
    ...(item.scan_folder === null ? {} : { scanFolder: item.scan_folder }),
    files: item.files ? (JSON.parse(item.files) as string[]) : [],
    priority: item.priority,
    firstAt: item.first_at,
    checks: item.checks,
    attempts: item.attempts,
    requests: requests.map((r) => ({
      path: r.path,
      kind: r.kind,
      deleted: r.deleted === 1,
      source: r.source,
      event: r.event,
    })),
  };
}
