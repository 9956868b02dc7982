import type { Clock } from "../../core/clock.ts";
import { StoreUnavailableError, describeError } from "../../core/errors.ts";
import type { Logger } from "../../core/logger.ts";
import type { StoreMetrics } from "../../core/metrics.ts";
import type { AsyncRows, QueueEvent, StoreAdapter } from "../store-port.ts";
import { NEXT_READY, PENDING_COUNT, earliest } from "../rules/due.ts";
import { createClaims, type Claims } from "./claims.ts";
import { createStoreClock, type StoreClock } from "./database-clock.ts";
import { createDatabaseHealth, untilReachable } from "./database-health.ts";
import { migratePostgres } from "./migrate.ts";
import { pgMigrations } from "./migrations/index.ts";
import { pgRows } from "./pg-reads.ts";
import { pgTx } from "./pg-tx.ts";
import { classifyDatabaseError, maskDatabaseUrl, openPgPool, type PgPool } from "./pool.ts";
import { listenForQueueEvents, sendQueueEvent } from "./queue-events.ts";
import { writeInTransaction } from "./write-transaction.ts";

/**
 * The scan queue's store in PostgreSQL (`SERVER_DATABASE_URL`), as the queue's `StoreAdapter`. Several instances may
 * share one database: every write is a short transaction of its own, committed before a webhook is answered,
 * whichever instance took it; due folders are claimed by one instance at a time (`claims.ts`); every time is the
 * database's (`database-clock.ts`); changes are announced to the other instances (`queue-events.ts`).
 */
export interface PgStoreOptions {
  readonly url: string;
  /** This instance's id: the owner of its claims, and its name in `pg_stat_activity`. */
  readonly instance: string;
  /** `SERVER_LEASE_SECONDS` in ms: a claim not renewed for this long is taken over by another instance. */
  readonly leaseMs: number;
  readonly clock: Clock;
  /** The queue's logger (component QUEUE). */
  readonly log: Logger;
  /** While the database cannot be reached, how often it is tried again (default 2 s). */
  readonly probeIntervalMs?: number;
  /** How long a start waits for a database that does not answer yet (default 60 s: it may be starting too). */
  readonly startWaitMs?: number;
  /** `SERVER_METRICS`: commit latency, refused writes, folders taken over. */
  readonly metrics?: StoreMetrics;
  /**
   * Tests only: the queue's time is `clock`'s (a manual clock) instead of the database's clock. In service the
   * database's clock orders every due time and lease, whatever the instances' own clocks say.
   */
  readonly timeFromClock?: boolean;
}

/** Connects (waiting for a database that is starting too), migrates, listens to the other instances, renews claims. */
export async function openPgAdapter(options: PgStoreOptions): Promise<{ readonly adapter: StoreAdapter; readonly schema: number }> {
  const { instance, log } = options;
  const where = maskDatabaseUrl(options.url);
  const pool = openPgPool({ url: options.url, log, applicationName: `autoscan ${instance}` });
  let migrated;
  try {
    migrated = await untilReachable(() => migratePostgres(pool, pgMigrations, log), where, log, options.startWaitMs ?? 60_000);
  } catch (error) {
    await pool.end().catch(() => undefined);
    throw classifyDatabaseError(error);
  }
  const now = createStoreClock(options.timeFromClock ? () => options.clock.now() : undefined);
  const { metrics } = options;
  const claims = createClaims({
    pool,
    owner: instance,
    leaseMs: options.leaseMs,
    now,
    log,
    ...(metrics ? { onTakeover: (item: { unfinished: number }) => metrics.queueTakeover(item.unfinished > 0) } : {}),
  });
  const heard = new Set<(event: QueueEvent) => void>();
  const listener = listenForQueueEvents({
    url: options.url,
    applicationName: `autoscan ${instance}`,
    instance,
    log,
    onEvent: (event) => heard.forEach((hear) => hear(event)),
  });
  // Listening before the first request is taken: another instance's work from then on wakes this one at once.
  await listener.ready;
  // Claims are renewed three times per lease: one missed renewal (a slow database) does not lose them.
  const renewal = setInterval(() => {
    claims.renew().catch((error: unknown) => log.warn({ err: error }, `Could not renew this instance's claims: ${describeError(error)}`));
  }, Math.max(1_000, Math.floor(options.leaseMs / 3)));
  renewal.unref();

  const adapter = pgAdapter({ pool, where, instance, now, claims, pollMs: options.leaseMs, log, probeMs: options.probeIntervalMs ?? 2_000, ...(metrics ? { metrics } : {}) }, {
    subscribe: (hear) => heard.add(hear),
    async close() {
      clearInterval(renewal);
      await listener.close();
      // A clean stop hands this instance's folders to the others at once, instead of after the lease.
      const released = await claims.releaseAll().catch(() => 0);
      if (released > 0) log.info({ released }, `Released ${String(released)} claimed folder(s) for the other instances.`);
      await pool.end();
    },
  });
  return { adapter, schema: migrated.to };
}

