import { setImmediate as nextTurn } from "node:timers/promises";
import type { Clock } from "../core/clock.ts";
import { StoreUnavailableError } from "../core/errors.ts";
import type { Logger } from "../core/logger.ts";
import type { ScanRequest, ScanSink } from "../core/scan.ts";
import type { ScanPriorities } from "../paths/priority.ts";
import { UNROUTABLE_MARK } from "../paths/unroutable.ts";
import type { RequestRow } from "./store-rows.ts";
import { isCovered } from "./coverage.ts";
import { watchFailures, type FailedFolder } from "./failed-watch.ts";
import type { DispatchQueue } from "./dispatch/dispatch-port.ts";
import { dueLooks, nextLookAt, rescanState, type DueLook, type RescanState } from "./landed-reads.ts";
import { claimLook, recordLook, type ClaimedLook, type LookRecord } from "./rules/landed.ts";
import { countByState, countHistory, findItem, listHistoryItems, listPendingItems, listSources } from "./queue-views.ts";
import type { HistoryQuery, PageOptions, QueueItemView } from "./queue-views.ts";
import { movedRequests, pruneHistory, refuseWaiting, removeItem, retryFailedItems, retryItem, retryRemapped } from "./rules/admin.ts";
import type { RemapRequest, RetryOutcome } from "./rules/admin.ts";
import {
  FOLDER_WITH_EXTRA_REQUESTS_SQL,
  HISTORY_REQUESTS_KEPT,
  beginAttempt,
  dropExtraRequests,
  failWaitingFor,
  recordCheck,
  recordFailure,
  recordInterrupted,
  recordScan,
} from "./rules/dispatch-records.ts";
import { assertScannable, enqueueRequests, logIntake, moveToFolder, requestFolder, type EnqueueOutcome, type MergePolicy } from "./rules/enqueue.ts";
import type { QueueTx } from "./rules/queue-tx.ts";
import type { QueueEvent, StoreAdapter, StoreHealth } from "./store-port.ts";

/**
 * The scan queue: the queue's rules (`rules/`) over one store adapter (`StoreAdapter`: the embedded sql.js file, or
 * PostgreSQL), the same for both. The dispatcher, the console, the API and the metrics see this and never the store.
 */
export interface ScanQueue extends DispatchQueue {
  /** The `ScanSink` every intake hands requests to; resolves once they are stored. */
  readonly enqueue: ScanSink;
  /** Where the queue lives (the file, or the database URL with its password masked). */
  readonly file: string;
  /**
   * Stores a batch moved over from another queue (plex_autoscan's) in one write, merged by the same rules as any
   * request, quietly (no line per folder) and without a look at the disk: paths of unknown kind wait for the file
   * checks. Answers, per request, whether it joined a folder already waiting. `mark`: how far the import got, kept
   * in the same write (`through` undefined: forgotten), so a restart goes on after what was stored, never twice.
   */
  importRequests(requests: readonly ScanRequest[], mark?: ImportMark): Promise<readonly { readonly merged: boolean }[]>;
  /** The last source row an import keyed `key` stored (its `ImportMark`); undefined: none yet. */
  importedThrough(key: string): Promise<number | undefined>;
  /** How far an import of plex_autoscan's queue has got, while one runs (the console shows it). */
  importing?(): { readonly done: number; readonly total: number } | undefined;
  /**
   * Moves waiting folders no target can scan into the history as failed, each with its reason, in one write
   * (rules/admin.ts `refuseWaiting`); answers the ids it failed (a folder no longer waiting is left as it is).
   */
  refuseWaiting(refused: readonly { readonly id: number; readonly reason: string }[]): Promise<number[]>;
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
  /**
   * Retries the folders refused for lack of a mapping (History: "Not queued: …") whose requests today's
   * `SERVER_PATH_MAPPINGS` now reach; they wait under the mapped folders. Resolves with how many folders went.
   */
  retryRemapped(): Promise<number>;
  /** How many folders `retryRemapped` would retry now (read only). */
  remappedCount(): Promise<number>;
  /** `listener` runs after every change that is stored (a request, a check, a scan starting or ending, an action; with
   *  PostgreSQL, other instances' too); returns the unsubscribe function. It only learns that something changed. */
  onChange(listener: () => void): () => void;
  /**
   * `listener` is told the folders this instance's writes finished as `failed` (see `failed-watch.ts`), once each,
   * after the write is durable; it must return at once. Returns the unsubscribe function.
   */
  onFailed(listener: (folders: readonly FailedFolder[]) => void): () => void;
  /** The landed looks due now (`rules/landed.ts`), oldest first. */
  dueLooks(limit: number): Promise<DueLook[]>;
  /** When the next landed look falls due, if any. */
  nextLookAt(): Promise<number | undefined>;
  /** Where the newest landed check's rescan of one of `files` stands for `target` (`landed-reads.ts`). */
  rescanState(target: string, files: readonly string[]): Promise<RescanState | undefined>;
  /** Takes a due look for `leaseMs` (another instance does not take it meanwhile); `undefined`: not due, or taken. */
  claimLook(itemId: number, target: string, leaseMs: number): Promise<ClaimedLook | undefined>;
  /** Stores what a look found; `false` when the delivery is gone from the history or was not pending. */
  recordLook(itemId: number, target: string, look: LookRecord): Promise<boolean>;
  isHealthy(): boolean;
  /** Whether a request would be stored right now, and why not; from memory, never waiting on the store. */
  health(): StoreHealth;
  /** New merge delay, priorities and history limits (a config reload): for requests from now on; waiting folders keep
   *  the due time they were given. */
  reconfigure(options: QueueSettings): void;
  /** Stops maintenance, stores what is on its way and releases the store. Further enqueues reject. */
  close(): Promise<void>;
}

