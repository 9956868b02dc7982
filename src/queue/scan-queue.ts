import type { Clock } from "../core/clock.ts";
import { StoreUnavailableError } from "../core/errors.ts";
import type { Logger } from "../core/logger.ts";
import type { StoreMetrics } from "../core/metrics.ts";
import { acquireDataDirLock } from "../core/data-dir-lock.ts";
import type { ScanRequest, ScanSink } from "../core/scan.ts";
import type { ScanPriorities } from "../paths/priority.ts";
import type { DispatchQueue } from "./dispatch/dispatch-port.ts";
import { applyRequests } from "./enqueue-requests.ts";
import { pruneHistory, removeItem, retryFailedItems, retryItem } from "./queue-admin.ts";
import type { HistoryQuery, PageOptions, QueueItemView } from "./queue-views.ts";
import { createQueueWork } from "./queue-work.ts";
import { createQueueSettings, pruneAsFoldersFinish, queueReads, startMaintenance } from "./queue-common.ts";
import { createQueueSink } from "./queue-sink.ts";
import { asyncRows } from "./rows-async.ts";
import { openQueueStore, type QueueStore, type StoreHealth } from "./store/queue-store.ts";
import { dirname } from "node:path";

export interface ScanQueueOptions {
  /** The queue file (`--queuefile`, default `<data dir>/queue.db`). */
  readonly file: string;
  readonly clock: Clock;
  readonly log: Logger;
  /** `SERVER_SCAN_DELAY`, in milliseconds. */
  readonly scanDelayMs: number;
  /** `SERVER_SCAN_PRIORITIES`. */
  readonly priorities?: ScanPriorities;
  /** `SERVER_HISTORY_MAX_DAYS` (default 7). */
  readonly historyMaxDays?: number;
  /** `SERVER_HISTORY_MAX_ROWS` (default 10,000). */
  readonly historyMaxRows?: number;
  /**
   * A checkpoint rewrites the queue file once the journal beside it has grown by `checkpointRatio` × the file's
   * size (default 0.5), and by at least `checkpointBytes` (default 8 MiB). Tests lower both.
   */
  readonly checkpointBytes?: number;
  readonly checkpointRatio?: number;
  /** How often history is pruned and a quiet journal folded into the file (default 10 minutes). */
  readonly maintenanceIntervalMs?: number;
  /** While the disk refuses writes, how often the store tries again (default 2 s). */
  readonly probeIntervalMs?: number;
  /** How often the queue files are checked to still be there (default 1 s: two stats). */
  readonly verifyIntervalMs?: number;
  /** Looks a path of `unknown` kind up on disk before it is merged (see `resolve-kind.ts`). */
  readonly resolveKind?: (request: ScanRequest) => Promise<ScanRequest>;
  /** Take the data directory's lock (default true; a second process on the same queue refuses to start). */
  readonly lock?: boolean;
  /** `SERVER_METRICS`: the store's write latency and failures. */
  readonly metrics?: StoreMetrics;
}

export interface ScanQueue extends DispatchQueue {
  /** The `ScanSink` every intake hands requests to; resolves once they are on disk. */
  readonly enqueue: ScanSink;
  readonly file: string;
  listPending(page?: PageOptions): Promise<QueueItemView[]>;
  listHistory(query?: HistoryQuery): Promise<QueueItemView[]>;
  /** History folders matching `query` (all without one). */
  historyCount(query?: HistoryQuery): Promise<number>;
  /** The sources of the requests kept (pending and history), for filters. */
  sources(): Promise<string[]>;
  /** Folders per state (`pending`, `done`, `failed`). */
  countByState(): Promise<Record<string, number>>;
  getItem(id: number): Promise<QueueItemView | undefined>;
  /** Makes a pending, failed or finished folder due now. False when there is no such item. */
  retry(id: number): Promise<boolean>;
  /** Deletes a pending or finished folder. False when there is no such item. */
  remove(id: number): Promise<boolean>;
  /** Whether a request for the same folder arrived at or after `since` (see `coverage.ts`). */
  isCovered(request: ScanRequest, since: number): Promise<boolean>;
  /** Retries every failed folder; resolves with how many. */
  retryFailed(): Promise<number>;
  /** `listener` runs after every change that is stored (a request, a check, a scan starting or ending, an action);
   *  returns the unsubscribe function. Nothing is read for a listener: it only learns that something changed. */
  onChange(listener: () => void): () => void;
  isHealthy(): boolean;
  /** Whether a request would be stored right now, and why not; from memory, never waiting on the disk. */
  health(): StoreHealth;
  /** New merge delay, priorities and history limits (a config reload): for requests from now on; waiting folders keep
   *  the due time they were given. */
  reconfigure(options: Pick<ScanQueueOptions, "scanDelayMs" | "priorities" | "historyMaxDays" | "historyMaxRows">): void;
  /** Stops maintenance, writes everything to the file and releases it. Further enqueues reject. */
  close(): Promise<void>;
}

