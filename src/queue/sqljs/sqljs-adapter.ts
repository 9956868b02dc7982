import { stat, unlink } from "node:fs/promises";
import { dirname } from "node:path";
import type { SqlValue } from "sql.js";
import type { Clock } from "../../core/clock.ts";
import { StoreUnavailableError } from "../../core/errors.ts";
import { outsideLogContext } from "../../core/log-context.ts";
import type { Logger } from "../../core/logger.ts";
import type { StoreMetrics } from "../../core/metrics.ts";
import type { Database } from "../../core/sql-js.ts";
import type { WorkItem } from "../dispatch/dispatch-port.ts";
import { WriteAbandonedError, type AsyncRows, type StoreAdapter } from "../store-port.ts";
import { WORK_REQUESTS_SQL, readWorkItem, type WorkRequestRow, type WorkRequestsPage } from "../rules/work-item.ts";
import type { NewRequest, QueueTx } from "../rules/queue-tx.ts";
import type { DeliveryRow, ItemRow, RequestRow, TargetRow } from "../store-rows.ts";
import { PRUNED_IDS } from "../rules/admin.ts";
import { DELIVERIES_FAILING_SINCE, DUE_FOR_CHECK, DUE_FOR_TARGET, NEXT_READY, PENDING_COUNT, earliest, readyAt, selectDue } from "../rules/due.ts";
import { encodeRecord, listLogFiles, logPath, openLogFile, replayLogs, type LogFile } from "./journal.ts";
import { openQueueDatabase } from "./open-store.ts";
import { pathKey, type RowAccess, type RowReader } from "./row-access.ts";
import { writeSnapshot } from "./snapshot-file.ts";
import { describeStoreFault, isDiskRefusal } from "./store-fault.ts";

/**
 * The embedded queue (one process, `<data dir>/queue.db`): the sql.js store (a snapshot + the journal, `journal.ts`)
 * as the queue's `StoreAdapter`, and everything its writes do. Due work is the shared query of `rules/due.ts`, on the
 * waiting items' indexes. In this file, in the order a write crosses it: the adapter and its transaction (`sqlJsTx`),
 * the store with its one write path (`createStoreWriter`), the waiting line in front of it (`createWriteQueue`), the
 * build of a batch's changes (`buildChanges`), the row changes and `applyChange`, and the watch on the disk's answers.
 */
export interface SqlJsStoreOptions extends Omit<QueueStoreOptions, "now"> {
  readonly clock: Clock;
  /** How often the queue files are checked to still be there (default 1 s: two stats). */
  readonly verifyIntervalMs?: number;
}

/** Opens (creating, migrating, restoring) the queue file as the queue's store, and looks at its files every second. */
export async function openSqlJsAdapter(options: SqlJsStoreOptions): Promise<StoreAdapter> {
  const store = await openQueueStore({ ...options, now: () => options.clock.now() });
  const verify = setInterval(verifyOnce(store, options.log), options.verifyIntervalMs ?? 1_000);
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
/** The failed items whose reason starts with ?2 (?1 its length; "" for all). */
const FAILED_IDS = "SELECT id FROM items WHERE state = 'failed' AND substr(COALESCE(last_error, ''), 1, ?) = ? ORDER BY id";
/** An item's requests as row images (without the stored key), by arrival. */
const ITEM_REQUESTS = "SELECT id, item_id, path, kind, deleted, source, event, received_path, at FROM requests WHERE item_id = ? ORDER BY id";

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
    failedItemIds: async (start = "") => rows.all<{ id: number }>(FAILED_IDS, [start.length, start]).map((r) => r.id),
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
      for (const request of rows.all<RequestRow>(ITEM_REQUESTS, [fromItem])) tx.apply({ k: "req", r: { ...request, item_id: toItem } });
    },
    itemRequests: async (itemId) => rows.all<RequestRow>(ITEM_REQUESTS, [itemId]),
    deleteRequest: async (itemId, id) => tx.apply({ k: "dropreq", id: itemId, from: id, to: id }),
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

