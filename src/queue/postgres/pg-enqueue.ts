import type { EnqueuedItem, ScanRequest } from "../../core/scan.ts";
import { mergedItemRow, newItemRow, requestRowOf, type EnqueueEvent, type EnqueueOutcome, type MergePolicy } from "../enqueue-requests.ts";
import type { ItemRow } from "../store/rows.ts";
import { resolveWorkUnit } from "../work-unit.ts";
import { FOLDER_LOCKS } from "./locks.ts";
import type { PgClient } from "./pool.ts";
import { insertItem, insertRequest, updateItem } from "./rows-sql.ts";

/**
 * Merging on PostgreSQL, the rules of `enqueue-requests.ts` (the rows come from its functions). Requests for one
 * folder arriving at several instances at once are put in order by a transaction-scoped advisory lock per folder
 * (taken in sorted order, so two batches never wait on each other in a circle): the second finds the first's item
 * and merges into it, exactly as in one process. A folder being scanned by another instance gets the new work too:
 * its `rev` moves on, so that scan does not count for it, and the folder is scanned again.
 */
export async function applyRequestsPg(
  client: PgClient,
  requests: readonly ScanRequest[],
  now: number,
  policy: MergePolicy,
): Promise<EnqueueOutcome> {
  const units = requests.map((request) => ({ request, unit: resolveWorkUnit(request) }));
  const folders = [...new Set(units.map((u) => u.unit.folder))].sort();
  for (const folder of folders) {
    await client.query("SELECT pg_advisory_xact_lock($1, hashtext($2))", [FOLDER_LOCKS, folder]);
  }
  const items: EnqueuedItem[] = [];
  const events: EnqueueEvent[] = [];
  let earliestDue = Number.POSITIVE_INFINITY;
  for (const { request, unit } of units) {
    const found = await client.query<ItemRow>("SELECT * FROM items WHERE state = 'pending' AND folder = $1 FOR UPDATE", [unit.folder]);
    const existing = found.rows[0];
    let item: ItemRow;
    if (existing) {
      const row = requestRowOf(0, existing.id, request, unit.path, now);
      const duplicate = await client.query(
        "SELECT 1 FROM requests WHERE item_id = $1 AND path = $2 AND kind = $3 AND deleted = $4 AND source = $5 AND event = $6 LIMIT 1",
        [existing.id, row.path, row.kind, row.deleted, row.source, row.event],
      );
      const isDuplicate = (duplicate.rowCount ?? 0) > 0;
      item = mergedItemRow(existing, row, isDuplicate, now, policy);
      if (!isDuplicate) {
        await insertRequest(client, row);
        // Targets that already scanned the folder have not seen the new file: every target scans it again.
        await client.query("DELETE FROM item_targets WHERE item_id = $1", [existing.id]);
      }
      await updateItem(client, item);
    } else {
      const fresh = newItemRow(0, unit.folder, now, policy);
      item = { ...fresh, id: await insertItem(client, fresh) };
      await insertRequest(client, requestRowOf(0, item.id, request, unit.path, now));
    }
    items.push({ id: item.id, folder: unit.folder, merged: existing !== undefined });
    events.push({ request, itemId: item.id, folder: unit.folder, merged: existing !== undefined, dueAt: item.due_at });
    earliestDue = Math.min(earliestDue, Math.max(item.due_at, item.next_at));
  }
  return { at: now, items, events, earliestDue };
}
