import type { Clock } from "../../core/clock.ts";
import { acquireDataDirLock } from "../../core/data-dir-lock.ts";
import { StoreUnavailableError, describeError } from "../../core/errors.ts";
import { createDatabaseHealth, untilReachable } from "./database-health.ts";
import type { Logger } from "../../core/logger.ts";
import type { StoreMetrics } from "../../core/metrics.ts";
import type { ScanRequest } from "../../core/scan.ts";
import type { ScanPriorities } from "../../paths/priority.ts";
import { createQueueSettings, pruneAsFoldersFinish, queueReads, startMaintenance } from "../queue-common.ts";
import { createQueueSink } from "../queue-sink.ts";
import type { ScanQueue } from "../scan-queue.ts";
import { createClaims } from "./claims.ts";
import { migratePostgres } from "./migrate.ts";
import { pgMigrations } from "./migrations/index.ts";
import { pruneHistoryPg, removeItemPg, retryFailedItemsPg, retryItemPg } from "./pg-admin.ts";
import { applyRequestsPg } from "./pg-enqueue.ts";
import { pgRows } from "./pg-rows.ts";
import { createPgWork } from "./pg-work.ts";
import { classifyDatabaseError, maskDatabaseUrl, openPgPool, type PgClient } from "./pool.ts";
import { listenForQueueEvents, sendQueueEvent, type QueueEvent } from "./queue-events.ts";
import { createStoreClock } from "./database-clock.ts";
import { writeInTransaction } from "./write-transaction.ts";

/**
 * The scan queue in PostgreSQL (`SERVER_DATABASE_URL`): the same `ScanQueue` as the embedded store, so the
 * dispatcher, the console, the API and the metrics do not know which one they use. Several instances may share one
 * database: requests are stored (committed) before a webhook is answered, whichever instance took it; due folders are
 * claimed by one instance at a time (`claims.ts`); changes are announced to the others (`queue-events.ts`).
 */