/** What a config reload changes. */
export interface QueueSettings {
  /** `SERVER_SCAN_DELAY`, in milliseconds. */
  readonly scanDelayMs: number;
  /** `SERVER_SCAN_PRIORITIES`. */
  readonly priorities?: ScanPriorities;
  /** `SERVER_HISTORY_MAX_DAYS` (default 7). */
  readonly historyMaxDays?: number;
  /** `SERVER_HISTORY_MAX_ROWS` (default 10,000). */
  readonly historyMaxRows?: number;
}

export interface ComposeOptions extends QueueSettings {
  readonly clock: Clock;
  /** The queue's logger (component QUEUE). */
  readonly log: Logger;
  /** How often history is pruned (and the adapter's own maintenance runs; default 10 minutes). */
  readonly maintenanceIntervalMs?: number;
  /**
   * A request's received path under the `SERVER_PATH_MAPPINGS` in force (a reload changes them): a retry maps again
   * with it (`rules/admin.ts`). Without it a retry keeps the paths as stored.
   */
  readonly remap?: RemapRequest;
  /** Looks a path of `unknown` kind up on disk, after it is stored and answered (see `resolve-kind.ts`). */
  readonly resolveKind?: (request: ScanRequest) => Promise<ScanRequest>;
}

export interface ImportMark {
  readonly key: string;
  readonly through: number | undefined;
}

const change = (): QueueEvent => ({ kind: "change" });

/** The requests of the folders refused for lack of a mapping (History keeps their first few only). */
const UNROUTABLE_REQUESTS_SQL = `
  SELECT r.id, r.item_id, r.path, r.kind, r.deleted, r.source, r.event, r.received_path, r.at
  FROM requests r JOIN items i ON i.id = r.item_id
  WHERE i.state = 'failed' AND substr(COALESCE(i.last_error, ''), 1, ?) = ? ORDER BY r.id`;