/**
 * The queue's store: an in-memory sql.js database that only ever holds what is on disk.
 *
 * On disk: a snapshot (`queue.db`, with the one before it as `queue.db.prev`) and an append-only log of whole
 * transactions written since (`queue.db.journal.<generation>`, see `journal.ts`). A start loads the snapshot and
 * replays the log generations written after it; a checkpoint writes a new snapshot and starts a new generation.
 *
 * One write path. `write(build)` runs `build` in a transaction to learn its changes (row images), rolls that back,
 * appends the changes to the log (every byte, fdatasync), and only then applies them for good and resolves. Writes
 * that arrive while one is on its way to the disk go together in the next record (`createWriteQueue`). A write the disk
 * refuses leaves memory as it was, is answered with `StoreUnavailableError`, and puts the store in a failed state:
 * every write is refused at once (and `/health` says so) until a checkpoint in the background succeeds, which writes
 * the whole queue from memory again and starts a fresh log. Then writes are taken again, without a restart.
 */
export interface QueueStoreOptions {
  /** The queue file (`--queuefile`, default `<data dir>/queue.db`). */
  readonly file: string;
  /** The queue's logger (component QUEUE). */
  readonly log: Logger;
  readonly now: () => number;
  /**
   * A checkpoint rewrites the queue file once the journal beside it has grown by `checkpointRatio` × the file's
   * size (default 0.5), and by at least `checkpointBytes` (default 8 MiB). Tests lower both.
   */
  readonly checkpointBytes?: number;
  readonly checkpointRatio?: number;
  /** While the disk refuses writes, how often the store tries again (default 2 s). */
  readonly probeIntervalMs?: number;
  /** A write the disk has not confirmed for this long makes the store report itself stalled (default 10 s). */
  readonly stallMs?: number;
  /** `SERVER_METRICS`: how long each record took to be durable, and the records the disk refused. */
  readonly metrics?: StoreMetrics;
}

export interface StoreTransaction {
  /** Reads, seeing this transaction's own changes. */
  readonly rows: RowReader;
  apply(change: RowChange): void;
  newItemId(): number;
  newRequestId(): number;
}

export interface StoreHealth {
  /** Whether a write would be taken right now. */
  readonly writable: boolean;
  /** Why not, with the fix, in words. */
  readonly problem?: string;
  /** Since when (ms since the epoch). */
  readonly since?: number;
}

export interface QueueStore {
  readonly file: string;
  /** Reads at start, and inside a write's build only: elsewhere `read`. */
  readonly rows: RowReader;
  /** Reads what is on disk, never a write still on its way (it waits while a write is being built). */
  read<T>(fn: (rows: RowReader) => T): Promise<T>;
  /**
   * Stores what `build` changes; resolves with its result once that is on disk and applied. Rejects with
   * `StoreUnavailableError` when the disk refused it (nothing was stored), with `WriteAbandonedError` when `signal`
   * aborted before the write was taken, or with what `build` threw (nothing was stored).
   */
  write<T>(build: (tx: StoreTransaction) => T | Promise<T>, options?: { readonly signal?: AbortSignal }): Promise<T>;
  /** Writes a new snapshot. Concurrent calls share one run; a call during a run waits for a new one. */
  checkpoint(): Promise<void>;
  /** Log bytes written since the last checkpoint began (0: the snapshot is up to date). */
  logBytes(): number;
  /** From memory: never waits on the disk. */
  health(): StoreHealth;
  /** Checks that the snapshot and the log on disk are the ones this process wrote; rewrites them from memory if not. */
  verifyFiles(): Promise<void>;
  /** Waits for writes on their way, checkpoints, releases the database. */
  close(): Promise<void>;
}

/** Opens the queue file (`open-store.ts`), replays the journal written after its snapshot, and checkpoints. */
export async function openQueueStore(options: QueueStoreOptions): Promise<QueueStore> {
  const { db, rows, position } = await openQueueDatabase(options);
  const replay = await replayLogs(rows, options.file, position, options.log, applyChange);
  const store = createStoreWriter({ db, rows, options, seq: replay.lastSeq, generation: replay.lastGeneration + 1 });
  await store.checkpoint();
  return store;
}

/**
 * The open store (see `QueueStore` for what it promises): the one write path, checkpoints with their rotation of
 * the log, the failed state with its probe, the health it reports, and the look at its files.
 */
