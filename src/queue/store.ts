import { copyFile, mkdir } from "node:fs/promises";
import { dirname } from "node:path";
import { describeError } from "../core/errors.ts";
import type { Logger } from "../core/logger.ts";
import type { ScanRequest } from "../core/scan.ts";
import { removeStaleTempFiles, syncFolder, writeFileAtomic } from "./durable-file.ts";
import { createJournalWriter, type JournalWriter } from "./journal.ts";
import { encodeEntry } from "./journal-format.ts";
import { replayJournals } from "./journal-replay.ts";
import { isLegacyQueue, readLegacyRequests } from "./legacy-import.ts";
import { migrateDatabase, readSchemaVersion } from "./migrate.ts";
import { migrations } from "./migrations/index.ts";
import { createRowAccess, type ItemRow, type RowAccess, type RowChange } from "./rows.ts";
import { loadSnapshot } from "./snapshot.ts";
import { loadSqlJs, type Database } from "./sql-js.ts";

const latestVersion = Math.max(...migrations.map((step) => step.version));

/**
 * The queue file: an in-memory sql.js database made durable by an fsync'd journal of row changes, folded into the
 * file by periodic checkpoints (atomic replace). A write costs one journal line whatever the size of the history.
 * A checkpoint rewrites the whole file, so it runs once the journal has grown by half the file's size (and by at
 * least `checkpointBytes`): its cost, spread over the writes since the last one, stays constant as history grows,
 * and a restart after a crash replays at most about half a file's worth of journal.
 *
 * Crash safety: the file on disk is always a complete checkpoint (written beside it, fsync'd, renamed); the journal
 * holds every change acknowledged since; at start the file is loaded, the journal replayed, and a new checkpoint
 * written. See `journal.ts` and `journal-format.ts` for the line format and group commit.
 */
export interface QueueStoreOptions {
  readonly file: string;
  readonly log: Logger;
  readonly now: () => number;
  /** The least journal size that triggers a checkpoint (default 8 MiB). */
  readonly checkpointBytes?: number;
  /** Journal size, as a share of the file's size, that triggers a checkpoint (default 0.5; tests use 0). */
  readonly checkpointRatio?: number;
}

export interface StoreTransaction {
  readonly rows: RowAccess;
  /** `stored`: the item's row as read in this transaction, for an item image (see `RowAccess.apply`). */
  apply(change: RowChange, stored?: ItemRow): void;
  newItemId(): number;
  newRequestId(): number;
}

export interface QueueStore {
  readonly file: string;
  /** Reads (writes go through `write`). */
  readonly rows: RowAccess;
  /** Requests found in a plex_autoscan queue file at start; the caller enqueues them and checkpoints. */
  readonly legacy?: { readonly requests: readonly ScanRequest[]; readonly backup: string };
  /**
   * Runs `build` in one transaction. Its changes are applied now (readers see them at once) and `durable` resolves
   * when they are on disk. When `build` throws nothing changes and nothing is written.
   */
  write<T>(build: (tx: StoreTransaction) => T): { readonly result: T; readonly durable: Promise<void> };
  /** Folds the journal into the file. Concurrent calls share one run; a call during a run waits for a new one. */
  checkpoint(): Promise<void>;
  /** Journal bytes written since the last checkpoint began (0: the file is up to date). */
  journalBytes(): number;
  isHealthy(): boolean;
  /** Waits for pending writes, checkpoints, releases the database. */
  close(): Promise<void>;
}

export async function createQueueStore(options: QueueStoreOptions): Promise<QueueStore> {
  const { file, log } = options;
  const sql = await loadSqlJs();
  await mkdir(dirname(file), { recursive: true });
  await removeStaleTempFiles(file);

  const snapshot = await loadSnapshot(sql, file, options.now(), log);
  let db: Database = snapshot.db;
  let legacy: QueueStore["legacy"];
  if (isLegacyQueue(db)) {
    const backup = `${file}.plex_autoscan.bak`;
    await copyFile(file, backup);
    await syncFolder(dirname(file));
    legacy = { requests: readLegacyRequests(db), backup };
    db.close();
    db = new sql.Database();
  }
  tuneConnection(db);
  // A fresh file gets the schema before the journal is replayed into it; a file from a newer autoscan stops here.
  const version = readSchemaVersion(db);
  if (version === 0 || version > latestVersion) migrateDatabase(db, migrations, file);
  const replay = await replayJournals(db, file, log);
  migrateDatabase(db, migrations, file);

  const rows = createRowAccess(db);
  const journal = createJournalWriter(file, replay.lastGeneration + 1);
  const store = createStoreHandle({ db, rows, journal, options, seq: replay.lastSeq, legacy });
  // A legacy file stays as it is until its requests are imported and checkpointed by the caller.
  if (!legacy) await store.checkpoint();
  return store;
}

