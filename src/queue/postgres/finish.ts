import { HISTORY_REQUESTS_KEPT } from "../queue-work.ts";
import type { ItemRow } from "../store/rows.ts";
import type { PgClient } from "./pool.ts";
import { updateItem } from "./rows-sql.ts";

/**
 * Stores an item image (as `put` in `queue-work.ts`): a folder that finishes (done or failed) lets go of all but its
 * first requests, and of its claim.
 */
export async function putItem(client: PgClient, row: ItemRow): Promise<void> {
  if (row.state === "pending") return updateItem(client, row);
  const counted = await client.query<{ n: number }>("SELECT COUNT(*) AS n FROM requests WHERE item_id = $1", [row.id]);
  const extra = Math.max(0, (counted.rows[0]?.n ?? 0) - HISTORY_REQUESTS_KEPT);
  await updateItem(client, extra > 0 ? { ...row, requests_dropped: row.requests_dropped + extra } : row);
  await client.query("UPDATE items SET lease_owner = NULL, lease_until = 0 WHERE id = $1", [row.id]);
  if (extra > 0) {
    await client.query(
      "DELETE FROM requests WHERE item_id = $1 AND id NOT IN (SELECT id FROM requests WHERE item_id = $1 ORDER BY id LIMIT $2)",
      [row.id, HISTORY_REQUESTS_KEPT],
    );
  }
}