interface StoreWriterParts {
  readonly db: Database;
  readonly rows: RowAccess;
  readonly options: QueueStoreOptions;
  readonly seq: number;
  readonly generation: number;
}

interface Failure {
  readonly since: number;
  readonly problem: string;
  refused: number;
}

function createStoreWriter(parts: StoreWriterParts): QueueStore {
  const { db, rows, options } = parts;
  const { file, log } = options;
  const dir = dirname(file);
  const minimum = options.checkpointBytes ?? 8 * 1024 * 1024;
  const ratio = options.checkpointRatio ?? 0.5;
  const probeIntervalMs = options.probeIntervalMs ?? 2_000;
  const disk = createDiskWatch({ stallMs: options.stallMs ?? 10_000, now: options.now, log, file, dir, metrics: options.metrics });

  let seq = parts.seq;
  const ids = { item: nextItemId(rows), request: nextRequestId(rows) };
  /** The generation new records go to; opened at its first write. */
  let generation = parts.generation;
  let current: LogFile | undefined;
  /** Generations from here on are kept: they rebuild the queue from the previous snapshot. */
  let keepFrom = 0;
  /** The first generation after the current snapshot. */
  let snapshotBase = 0;
  let snapshotIno: number | undefined;
  /** Snapshots written so far: a look at the files that a checkpoint overtook says nothing. */
  let snapshotsWritten = 0;
  let bytes = 0;
  let threshold = minimum;
  let failure: Failure | undefined;
  /** The next checkpoint writes the previous snapshot too, and drops every older log: see `runCheckpoint`. */
  let freshChain = false;
  let probeTimer: NodeJS.Timeout | undefined;
  let closed = false;

  /** Records and the export step of a checkpoint take turns: a snapshot never falls between a record and its apply. */
  let turn: Promise<unknown> = Promise.resolve();
  const exclusive = <T>(step: () => Promise<T> | T): Promise<T> => {
    const result = turn.then(step);
    turn = result.catch(() => {});
    return result;
  };
  const line = createWriteQueue((batch) => exclusive(() => commit(batch)));
  const building = createBuildGuard();

  function write<T>(build: (tx: StoreTransaction) => T | Promise<T>, writeOptions: { signal?: AbortSignal } = {}): Promise<T> {
    if (closed) return Promise.reject(new StoreUnavailableError("The scan queue is closed"));
    if (failure) return Promise.reject(refusal(failure));
    return line.push(build, writeOptions.signal);
  }

  function refusal(episode: Failure, count = 1): StoreUnavailableError {
    episode.refused += count;
    return new StoreUnavailableError(`The queue cannot store requests now: ${episode.problem}`);
  }

  async function commit(batch: readonly Waiting[]): Promise<void> {
    if (failure) {
      const refused = refusal(failure, batch.length);
      for (const entry of batch) entry.reject(refused);
      return;
    }
    const { changes, outcomes } = await building.hold(() => buildChanges(rows, ids, batch));
    const settle = (): void =>
      batch.forEach((entry, i) => {
        const outcome = outcomes[i];
        if (outcome?.ok) entry.resolve(outcome.value);
        else entry.reject(outcome?.error);
      });
    if (changes.length === 0) return settle();

    const record = encodeRecord({ seq: seq + 1, changes });
    try {
      await appendDurably(record);
    } catch (error) {
      enterFailure(error);
      const refused = new StoreUnavailableError(`Nothing was stored: ${describeStoreFault(error, dir)}`, { cause: error });
      batch.forEach((entry, i) => entry.reject(outcomes[i]?.ok ? refused : outcomes[i]?.error));
      return;
    }
    seq += 1;
    bytes += record.length;
    applyDurable(changes);
    settle();
    if (bytes >= threshold) void checkpoint();
  }

  /** Appends one record to the current generation, under the disk watch (stall warning, write metrics). */
  function appendDurably(record: Uint8Array): Promise<void> {
    return disk.watch(async () => {
      current ??= await openLogFile(file, generation, log);
      await current.append(record);
    });
  }

  /** The one place a durable change reaches memory. */
  function applyDurable(changes: readonly RowChange[]): void {
    rows.run("BEGIN");
    for (const change of changes) applyChange(rows, change);
    rows.run("COMMIT");
  }

  function enterFailure(error: unknown): void {
    void current?.close();
    current = undefined;
    generation += 1;
    // The failed generation may end in a torn record that could not be cut back: the recovery checkpoint leaves it
    // behind for good (see `runCheckpoint`).
    freshChain = true;
    if (failure) return;
    const problem = describeStoreFault(error, dir);
    failure = { since: options.now(), problem, refused: 0 };
    log.error(
      { err: error, file },
      `Cannot write the scan queue: ${problem}. Requests are refused with 503 (nothing is lost that was confirmed) ` +
        "and autoscan resumes by itself once the disk takes writes again.",
    );
    scheduleProbe();
  }

  function scheduleProbe(): void {
    if (closed || probeTimer) return;
    probeTimer = setTimeout(() => {
      probeTimer = undefined;
      void probe();
    }, probeIntervalMs);
    probeTimer.unref();
  }

  /** Tries the disk again with a whole checkpoint: once the queue is on disk again, writes are taken again. */
  async function probe(): Promise<void> {
    const episode = failure;
    if (!episode || closed) return;
    try {
      await runCheckpoint();
    } catch {
      return scheduleProbe();
    }
    failure = undefined;
    const seconds = Math.round((options.now() - episode.since) / 1000);
    log.info(
      { file, seconds, refused: episode.refused },
      `The scan queue can write again after ${String(seconds)} s; ${String(episode.refused)} request(s) were refused ` +
        "with 503 meanwhile.",
    );
  }

  /** Export and rotation: a snapshot of exactly the records before this point; the log goes on in a new generation. */
  function exportSnapshot(): { data: Uint8Array; base: number; fresh: boolean } {
    void current?.close();
    current = undefined;
    generation += 1;
    bytes = 0;
    rows.run("INSERT OR REPLACE INTO meta (key, value) VALUES ('journal_seq', ?), ('journal_gen', ?)", [
      String(seq),
      String(generation),
    ]);
    const pages = rows.get<{ n: number }>("SELECT page_count AS n FROM pragma_page_count()")?.n ?? 0;
    const free = rows.get<{ n: number }>("SELECT freelist_count AS n FROM pragma_freelist_count()")?.n ?? 0;
    // Pruned history leaves free pages behind; the file gives them back when they are a quarter of it.
    if (free > 64 && free * 4 > pages) db.exec("PRAGMA incremental_vacuum");
    const fresh = freshChain;
    freshChain = false;
    return { data: db.export(), base: generation, fresh };
  }

  /**
   * Writes the snapshot, keeping the one before it (and the log since that one) so a damaged `queue.db` still loses
   * nothing. After a failed write the chain starts fresh: the previous
   * snapshot is this one too, and every older log generation goes.
   */
  async function runCheckpoint(): Promise<void> {
    const { data, base, fresh } = await exclusive(exportSnapshot);
    try {
      threshold = Math.max(minimum, data.length * ratio);
      await writeSnapshot(file, data, log, { fresh });
      snapshotIno = (await stat(file)).ino;
      snapshotsWritten += 1;
    } catch (error) {
      if (fresh) freshChain = true;
      throw error;
    } finally {
      // The exported copy (the whole database) is given back now, not at V8's next collection: a big queue otherwise
      // holds two or three such copies at once while it grows.
      if (data.buffer instanceof ArrayBuffer) data.buffer.transfer(0);
    }
    keepFrom = fresh ? base : snapshotBase;
    snapshotBase = base;
    const old = (await listLogFiles(file)).filter((ref) => ref.generation < keepFrom);
    await Promise.all(old.map((ref) => unlink(ref.path).catch(() => {})));
  }

  let checkpointRun: Promise<void> | undefined;
  let again = false;
  function checkpoint(): Promise<void> {
    if (checkpointRun) {
      again = true;
      return checkpointRun;
    }
    checkpointRun = (async () => {
      try {
        do {
          again = false;
          await runCheckpoint().catch(async (error: unknown) => {
            // A disk that is full, read-only or failing will refuse the log next: say so now (503, /health), and
            // let the probe's checkpoint find out when it takes writes again. Anything else costs a longer replay,
            // not data: the log still holds everything.
            if (isDiskRefusal(error)) return void (await exclusive(() => enterFailure(error)));
            log.warn({ err: error, file }, `Could not write the queue snapshot (${describeStoreFault(error, dir)}); the log keeps every change, trying again later`);
          });
        } while (again);
      } finally {
        checkpointRun = undefined;
      }
    })();
    return checkpointRun;
  }

  async function verifyFiles(): Promise<void> {
    // A checkpoint in progress replaces the snapshot itself: not a file replaced under us.
    if (closed || failure || checkpointRun || snapshotIno === undefined) return;
    const written = snapshotsWritten;
    // Gone is ENOENT; any other error (a disk that answers again with ENOTCONN or EIO) says nothing about the file.
    const ino = (path: string): Promise<number | undefined | "unknown"> =>
      stat(path).then((s) => s.ino, (error: NodeJS.ErrnoException) => (error.code === "ENOENT" ? undefined : "unknown"));
    const log_ = current;
    const snapshotNow = await ino(file);
    const logNow = log_ === undefined ? undefined : await ino(logPath(file, log_.generation));
    if (snapshotNow === "unknown" || logNow === "unknown") return;
    const logGone = log_ !== undefined && logNow !== log_.ino;
    if ((snapshotNow === snapshotIno && !logGone) || checkpointRun || snapshotsWritten !== written) return;
    const what = snapshotNow !== snapshotIno ? `queue file '${file}'` : `queue log '${logPath(file, log_?.generation ?? 0)}'`;
    log.error(
      { file },
      `The ${what} was ${snapshotNow === undefined || logGone ? "deleted" : "replaced"} while autoscan was running; ` +
        "writing the queue again from memory.",
    );
    await checkpoint();
  }

  return {
    file,
    rows,
    read: (fn) => building.after(() => fn(rows)),
    write,
    checkpoint,
    logBytes: () => bytes,
    health() {
      if (closed) return { writable: false, problem: "the queue is closed" };
      if (failure) return { writable: false, problem: failure.problem, since: failure.since };
      const stalledSince = disk.stalledSince();
      if (stalledSince !== undefined) {
        return { writable: false, problem: `the disk under ${dir} has not confirmed a write for a while`, since: stalledSince };
      }
      return { writable: true };
    },
    verifyFiles,
    async close() {
      if (closed) return;
      await line.idle();
      closed = true;
      clearTimeout(probeTimer);
      await checkpoint();
      await current?.close();
      rows.free();
      db.close();
    },
  };
}