/** Opens (creating, migrating, restoring, importing plex_autoscan's queue) the queue file. */
export async function createScanQueue(options: ScanQueueOptions): Promise<ScanQueue> {
  const log = options.log.child({ component: "QUEUE" });
  const { clock } = options;
  const now = (): number => clock.now();
  const lock = options.lock === false ? undefined : await acquireDataDirLock({ dir: dirname(options.file), log });
  let store: QueueStore;
  try {
    store = await openQueueStore({
      file: options.file,
      log,
      now,
      ...(options.checkpointBytes === undefined ? {} : { checkpointBytes: options.checkpointBytes }),
      ...(options.checkpointRatio === undefined ? {} : { checkpointRatio: options.checkpointRatio }),
      ...(options.probeIntervalMs === undefined ? {} : { probeIntervalMs: options.probeIntervalMs }),
      ...(options.metrics ? { metrics: options.metrics } : {}),
    });
  } catch (error) {
    await lock?.release();
    throw error;
  }
  // Read at each use, so a config reload applies to the next request and the next prune.
  const settings = createQueueSettings(options);
  const { policy } = settings;
  // Every write goes through `observed`, so a change listener (the console, while a page is open) hears of each one.
  const changeListeners = new Set<() => void>();
  const changed = (): void => {
    for (const listener of changeListeners) listener();
  };
  const observed: QueueStore = {
    ...store,
    write: async (build, writeOptions) => {
      const result = await store.write(build, writeOptions);
      if (changeListeners.size > 0) changed();
      return result;
    },
  };
  const listeners = new Set<(earliest: number) => void>();
  const notify = (inMs: number): void => listeners.forEach((listener) => listener(now() + inMs));
  const work = createQueueWork(observed, now);

  const enqueue = createQueueSink({
    store: (requests, sinkOptions) => observed.write((tx) => applyRequests(tx, requests, now(), policy), sinkOptions),
    log,
    notify,
    ...(options.resolveKind ? { resolveKind: options.resolveKind } : {}),
  });

  await importLegacy(store, log, enqueue);
  const prune = async (): Promise<void> => void (await observed.write((tx) => pruneHistory(tx, now(), settings.maxDays(), settings.maxRows())));
  // On a disk that refuses writes the queue still opens (503 until it can write, see the store); pruning waits.
  await prune().catch((error: unknown) => {
    if (!(error instanceof StoreUnavailableError)) throw error;
  });
  const restored = await work.pendingCount();
  const reads = asyncRows(store.rows);
  log.info({ file: store.file, count: restored }, `Restored ${String(restored)} scan request(s) from '${store.file}'.`);
  // Each tick also folds a quiet journal into the file.
  const maintenance = startMaintenance(
    clock,
    options.maintenanceIntervalMs ?? 10 * 60_000,
    async () => {
      await prune();
      if (store.logBytes() > 0) await store.checkpoint();
    },
    log,
  );
  const verify = setInterval(() => void store.verifyFiles().catch(() => {}), options.verifyIntervalMs ?? 1_000);
  verify.unref();

  return {
    ...work,
    ...pruneAsFoldersFinish(work, prune, settings.maxRows, log),
    ...queueReads(reads),
    enqueue,
    file: store.file,
    onWork(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    async retry(id) {
      const result = await observed.write((tx) => retryItem(tx, id, now()));
      if (result) notify(0);
      return result;
    },
    remove: (id) => observed.write((tx) => removeItem(tx, id)),
    async retryFailed() {
      const count = await observed.write((tx) => retryFailedItems(tx, now()));
      if (count > 0) notify(0);
      return count;
    },
    onChange(listener) {
      changeListeners.add(listener);
      return () => changeListeners.delete(listener);
    },
    reconfigure: (next) => settings.reconfigure(next),
    isHealthy: () => store.health().writable,
    health: () => store.health(),
    async close() {
      maintenance.abort();
      clearInterval(verify);
      await store.close();
      listeners.clear();
      changeListeners.clear();
      await lock?.release();
    },
  };
}

async function importLegacy(store: QueueStore, log: Logger, enqueue: ScanSink): Promise<void> {
  const legacy = store.legacy;
  if (!legacy) return;
  const { items } = await enqueue(legacy.requests);
  await store.checkpoint();
  log.info(
    { file: store.file, backup: legacy.backup, requests: legacy.requests.length, folders: items.length },
    `Imported ${String(legacy.requests.length)} scan request(s) from the plex_autoscan queue in '${store.file}' ` +
      `(the old file is kept as '${legacy.backup}').`,
  );
}
