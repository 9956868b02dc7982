import type { RefreshWish } from "../core/scan.ts";
import { refreshWish } from "./rules/refresh.ts";
import type { HistoryQuery, PageOptions, QueueItemView } from "../core/queue-view.ts";
import type { AsyncRows } from "./store-port.ts";
import { HISTORY_REQUESTS_KEPT } from "./rules/dispatch-records.ts";
import { DUE_ORDER } from "./rules/due.ts";
import type { DeliveryRow, ItemRow, ItemState, RequestRow, TargetRow } from "./store-rows.ts";

export type { HistoryQuery, PageOptions, QueueItemView, RequestView, TargetView } from "../core/queue-view.ts";
import type { TargetView } from "../core/queue-view.ts";

const MAX_PAGE = 1000;

export async function listPendingItems(rows: AsyncRows, page: PageOptions): Promise<QueueItemView[]> {
  const items = await rows.all<ItemRow>(
    `SELECT * FROM items WHERE state = 'pending' ORDER BY ${DUE_ORDER} LIMIT ? OFFSET ?`,
    pageParams(page),
  );
  return Promise.all(items.map((item) => toView(rows, item)));
}

/** Finished and failed folders, newest first, that match `query`. */
export async function listHistoryItems(rows: AsyncRows, query: HistoryQuery): Promise<QueueItemView[]> {
  const filter = historyFilter(query);
  const items = await rows.all<ItemRow>(
    `SELECT * FROM items WHERE ${filter.where} ORDER BY finished_at DESC, id DESC LIMIT ? OFFSET ?`,
    [...filter.params, ...pageParams(query)],
  );
  return Promise.all(items.map((item) => toView(rows, item)));
}

/** How many history folders match `query` (all of them without filters). */
export async function countHistory(rows: AsyncRows, query: HistoryQuery = {}): Promise<number> {
  const filter = historyFilter(query);
  return (await rows.get<{ n: number }>(`SELECT COUNT(*) AS n FROM items WHERE ${filter.where}`, filter.params))?.n ?? 0;
}

/** The sources that sent the requests still kept, for the history's filter. */
export async function listSources(rows: AsyncRows): Promise<string[]> {
  return (await rows.all<{ source: string }>("SELECT DISTINCT source FROM requests ORDER BY source")).map((r) => r.source);
}

function historyFilter(query: HistoryQuery): { where: string; params: (string | number)[] } {
  const clauses = ["state <> 'pending'"];
  const params: (string | number)[] = [];
  if (query.state) {
    clauses.push("state = ?");
    params.push(query.state);
  }
  if (query.source) {
    // One pass over the requests, not one per item.
    clauses.push("id IN (SELECT item_id FROM requests WHERE source = ?)");
    params.push(query.source);
  }
  if (query.landed) {
    clauses.push("id IN (SELECT item_id FROM item_targets WHERE landed = ?)");
    params.push(query.landed);
  }
  const search = query.search?.trim();
  if (search) {
    const pattern = `%${search.replace(/[\\%_]/g, (ch) => `\\${ch}`)}%`;
    clauses.push(
      // LOWER on both sides: SQLite's LIKE ignores ASCII case, PostgreSQL's does not; this reads alike on both.
      "(LOWER(folder) LIKE LOWER(?) ESCAPE '\\' OR EXISTS (SELECT 1 FROM requests r WHERE r.item_id = items.id AND LOWER(r.path) LIKE LOWER(?) ESCAPE '\\'))",
    );
    params.push(pattern, pattern);
  }
  return { where: clauses.join(" AND "), params };
}

/** Folders per state, for the metrics' queue gauge. */
export async function countByState(rows: AsyncRows): Promise<Record<ItemState, number>> {
  const counts: Record<ItemState, number> = { pending: 0, done: 0, failed: 0 };
  for (const row of await rows.all<{ state: ItemState; n: number }>("SELECT state, COUNT(*) AS n FROM items GROUP BY state")) {
    counts[row.state] = row.n;
  }
  return counts;
}