/**
 * Keeps readers out while a write is being built: the build runs in a transaction of the one in-memory database that
 * is rolled back before its changes go to the disk, and a reader in between would see them. A build never waits on
 * I/O, so a reader waits microseconds.
 */
function createBuildGuard(): { hold<T>(build: () => Promise<T>): Promise<T>; after<T>(read: () => T): Promise<T> } {
  let current: Promise<unknown> | undefined;
  return {
    async hold(build) {
      const running = build();
      current = running.catch(() => undefined);
      try {
        return await running;
      } finally {
        current = undefined;
      }
    },
    async after(read) {
      while (current) await current;
      return read();
    },
  };
}

/**
 * The waiting line in front of the store's one write path. Writes asked for while a record is on its way to the disk
 * wait here and go together in the next record (group commit). A waiting write whose sender gives up (`signal`)
 * before it is taken leaves the line and is never stored; once taken, it is stored or refused as a whole, and its
 * promise tells which.
 */
interface Waiting {
  readonly build: (tx: StoreTransaction) => unknown;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

interface WriteQueue {
  push<T>(build: (tx: StoreTransaction) => T | Promise<T>, signal?: AbortSignal): Promise<T>;
  /** Resolves once every write pushed so far has been settled. */
  idle(): Promise<void>;
}

/** `commit` gets up to `maxBatch` waiting writes at a time, one batch after the other, and settles each of them. */
function createWriteQueue(
  commit: (batch: readonly Waiting[]) => Promise<void>,
  maxBatch = 1000,
): WriteQueue {
  const waiting: Waiting[] = [];
  let draining: Promise<void> | undefined;

  async function drain(): Promise<void> {
    try {
      // Writes asked for in the same turn of the event loop go in one record.
      await new Promise((resolve) => setImmediate(resolve));
      while (waiting.length > 0) await commit(waiting.splice(0, maxBatch));
    } finally {
      // Cleared in the same tick as the last check of `waiting`: a write pushed after it starts a new drain.
      draining = undefined;
    }
  }

  return {
    push<T>(build: (tx: StoreTransaction) => T | Promise<T>, signal?: AbortSignal): Promise<T> {
      if (signal?.aborted) return Promise.reject(new WriteAbandonedError("The write was given up before it was stored"));
      return new Promise<T>((resolve, reject) => {
        const entry: Waiting = { build, resolve: resolve as (value: unknown) => void, reject };
        waiting.push(entry);
        signal?.addEventListener(
          "abort",
          () => {
            const at = waiting.indexOf(entry);
            if (at < 0) return; // already taken: it is stored or refused as a whole
            waiting.splice(at, 1);
            reject(new WriteAbandonedError("The write was given up before it was stored"));
          },
          { once: true },
        );
        // The drain serves every caller: its lines (a disk fault, a checkpoint) are not about the first caller's item.
        draining ??= outsideLogContext(drain);
      });
    },
    async idle() {
      while (draining) await draining;
    },
  };
}

type Outcome = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly error: unknown };

