import type { NewRequest, QueueTx } from "../rules/queue-tx.ts";
import type { DeliveryRow, ItemRow, RequestRow, TargetRow } from "../store-rows.ts";
import { PRUNED_IDS } from "../rules/admin.ts";
import { DELIVERIES_FAILING_SINCE, readyAt } from "../rules/due.ts";
import { FOLDER_LOCKS } from "./locks.ts";
import { prepared, toPgPlaceholders } from "./pg-reads.ts";
import type { PgClient } from "./pool.ts";

/**
 * The store port (`QueueTx`) over one PostgreSQL transaction. Items are read `FOR UPDATE` (other writers of a row wait;
 * claims skip it); a folder's lock is a transaction-scoped advisory lock, so requests for one folder at several
 * instances merge in turn. Each item carries its claim (`lease_owner`, `lease_until`), which an item image never
 * moves. `now` is the database's clock, read when the transaction began.
 */
const ITEM_COLUMNS = [
  "folder", "state", "priority", "first_at", "last_at", "due_at", "next_at", "rev", "checks", "scan_folder",
  "files", "attempts", "unfinished", "first_failed_at", "last_error", "finished_at", "requests_dropped", "refresh",
] as const;
const STORED_COLUMNS = [...ITEM_COLUMNS, "ready_at"] as const;
const ITEM_UPDATE = `UPDATE items SET ${STORED_COLUMNS.map((c, i) => `${c} = $${String(i + 2)}`).join(", ")} WHERE id = $1`;
const ITEM_INSERT = `INSERT INTO items (${STORED_COLUMNS.join(", ")}) VALUES (${STORED_COLUMNS.map((_, i) => `$${String(i + 1)}`).join(", ")}) RETURNING id`;
/** An item image as stored, with its `ready_at`. */
const itemValues = (row: Omit<ItemRow, "id">): unknown[] => [...ITEM_COLUMNS.map((c) => (c === "refresh" ? (row.refresh ?? 0) : row[c])), readyAt(row)];

const FAILING_SINCE_LOCKED = toPgPlaceholders(`${DELIVERIES_FAILING_SINCE} FOR UPDATE OF i`);

/** An item as read here: its image and its claim. */
type ClaimedItem = ItemRow & { readonly lease_owner: string | null; readonly lease_until: number };

