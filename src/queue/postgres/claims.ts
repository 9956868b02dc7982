import type { Logger } from "../../core/logger.ts";
import type { WorkItem } from "../dispatch/dispatch-port.ts";
import { WORK_REQUESTS_SQL, readWorkItem, type WorkRequestRow, type WorkRequestsPage } from "../rules/work-item.ts";
import type { ItemRow } from "../store-rows.ts";
import type { StoreClock } from "./database-clock.ts";
import type { PgPool } from "./pool.ts";
import { pgRows } from "./pg-reads.ts";
import { inTransaction } from "./transaction.ts";

/**
 * Which instance dispatches a folder. A due folder is claimed by the first instance that asks for it: its row is
 * locked with `FOR UPDATE SKIP LOCKED` (instances asking at the same moment take different rows, none waits) and gets
 * `lease_owner` = this instance and `lease_until` = now + the lease. The holder keeps renewing its leases while it
 * lives (`renew`), so it checks the folder's files and sends it to every target; the other instances leave it alone.
 * A holder that dies stops renewing: once its lease has run out, the next instance that asks takes the folder over
 * (a scan it had started may then be sent once more: the log says so). A folder that finishes lets go of its claim.
 * Leases are written and compared on the database's clock (`database-clock.ts`), never an instance's own.
 */
export interface ClaimOptions {
  readonly pool: PgPool;
  /** This instance's id (`lease_owner`). */
  readonly owner: string;
  readonly leaseMs: number;
  /** The store's time (the database's clock). */
  readonly now: StoreClock;
  readonly log: Logger;
  /** Told of each folder taken over from an instance that stopped renewing its claim. */
  readonly onTakeover?: (item: { id: number; folder: string; from: string; unfinished: number }) => void;
}

export interface Claims {
  /** Claims and answers up to `limit` due items whose files were not checked, in dispatch order. */
  forCheck(limit: number, skip: ReadonlySet<number>): Promise<WorkItem[]>;
  /** Claims and answers up to `limit` due, checked items `target` has not finished, in dispatch order. */
  forTarget(target: string, limit: number, skip: ReadonlySet<number>): Promise<WorkItem[]>;
  /** Moves every claim of this instance's on to now + the lease. */
  renew(): Promise<number>;
  /** Lets go of one folder (it waits here for an anchor another instance's disk may have). */
  release(id: number): Promise<void>;
  /** Lets go of every claim of this instance's (a clean stop: the others take its folders at once). */
  releaseAll(): Promise<number>;
}

type ClaimedRow = ItemRow & { prev_owner: string | null; prev_until: number };

const CLAIMABLE = `state = 'pending' AND GREATEST(due_at, next_at) <= $1
  AND (lease_owner IS NULL OR lease_owner = $2 OR lease_until < $1)
  AND NOT (id = ANY($3::bigint[]))`;

const claimSql = (extra: string): string => `
  WITH picked AS (
    SELECT id, lease_owner AS prev_owner, lease_until AS prev_until FROM items
    WHERE ${CLAIMABLE} ${extra}
    ORDER BY priority, first_at, id
    LIMIT $4
    FOR UPDATE SKIP LOCKED)
  UPDATE items SET lease_owner = $2, lease_until = $5
  FROM picked WHERE items.id = picked.id
  RETURNING items.*, picked.prev_owner, picked.prev_until`;

const FOR_CHECK = claimSql("AND scan_folder IS NULL");
const FOR_TARGET = claimSql(
  `AND scan_folder IS NOT NULL AND NOT EXISTS (SELECT 1 FROM item_targets t WHERE t.item_id = items.id AND t.target = $6)
   AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.item_id = items.id AND d.target = $6 AND (d.failed = 1 OR d.next_at > $1))`,
);

const byOrder = (a: ItemRow, b: ItemRow): number => a.priority - b.priority || a.first_at - b.first_at || a.id - b.id;

export function createClaims(options: ClaimOptions): Claims {
  const { pool, owner, leaseMs, log } = options;

  const reads = pgRows(pool);
  const requestsPage: WorkRequestsPage = (itemId, afterId, pageSize) => reads.all<WorkRequestRow>(WORK_REQUESTS_SQL, [itemId, afterId, pageSize]);

  async function claim(sql: string, limit: number, skip: ReadonlySet<number>, extra: unknown[]): Promise<WorkItem[]> {
    if (limit <= 0) return [];
    const claimed = await inTransaction(pool, async (client) => {
      const now = await options.now(client);
      const result = await client.query<ClaimedRow>(sql, [now, owner, [...skip], limit, now + leaseMs, ...extra]);
      return result.rows.sort(byOrder);
    });
    const taken = claimed.filter((row) => row.prev_owner !== null && row.prev_owner !== owner);
    // Told once the claims are committed (a transaction run again after a deadlock does not tell twice).
    for (const row of taken) tookOver(row);
    // The requests are read once the claims are committed, a page at a time (`rules/work-item.ts`): the claim keeps
    // the folder this instance's meanwhile, and new work changes its `rev`.
    const items: WorkItem[] = [];
    for (const row of claimed) items.push(await readWorkItem(row, requestsPage));
    return items;
  }

  function tookOver(row: ClaimedRow): void {
    const fields = { id: row.id, folder: row.folder, from: row.prev_owner, unfinished: row.unfinished };
    const again = row.unfinished > 0 ? " A scan it had started there may be sent once more." : "";
    log.warn(fields, `Took over '${row.folder}' from instance ${row.prev_owner ?? "?"}, which stopped renewing its claim.${again}`);
    options.onTakeover?.({ id: row.id, folder: row.folder, from: row.prev_owner ?? "", unfinished: row.unfinished });
  }

  return {
    forCheck: (limit, skip) => claim(FOR_CHECK, limit, skip, []),
    forTarget: (target, limit, skip) => claim(FOR_TARGET, limit, skip, [target]),
    async renew() {
      const now = await options.now(pool);
      const result = await pool.query("UPDATE items SET lease_until = $2 WHERE lease_owner = $1 AND state = 'pending'", [
        owner,
        now + leaseMs,
      ]);
      return result.rowCount ?? 0;
    },
    async release(id) {
      await pool.query("UPDATE items SET lease_owner = NULL, lease_until = 0 WHERE id = $1 AND lease_owner = $2", [id, owner]);
    },
    async releaseAll() {
      const result = await pool.query("UPDATE items SET lease_owner = NULL, lease_until = 0 WHERE lease_owner = $1", [owner]);
      return result.rowCount ?? 0;
    },
  };
}
