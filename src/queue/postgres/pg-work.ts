import type { AttemptStart, DispatchQueue } from "../dispatch/dispatch-port.ts";
import { afterCheck, afterFailure, ended, neverFinishedReason, outcomeColumns, tooManyUnfinished } from "../queue-work.ts";
import type { ItemRow } from "../store/rows.ts";
import type { Claims } from "./claims.ts";
import type { StoreClock } from "./database-clock.ts";
import { putItem } from "./finish.ts";
import type { PgClient, PgPool } from "./pool.ts";
import { pgRows } from "./pg-rows.ts";
import { lockPendingItem, upsertTarget } from "./rows-sql.ts";

/**
 * The dispatcher's side of the queue on PostgreSQL: the same rules as `queue-work.ts` (the row images come from the
 * same functions), each change one transaction on the item's locked row. Due items come from `claims.ts`. Every time
 * written or compared is the database's (`now`, read at the start of each transaction), never this instance's clock.
 */
export interface PgWorkOptions {
  readonly pool: PgPool;
  /** Runs one transaction (the queue's: it announces the change to the other instances), at the store's `now`. */
  readonly transact: <T>(work: (client: PgClient, now: number) => Promise<T>) => Promise<T>;
  readonly claims: Claims;
  readonly owner: string;
  /** The store's time (the database's clock). */
  readonly now: StoreClock;
  /** The longest sleep: other instances' new work and lapsed claims are looked for at least this often. */
  readonly pollMs: number;
}

export type PgWork = Omit<DispatchQueue, "onWork" | "writable">;

export function createPgWork(options: PgWorkOptions): PgWork {
  const { pool, claims, owner, now } = options;
  const tx = options.transact;
  const reads = pgRows(pool);
  return {
    dueForCheck: (_at, limit, skip) => claims.forCheck(limit, skip),
    dueForTarget: (target, _at, limit, skip) => claims.forTarget(target, limit, skip),
    async nextWakeAt(at) {
      // Waits measured on the database's clock, then laid on the dispatcher's own (`at`): the two may differ.
      const dbNow = await now(pool);
      const row = await reads.get<{ ready: number | null; lapse: number | null }>(
        `SELECT
           (SELECT MIN(GREATEST(due_at, next_at)) FROM items WHERE state = 'pending' AND GREATEST(due_at, next_at) > $1) AS ready,
           (SELECT MIN(lease_until) FROM items WHERE state = 'pending' AND lease_owner <> $2 AND lease_until >= $1) AS lapse`,
        [dbNow, owner],
      );
      // A claim of another instance's runs out at `lapse`: look then (+1 ms: "runs out" is strictly after it).
      const waits = [row?.ready, row?.lapse === null || row?.lapse === undefined ? null : row.lapse + 1]
        .filter((t): t is number => typeof t === "number")
        .map((t) => t - dbNow);
      return at + Math.min(options.pollMs, ...waits);
    },
    async recordCheck(id, rev, result) {
      await tx(async (client, at) => {
        const item = await lockPendingItem(client, id);
        if (!item || item.rev !== rev) return;
        await putItem(client, afterCheck(item, result, at));
        // Checked: its scans go to whichever instance asks first, so no instance builds a backlog only it may send.
        await client.query("UPDATE items SET lease_owner = NULL, lease_until = 0 WHERE id = $1 AND lease_owner = $2", [id, owner]);
      });
    },
    beginAttempt(id, rev, targets = 1) {
      return tx(async (client, at): Promise<AttemptStart | undefined> => {
        const item = await lockPendingItem(client, id);
        if (!item || item.rev !== rev) return undefined;
        // Only the instance holding the folder's claim starts a scan of it: one that lost its claim (it could not
        // renew it in time, and another instance took the folder over) leaves the folder to the new holder.
        const lease = item as ItemRow & { lease_owner: string | null; lease_until: number };
        if (lease.lease_owner !== owner || lease.lease_until < at) return undefined;
        if (tooManyUnfinished(item, targets)) {
          const reason = neverFinishedReason(item.unfinished);
          await putItem(client, { ...item, state: "failed", finished_at: at, last_error: reason });
          return { go: false, reason };
        }
        await putItem(client, { ...item, unfinished: item.unfinished + 1 });
        return { go: true, attempt: item.attempts + 1 };
      });
    },
    recordScan(id, rev, target, outcome, allTargets) {
      return tx(async (client, at) => {
        const item = await lockPendingItem(client, id);
        if (!item) return undefined;
        if (item.rev !== rev) {
          if (item.unfinished > 0) await putItem(client, { ...item, unfinished: ended(item) });
          return undefined;
        }
        await upsertTarget(client, { item_id: id, target, ...outcomeColumns(outcome), at });
        const done = await client.query<{ target: string }>("SELECT target FROM item_targets WHERE item_id = $1", [id]);
        const finishedBy = new Set(done.rows.map((r) => r.target));
        const completed = allTargets.every((name) => finishedBy.has(name));
        const finished = completed ? { state: "done" as const, finished_at: at, last_error: null } : {};
        await putItem(client, { ...item, unfinished: ended(item), ...finished });
        return { completed };
      });
    },
    recordFailure(id, rev, failure) {
      return tx(async (client, at) => {
        const item = await lockPendingItem(client, id);
        if (!item) return { failed: false };
        if (item.rev !== rev) {
          if (item.unfinished > 0) await putItem(client, { ...item, unfinished: ended(item) });
          return { failed: false };
        }
        const updated = afterFailure(item, failure, at);
        await putItem(client, updated);
        return { failed: updated.state === "failed" };
      });
    },
    async recordInterrupted(id) {
      await tx(async (client) => {
        const item = await lockPendingItem(client, id);
        if (item && item.unfinished > 0) await putItem(client, { ...item, unfinished: ended(item) });
      });
    },
    failWaitingFor(target, waitedMs, reason) {
      return tx(async (client, at) => {
        const dueBefore = at - waitedMs;
        const items = await client.query<ItemRow>(
          `SELECT * FROM items WHERE state = 'pending' AND due_at <= $1
             AND NOT EXISTS (SELECT 1 FROM item_targets t WHERE t.item_id = items.id AND t.target = $2)
           ORDER BY id FOR UPDATE`,
          [dueBefore, target],
        );
        for (const item of items.rows) await putItem(client, { ...item, state: "failed", finished_at: at, last_error: reason });
        return items.rows.length;
      });
    },
    async pendingCount() {
      return (await reads.get<{ n: number }>("SELECT COUNT(*) AS n FROM items WHERE state = 'pending'"))?.n ?? 0;
    },
  };
}
