import { createDiskWatch } from "./disk-watch.ts";
import { stat, unlink } from "node:fs/promises";
import { dirname } from "node:path";
import { buildChanges } from "./build-changes.ts";
import { listLogFiles, logPath, openLogFile, type LogFile } from "./log-file.ts";
import { encodeRecord } from "./log-record.ts";
import type { QueueStore, QueueStoreOptions, StoreTransaction } from "./open-store.ts";
import { applyChange, nextItemId, nextRequestId, type RowAccess, type RowChange } from "./rows.ts";
import { writeSnapshot } from "./snapshot-file.ts";
import type { Database } from "../../core/sql-js.ts";
import { StoreUnavailableError } from "../../core/errors.ts";
import { describeStoreFault, isDiskRefusal } from "./store-fault.ts";
import { createWriteQueue, type Waiting } from "./write-queue.ts";

/**
 * The open store (see `open-store.ts` for what it promises): the one write path, checkpoints with their rotation of
 * the log, the failed state with its probe, the health it reports, and the look at its files.
 */
export interface StoreWriterParts {
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

export function createStoreWriter(parts: StoreWriterParts): QueueStore {
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
  const line = createWriteQueue<StoreTransaction>((batch) => exclusive(() => commit(batch)));
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

  async function commit(batch: readonly Waiting<StoreTransaction>[]): Promise<void> {
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