export async function composeScanQueue(store: StoreAdapter, options: ComposeOptions): Promise<ScanQueue> {
  const { clock, log } = options;
  // Read at each use, so a config reload applies to the next request and the next prune.
  const policy: { delayMs: number; priorities: MergePolicy["priorities"] } = { delayMs: 0, priorities: {} };
  let maxDays = 7;
  let maxRows = 10_000;
  const reconfigure = (next: QueueSettings): void => {
    policy.delayMs = Math.max(0, next.scanDelayMs);
    policy.priorities = next.priorities ?? {};
    maxDays = next.historyMaxDays ?? maxDays;
    maxRows = next.historyMaxRows ?? maxRows;
  };
  reconfigure(options);

  // Every stored change is heard here: this instance's own writes, and other instances' (PostgreSQL).
  const workListeners = new Set<(earliest: number) => void>();
  const changeListeners = new Set<() => void>();
  const failedListeners = new Set<(folders: readonly FailedFolder[]) => void>();
  const hear = (event: QueueEvent): void => {
    if (event.kind === "work") for (const listener of workListeners) listener(clock.now() + event.inMs);
    for (const listener of changeListeners) listener();
  };
  store.onOtherInstance?.(hear);
  async function write<T>(work: (tx: QueueTx) => Promise<T>, announce: (result: T) => QueueEvent = change, signal?: AbortSignal): Promise<T> {
    // Folders this write fails are told once it is durable (only watched while someone listens).
    const failed = new Map<number, FailedFolder>();
    const watched = failedListeners.size === 0 ? work : (tx: QueueTx) => (failed.clear(), work(watchFailures(tx, failed)));
    const result = await store.write(watched, { announce, ...(signal ? { signal } : {}) });
    hear(announce(result));
    if (failed.size > 0) for (const listener of failedListeners) listener([...failed.values()]);
    return result;
  }

  /**
   * The queue's `ScanSink`: the batch merged into the queue in one store write, resolved once that write is durable;
   * it never waits on a media disk. The embedded store puts writes that arrive together into one log record, so many
   * webhooks at once cost few fsyncs; PostgreSQL commits each call in a short transaction.
   */
  const enqueue: ScanSink = async (requests, sinkOptions = {}) => {
    if (requests.length === 0) return { items: [] };
    assertScannable(requests);
    const outcome = await write(
      (tx) => enqueueRequests(tx, requests, policy),
      (stored) => (stored.earliestDue < Number.POSITIVE_INFINITY ? { kind: "work", inMs: stored.earliestDue - stored.at } : change()),
      sinkOptions.signal,
    );
    lookUpKinds(outcome);
    logIntake(log, outcome.events, outcome.at, sinkOptions.origin);
    return { items: outcome.items };
  };

  /**
   * Paths of unknown kind are looked up on disk once they are stored and answered (never before: a disk that hangs
   * must not hold a request up). One that is a file moves to its folder with the wait it was given; one that is a
   * folder, or is not there yet, stays as it is, and the file checks look again when it is due.
   */
  function lookUpKinds(outcome: EnqueueOutcome): void {
    const { resolveKind } = options;
    if (!resolveKind) return;
    for (const event of outcome.events) {
      if (event.request.kind !== "unknown" || event.request.deleted) continue;
      void resolveKind(event.request)
        .then(async (resolved) => {
          if (resolved.kind !== "file") return;
          const folder = requestFolder(resolved).folder;
          const moved = await write(
            (tx) => moveToFolder(tx, event.itemId, folder, outcome.at, policy),
            (out) => (out ? { kind: "work", inMs: Math.max(0, out.dueAt - outcome.at) } : change()),
          );
          if (moved) log.debug({ id: moved.id, path: event.request.path, folder }, `'${event.request.path}' is a file: it waits with its folder '${folder}'.`);
        })
        .catch((error: unknown) => log.debug({ err: error, path: event.request.path }, "Could not look up what a requested path is; the file check looks later"));
    }
  }

  /**
   * The requests finished folders hold beyond their History's first ones are deleted a write at a time, with a turn of
   * the event loop between (the webhooks and /health answered meanwhile), after a folder finishes and at each
   * maintenance tick (a restart finishes what a stop left). One run at a time; a finish during a run runs it again.
   */
  let closed = false;
  let dropping: Promise<void> | undefined;
  let dropAgain = false;
  const dropExtra = async (): Promise<void> => {
    do {
      dropAgain = false;
      for (;;) {
        const folder = closed ? undefined : await store.reads.get<{ id: number }>(FOLDER_WITH_EXTRA_REQUESTS_SQL, [HISTORY_REQUESTS_KEPT]);
        if (!folder) break;
        await write((tx) => dropExtraRequests(tx, folder.id));
        await nextTurn();
      }
    } while (dropAgain && !closed);
  };
  const dropExtraRequestsSoon = (): Promise<void> => {
    if (dropping) {
      dropAgain = true;
      return dropping;
    }
    dropping = dropExtra()
      .catch((error: unknown) => {
        if (!closed) log.warn({ err: error }, "Could not delete the extra requests of a finished folder; trying again at the next maintenance");
      })
      .finally(() => (dropping = undefined));
    return dropping;
  };

  /**
   * After folders finished (`ids`): the extra requests are looked for only when one of them dropped some, read by id;
   * looking for them after every finish walked the whole History each time (a tenth of the CPU of a 20,000-row
   * plex_autoscan import). Without `ids` (many finished at once), they are looked for.
   */
  const dropAfterFinish = async (ids?: readonly number[]): Promise<void> => {
    if (ids) {
      let some = false;
      for (const id of ids) {
        const row = await store.reads.get<{ dropped: number }>("SELECT requests_dropped AS dropped FROM items WHERE id = ?", [id]);
        if ((row?.dropped ?? 0) > 0) some = true;
      }
      if (!some) return;
    }
    await dropExtraRequestsSoon();
  };
  const afterFinish = (ids?: readonly number[]): void => {
    dropAfterFinish(ids).catch((error: unknown) => {
      if (!closed) log.warn({ err: error }, "Could not delete the extra requests of a finished folder; trying again at the next maintenance");
    });
  };

  const prune = async (): Promise<void> => {
    const dropped = await write((tx) => pruneHistory(tx, maxDays, maxRows));
    if (dropped > 0) log.debug({ dropped }, `Pruned ${String(dropped)} folder(s) from the history.`);
  };
  // History is pruned at each maintenance tick, and also whenever a tenth of the row limit has finished since the last
  // prune, so the history kept stays near SERVER_HISTORY_MAX_ROWS however busy the queue is.
  let finishedSincePrune = 0;
  const finished = (count: number, ids?: readonly number[]): void => {
    if (count > 0) afterFinish(ids);
    finishedSincePrune += count;
    if (finishedSincePrune < Math.max(100, maxRows / 10)) return;
    finishedSincePrune = 0;
    prune().catch((error: unknown) => log.warn({ err: error }, "Could not prune the queue history; trying again later"));
  };

  // A store that refuses writes still opens (503 until it can write); pruning waits.
  await prune().catch((error: unknown) => {
    if (!(error instanceof StoreUnavailableError)) throw error;
  });
  const maintenance = startMaintenance(
    clock,
    options.maintenanceIntervalMs ?? 10 * 60_000,
    async () => {
      await dropExtraRequestsSoon();
      await prune();
      await store.maintain?.();
    },
    log,
  );
  void dropExtraRequestsSoon();
  const { reads } = store;
  const retried = (outcomes: readonly RetryOutcome[]): QueueEvent => (outcomes.length > 0 ? { kind: "work", inMs: 0 } : change());
  const retryPolicy = (): Parameters<typeof retryItem>[2] => ({ ...policy, ...(options.remap ? { remap: options.remap } : {}) });
  /** A retry whose requests today's mappings sent to another folder says so (the History row it came from is gone). */
  const logMoved = (outcomes: readonly RetryOutcome[]): void => {
    for (const { folder, movedTo } of outcomes) {
      if (movedTo.length === 0) continue;
      const where = movedTo.map((f) => `'${f}'`).join(", ");
      log.info({ folder, movedTo }, `Retry of '${folder}': today's SERVER_PATH_MAPPINGS map its requests to ${where}; they wait there (scan in ${String(Math.round(policy.delayMs / 1000))} s).`);
    }
  };
  const retryAll = async (work: (tx: QueueTx) => Promise<RetryOutcome[]>): Promise<number> => {
    const outcomes = await write(work, retried);
    logMoved(outcomes);
    return outcomes.length;
  };

  return {
    ...store.due,
    enqueue,
    file: store.where,
    async importRequests(requests, mark) {
      const outcome = await write(
        async (tx) => {
          if (mark) await tx.putNote(mark.key, mark.through === undefined ? undefined : String(mark.through));
          return enqueueRequests(tx, requests, policy);
        },
        (stored) => (stored.earliestDue < Number.POSITIVE_INFINITY ? { kind: "work", inMs: stored.earliestDue - stored.at } : change()),
      );
      return outcome.items;
    },
    async importedThrough(key) {
      const noted = await write((tx) => tx.note(key));
      return noted === undefined ? undefined : Number(noted);
    },
    async refuseWaiting(refused) {
      if (refused.length === 0) return [];
      const ids = await write(async (tx) => {
        const failed: number[] = [];
        for (const { id, reason } of refused) if (await refuseWaiting(tx, id, reason)) failed.push(id);
        return failed;
      });
      finished(ids.length, ids);
      return ids;
    },
    async recordCheck(id, rev, result) {
      const moved = await write((tx) => recordCheck(tx, id, rev, result, policy), (out) => (out ? { kind: "work", inMs: out.waitMs } : change()));
      if (result.kind === "failed") afterFinish([id]);
      if (moved) {
        const seconds = String(Math.round(moved.waitMs / 1000));
        log.info({ id, folder: moved.movedTo }, `A requested path turned out to be a file: its requests wait with the folder '${moved.movedTo}' (scan in ${seconds} s).`);
      }
    },
    async beginAttempt(id, rev, targets) {
      const start = await write((tx) => beginAttempt(tx, id, rev, targets));
      if (start && !start.go) afterFinish([id]);
      return start;
    },
    async recordScan(id, rev, target, outcome, allTargets, landed) {
      const result = await write((tx) => recordScan(tx, id, rev, target, outcome, allTargets, landed));
      if (result?.completed) finished(1, [id]);
      return result;
    },
    async recordFailure(id, rev, target, failure, allTargets) {
      const result = await write((tx) => recordFailure(tx, id, rev, target, failure, allTargets));
      if (result.failed) finished(1, [id]);
      return result;
    },
    recordInterrupted: (id) => write((tx) => recordInterrupted(tx, id)),
    async failWaitingFor(target, waitedMs, reason, allTargets) {
      const count = await write((tx) => failWaitingFor(tx, target, waitedMs, reason, allTargets));
      finished(count);
      return count;
    },
    writable: () => store.health().writable,
    onWork(listener) {
      workListeners.add(listener);
      return () => workListeners.delete(listener);
    },
    listPending: (page = {}) => listPendingItems(reads, page),
    listHistory: (query = {}) => listHistoryItems(reads, query),
    historyCount: (query = {}) => countHistory(reads, query),
    sources: () => listSources(reads),
    isCovered: (request, since) => isCovered(reads, request, since),
    countByState: () => countByState(reads),
    getItem: (id) => findItem(reads, id),
    async retry(id) {
      const outcome = await write(
        (tx) => retryItem(tx, id, retryPolicy()),
        (out) => retried(out ? [out] : []),
      );
      if (outcome) logMoved([outcome]);
      return outcome !== undefined;
    },
    remove: (id) => write((tx) => removeItem(tx, id)),
    retryFailed: () => retryAll((tx) => retryFailedItems(tx, retryPolicy())),
    retryRemapped: () => retryAll((tx) => retryRemapped(tx, retryPolicy())),
    async remappedCount() {
      const { remap } = options;
      if (!remap) return 0;
      const rows = await reads.all<RequestRow>(UNROUTABLE_REQUESTS_SQL, [UNROUTABLE_MARK.length, UNROUTABLE_MARK]);
      const byItem = new Map<number, RequestRow[]>();
      for (const row of rows) byItem.set(row.item_id, [...(byItem.get(row.item_id) ?? []), row]);
      return [...byItem.values()].filter((requests) => movedRequests(requests, remap).length > 0).length;
    },
    onChange(listener) {
      changeListeners.add(listener);
      return () => changeListeners.delete(listener);
    },
    onFailed(listener) {
      failedListeners.add(listener);
      return () => failedListeners.delete(listener);
    },
    dueLooks: (limit) => dueLooks(reads, clock.now(), limit),
    nextLookAt: () => nextLookAt(reads),
    rescanState: (target, files) => rescanState(reads, target, files),
    claimLook: (itemId, target, leaseMs) => write((tx) => claimLook(tx, itemId, target, leaseMs)),
    recordLook: (itemId, target, look) => write((tx) => recordLook(tx, itemId, target, look)),
    reconfigure,
    isHealthy: () => store.health().writable,
    health: () => store.health(),
    async close() {
      maintenance.abort();
      closed = true;
      await dropping;
      await store.close();
      workListeners.clear();
      changeListeners.clear();
      failedListeners.clear();
    },
  };
}

/** Runs `tick` every `intervalMs` on the queue's clock: an interval after the last tick, however long it took. */
function startMaintenance(clock: Clock, intervalMs: number, tick: () => Promise<void>, log: Logger): AbortController {
  const stop = new AbortController();
  void (async () => {
    let next = clock.sleep(intervalMs, stop.signal);
    for (;;) {
      await next;
      if (stop.signal.aborted) return;
      next = clock.sleep(intervalMs, stop.signal);
      await tick().catch((error: unknown) => log.warn({ err: error }, "Queue maintenance failed; trying again later"));
    }
  })();
  return stop;
}