/**
 * Learns what a batch of writes changes, without changing anything: runs each write's `build` in its own savepoint
 * of one transaction (so one that throws fails alone, and later ones see the earlier ones' rows), collects the row
 * changes they apply, and rolls the whole transaction back. The store logs the changes, then applies the same values
 * for good. `ids` hands out new row ids (a write that throws gives its ids back; a record the disk refuses leaves a
 * gap, which is harmless).
 *
 * A build may be async (the queue's rules are written once for both stores, over an async port), but it never waits
 * on I/O here: every read and change answers at once. The store keeps its other readers out until the transaction is
 * rolled back (`createStoreWriter`), so nothing reads a write still being built.
 */
async function buildChanges(
  rows: RowAccess,
  ids: { item: number; request: number },
  batch: readonly Waiting[],
): Promise<{ changes: RowChange[]; outcomes: Outcome[] }> {
  const changes: RowChange[] = [];
  const tx: StoreTransaction = {
    rows,
    apply(change) {
      applyChange(rows, change);
      changes.push(change);
    },
    newItemId: () => ids.item++,
    newRequestId: () => ids.request++,
  };
  const outcomes: Outcome[] = [];
  rows.run("BEGIN");
  try {
    for (const entry of batch) {
      const mark = { changes: changes.length, item: ids.item, request: ids.request };
      rows.run("SAVEPOINT write");
      try {
        outcomes.push({ ok: true, value: await entry.build(tx) });
      } catch (error) {
        rows.run("ROLLBACK TO write");
        changes.length = mark.changes;
        ids.item = mark.item;
        ids.request = mark.request;
        outcomes.push({ ok: false, error });
      }
      rows.run("RELEASE write");
    }
  } finally {
    rows.run("ROLLBACK");
  }
  return { changes, outcomes };
}

