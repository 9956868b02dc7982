import { dirname } from "node:path";
import { acquireDataDirLock } from "../core/data-dir-lock.ts";
import type { Logger } from "../core/logger.ts";
import { moveQueueFileInto } from "./move-to-postgres.ts";
import { pauseAtStep, setAsidePlexAutoscanQueue, startPlexAutoscanImport } from "./plex-autoscan-import.ts";
import type { PgStoreOptions } from "./postgres/pg-scan-queue.ts";
import { composeScanQueue, type ComposeOptions, type ScanQueue } from "./scan-queue.ts";
import { openSqlJsAdapter, type SqlJsStoreOptions } from "./sqljs/sqljs-adapter.ts";
import type { StoreAdapter } from "./store-port.ts";

/**
 * The queue's factory: takes the data directory's lock, sets plex_autoscan's queue found where autoscan's goes aside
 * before any store opens it (`plex-autoscan-import.ts`), opens the store (the embedded file, or PostgreSQL: its
 * driver is loaded only then), puts the queue's rules over it (`scan-queue.ts`), and imports the file set aside
 * beside the running queue. The adapters know neither the facade nor each other.
 */
export interface ScanQueueOptions extends SqlJsStoreOptions, Omit<ComposeOptions, "log"> {
  /** Take the data directory's lock (default true; a second process on the same queue refuses to start). */
  readonly lock?: boolean;
  /** Tests only: plex_autoscan's import waits for ever at this step (`move`, `rows`, `marker`). */
  readonly pauseImportAt?: string;
}

export interface PgScanQueueOptions extends PgStoreOptions, Omit<ComposeOptions, "log"> {
  /** This instance's data directory: locked while the queue is open (two processes never share one). */
  readonly dataDir?: string;
  /** Where the embedded queue's file would be: its waiting folders, or plex_autoscan's queue there, are taken in. */
  readonly queueFile?: string;
  readonly pauseImportAt?: string;
}

/** With `SERVER_DATABASE_URL`: the queue in PostgreSQL, shared with any other instance on the same database. */
export type DatabaseOptions = Pick<PgScanQueueOptions, "url" | "instance" | "leaseMs" | "dataDir">;

/** The queue the options name: the embedded file, or with `database` PostgreSQL (taking in what the file holds). */
export function openScanQueue(options: ScanQueueOptions & { readonly database?: DatabaseOptions | undefined }): Promise<ScanQueue> {
  const { database, ...embedded } = options;
  return database ? createPgScanQueue({ ...embedded, ...database, queueFile: options.file }) : createScanQueue(embedded);
}

/** The embedded queue (one process, `<data dir>/queue.db`). */
export async function createScanQueue(options: ScanQueueOptions): Promise<ScanQueue> {
  const log = options.log.child({ component: "QUEUE" });
  return underLock(options.lock === false ? undefined : dirname(options.file), log, async () => {
    const aside = await setAsidePlexAutoscanQueue(options.file);
    if (aside) await pauseAtStep(options.pauseImportAt, "move", log);
    const queue = await openEmbedded({ ...options, log });
    return withImport(queue, aside, options.file, log, options.pauseImportAt);
  });
}

/** The queue in PostgreSQL; a first start moves in the waiting folders of the queue file, or imports plex_autoscan's. */
export async function createPgScanQueue(options: PgScanQueueOptions): Promise<ScanQueue> {
  const log = options.log.child({ component: "QUEUE" });
  return underLock(options.dataDir, log, async () => {
    const { queueFile } = options;
    const aside = queueFile === undefined ? undefined : await setAsidePlexAutoscanQueue(queueFile);
    if (aside) await pauseAtStep(options.pauseImportAt, "move", log);
    const { openPgAdapter } = await import("./postgres/pg-scan-queue.ts");
    const { adapter, schema } = await openPgAdapter({ ...options, log });
    const queue = await over(adapter, { ...options, log }, async (opened) => {
      const pending = await opened.pendingCount();
      log.info(
        { database: adapter.where, instance: options.instance, schema, pending },
        `Queue in PostgreSQL at ${adapter.where} (schema ${String(schema)}): ${String(pending)} folder(s) waiting; this is instance ${options.instance}.`,
      );
    });
    if (queueFile === undefined) return queue;
    try {
      // The data directory is locked by this instance already.
      const open = (file: string): Promise<ScanQueue> =>
        openEmbedded({ file, clock: options.clock, log, scanDelayMs: 0, historyMaxRows: 1_000_000, historyMaxDays: 3650 });
      await moveQueueFileInto(queue, queueFile, open, log);
    } catch (error) {
      await queue.close();
      throw error;
    }
    return withImport(queue, aside, queueFile, log, options.pauseImportAt);
  });
}

/** The embedded store with the rules over it (no lock, no import). */
async function openEmbedded(options: ScanQueueOptions): Promise<ScanQueue> {
  return over(await openSqlJsAdapter(options), options, async (queue) => {
    const restored = await queue.pendingCount();
    options.log.info({ file: queue.file, count: restored }, `Restored ${String(restored)} scan request(s) from '${queue.file}'.`);
  });
}

/** The rules over an open store, and the first look at it; the start fails as a whole: nothing of it keeps running. */
async function over(adapter: StoreAdapter, options: ComposeOptions, look: (queue: ScanQueue) => Promise<void>): Promise<ScanQueue> {
  try {
    const queue = await composeScanQueue(adapter, options);
    await look(queue);
    return queue;
  } catch (error) {
    await adapter.close().catch(() => undefined);
    throw error;
  }
}

/** `open` under the data directory's lock (none: `dir` undefined), released when the queue closes or the open fails. */
async function underLock(dir: string | undefined, log: Logger, open: () => Promise<ScanQueue>): Promise<ScanQueue> {
  const lock = dir === undefined ? undefined : await acquireDataDirLock({ dir, log });
  let queue: ScanQueue;
  try {
    queue = await open();
  } catch (error) {
    await lock?.release();
    throw error;
  }
  if (!lock) return queue;
  return {
    ...queue,
    async close() {
      await queue.close();
      await lock.release();
    },
  };
}

/** The queue with plex_autoscan's import (set aside at `aside`) running beside it, stopped before the queue closes. */
function withImport(queue: ScanQueue, aside: string | undefined, queueFile: string, log: Logger, pauseAt: string | undefined): ScanQueue {
  if (!aside) return queue;
  const running = startPlexAutoscanImport({ queueFile, aside, queue, log, ...(pauseAt ? { pauseAt } : {}) });
  return {
    ...queue,
    importing: running.progress,
    async close() {
      await running.stop();
      await queue.close();
    },
  };
}
