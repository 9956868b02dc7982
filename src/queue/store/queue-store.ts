import { copyFile, mkdir, rm, stat, unlink } from "node:fs/promises";
import { dirname, join } from "node:path";
import { removeStaleTempFiles, syncFolder, writeFileDurably } from "../../core/durable-file.ts";
import { describeError } from "../../core/errors.ts";
import type { Logger } from "../../core/logger.ts";
import type { ScanRequest } from "../../core/scan.ts";
import { createDueIndex, type DueIndex } from "./due-index.ts";
import { isLegacyQueue, readLegacyRequests } from "./legacy-import.ts";
import { listLogFiles, openLogFile, type LogFile } from "./log-file.ts";
import { encodeRecord } from "./log-record.ts";
import { replayLogs } from "./log-replay.ts";
import { migrateDatabase } from "./migrate.ts";
import { migrations } from "./migrations/index.ts";
import {
  applyChange,
  createRowAccess,
  nextItemId,
  nextRequestId,
  type ItemRow,
  type RowAccess,
  type RowChange,
  type RowReader,
} from "./rows.ts";
import { loadSnapshot, writeSnapshot } from "./snapshot-file.ts";
import { loadSqlJs, type Database } from "./sql-js.ts";
import { StoreUnavailableError, WriteAbandonedError, describeStoreFault } from "./store-fault.ts";

/**
 * The queue's store: an in-memory sql.js database that only ever holds what is on disk.
 *
 * On disk: a snapshot (`queue.db`, with the one before it as `queue.db.prev`) and an append-only log of whole
 * transactions written since (`queue.db.journal.<generation>`, see `log-record.ts`). A start loads the snapshot and
 * replays the log; a checkpoint writes a new snapshot and starts a new log generation.
 *
 * One write path. `write(build)` runs `build` in a transaction to learn its changes (row images), rolls that back,
 * appends the changes to the log (every byte, fdatasync), and only then applies them for good and resolves. Writes
 * that arrive while one is on its way to the disk go together in the next record (group commit); each `build` runs
 * in its own savepoint, so one that throws fails alone. A write the disk refuses leaves memory as it was, is
 * answered with `StoreUnavailableError`, and puts the store in a failed state: every write is refused at once
 * (and `/health` says so) until a probe in the background finds that the disk takes writes again.
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
  /** Reads: what is on disk, never a write still on its way. */
  readonly rows: RowReader;
  /** The pending items' schedule, kept in step with every applied change. */
  readonly due: DueIndex;
  /** Requests found in a plex_autoscan queue file at start; the caller enqueues them, then checkpoints. */
  readonly legacy?: { readonly requests: readonly ScanRequest[]; readonly backup: string };
  /**
   * Stores what `build` changes; resolves with its result once that is on disk and applied. Rejects with
   * `StoreUnavailableError` when the disk refused it (nothing was stored), with `WriteAbandonedError` when `signal`
   * aborted before the write was taken, or with what `build` threw (nothing was stored).
   */
  write<T>(build: (tx: StoreTransaction) => T, options?: { readonly signal?: AbortSignal }): Promise<T>;
  /** Writes a new snapshot. Concurrent calls share one run; a call during a run waits for a new one. */
  checkpoint(): Promise<void>;
  /** Log bytes written since the last checkpoint began (0: the snapshot is up to date). */
  logBytes(): number;
  health(): StoreHealth;
  /** Checks that the snapshot on disk is the one this process wrote (not deleted or replaced); rewrites it if not. */
  verifyFiles(): Promise<void>;
  /** Waits for writes on their way, checkpoints, releases the database. */
  close(): Promise<void>;
}

