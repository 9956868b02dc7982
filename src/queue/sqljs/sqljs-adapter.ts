import { dirname } from "node:path";
import type { Clock } from "../../core/clock.ts";
import type { Logger } from "../../core/logger.ts";
import type { StoreMetrics } from "../../core/metrics.ts";
import type { WorkItem } from "../dispatch/dispatch-port.ts";
import type { AsyncRows, StoreAdapter } from "../store-port.ts";
import { WORK_REQUESTS_SQL, readWorkItem, type WorkRequestRow, type WorkRequestsPage } from "../rules/work-item.ts";
import type { NewRequest, QueueTx } from "../rules/queue-tx.ts";
import type { DeliveryRow, ItemRow, RequestRow, TargetRow } from "../store-rows.ts";
import { openQueueStore, type QueueStore, type StoreTransaction } from "./open-store.ts";
import { PRUNED_IDS } from "../rules/admin.ts";
import { DELIVERIES_FAILING_SINCE, DUE_FOR_CHECK, DUE_FOR_TARGET, NEXT_READY, PENDING_COUNT, earliest, selectDue } from "../rules/due.ts";
import { pathKey } from "./rows.ts";

/**
 * The embedded queue (one process, `<data dir>/queue.db`): the sql.js store (`open-store.ts`: snapshot + append-only
 * log) as the queue's `StoreAdapter`. Due work is the shared query of `rules/due.ts`, on the waiting items' indexes.
 */
export interface SqlJsStoreOptions {
  /** The queue file (`--queuefile`, default `<data dir>/queue.db`). */
  readonly file: string;
  readonly clock: Clock;
  /** The queue's logger (component QUEUE). */
  readonly log: Logger;
  /**
   * A checkpoint rewrites the queue file once the journal beside it has grown by `checkpointRatio` × the file's
   * size (default 0.5), and by at least `checkpointBytes` (default 8 MiB). Tests lower both.
   */
  readonly checkpointBytes?: number;
  readonly checkpointRatio?: number;
  /** While the disk refuses writes, how often the store tries again (default 2 s). */
  readonly probeIntervalMs?: number;
  /** How often the queue files are checked to still be there (default 1 s: two stats). */
  readonly verifyIntervalMs?: number;
  /** `SERVER_METRICS`: the store's write latency and failures. */
  readonly metrics?: StoreMetrics;
}

/** Opens (creating, migrating, restoring) the queue file as the queue's store, and looks at its files every second. */
export async function openSqlJsAdapter(options: SqlJsStoreOptions): Promise<StoreAdapter> {
  const { log } = options;
  const store = await openQueueStore({
    file: options.file,
    log,
    now: () => options.clock.now(),
    ...(options.checkpointBytes === undefined ? {} : { checkpointBytes: options.checkpointBytes }),
    ...(options.checkpointRatio === undefined ? {} : { checkpointRatio: options.checkpointRatio }),
    ...(options.probeIntervalMs === undefined ? {} : { probeIntervalMs: options.probeIntervalMs }),
    ...(options.metrics ? { metrics: options.metrics } : {}),
  });
  const verify = setInterval(verifyOnce(store, log), options.verifyIntervalMs ?? 1_000);
  verify.unref();
  return sqlJsAdapter(store, options.clock, async () => {
    clearInterval(verify);
    await store.close();
  });
}

/**
 * One look at the queue files at a time: on a data disk that stops answering, a look hangs in the kernel with its
 * thread, and new ones started beside it would take the thread pool the journal writes need. While one is still
 * going, the next ones are skipped; one warning when that starts, one line when the disk answers again.
 */
function verifyOnce(store: QueueStore, log: Logger): () => void {
  let running = false;
  let skippedSince: number | undefined;
  return () => {
    if (running) {
      if (skippedSince !== undefined) return;
      skippedSince = Date.now();
      log.warn({ file: store.file }, `The look at the queue files is still waiting for the disk under '${dirname(store.file)}'; the next looks wait for it.`);
      return;
    }
    running = true;
    void store
      .verifyFiles()
      .catch(() => {})
      .finally(() => {
        running = false;
        if (skippedSince === undefined) return;
        const seconds = Math.round((Date.now() - skippedSince) / 1000);
        log.info({ file: store.file }, `The disk under '${dirname(store.file)}' answered the look at the queue files after ${String(seconds)} s.`);
        skippedSince = undefined;
      });
  };
}

const DUE_CHECK_SQL = selectDue(DUE_FOR_CHECK);
const DUE_TARGET_SQL = selectDue(DUE_FOR_TARGET);
const NEXT_READY_SQL = `SELECT ${NEXT_READY}`;

function sqlJsAdapter(store: QueueStore, clock: Clock, close: () => Promise<void>): StoreAdapter {
  const reads: AsyncRows = {
    all: (sql, params) => store.read((rows) => rows.all(sql, params)),
    get: (sql, params) => store.read((rows) => rows.get(sql, params)),
  };
  const page: WorkRequestsPage = (itemId, afterId, limit) => store.read((rows) => rows.all<WorkRequestRow>(WORK_REQUESTS_SQL, [itemId, afterId, limit]));
  /** The shared query (`rules/due.ts`); the items in `skip` (in progress) are left out here, so as many more are asked. */
  const dueItems = async (sql: string, at: number, limit: number, skip: ReadonlySet<number>, target: string[] = []): Promise<WorkItem[]> => {
    const rows = await reads.all<ItemRow>(sql, [at, limit + skip.size, ...target]);
    const work: WorkItem[] = [];
    for (const item of rows.filter((row) => !skip.has(row.id)).slice(0, limit)) work.push(await readWorkItem(item, page));
    return work;
  };
  return {
    where: store.file,
    write: (work, options = {}) => store.write((tx) => work(sqlJsTx(tx, clock.now())), options.signal ? { signal: options.signal } : {}),
    reads,
    due: {
      dueForCheck: (at, limit, skip) => dueItems(DUE_CHECK_SQL, at, limit, skip),
      dueForTarget: (target, at, limit, skip) => dueItems(DUE_TARGET_SQL, at, limit, skip, [target]),
      async nextWakeAt(at) {
        const next = await reads.get<{ ready: number | null; delivery: number | null }>(NEXT_READY_SQL, [at]);
        return earliest(next?.ready, next?.delivery);
      },
      pendingCount: async () => (await reads.get<{ n: number }>(PENDING_COUNT))?.n ?? 0,
    },
    health: () => store.health(),
    async maintain() {
      // A quiet journal is folded into the file.
      if (store.logBytes() > 0) await store.checkpoint();
    },
    close,
  };
}

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
    peekItem: async (id) => rows.get<ItemRow>("SELECT * FROM items WHERE id = ?", [id]),
    deliveriesFailingSince: async (target, since) => rows.all<DeliveryRow>(DELIVERIES_FAILING_SINCE, [target, since]),
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
    async dropRequestsAfter(itemId, keep, limit) {
      const ids = rows.all<{ id: number }>("SELECT id FROM requests WHERE item_id = ? ORDER BY id LIMIT ? OFFSET ?", [itemId, limit, keep]);
      const [first, last] = [ids[0], ids.at(-1)];
      if (first && last) tx.apply({ k: "dropreq", id: itemId, from: first.id, to: last.id });
      return ids.length;
    },
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
    note: async (key) => rows.get<{ value: string }>("SELECT value FROM meta WHERE key = ?", [`note:${key}`])?.value,
    putNote: async (key, value) => tx.apply({ k: "note", key: `note:${key}`, value: value ?? null }),
  };
}