export async function findItem(rows: AsyncRows, id: number): Promise<QueueItemView | undefined> {
  const item = await rows.get<ItemRow>("SELECT * FROM items WHERE id = ?", [id]);
  return item ? toView(rows, item) : undefined;
}

function pageParams(page: PageOptions): [number, number] {
  const limit = Math.min(MAX_PAGE, Math.max(0, Math.trunc(page.limit ?? 100)));
  return [limit, Math.max(0, Math.trunc(page.offset ?? 0))];
}

async function toView(rows: AsyncRows, item: ItemRow): Promise<QueueItemView> {
  // A finished folder shows its first requests (`HISTORY_REQUESTS_KEPT`), also while its others are being deleted.
  const requests =
    item.state === "pending"
      ? await rows.all<RequestRow>("SELECT * FROM requests WHERE item_id = ? ORDER BY id", [item.id])
      : await rows.all<RequestRow>("SELECT * FROM requests WHERE item_id = ? ORDER BY id LIMIT ?", [item.id, HISTORY_REQUESTS_KEPT]);
  const targets = await rows.all<TargetRow>("SELECT * FROM item_targets WHERE item_id = ? ORDER BY target", [item.id]);
  const deliveries = await rows.all<DeliveryRow>("SELECT * FROM deliveries WHERE item_id = ? ORDER BY target", [item.id]);
  return {
    id: item.id,
    folder: item.folder,
    state: item.state,
    priority: item.priority,
    firstRequestAt: item.first_at,
    lastRequestAt: item.last_at,
    dueAt: item.due_at,
    ...(item.state === "pending" && item.next_at > item.due_at ? { nextAttemptAt: item.next_at } : {}),
    fileChecks: item.checks,
    attempts: item.attempts,
    ...(item.scan_folder === null ? {} : { scanFolder: item.scan_folder }),
    ...(item.last_error === null ? {} : { lastError: item.last_error }),
    ...(item.finished_at === null ? {} : { finishedAt: item.finished_at }),
    requests: requests.map((r) => ({
      path: r.path,
      kind: r.kind,
      deleted: r.deleted === 1,
      source: r.source,
      event: r.event,
      ...(r.received_path === null ? {} : { receivedPath: r.received_path }),
      at: r.at,
    })),
    requestsDropped: item.requests_dropped,
    ...refreshWishView(item.refresh),
    targets: targets.map((t) => ({
      target: t.target,
      status: t.status,
      ...(t.detail === null ? {} : { detail: t.detail }),
      at: t.at,
      ...landedView(t),
      ...(t.refresh ? { refresh: t.refresh, ...(t.refresh_detail ? { refreshDetail: t.refresh_detail } : {}) } : {}),
    })),
    deliveries: deliveries.map((d) => ({
      target: d.target,
      attempts: d.attempts,
      ...(d.failed ? {} : { nextAttemptAt: d.next_at }),
      lastError: d.last_error,
      failed: d.failed === 1,
    })),
  };
}

function refreshWishView(level: number | undefined): { refresh?: RefreshWish } {
  const wish = refreshWish(level === undefined ? 0 : Number(level));
  return wish ? { refresh: wish } : {};
}

function landedView(t: TargetRow): Partial<TargetView> {
  if (!t.landed) return {};
  return {
    landed: t.landed,
    ...(t.landed === "landed" && t.landed_after_ms != null ? { landedAfterMs: t.landed_after_ms } : {}),
    ...(t.landed !== "landed" && t.landed_detail ? { landedReason: t.landed_detail } : {}),
    ...(t.landed === "pending" && t.landed_check_at != null ? { landedCheckAt: t.landed_check_at } : {}),
    ...(t.landed === "pending" ? { landedLooks: t.landed_looks ?? 0 } : {}),
  };
}
