import type { WorkItem } from "../dispatch/dispatch-port.ts";
import type { ItemRow, RequestRow } from "./rows.ts";

/** The columns of a folder's requests a check and a scan use: a busy folder holds hundreds, read at every dispatch. */
export const WORK_REQUESTS_SQL = "SELECT path, kind, deleted, source, event FROM requests WHERE item_id = ? ORDER BY id";
export type WorkRequestRow = Pick<RequestRow, "path" | "kind" | "deleted" | "source" | "event">;

/** A waiting row and its requests as the dispatcher sees them. */
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
    requests: requests.map((r) => ({ path: r.path, kind: r.kind, deleted: r.deleted === 1, source: r.source, event: r.event })),
  };
}
