import type { ScanOutcome } from "../core/target.ts";
import type { CheckResult, DispatchQueue, FailureRecord, WorkItem } from "./dispatch-port.ts";
import type { ItemRow, RequestRow, RowAccess } from "./rows.ts";
import type { QueueStore } from "./store.ts";

/** The dispatcher's side of the queue (see `DispatchQueue`), on top of the store. */
export function createQueueWork(store: QueueStore, now: () => number): Omit<DispatchQueue, "onWork"> {
  const { rows } = store;
  const pendingItem = (id: number): ItemRow | undefined =>
    rows.get<ItemRow>("SELECT * FROM items WHERE id = ? AND state = 'pending'", [id]);

  return {
    dueForCheck(at, limit) {
      const items = rows.all<ItemRow>(
        `SELECT * FROM items WHERE state = 'pending' AND due_at <= ?1 AND next_at <= ?1 AND scan_folder IS NULL
         ORDER BY priority, first_at, id LIMIT ?2`,
        [at, limit],
      );
      return items.map((item) => toWorkItem(rows, item));
    },
    dueForTarget(target, at, limit) {
      const items = rows.all<ItemRow>(
        `SELECT * FROM items WHERE state = 'pending' AND due_at <= ?1 AND next_at <= ?1 AND scan_folder IS NOT NULL
           AND NOT EXISTS (SELECT 1 FROM item_targets t WHERE t.item_id = items.id AND t.target = ?2)
         ORDER BY priority, first_at, id LIMIT ?3`,
        [at, target, limit],
      );
      return items.map((item) => toWorkItem(rows, item));
    },
    nextWakeAt(at) {
      const due = rows.get<{ t: number | null }>(
        "SELECT MIN(due_at) AS t FROM items WHERE state = 'pending' AND due_at > ?",
        [at],
      )?.t;
      const next = rows.get<{ t: number | null }>(
        "SELECT MIN(next_at) AS t FROM items WHERE state = 'pending' AND next_at > ?",
        [at],
      )?.t;
      const times = [due, next].filter((t): t is number => typeof t === "number");
      return times.length > 0 ? Math.min(...times) : undefined;
    },
    async recordCheck(id, rev, result) {
      await store.write((tx) => {
        const item = pendingItem(id);
        if (!item || item.rev !== rev) return;
        tx.apply({ k: "item", r: afterCheck(item, result, now()) });
      }).durable;
    },
    async recordScan(id, rev, target, outcome, allTargets) {
      const { result, durable } = store.write((tx) => {
        const item = pendingItem(id);
        if (!item || item.rev !== rev) return undefined;
        const at = now();
        tx.apply({ k: "tgt", r: { item_id: id, target, ...outcomeColumns(outcome), at } });
        const done = new Set(
          rows.all<{ target: string }>("SELECT target FROM item_targets WHERE item_id = ?", [id]).map((r) => r.target),
        );
        const completed = allTargets.every((name) => done.has(name));
        if (completed) tx.apply({ k: "item", r: { ...item, state: "done", finished_at: at, last_error: null } });
        return { completed };
      });
      await durable;
      return result;
    },
    async recordFailure(id, failure) {
      const { result, durable } = store.write((tx) => {
        const item = pendingItem(id);
        if (!item) return { failed: false };
        const updated = afterFailure(item, failure, now());
        tx.apply({ k: "item", r: updated });
        return { failed: updated.state === "failed" };
      });
      await durable;
      return result;
    },
    async failWaitingFor(target, dueBefore, reason) {
      const { result, durable } = store.write((tx) => {
        const items = rows.all<ItemRow>(
          `SELECT * FROM items WHERE state = 'pending' AND due_at <= ?1
             AND NOT EXISTS (SELECT 1 FROM item_targets t WHERE t.item_id = items.id AND t.target = ?2)`,
          [dueBefore, target],
        );
        const at = now();
        for (const item of items) {
          tx.apply({ k: "item", r: { ...item, state: "failed", finished_at: at, last_error: reason } });
        }
        return items.length;
      });
      await durable;
      return result;
    },
    pendingCount() {
      return rows.get<{ n: number }>("SELECT COUNT(*) AS n FROM items WHERE state = 'pending'")?.n ?? 0;
    },
  };
}

function afterCheck(item: ItemRow, result: CheckResult, at: number): ItemRow {
  switch (result.kind) {
    case "ready":
      return { ...item, checks: result.checks, scan_folder: result.scanFolder, files: JSON.stringify(result.files) };
    case "wait":
      return { ...item, checks: result.checks, next_at: result.nextAt };
    case "failed":
      return { ...item, checks: result.checks, state: "failed", finished_at: at, last_error: result.reason };
  }
}

function afterFailure(item: ItemRow, failure: FailureRecord, at: number): ItemRow {
  const firstFailedAt = item.first_failed_at ?? at;
  const base = { ...item, attempts: item.attempts + 1, first_failed_at: firstFailedAt, last_error: failure.error };
  if (at - firstFailedAt >= failure.retryMaxMs) return { ...base, state: "failed", finished_at: at };
  return failure.retryAt === undefined ? base : { ...base, next_at: failure.retryAt };
}

function outcomeColumns(outcome: ScanOutcome): { status: "scanned" | "skipped"; detail: string | null } {
  return outcome.status === "scanned"
    ? { status: "scanned", detail: outcome.detail ?? null }
    : { status: "skipped", detail: outcome.reason };
}

export function toWorkItem(rows: RowAccess, item: ItemRow): WorkItem {
  const requests = rows.all<RequestRow>("SELECT * FROM requests WHERE item_id = ? ORDER BY id", [item.id]);
  return {
    id: item.id,
    rev: item.rev,
    folder: item.folder,
    ...(item.scan_folder === null ? {} : { scanFolder: item.scan_folder }),
    files: item.files ? (JSON.parse(item.files) as string[]) : [],
    priority: item.priority,
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