export async function openQueueStore(options: QueueStoreOptions): Promise<QueueStore> {
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
    await syncFolder(dirname(file), log);
    legacy = { requests: readLegacyRequests(db), backup };
    db.close();
    db = new sql.Database();
  }
  // The database lives in memory; our log is what makes it durable, so SQLite's own journal stays in memory too.
  db.exec("PRAGMA journal_mode = MEMORY; PRAGMA synchronous = OFF; PRAGMA temp_store = MEMORY");
  // A fresh file gets the schema before the log is replayed into it; a file from a newer autoscan stops here.
  // Schema steps only add (columns, indexes), and records of older versions apply to the newer schema.
  migrateDatabase(db, migrations, file);
  const rows = createRowAccess(db);
  const base = readMeta(rows);
  const replay = await replayLogs(rows, file, base.seq, log);

  const store = createStore({ db, rows, options, seq: replay.lastSeq, generation: replay.lastGeneration + 1, legacy });
  // A legacy file stays as it is until its requests are imported and checkpointed by the caller.
  if (!legacy) await store.checkpoint();
  return store;
}

function readMeta(rows: RowReader): { seq: number } {
  const value = rows.get<{ value: string }>("SELECT value FROM meta WHERE key = 'journal_seq'")?.value;
  return { seq: Number(value ?? 0) || 0 };
}

interface StoreParts {
  readonly db: Database;
  readonly rows: RowAccess;
  readonly options: QueueStoreOptions;
  readonly seq: number;
  readonly generation: number;
  readonly legacy: QueueStore["legacy"];
}

interface Waiting {
  readonly build: (tx: StoreTransaction) => unknown;
  resolve(value: unknown): void;
  reject(error: unknown): void;
  taken: boolean;
}

interface Failure {
  readonly since: number;
  readonly problem: string;
  /** The log could not be cut back, or the snapshot went missing: a checkpoint must succeed before any write. */
  needsCheckpoint: boolean;
  refused: number;
}

const MAX_BATCH = 1000;
const PROBE_BYTES = 64 * 1024;