interface PgAdapterParts {
  readonly pool: PgPool;
  readonly where: string;
  readonly instance: string;
  readonly now: StoreClock;
  readonly claims: Claims;
  /** The longest sleep: other instances' new work and lapsed claims are looked for at least this often. */
  readonly pollMs: number;
  readonly log: Logger;
  readonly probeMs: number;
  readonly metrics?: StoreMetrics;
}

function pgAdapter(parts: PgAdapterParts, lifecycle: { subscribe(hear: (event: QueueEvent) => void): void; close(): Promise<void> }): StoreAdapter {
  const { pool, instance, now, claims, metrics } = parts;
  const health = createDatabaseHealth(pool, parts.where, parts.log, parts.probeMs);
  const reads: AsyncRows = pgRows(pool);
  /** Writes in flight, so that `close` waits for them. */
  const writing = new Set<Promise<unknown>>();
  let closed = false;
  const tracked = <A extends unknown[], R>(fn: (...args: A) => Promise<R>) => (...args: A): Promise<R> => health.track(fn(...args));

  return {
    where: parts.where,
    async write(work, options = {}) {
      if (closed) throw new StoreUnavailableError("The queue is closed: autoscan is stopping.");
      const running = writeInTransaction(
        pool,
        async (client) => {
          const tx = pgTx(client, await now(client), instance);
          const result = await work(tx);
          // Told to every instance as this transaction commits.
          await sendQueueEvent(client, instance, options.announce?.(result) ?? { kind: "change" });
          return result;
        },
        { ...(options.signal ? { signal: options.signal } : {}), ...(metrics ? { metrics } : {}) },
      );
      writing.add(running);
      try {
        return await health.track(running);
      } finally {
        writing.delete(running);
      }
    },
    reads,
    due: {
      dueForCheck: tracked((_at: number, limit: number, skip: ReadonlySet<number>) => claims.forCheck(limit, skip)),
      dueForTarget: tracked((target: string, _at: number, limit: number, skip: ReadonlySet<number>) => claims.forTarget(target, limit, skip)),
      nextWakeAt: tracked(async (at: number) => {
        // Waits measured on the database's clock, then laid on the dispatcher's own (`at`): the two may differ.
        const dbNow = await now(pool);
        const row = await reads.get<{ ready: number | null; lapse: number | null; delivery: number | null }>(
          `SELECT ${NEXT_READY},
             (SELECT MIN(lease_until) FROM items WHERE state = 'pending' AND lease_owner <> ?2 AND lease_until >= ?1) AS lapse`,
          [dbNow, instance],
        );
        // A claim of another instance's runs out at `lapse`: look then (+1 ms: "runs out" is strictly after it).
        const next = earliest(row?.ready, row?.delivery, typeof row?.lapse === "number" ? row.lapse + 1 : undefined);
        return at + Math.min(parts.pollMs, (next ?? Number.POSITIVE_INFINITY) - dbNow);
      }),
      pendingCount: tracked(async () => (await reads.get<{ n: number }>(PENDING_COUNT))?.n ?? 0),
      release: (id) => claims.release(id),
    },
    health: () => health.current(),
    onOtherInstance: (hear) => lifecycle.subscribe(hear),
    async close() {
      if (closed) return;
      closed = true;
      health.stop();
      await Promise.allSettled([...writing]);
      await lifecycle.close();
    },
  };
}