interface HandleParts {
  readonly db: Database;
  readonly rows: RowAccess;
  readonly journal: JournalWriter;
  readonly options: QueueStoreOptions;
  readonly seq: number;
  readonly legacy: QueueStore["legacy"];
}

function createStoreHandle(parts: HandleParts): QueueStore {
  const { db, rows, journal, options } = parts;
  const minimum = options.checkpointBytes ?? 8 * 1024 * 1024;
  const ratio = options.checkpointRatio ?? 0.5;
  let threshold = minimum;
  let seq = parts.seq;
  let nextItemId = rows.nextItemId();
  let nextRequestId = rows.nextRequestId();
  let running: Promise<void> | undefined;
  let again = false;
  let checkpointOk = true;
  let closed = false;

  async function runCheckpoint(): Promise<void> {
    const retired = journal.rotate();
    rows.run("INSERT OR REPLACE INTO meta (key, value) VALUES ('journal_seq', ?)", [String(seq)]);
    const data = db.export();
    threshold = Math.max(minimum, data.length * ratio);
    try {
      await writeFileAtomic(options.file, data);
      await journal.retireBefore(retired.generation + 1);
      checkpointOk = true;
    } catch (error) {
      checkpointOk = false;
      options.log.error({ err: error, file: options.file }, `Could not write the queue file: ${describeError(error)}`);
    }
  }

  function checkpoint(): Promise<void> {
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      try {
        do {
          again = false;
          await runCheckpoint();
        } while (again);
      } finally {
        running = undefined;
      }
    })();
    return running;
  }

  function write<T>(build: (tx: StoreTransaction) => T): { result: T; durable: Promise<void> } {
    if (closed) throw new Error("The scan queue is closed");
    const changes: RowChange[] = [];
    const ids = { item: nextItemId, request: nextRequestId };
    const tx: StoreTransaction = {
      rows,
      apply(change, stored) {
        rows.apply(change, stored);
        changes.push(change);
      },
      newItemId: () => nextItemId++,
      newRequestId: () => nextRequestId++,
    };
    rows.run("BEGIN");
    let result: T;
    try {
      result = build(tx);
      rows.run("COMMIT");
    } catch (error) {
      rows.run("ROLLBACK");
      nextItemId = ids.item;
      nextRequestId = ids.request;
      throw error;
    }
    if (changes.length === 0) return { result, durable: Promise.resolve() };
    seq += 1;
    const durable = journal.append(encodeEntry({ seq, changes }));
    durable.then(
      () => {
        if (journal.bytesSinceRotation >= threshold && !running) void checkpoint();
      },
      // A failed append leaves the change in memory only: a checkpoint writes it out, and heals the journal.
      () => void checkpoint(),
    );
    return { result, durable };
  }

  return {
    file: options.file,
    rows,
    legacy: parts.legacy,
    write,
    checkpoint,
    journalBytes: () => journal.bytesSinceRotation,
    isHealthy: () => !closed && journal.healthy && checkpointOk,
    async close() {
      if (closed) return;
      closed = true;
      await journal.drain();
      await checkpoint();
      await journal.close();
      rows.free();
      db.close();
    },
  };
}

/**
 * The database lives in memory; durability comes from our journal and checkpoints. SQLite's own rollback journal
 * would only copy pages around in sql.js's in-memory file system on every commit, so it stays in memory too, and
 * SQLite need not re-check the (in-memory) file for changes at each transaction.
 */
function tuneConnection(db: Database): void {
  db.exec(
    "PRAGMA journal_mode = MEMORY; PRAGMA synchronous = OFF; PRAGMA temp_store = MEMORY; " +
      // One connection owns the file: keep the lock and the page cache (32 MiB at most) between transactions.
      "PRAGMA locking_mode = EXCLUSIVE; PRAGMA cache_size = -32768",
  );
}
