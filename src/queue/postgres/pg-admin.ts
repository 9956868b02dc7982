import { RETRY_FRESH, recheck } from "../queue-admin.ts";
import type { ItemRow } from "../store/rows.ts";
import { FOLDER_LOCKS } from "./locks.ts";
import type { PgClient } from "./pool.ts";
import { updateItem } from "./rows-sql.ts";

/** Retry, delete and prune on PostgreSQL: the rules of `queue-admin.ts`, one transaction each. */
export async function retryItemPg(client: PgClient, id: number, now: number): Promise<boolean> {
  const peek = await client.query<{ folder: string }>("SELECT folder FROM items WHERE id = $1", [id]);
  const folder = peek.rows[0]?.folder;
  if (folder === undefined) return false;
  // The folder's lock, as for a request: a retry that joins a waiting item must not race a request creating one.
  await client.query("SELECT pg_advisory_xact_lock($1, hashtext($2))", [FOLDER_LOCKS, folder]);
  const found = await client.query<ItemRow>("SELECT * FROM items WHERE id = $1 FOR UPDATE", [id]);
  const item = found.rows[0];
  if (!item) return false;
  if (item.state === "pending") {
    await updateItem(client, { ...item, ...RETRY_FRESH, due_at: Math.min(item.due_at, now) });
    return true;
  }
  const waitingRows = await client.query<ItemRow>("SELECT * FROM items WHERE state = 'pending' AND folder = $1 FOR UPDATE", [item.folder]);
  const waiting = waitingRows.rows[0];
  if (waiting) {
    await client.query("UPDATE requests SET item_id = $2 WHERE item_id = $1", [id, waiting.id]);
    await client.query("DELETE FROM items WHERE id = $1", [id]);
    await client.query("DELETE FROM item_targets WHERE item_id = $1", [waiting.id]);
    await updateItem(client, { ...waiting, ...RETRY_FRESH, ...recheck(waiting), due_at: Math.min(waiting.due_at, now) });
    return true;
  }
  if (item.state === "done") await client.query("DELETE FROM item_targets WHERE item_id = $1", [id]);
  await updateItem(client, { ...item, ...RETRY_FRESH, ...recheck(item), state: "pending", due_at: now });
  return true;
}

export async function retryFailedItemsPg(client: PgClient, now: number): Promise<number> {
  const ids = await client.query<{ id: number }>("SELECT id FROM items WHERE state = 'failed' ORDER BY id");
  for (const { id } of ids.rows) await retryItemPg(client, id, now);
  return ids.rows.length;
}

export async function removeItemPg(client: PgClient, id: number): Promise<boolean> {
  // Requests and target results go with it (ON DELETE CASCADE).
  const result = await client.query("DELETE FROM items WHERE id = $1", [id]);
  return (result.rowCount ?? 0) > 0;
}

/** History beyond `maxDays` or `maxRows` (newest kept). Returns how many folders were dropped. */
export async function pruneHistoryPg(client: PgClient, now: number, maxDays: number, maxRows: number): Promise<number> {
  const before = now - maxDays * 24 * 60 * 60 * 1000;
  const result = await client.query(
    `DELETE FROM items WHERE id IN (
       SELECT id FROM items WHERE state <> 'pending' AND finished_at < $1
       UNION
       SELECT id FROM (SELECT id FROM items WHERE state <> 'pending' ORDER BY finished_at DESC, id DESC OFFSET $2) older)`,
    [before, maxRows],
  );
  return result.rowCount ?? 0;
}
