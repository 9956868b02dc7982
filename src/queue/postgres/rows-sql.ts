import type { ItemRow, RequestRow, TargetRow } from "../store/rows.ts";
import type { PgClient } from "./pool.ts";

/**
 * Row images written to PostgreSQL: the same `ItemRow`/`RequestRow`/`TargetRow` values the embedded store logs. An
 * item's lease columns are not part of its image: writing an image never moves a claim.
 */
const ITEM_COLUMNS = [
  "folder", "state", "priority", "first_at", "last_at", "due_at", "next_at", "rev", "checks", "scan_folder",
  "files", "attempts", "unfinished", "first_failed_at", "last_error", "finished_at", "requests_dropped",
] as const;

const ITEM_UPDATE = `UPDATE items SET ${ITEM_COLUMNS.map((c, i) => `${c} = $${i + 2}`).join(", ")} WHERE id = $1`;
const ITEM_INSERT = `INSERT INTO items (${ITEM_COLUMNS.join(", ")}) VALUES (${ITEM_COLUMNS.map((_, i) => `$${i + 1}`).join(", ")}) RETURNING id`;

const itemValues = (row: ItemRow): unknown[] => ITEM_COLUMNS.map((c) => row[c]);

export async function updateItem(client: PgClient, row: ItemRow): Promise<void> {
  await client.query(ITEM_UPDATE, [row.id, ...itemValues(row)]);
}

/** Inserts a new item (its `id` is ignored); resolves with the id the database gave it. */
export async function insertItem(client: PgClient, row: ItemRow): Promise<number> {
  const result = await client.query<{ id: number }>(ITEM_INSERT, itemValues(row));
  return (result.rows[0] as { id: number }).id;
}

/** Inserts a request (its `id` is ignored: the database numbers requests in arrival order). */
export async function insertRequest(client: PgClient, row: RequestRow): Promise<void> {
  await client.query(
    "INSERT INTO requests (item_id, path, kind, deleted, source, event, received_path, at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
    [row.item_id, row.path, row.kind, row.deleted, row.source, row.event, row.received_path, row.at],
  );
}

export async function upsertTarget(client: PgClient, row: TargetRow): Promise<void> {
  await client.query(
    `INSERT INTO item_targets (item_id, target, status, detail, at) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (item_id, target) DO UPDATE SET status = EXCLUDED.status, detail = EXCLUDED.detail, at = EXCLUDED.at`,
    [row.item_id, row.target, row.status, row.detail, row.at],
  );
}

/** The pending item `id`, locked for this transaction (other writers of it wait; claims skip it). */
export async function lockPendingItem(client: PgClient, id: number): Promise<ItemRow | undefined> {
  const result = await client.query<ItemRow>("SELECT * FROM items WHERE id = $1 AND state = 'pending' FOR UPDATE", [id]);
  return result.rows[0];
}