export function pgTx(client: PgClient, now: number, owner: string): QueueTx {
  const rows = async <T>(sql: string, params: readonly unknown[] = []): Promise<T[]> => (await client.query(prepared(sql, params))).rows as T[];
  const run = async (sql: string, params: readonly unknown[] = []): Promise<number> => (await client.query(prepared(sql, params))).rowCount ?? 0;
  return {
    now,
    async lockFolders(folders) {
      for (const folder of [...folders].sort()) await run("SELECT pg_advisory_xact_lock($1, hashtext($2))", [FOLDER_LOCKS, folder]);
    },
    pendingItem: async (folder) => (await rows<ItemRow>("SELECT * FROM items WHERE state = 'pending' AND folder = $1 FOR UPDATE", [folder]))[0],
    item: async (id) => (await rows<ItemRow>("SELECT * FROM items WHERE id = $1 FOR UPDATE", [id]))[0],
    peekItem: async (id) => (await rows<ItemRow>("SELECT * FROM items WHERE id = $1", [id]))[0],
    deliveriesFailingSince: (target, since) => rows<DeliveryRow>(FAILING_SINCE_LOCKED, [target, since]),
    failedItemIds: async (start = "") =>
      (await rows<{ id: number }>("SELECT id FROM items WHERE state = 'failed' AND left(COALESCE(last_error, ''), $1) = $2 ORDER BY id", [start.length, start])).map((r) => r.id),
    async insertItem(row) {
      const [inserted] = await rows<{ id: number }>(ITEM_INSERT, itemValues(row));
      return { ...row, id: (inserted as { id: number }).id };
    },
    updateItem: async (row) => void (await run(ITEM_UPDATE, [row.id, ...itemValues(row)])),
    // Requests and target results go with it (ON DELETE CASCADE).
    deleteItem: async (id) => void (await run("DELETE FROM items WHERE id = $1", [id])),
    hasRequest: async (row: NewRequest) =>
      (await run(
        "SELECT 1 FROM requests WHERE item_id = $1 AND path = $2 AND kind = $3 AND deleted = $4 AND source = $5 AND event = $6 LIMIT 1",
        [row.item_id, row.path, row.kind, row.deleted, row.source, row.event],
      )) > 0,
    addRequest: async (row) =>
      void (await run(
        "INSERT INTO requests (item_id, path, kind, deleted, source, event, received_path, at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
        [row.item_id, row.path, row.kind, row.deleted, row.source, row.event, row.received_path, row.at],
      )),
    onlyUnknownRequests: async (itemId) =>
      (await rows<{ n: number }>("SELECT COUNT(*) AS n FROM requests WHERE item_id = $1 AND (kind <> 'unknown' OR deleted = 1)", [itemId]))[0]?.n === 0,
    countRequests: async (itemId) => (await rows<{ n: number }>("SELECT COUNT(*) AS n FROM requests WHERE item_id = $1", [itemId]))[0]?.n ?? 0,
    keepFirstRequests: async (itemId, keep) =>
      void (await run(
        "DELETE FROM requests WHERE item_id = $1 AND id NOT IN (SELECT id FROM requests WHERE item_id = $1 ORDER BY id LIMIT $2)",
        [itemId, keep],
      )),
    dropRequestsAfter: (itemId, keep, limit) =>
      run("DELETE FROM requests WHERE id IN (SELECT id FROM requests WHERE item_id = $1 ORDER BY id LIMIT $3 OFFSET $2)", [itemId, keep, limit]),
    moveRequests: async (fromItem, toItem) => void (await run("UPDATE requests SET item_id = $2 WHERE item_id = $1", [fromItem, toItem])),
    itemRequests: (itemId) =>
      rows<RequestRow>("SELECT id, item_id, path, kind, deleted, source, event, received_path, at FROM requests WHERE item_id = $1 ORDER BY id", [itemId]),
    deleteRequest: async (itemId, id) => void (await run("DELETE FROM requests WHERE item_id = $1 AND id = $2", [itemId, id])),
    finishedTargets: async (itemId) => (await rows<{ target: string }>("SELECT target FROM item_targets WHERE item_id = $1", [itemId])).map((r) => r.target),
    target: async (itemId, target) =>
      (await rows<TargetRow>("SELECT * FROM item_targets WHERE item_id = $1 AND target = $2", [itemId, target]))[0],
    putTarget: async (row) =>
      void (await run(
        `INSERT INTO item_targets (item_id, target, status, detail, at, landed, landed_detail, landed_after_ms, landed_check_at, landed_looks,
           refresh, refresh_detail)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
         ON CONFLICT (item_id, target) DO UPDATE SET status = EXCLUDED.status, detail = EXCLUDED.detail, at = EXCLUDED.at,
           landed = EXCLUDED.landed, landed_detail = EXCLUDED.landed_detail, landed_after_ms = EXCLUDED.landed_after_ms,
           landed_check_at = EXCLUDED.landed_check_at, landed_looks = EXCLUDED.landed_looks,
           refresh = EXCLUDED.refresh, refresh_detail = EXCLUDED.refresh_detail`,
        [row.item_id, row.target, row.status, row.detail, row.at, row.landed ?? null, row.landed_detail ?? null,
          row.landed_after_ms ?? null, row.landed_check_at ?? null, row.landed_looks ?? null, row.refresh ?? null, row.refresh_detail ?? null],
      )),
    async clearTargets(itemId) {
      await run("DELETE FROM item_targets WHERE item_id = $1", [itemId]);
      await run("DELETE FROM deliveries WHERE item_id = $1", [itemId]);
    },
    deliveries: (itemId) => rows<DeliveryRow>("SELECT * FROM deliveries WHERE item_id = $1 ORDER BY target", [itemId]),
    putDelivery: async (row) =>
      void (await run(
        `INSERT INTO deliveries (item_id, target, attempts, next_at, first_failed_at, last_error, failed) VALUES ($1, $2, $3, $4, $5, $6, $7)
         ON CONFLICT (item_id, target) DO UPDATE SET attempts = EXCLUDED.attempts, next_at = EXCLUDED.next_at,
           first_failed_at = EXCLUDED.first_failed_at, last_error = EXCLUDED.last_error, failed = EXCLUDED.failed`,
        [row.item_id, row.target, row.attempts, row.next_at, row.first_failed_at, row.last_error, row.failed],
      )),
    dropDelivery: async (itemId, target) => void (await run("DELETE FROM deliveries WHERE item_id = $1 AND target = $2", [itemId, target])),
    clearDeliveries: async (itemId) => void (await run("DELETE FROM deliveries WHERE item_id = $1", [itemId])),
    async historyStats() {
      const [stats] = await rows<{ n: number; oldest: number | null }>(
        "SELECT COUNT(*)::bigint AS n, MIN(finished_at) AS oldest FROM items WHERE state <> 'pending'",
      );
      return { count: Number(stats?.n ?? 0), oldest: stats?.oldest ?? null };
    },
    // Requests, target results and deliveries go with the items (ON DELETE CASCADE).
    pruneHistory: (before, keep) => run(toPgPlaceholders(`DELETE FROM items WHERE id IN (${PRUNED_IDS})`), [before, keep]),
    holdsClaim(item) {
      const claimed = item as ClaimedItem;
      return claimed.lease_owner === owner && claimed.lease_until >= now;
    },
    // A finished folder holds no claim; a waiting one is let go only by its holder.
    releaseClaim: async (id) =>
      void (await run("UPDATE items SET lease_owner = NULL, lease_until = 0 WHERE id = $1 AND (lease_owner = $2 OR state <> 'pending')", [id, owner])),
    note: async (key) => (await rows<{ value: string }>("SELECT value FROM shared_state WHERE key = $1", [`note:${key}`]))[0]?.value,
    async putNote(key, value) {
      if (value === undefined) await run("DELETE FROM shared_state WHERE key = $1", [`note:${key}`]);
      else await run("INSERT INTO shared_state (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = $2, updated_at = now()", [`note:${key}`, value]);
    },
  };
}