/**
 * The embedded store's rows (the types are the queue's, `store-rows.ts`), and `applyChange`, the only code that
 * writes them. A change is a value (`RowChange`):
 * the store applies it while a write is built, logs it, and applies the same value again once it is on disk; a
 * restart replays the log through the same function. Item, request and target changes are whole-row images.
 */
export type RowChange =
  | { readonly k: "item"; readonly r: ItemRow }
  | { readonly k: "req"; readonly r: RequestRow }
  | { readonly k: "tgt"; readonly r: TargetRow }
  /** A target's failed delivery of an item (its wait, or given up). */
  | { readonly k: "dlv"; readonly r: DeliveryRow }
  /** Forgets a target's failed delivery of an item (the target has scanned it). */
  | { readonly k: "undlv"; readonly id: number; readonly target: string }
  /** Forgets an item's failed deliveries (a retry). */
  | { readonly k: "clrdlv"; readonly id: number }
  /** Deletes an item with its requests and target results. */
  | { readonly k: "del"; readonly id: number }
  /** Forgets which targets finished an item, and their failed deliveries (new work arrived for it). */
  | { readonly k: "clr"; readonly id: number }
  /** Keeps only an item's first `keep` requests (by id). */
  | { readonly k: "trim"; readonly id: number; readonly keep: number }
  /** Deletes an item's requests numbered `from` to `to` (a finished folder's extra requests, a batch at a time). */
  | { readonly k: "dropreq"; readonly id: number; readonly from: number; readonly to: number }
  /** Drops history finished before `before`, and all but the newest `keep` history rows. */
  | { readonly k: "prune"; readonly before: number; readonly keep: number }
  /** Keeps a note in `meta` (`value` null: forgets it). */
  | { readonly k: "note"; readonly key: string; readonly value: string | null };

