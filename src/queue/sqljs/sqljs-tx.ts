import type { NewRequest, QueueTx } from "../rules/queue-tx.ts";
import type { DeliveryRow, ItemRow, RequestRow, TargetRow } from "../rules/rows.ts";
import type { StoreTransaction } from "./open-store.ts";
import { pathKey } from "./path-key.ts";
import { PRUNED_IDS } from "./rows.ts";

/**
 * The store port (`QueueTx`) over one write of the embedded store: reads from the in-memory database (seeing this
 * write's own changes), changes as row images (`RowChange`) that the store logs, then applies for good. One process
 * holds the queue: there are no claims, and the folder locks are the store's one write line.
 */
export function sqlJsTx(tx: StoreTransaction, now: number): QueueTx {
  const { rows } = tx;
  const resolved = Promise.resolve();
  return {
    now,
    lockFolders: () => resolved,
    pendingItem: async (folder) => rows.get<ItemRow>("SELECT * FROM items WHERE state = 'pending' AND folder = ?", [folder]),
    item: async (id) => rows.get<ItemRow>("SELECT * FROM items WHERE id = ?", [id]),
    deliveriesFailingSince: async (target, since) =>
      rows.all<DeliveryRow>(
        `SELECT d.* FROM deliveries d JOIN items i ON i.id = d.item_id
         WHERE i.state = 'pending' AND d.target = ?1 AND d.failed = 0 AND d.first_failed_at <= ?2 ORDER BY d.item_id`,
        [target, since],
      ),
    failedItemIds: async () => rows.all<{ id: number }>("SELECT id FROM items WHERE state = 'failed' ORDER BY id").map((r) => r.id),
    async insertItem(row) {
      const item: ItemRow = { ...row, id: tx.newItemId() };
      tx.apply({ k: "item", r: item });
      return item;
    },
    updateItem: async (row) => tx.apply({ k: "item", r: row }),
    deleteItem: async (id) => tx.apply({ k: "del", id }),
    hasRequest: async (row: NewRequest) =>
      rows.get<{ id: number }>(
        "SELECT id FROM requests WHERE item_id = ? AND path_key = ? AND path = ? AND kind = ? AND deleted = ? AND source = ? AND event = ?",
        [row.item_id, pathKey(row.path), row.path, row.kind, row.deleted, row.source, row.event],
      ) !== undefined,
    addRequest: async (row) => tx.apply({ k: "req", r: { ...row, id: tx.newRequestId() } }),
    onlyUnknownRequests: async (itemId) =>
      rows.get<{ n: number }>("SELECT COUNT(*) AS n FROM requests WHERE item_id = ? AND (kind <> 'unknown' OR deleted = 1)", [itemId])?.n === 0,
    countRequests: async (itemId) => rows.get<{ n: number }>("SELECT COUNT(*) AS n FROM requests WHERE item_id = ?", [itemId])?.n ?? 0,
    keepFirstRequests: async (itemId, keep) => tx.apply({ k: "trim", id: itemId, keep }),
    async moveRequests(fromItem, toItem) {
      const columns = "id, item_id, path, kind, deleted, source, event, received_path, at"; // the row image, without the key
      for (const request of rows.all<RequestRow>(`SELECT ${columns} FROM requests WHERE item_id = ? ORDER BY id`, [fromItem])) {
        tx.apply({ k: "req", r: { ...request, item_id: toItem } });
      }
    },
    finishedTargets: async (itemId) =>
      rows.all<{ target: string }>("SELECT target FROM item_targets WHERE item_id = ?", [itemId]).map((r) => r.target),
    target: async (itemId, target) => rows.get<TargetRow>("SELECT * FROM item_targets WHERE item_id = ? AND target = ?", [itemId, target]),
    putTarget: async (row) => tx.apply({ k: "tgt", r: row }),
    clearTargets: async (itemId) => tx.apply({ k: "clr", id: itemId }),
    deliveries: async (itemId) => rows.all<DeliveryRow>("SELECT * FROM deliveries WHERE item_id = ? ORDER BY target", [itemId]),
    putDelivery: async (row) => tx.apply({ k: "dlv", r: row }),
    dropDelivery: async (itemId, target) => tx.apply({ k: "undlv", id: itemId, target }),
    clearDeliveries: async (itemId) => tx.apply({ k: "clrdlv", id: itemId }),
    async historyStats() {
      const stats = rows.get<{ n: number; oldest: number | null }>(
        "SELECT COUNT(*) AS n, MIN(finished_at) AS oldest FROM items WHERE state <> 'pending'",
      );
      return { count: stats?.n ?? 0, oldest: stats?.oldest ?? null };
    },
    async pruneHistory(before, keep) {
      const count = rows.get<{ n: number }>(`SELECT COUNT(*) AS n FROM (${PRUNED_IDS})`, [before, keep])?.n ?? 0;
      if (count > 0) tx.apply({ k: "prune", before, keep });
      return count;
    },
    holdsClaim: () => true,
    releaseClaim: () => resolved,
  };
}