function createStore(parts: StoreParts): QueueStore {
  const { db, rows, options } = parts;
  const { file, log } = options;
  const dir = dirname(file);
  const minimum = options.checkpointBytes ?? 8 * 1024 * 1024;
  const ratio = options.checkpointRatio ?? 0.5;
  const probeIntervalMs = options.probeIntervalMs ?? 2_000;
  const stallMs = options.stallMs ?? 10_000;
  const due = createDueIndex(loadPending(rows));

  let seq = parts.seq;
  let itemId = nextItemId(rows);
  let requestId = nextRequestId(rows);
  /** The generation new records go to; opened at its first write. */
  let generation = parts.generation;
  let current: LogFile | undefined;
  /** Generations from here on are kept: they rebuild the queue from the previous snapshot. */
  let keepFrom = 0;
  /** The first generation after the current snapshot. */
  let snapshotBase = 0;
  let snapshotIno: number | undefined;
  let bytes = 0;
  let threshold = minimum;
  let failure: Failure | undefined;
  let stalledSince: number | undefined;
  let probeTimer: NodeJS.Timeout | undefined;
  let closed = false;

  const waiting: Waiting[] = [];
  let draining: Promise<void> | undefined;
  /** Batches and the export step of a checkpoint take turns: a snapshot never falls between a record and its apply. */
  let turn: Promise<unknown> = Promise.resolve();
  const exclusive = <T>(step: () => Promise<T> | T): Promise<T> => {
    const result = turn.then(step);
    turn = result.catch(() => {});
    return result;
  };

  function write<T>(build: (tx: StoreTransaction) => T, writeOptions: { signal?: AbortSignal } = {}): Promise<T> {
    if (closed) return Promise.reject(new StoreUnavailableError("The scan queue is closed"));
    if (failure) {
      failure.refused++;
      return Promise.reject(new StoreUnavailableError(`The queue cannot store requests now: ${failure.problem}`));
    }
    const { signal } = writeOptions;
    if (signal?.aborted) return Promise.reject(new WriteAbandonedError("The write was given up before it was stored"));
    return new Promise<T>((resolve, reject) => {
      const entry: Waiting = { build, resolve: resolve as (value: unknown) => void, reject, taken: false };
      waiting.push(entry);
      signal?.addEventListener(
        "abort",
        () => {
          const at = waiting.indexOf(entry);
          if (at < 0 || entry.taken) return;
          waiting.splice(at, 1);
          reject(new WriteAbandonedError("The write was given up before it was stored"));
        },
        { once: true },
      );
      draining ??= drain().finally(() => {
        draining = undefined;
      });
    });
  }

  async function drain(): Promise<void> {
    // Writes asked for in the same turn of the event loop go in one record.
    await new Promise((resolve) => setImmediate(resolve));
    while (waiting.length > 0) {
      const batch = waiting.splice(0, MAX_BATCH);
      for (const entry of batch) entry.taken = true;
      await exclusive(() => commit(batch));
      if (bytes >= threshold) void checkpoint();
    }
  }

  /** Runs the builds in one transaction (a savepoint each) and rolls it back: their changes, not yet applied. */
  function build(batch: readonly Waiting[]): { changes: RowChange[]; outcomes: ({ ok: true; value: unknown } | { ok: false; error: unknown })[] } {
    const changes: RowChange[] = [];
    const tx: StoreTransaction = {
      rows,
      apply(change) {
        applyChange(rows, change);
        changes.push(change);
      },
      newItemId: () => itemId++,
      newRequestId: () => requestId++,
    };
    const outcomes = [];
    rows.run("BEGIN");
    try {
      for (const entry of batch) {
        const mark = { changes: changes.length, itemId, requestId };
        rows.run("SAVEPOINT write");
        try {
          outcomes.push({ ok: true as const, value: entry.build(tx) });
        } catch (error) {
          rows.run("ROLLBACK TO write");
          changes.length = mark.changes;
          itemId = mark.itemId;
          requestId = mark.requestId;
          outcomes.push({ ok: false as const, error });
        }
        rows.run("RELEASE write");
      }
    } finally {
      rows.run("ROLLBACK");
    }
    return { changes, outcomes };
  }

  async function commit(batch: readonly Waiting[]): Promise<void> {
    if (failure) {
      for (const entry of batch) entry.reject(new StoreUnavailableError(`The queue cannot store requests now: ${failure.problem}`));
      failure.refused += batch.length;
      return;
    }
    const ids = { itemId, requestId };
    const { changes, outcomes } = build(batch);
    const settle = (): void =>
      batch.forEach((entry, i) => {
        const outcome = outcomes[i];
        if (outcome?.ok) entry.resolve(outcome.value);
        else entry.reject(outcome?.error);
      });
    if (changes.length === 0) return settle();

    const record = encodeRecord({ seq: seq + 1, changes });
    const stall = setTimeout(() => {
      stalledSince = options.now() - stallMs;
      log.error({ file, ms: stallMs }, `The disk under ${dir} has not confirmed a queue write for ${String(stallMs / 1000)} s; webhooks wait for it`);
    }, stallMs);
    try {
      current ??= await openLogFile(file, generation, log);
      await current.append(record);
    } catch (error) {
      itemId = ids.itemId;
      requestId = ids.requestId;
      enterFailure(error, (error as { cutBack?: boolean }).cutBack === false);
      const refused = new StoreUnavailableError(`Nothing was stored: ${describeStoreFault(error, dir)}`, { cause: error });
      batch.forEach((entry, i) => entry.reject(outcomes[i]?.ok ? refused : outcomes[i]?.error));
      return;
    } finally {
      clearTimeout(stall);
      if (stalledSince !== undefined) log.info({ file }, `The disk under ${dir} answered again`);
      stalledSince = undefined;
    }
    seq += 1;
    bytes += record.length;
    applyDurable(changes);
    settle();
  }

  /** The one place a durable change reaches memory (and the schedule). */
  function applyDurable(changes: readonly RowChange[]): void {
    rows.run("BEGIN");
    for (const change of changes) applyChange(rows, change);
    rows.run("COMMIT");
    for (const change of changes) {
      if (change.k === "item") due.itemChanged(change.r);
      else if (change.k === "del") due.itemDeleted(change.id);
      else if (change.k === "tgt") due.targetDone(change.r.item_id, change.r.target);
      else if (change.k === "clr") due.targetsCleared(change.id);
    }
  }

  function enterFailure(error: unknown, needsCheckpoint: boolean): void {
    void current?.close();
    current = undefined;
    generation += 1;
    if (failure) {
      failure.needsCheckpoint ||= needsCheckpoint;
      return;
    }
    const problem = describeStoreFault(error, dir);
    failure = { since: options.now(), problem, needsCheckpoint, refused: 0 };
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

  /** Tries the disk again: a checkpoint when one is needed, else a small durable write of a probe file. */
  async function probe(): Promise<void> {
    const episode = failure;
    if (!episode || closed) return;
    try {
      if (episode.needsCheckpoint) {
        await runCheckpoint();
      } else {
        const probeFile = join(dir, ".autoscan-write-probe");
        await writeFileDurably(probeFile, Buffer.alloc(PROBE_BYTES), { log });
        await rm(probeFile, { force: true });
      }
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
  function exportSnapshot(): { data: Uint8Array; base: number } {
    rows.run("INSERT OR REPLACE INTO meta (key, value) VALUES ('journal_seq', ?)", [String(seq)]);
    const pages = rows.get<{ n: number }>("SELECT page_count AS n FROM pragma_page_count()")?.n ?? 0;
    const free = rows.get<{ n: number }>("SELECT freelist_count AS n FROM pragma_freelist_count()")?.n ?? 0;
    // Pruned history leaves free pages behind; the file shrinks back when they are a quarter of it.
    if (free > 64 && free * 4 > pages) db.exec("VACUUM");
    const data = db.export();
    void current?.close();
    current = undefined;
    generation += 1;
    bytes = 0;
    return { data, base: generation };
  }

  async function runCheckpoint(): Promise<void> {
    const { data, base } = await exclusive(exportSnapshot);
    threshold = Math.max(minimum, data.length * ratio);
    await writeSnapshot(file, data, log);
    snapshotIno = (await stat(file)).ino;
    // The previous snapshot is rebuilt from the generations after it: keep those, drop the older ones.
    keepFrom = snapshotBase;
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
          await runCheckpoint().catch((error: unknown) => {
            // The log still holds everything: a failed snapshot costs a longer replay, not data.
            log.warn({ err: error, file }, `Could not write the queue snapshot (${describeStoreFault(error, dir)}); the log keeps every change, trying again later`);
          });
        } while (again);
      } finally {
        checkpointRun = undefined;
      }
    })();
    return checkpointRun;
  }

  return {
    file,
    rows,
    due,
    legacy: parts.legacy,
    write,
    checkpoint,
    logBytes: () => bytes,
    health() {
      if (closed) return { writable: false, problem: "the queue is closed" };
      if (failure) return { writable: false, problem: failure.problem, since: failure.since };
      if (stalledSince !== undefined) {
        return { writable: false, problem: `the disk under ${dir} has not confirmed a write for a while`, since: stalledSince };
      }
      return { writable: true };
    },
    async verifyFiles() {
      if (closed || snapshotIno === undefined) return;
      const ino = await stat(file).then((s) => s.ino, () => undefined);
      if (ino === snapshotIno) return;
      log.error(
        { file },
        `The queue file '${file}' was ${ino === undefined ? "deleted" : "replaced"} while autoscan was running; ` +
          "writing it again from memory.",
      );
      await checkpoint();
    },
    async close() {
      if (closed) return;
      while (draining) await draining;
      closed = true;
      clearTimeout(probeTimer);
      if (!failure || failure.needsCheckpoint) await checkpoint();
      await current?.close();
      rows.free();
      db.close();
    },
  };
}

function loadPending(rows: RowReader): { row: ItemRow; doneTargets: string[] }[] {
  const done = new Map<number, string[]>();
  for (const t of rows.all<{ item_id: number; target: string }>(
    "SELECT t.item_id, t.target FROM item_targets t JOIN items i ON i.id = t.item_id WHERE i.state = 'pending'",
  )) {
    const list = done.get(t.item_id) ?? [];
    list.push(t.target);
    done.set(t.item_id, list);
  }
  return rows
    .all<ItemRow>("SELECT * FROM items WHERE state = 'pending'")
    .map((row) => ({ row, doneTargets: done.get(row.id) ?? [] }));
}