const ITEM_COLUMNS = [
  "id", "folder", "state", "priority", "first_at", "last_at", "due_at", "next_at", "rev", "checks", "scan_folder",
  "files", "attempts", "unfinished", "first_failed_at", "last_error", "finished_at", "requests_dropped", "ready_at", "refresh",
] as const;
const REQUEST_COLUMNS = ["id", "item_id", "path", "kind", "deleted", "source", "event", "received_path", "at", "path_key"] as const;
const TARGET_COLUMNS = [
  "item_id", "target", "status", "detail", "at", "landed", "landed_detail", "landed_after_ms", "landed_check_at", "landed_looks",
  "refresh", "refresh_detail",
] as const;
const DELIVERY_COLUMNS = ["item_id", "target", "attempts", "next_at", "first_failed_at", "last_error", "failed"] as const;

/**
 * A row image replaces the row with the same key (`key`), and only that one: a row that conflicts with another unique
 * key (a second waiting item for a folder) fails the write, as it does in PostgreSQL.
 */
const upsertSql = (table: string, columns: readonly string[], key: readonly string[]): string =>
  `INSERT INTO ${table} (${columns.join(", ")}) VALUES (${columns.map(() => "?").join(", ")})
   ON CONFLICT (${key.join(", ")}) DO UPDATE SET ${columns.filter((c) => !key.includes(c)).map((c) => `${c} = excluded.${c}`).join(", ")}`;
const ITEM_UPSERT = upsertSql("items", ITEM_COLUMNS, ["id"]);
const REQUEST_UPSERT = upsertSql("requests", REQUEST_COLUMNS, ["id"]);
const TARGET_UPSERT = upsertSql("item_targets", TARGET_COLUMNS, ["item_id", "target"]);
const DELIVERY_UPSERT = upsertSql("deliveries", DELIVERY_COLUMNS, ["item_id", "target"]);

const values = (columns: readonly string[], row: object): SqlValue[] =>
  columns.map((column) => (row as Record<string, SqlValue | undefined>)[column] ?? null);

