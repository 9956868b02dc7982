import { setImmediate as nextTurn } from "node:timers/promises";
import type { WorkItem, WorkRequest } from "../dispatch/dispatch-port.ts";
import type { RefreshWish } from "../../core/scan.ts";
import type { ItemRow, RequestRow } from "../store-rows.ts";
import { refreshWish } from "./refresh.ts";

/**
 * A folder's requests as a check and a scan use them, read a page at a time (by id, on the `(item_id, id)` index): a
 * folder that a watcher saw 50,000 files appear in holds 50,000 requests, and reading them in one go held the event
 * loop for half a second at every dispatch of it (the webhooks and /health waited). Parameters: item id, the last id
 * read, the page size.
 */
export const WORK_REQUESTS_SQL = "SELECT id, path, kind, deleted, source, event FROM requests WHERE item_id = ? AND id > ? ORDER BY id LIMIT ?";
export type WorkRequestRow = Pick<RequestRow, "id" | "path" | "kind" | "deleted" | "source" | "event">;
export const WORK_REQUESTS_PAGE = 1_000;

/** Reads one page of `WORK_REQUESTS_SQL`: the requests of `itemId` after `afterId`, at most `limit`. */
export type WorkRequestsPage = (itemId: number, afterId: number, limit: number) => Promise<readonly WorkRequestRow[]>;

/**
 * All the requests of an item, in the order they arrived, a page at a time with a turn of the event loop between pages.
 * The pages are separate reads: a request added meanwhile may be in them or not, which is harmless, as it changed the
 * item's `rev` and the dispatcher's result for the older `rev` does not count.
 */
export async function readWorkRequests(itemId: number, page: WorkRequestsPage): Promise<WorkRequest[]> {
  const requests: WorkRequest[] = [];
  for (let after = 0; ; ) {
    const rows = await page(itemId, after, WORK_REQUESTS_PAGE);
    for (const r of rows) requests.push({ path: r.path, kind: r.kind, deleted: r.deleted === 1, source: r.source, event: r.event });
    const last = rows.at(-1);
    if (rows.length < WORK_REQUESTS_PAGE || last === undefined) return requests;
    after = last.id;
    await nextTurn();
  }
}

const refreshOf = (level: number | undefined): { refresh?: RefreshWish } => {
  const wish = refreshWish(level === undefined ? 0 : Number(level));
  return wish ? { refresh: wish } : {};
};

/** A waiting row and its requests as the dispatcher sees them. */
export async function readWorkItem(item: ItemRow, page: WorkRequestsPage): Promise<WorkItem> {
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
    requests: await readWorkRequests(item.id, page),
    ...refreshOf(item.refresh),
  };
}