export interface PgScanQueueOptions {
  readonly url: string;
  /** This instance's id: the owner of its claims, and its name in `pg_stat_activity`. */
  readonly instance: string;
  /** `SERVER_LEASE_SECONDS` in ms: a claim not renewed for this long is taken over by another instance. */
  readonly leaseMs: number;
  readonly clock: Clock;
  readonly log: Logger;
  readonly scanDelayMs: number;
  readonly priorities?: ScanPriorities;
  readonly historyMaxDays?: number;
  readonly historyMaxRows?: number;
  readonly resolveKind?: (request: ScanRequest) => Promise<ScanRequest>;
  /** How often history is pruned (default 10 minutes). */
  readonly maintenanceIntervalMs?: number;
  /** While the database cannot be reached, how often it is tried again (default 2 s). */
  readonly probeIntervalMs?: number;
  /** This instance's data directory: locked while the queue is open (two processes never share one). */
  readonly dataDir?: string;
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

export async function createPgScanQueue(options: PgScanQueueOptions): Promise<ScanQueue> {
  const log = options.log.child({ component: "QUEUE" });
  const { clock, instance } = options;
  const storeNow = createStoreClock(options.timeFromClock ? () => clock.now() : undefined);
  const where = maskDatabaseUrl(options.url);
  const lock = options.dataDir === undefined ? undefined : await acquireDataDirLock({ dir: options.dataDir, log });
  const pool = openPgPool({ url: options.url, log, applicationName: `autoscan ${instance}` });
  let migrated;
  try {
    migrated = await untilReachable(() => migratePostgres(pool, pgMigrations, log), where, log, options.startWaitMs ?? 60_000);
  } catch (error) {
    await pool.end().catch(() => undefined);
    await lock?.release();
    throw classifyDatabaseError(error);
  }
  const settings = createQueueSettings(options);
  const { policy } = settings;
  const reads = pgRows(pool);
  const health = createDatabaseHealth(pool, where, log, options.probeIntervalMs ?? 2_000);

  const workListeners = new Set<(earliest: number) => void>();
  const changeListeners = new Set<() => void>();
  // Work events say how soon (ms) the work may be due; each dispatcher lays that on its own clock.
  const hear = (event: QueueEvent): void => {
    if (event.kind === "work") for (const listener of workListeners) listener(clock.now() + event.inMs);
    for (const listener of changeListeners) listener();
  };

  const { metrics } = options;
  /** Writes in flight, so that `close` waits for them. */
  const writing = new Set<Promise<unknown>>();
  let closed = false;
  /**
   * One write in a transaction of its own, at the store's time (`now`, read when the transaction starts), that
   * announces itself to every instance when it commits.
   */
  async function write<T>(
    work: (client: PgClient, now: number) => Promise<T>,
    event: (result: T, now: number) => QueueEvent = () => ({ kind: "change" }),
    writeOptions: { readonly signal?: AbortSignal } = {},
  ): Promise<T> {
    if (closed) throw new StoreUnavailableError("The queue is closed: autoscan is stopping.");
    let announced: QueueEvent = { kind: "change" };
    const running = writeInTransaction(
      pool,
      async (client) => {
        const at = await storeNow(client);
        const out = await work(client, at);
        announced = event(out, at);
        await sendQueueEvent(client, instance, announced);
        return out;
      },
      { ...writeOptions, ...(metrics ? { metrics } : {}) },
    );
    writing.add(running);
    const result = await health.track(running).finally(() => writing.delete(running));
    // Told here too, not only through LISTEN: this instance's dispatcher must not wait for its own announcement.
    hear(announced);
    return result;
  }

  const claims = createClaims({
    pool,
    owner: instance,
    leaseMs: options.leaseMs,
    now: storeNow,
    log,
    ...(metrics ? { onTakeover: (item: { unfinished: number }) => metrics.queueTakeover(item.unfinished > 0) } : {}),
  });
  const work = createPgWork({ pool, transact: (run) => write(run), claims, owner: instance, now: storeNow, pollMs: options.leaseMs });
  const tracked = <A extends unknown[], R>(fn: (...args: A) => Promise<R>) => (...args: A): Promise<R> => health.track(fn(...args));

  const enqueue = createQueueSink({
    store: (requests, sinkOptions) =>
      write(
        (client, at) => applyRequestsPg(client, requests, at, policy),
        (outcome) => (outcome.earliestDue < Number.POSITIVE_INFINITY ? { kind: "work", inMs: outcome.earliestDue - outcome.at } : { kind: "change" }),
        sinkOptions.signal ? { signal: sinkOptions.signal } : {},
      ),
    log,
    // `write` has told the dispatcher already.
    notify: () => undefined,
    ...(options.resolveKind ? { resolveKind: options.resolveKind } : {}),
  });

  const prune = async (): Promise<void> => {
    const dropped = await write((client, at) => pruneHistoryPg(client, at, settings.maxDays(), settings.maxRows()));
    if (dropped > 0) log.debug({ dropped }, `Pruned ${String(dropped)} folder(s) from the history.`);
  };

  const listener = listenForQueueEvents({ url: options.url, applicationName: `autoscan ${instance}`, instance, log, onEvent: hear });
  // Listening before the first request is taken: another instance's work from then on wakes this one at once.
  await listener.ready;
  // Claims are renewed three times per lease: one missed renewal (a slow database) does not lose them.
  const renewal = setInterval(() => {
    claims.renew().catch((error: unknown) => log.warn({ err: error }, `Could not renew this instance's claims: ${describeError(error)}`));
  }, Math.max(1_000, Math.floor(options.leaseMs / 3)));
  renewal.unref();
  const maintenance = startMaintenance(clock, options.maintenanceIntervalMs ?? 10 * 60_000, prune, log);
  await prune().catch((error: unknown) => log.warn({ err: error }, "Could not prune the queue history; trying again later"));

  const pending = await work.pendingCount().catch(async (error: unknown) => {
    // The start fails as a whole: nothing of it keeps running.
    clearInterval(renewal);
    maintenance.abort();
    health.stop();
    await listener.close();
    await pool.end().catch(() => undefined);
    await lock?.release();
    throw error;
  });
  log.info(
    { database: where, instance, schema: migrated.to, pending },
    `Queue in PostgreSQL at ${where} (schema ${String(migrated.to)}): ${String(pending)} folder(s) waiting; this is instance ${instance}.`,
  );

  return {
    ...work,
    dueForCheck: tracked(work.dueForCheck),
    dueForTarget: tracked(work.dueForTarget),
    nextWakeAt: tracked(work.nextWakeAt),
    pendingCount: tracked(work.pendingCount),
    release: (id) => claims.release(id),
    ...pruneAsFoldersFinish(work, prune, settings.maxRows, log),
    ...queueReads(reads),
    enqueue,
    file: where,
    onWork(listener) {
      workListeners.add(listener);
      return () => workListeners.delete(listener);
    },
    retry: (id) => write((client, at) => retryItemPg(client, id, at), (ok) => (ok ? { kind: "work", inMs: 0 } : { kind: "change" })),
    remove: (id) => write((client) => removeItemPg(client, id)),
    retryFailed: () =>
      write((client, at) => retryFailedItemsPg(client, at), (count) => (count > 0 ? { kind: "work", inMs: 0 } : { kind: "change" })),
    onChange(listener) {
      changeListeners.add(listener);
      return () => changeListeners.delete(listener);
    },
    reconfigure: (next) => settings.reconfigure(next),
    writable: () => health.current().writable,
    isHealthy: () => health.current().writable,
    health: () => health.current(),
    async close() {
      if (closed) return;
      closed = true;
      clearInterval(renewal);
      maintenance.abort();
      health.stop();
      await Promise.allSettled([...writing]);
      await listener.close();
      // A clean stop hands this instance's folders to the others at once, instead of after the lease.
      const released = await claims.releaseAll().catch(() => 0);
      if (released > 0) log.info({ released }, `Released ${String(released)} claimed folder(s) for the other instances.`);
      workListeners.clear();
      changeListeners.clear();
      await pool.end();
      await lock?.release();
    },
  };
}
