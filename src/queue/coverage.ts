import type { ScanRequest } from "../core/scan.ts";
import type { RowReader } from "./store/rows.ts";
import { resolveWorkUnit } from "./work-unit.ts";

/**
 * Whether the queue already has what a request would bring: a request for the same folder, received at or after
 * `since` (waiting, scanned or failed). The backfill asks this for each *arr history record with the record's time:
 * an import that arrived as a webhook (or was backfilled before) is covered; a folder scanned before the import is
 * not. Failed folders count as covered: they are in the history for a person to retry, not to be queued again.
 */
export function isCovered(rows: RowReader, request: ScanRequest, since: number): boolean {
  // The folder as the queue keys it (NFC), so two spellings of one folder are one.
  const { folder } = resolveWorkUnit(request);
  return rows.get<{ id: number }>("SELECT id FROM items WHERE folder = ? AND last_at >= ? LIMIT 1", [folder, since]) !== undefined;
}