/** Applies one change. Whole-row images replace the row with the same key; an item is stored with its `ready_at`. */
export function applyChange(rows: RowAccess, change: RowChange): void {
  switch (change.k) {
    case "item": {
      // Records written before schema 3 carry no `unfinished`, before schema 4 no `requests_dropped`, before 10 no `refresh`.
      const row: Partial<ItemRow> = change.r;
      const filled = { ...change.r, unfinished: row.unfinished ?? 0, requests_dropped: row.requests_dropped ?? 0, refresh: row.refresh ?? 0 };
      return rows.run(ITEM_UPSERT, values(ITEM_COLUMNS, { ...filled, ready_at: readyAt(filled) }));
    }
    case "req":
      return rows.run(REQUEST_UPSERT, values(REQUEST_COLUMNS, { ...change.r, path_key: pathKey(change.r.path) }));
    case "tgt":
      return rows.run(TARGET_UPSERT, values(TARGET_COLUMNS, change.r));
    case "dlv":
      return rows.run(DELIVERY_UPSERT, values(DELIVERY_COLUMNS, change.r));
    case "undlv":
      return rows.run("DELETE FROM deliveries WHERE item_id = ? AND target = ?", [change.id, change.target]);
    case "clrdlv":
      return rows.run("DELETE FROM deliveries WHERE item_id = ?", [change.id]);
    case "del":
      rows.run("DELETE FROM requests WHERE item_id = ?", [change.id]);
      rows.run("DELETE FROM item_targets WHERE item_id = ?", [change.id]);
      rows.run("DELETE FROM deliveries WHERE item_id = ?", [change.id]);
      return rows.run("DELETE FROM items WHERE id = ?", [change.id]);
    case "clr":
      rows.run("DELETE FROM deliveries WHERE item_id = ?", [change.id]);
      return rows.run("DELETE FROM item_targets WHERE item_id = ?", [change.id]);
    case "trim":
      return rows.run(
        "DELETE FROM requests WHERE item_id = ?1 AND id NOT IN (SELECT id FROM requests WHERE item_id = ?1 ORDER BY id LIMIT ?2)",
        [change.id, change.keep],
      );
    case "dropreq":
      return rows.run("DELETE FROM requests WHERE item_id = ? AND id BETWEEN ? AND ?", [change.id, change.from, change.to]);
    case "note":
      if (change.value === null) return rows.run("DELETE FROM meta WHERE key = ?", [change.key]);
      return rows.run("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", [change.key, change.value]);
    case "prune": {
      const params = [change.before, change.keep];
      rows.run(`DELETE FROM requests WHERE item_id IN (${PRUNED_IDS})`, params);
      rows.run(`DELETE FROM item_targets WHERE item_id IN (${PRUNED_IDS})`, params);
      rows.run(`DELETE FROM deliveries WHERE item_id IN (${PRUNED_IDS})`, params);
      return rows.run(`DELETE FROM items WHERE id IN (${PRUNED_IDS})`, params);
    }
  }
}

/** The id the next new item gets (AUTOINCREMENT semantics: an id is never reused, even after its row is pruned). */
function nextItemId(rows: RowReader): number {
  const used = rows.get<{ seq: number }>("SELECT seq FROM sqlite_sequence WHERE name = 'items'")?.seq ?? 0;
  const max = rows.get<{ m: number | null }>("SELECT MAX(id) AS m FROM items")?.m ?? 0;
  return Math.max(used, max) + 1;
}

function nextRequestId(rows: RowReader): number {
  return (rows.get<{ m: number | null }>("SELECT MAX(id) AS m FROM requests")?.m ?? 0) + 1;
}

/**
 * How long the disk takes to confirm a queue write: a write unconfirmed after `stallMs` is logged once and makes the
 * store report itself stalled (`/health` 503, new webhooks refused rather than left hanging) until the disk answers;
 * with SERVER_METRICS, each write's duration and outcome are counted.
 */
interface DiskWatch {
  /** Runs one durable write under the watch; its error passes through. */
  watch(write: () => Promise<void>): Promise<void>;
  /** Since when (ms) a write has been waiting past `stallMs`; undefined while the disk answers in time. */
  stalledSince(): number | undefined;
}

interface DiskWatchOptions {
  readonly stallMs: number;
  readonly now: () => number;
  readonly log: Logger;
  readonly file: string;
  readonly dir: string;
  readonly metrics?: StoreMetrics;
}

function createDiskWatch(options: DiskWatchOptions): DiskWatch {
  const { stallMs, log, file, dir } = options;
  let stalledSince: number | undefined;
  return {
    async watch(write) {
      const started = performance.now();
      let stored = false;
      const stall = setTimeout(() => {
        stalledSince = options.now() - stallMs;
        log.error({ file, ms: stallMs }, `The disk under ${dir} has not confirmed a queue write for ${String(stallMs / 1000)} s; webhooks wait for it`);
      }, stallMs);
      try {
        await write();
        stored = true;
      } finally {
        clearTimeout(stall);
        options.metrics?.storeWrite((performance.now() - started) / 1000, stored);
        if (stalledSince !== undefined) log.info({ file }, `The disk under ${dir} answered again`);
        stalledSince = undefined;
      }
    },
    stalledSince: () => stalledSince,
  };
}
