import { mkdir } from "node:fs/promises";
import { dirname } from "node:path";
import { removeStaleTempFiles } from "../../core/durable-file.ts";
import type { Logger } from "../../core/logger.ts";
import type { StoreMetrics } from "../../core/metrics.ts";
import { createStoreWriter } from "./store-writer.ts";
import { replayLogs } from "./log-replay.ts";
import { migrateDatabase } from "./migrate.ts";
import { migrations } from "./migrations/index.ts";
import { createRowAccess, type RowChange, type RowReader } from "./rows.ts";
import { loadSnapshot, previousPath } from "./snapshot-file.ts";
import { loadSqlJs, type Database } from "../../core/sql-js.ts";

/**
 * The queue's store: an in-memory sql.js database that only ever holds what is on disk.
 *
 * On disk: a snapshot (`queue.db`, with the one before it as `queue.db.prev`) and an append-only log of whole
 * transactions written since (`queue.db.journal.<generation>`, see `log-record.ts`). A start loads the snapshot and
 * replays the log generations written after it; a checkpoint writes a new snapshot and starts a new generation.
 *
 * One write path. `write(build)` runs `build` in a transaction to learn its changes (row images), rolls that back,
 * appends the changes to the log (every byte, fdatasync), and only then applies them for good and resolves. Writes
 * that arrive while one is on its way to the disk go together in the next record (`write-queue.ts`). A write the disk
 * refuses leaves memory as it was, is answered with `StoreUnavailableError`, and puts the store in a failed state:
 * every write is refused at once (and `/health` says so) until a checkpoint in the background succeeds, which writes
 * the whole queue from memory again and starts a fresh log. Then writes are taken again, without a restart.
 */
export interface QueueStoreOptions {
  readonly file: string;
  readonly log: Logger;
  readonly now: () => number;
  /** The least log size that triggers a checkpoint (default 8 MiB). */
  readonly checkpointBytes?: number;
  /** Log size, as a share of the snapshot's size, that triggers a checkpoint (default 0.5; tests use 0). */
  readonly checkpointRatio?: number;
  /** While the store cannot write, how often it tries again (default 2 s). */
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

export async function openQueueStore(options: QueueStoreOptions): Promise<QueueStore> {
  const { file, log } = options;
  const sql = await loadSqlJs();
  await mkdir(dirname(file), { recursive: true });
  await removeStaleTempFiles(file);
  await removeStaleTempFiles(previousPath(file));

  const snapshot = await loadSnapshot(sql, file, options.now(), log);
  const { db } = snapshot;
  // The database lives in memory and our log is what makes it durable. The schema steps and the one-time VACUUM of
  // an older file journal in sql.js's in-memory files, freed after each (a VACUUM journals the whole database).
  db.exec("PRAGMA journal_mode = DELETE; PRAGMA synchronous = OFF; PRAGMA temp_store = FILE");
  // A fresh file gets the schema before the log is replayed into it; a file from a newer autoscan stops here.
  // Schema steps only add (columns, indexes), and records of older versions apply to the newer schema.
  migrateDatabase(db, migrations, file);
  useIncrementalVacuum(db);
  // From here on the journal lives in SQLite's own heap: an in-memory file grows by doubling and is thrown away after
  // each transaction, ~2.5 MB of garbage for one finished folder's trim (a burst's 400 folders: ~1 GB for V8 to
  // collect), where SQLite's heap reuses the same memory. Our transactions journal little (new pages and pages that
  // become free are not journaled): deleting 100,000 requests at once and the checkpoint's incremental vacuum left
  // the WebAssembly heap where it was.
  db.exec("PRAGMA journal_mode = MEMORY");
  const rows = createRowAccess(db);
  const replay = await replayLogs(rows, file, readLogPosition(rows), log);

  const store = createStoreWriter({ db, rows, options, seq: replay.lastSeq, generation: replay.lastGeneration + 1 });
  await store.checkpoint();
  return store;
}

/** Where the snapshot stands in the log: the last write it holds, and the first generation written after it. */
function readLogPosition(rows: RowReader): { seq: number; generation: number } {
  const value = (key: string): number =>
    Number(rows.get<{ value: string }>("SELECT value FROM meta WHERE key = ?", [key])?.value ?? 0) || 0;
  return { seq: value("journal_seq"), generation: value("journal_gen") };
}

/**
 * Free pages (pruned history) are given back page by page at a checkpoint (`PRAGMA incremental_vacuum`), not by a
 * VACUUM, which holds the database three times over while it runs. A file written before this needs one VACUUM to
 * switch, once, at open.
 */
function useIncrementalVacuum(db: Database): void {
  const mode = db.exec("PRAGMA auto_vacuum")[0]?.values[0]?.[0];
  if (mode === 2) return;
  db.exec("PRAGMA auto_vacuum = INCREMENTAL");
  db.exec("VACUUM");
}
