import type { Logger } from "../../core/logger.ts";
import type { WorkItem } from "../dispatch/dispatch-port.ts";
import { DUE_FOR_CHECK, DUE_FOR_TARGET, DUE_ORDER, selectDue } from "../rules/due.ts";
import { WORK_REQUESTS_SQL, readWorkItem, type WorkRequestRow, type WorkRequestsPage } from "../rules/work-item.ts";
import type { ItemRow } from "../store-rows.ts";
import type { StoreClock } from "./database-clock.ts";
import type { PgPool } from "./pool.ts";
import { pgRows, toPgPlaceholders } from "./pg-reads.ts";
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

/**
 * The shared "what is due" (`rules/due.ts`: ?1 now, ?2 the limit, ?3 the target) with PostgreSQL's claim: rows no
 * other instance holds a live lease on, not in this instance's `skip`, locked `SKIP LOCKED` and leased to this one.
 * The claim's own parameters follow the query's: `?n` the owner, `?n+1` the lease's end, `?n+2` the ids skipped.
 */
const claimSql = (due: string, n: number): string => `
  WITH picked AS (
    ${selectDue(due, "id, lease_owner AS prev_owner, lease_until AS prev_until", `
      AND (lease_owner IS NULL OR lease_owner = ?${String(n)} OR lease_until < ?1) AND NOT (id = ANY(?${String(n + 2)}::bigint[]))`)}
    FOR UPDATE SKIP LOCKED),
  claimed AS (
    UPDATE items SET lease_owner = ?${String(n)}, lease_until = ?${String(n + 1)}
    FROM picked WHERE items.id = picked.id
    RETURNING items.*, picked.prev_owner, picked.prev_until)
  SELECT * FROM claimed ORDER BY ${DUE_ORDER}`;

const FOR_CHECK = toPgPlaceholders(claimSql(DUE_FOR_CHECK, 3));
const FOR_TARGET = toPgPlaceholders(claimSql(DUE_FOR_TARGET, 4));

export function createClaims(options: ClaimOptions): Claims {
  const { pool, owner, leaseMs, log } = options;

  const reads = pgRows(pool);
  const requestsPage: WorkRequestsPage = (itemId, afterId, pageSize) => reads.all<WorkRequestRow>(WORK_REQUESTS_SQL, [itemId, afterId, pageSize]);

  async function claim(sql: string, limit: number, skip: ReadonlySet<number>, due: unknown[]): Promise<WorkItem[]> {
    if (limit <= 0) return [];
    const claimed = await inTransaction(pool, async (client) => {
      const now = await options.now(client);
      return (await client.query<ClaimedRow>(sql, [now, limit, ...due, owner, now + leaseMs, [...skip]])).rows;
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
