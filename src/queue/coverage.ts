import type { ScanRequest } from "../core/scan.ts";
import type { AsyncRows } from "./store-port.ts";
import { requestFolder } from "./rules/enqueue.ts";

/**
 * Whether the queue already has what a request would bring: a request for the same folder, received at or after
 * `since` (waiting, scanned or failed). The backfill asks this for each *arr history record with the record's time:
 * an import that arrived as a webhook (or was backfilled before) is covered; a folder scanned before the import is
 * not. Failed folders count as covered: they are in the history for a person to retry, not to be queued again.
 */
export async function isCovered(rows: AsyncRows, request: ScanRequest, since: number): Promise<boolean> {
  // The folder as the queue keys it (NFC), so two spellings of one folder are one.
  const { folder } = requestFolder(request);
  // Waiting: through the one-pending-item-per-folder index.
  const pending = await rows.get<{ id: number }>(
    "SELECT id FROM items WHERE state = 'pending' AND folder = ? AND last_at >= ?",
    [folder, since],
  );
  if (pending) return true;
  // Finished: a folder requested since `since` finished after it, so the history index's range holds it. The range is
  // the folders finished since the record's time: short for the regular reads (minutes), the whole kept history at
  // most for a long `backfill --since`. No index of its own: the queue file stays as small as it was.
  const finished = await rows.get<{ id: number }>(
    "SELECT id FROM items WHERE state <> 'pending' AND finished_at >= ?1 AND folder = ?2 AND last_at >= ?1 LIMIT 1",
    [since, folder],
  );
  return finished !== undefined;
}
