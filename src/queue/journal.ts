import { constants } from "node:fs";
import { open, readdir, readFile, unlink } from "node:fs/promises";
import type { FileHandle } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { syncFolder } from "./durable-file.ts";

/**
 * The append-only journal beside the queue file (`queue.db.journal.<generation>`; not `queue.db-journal`, which
 * SQLite would take for its own rollback journal). A write resolves once its line is fsync'd. Writes that arrive
 * while an fsync is running share the next one (group commit), so many producers cost few fsyncs.
 *
 * A checkpoint `rotate`s to a new generation, writes the snapshot, then `retire`s the older generations.
 */
export interface JournalFileRef {
  readonly generation: number;
  readonly path: string;
}

export function journalPath(file: string, generation: number): string {
  return `${file}.journal.${String(generation)}`;
}

/** The journal files beside `file`, oldest generation first. */
export async function listJournalFiles(file: string): Promise<JournalFileRef[]> {
  const prefix = `${basename(file)}.journal.`;
  const names = await readdir(dirname(file)).catch(() => [] as string[]);
  return names
    .filter((name) => name.startsWith(prefix) && /^\d+$/.test(name.slice(prefix.length)))
    .map((name) => ({ generation: Number(name.slice(prefix.length)), path: join(dirname(file), name) }))
    .sort((a, b) => a.generation - b.generation);
}

export async function readJournalText(ref: JournalFileRef): Promise<string> {
  return readFile(ref.path, "utf8");
}

export interface JournalWriter {
  /** Resolves when `line` is on disk; rejects when it could not be written (nothing was acknowledged). */
  append(line: string): Promise<void>;
  /** Bytes appended since the last rotation (the checkpoint policy reads it). */
  readonly bytesSinceRotation: number;
  readonly healthy: boolean;
  /** New writes go to a new generation from now on; returns the generation that was current. */
  rotate(): JournalFileRef;
  /** Waits for the last write into every generation before `generation`, closes them and deletes them. */
  retireBefore(generation: number): Promise<void>;
  /** Waits until every appended line is written (or failed). */
  drain(): Promise<void>;
  close(): Promise<void>;
}

interface OpenJournal extends JournalFileRef {
  handle?: Promise<FileHandle>;
  /** The handle once open, so that a write can start without waiting a turn for the promise. */
  ready?: FileHandle;
  /** Bytes known to be written in full; a failed write is cut back to it so no torn line sits mid-file. */
  length: number;
  lastWrite: Promise<void>;
}

interface Waiter {
  readonly line: string;
  resolve(): void;
  reject(error: unknown): void;
}

export function createJournalWriter(file: string, firstGeneration: number): JournalWriter {
  let current = openGeneration(file, firstGeneration);
  const open: OpenJournal[] = [current];
  let waiting: Waiter[] = [];
  let flushing: Promise<void> | undefined;
  let bytes = 0;
  let healthy = true;
  let closed = false;

  /** Takes every line waiting and starts writing them: one group commit. */
  function startWrite(): { batch: Waiter[]; write: Promise<void> } | undefined {
    if (waiting.length === 0) return undefined;
    const batch = waiting;
    waiting = [];
    const target = current;
    const write = writeBatch(target, file, batch.map((w) => w.line).join(""));
    target.lastWrite = write.catch(() => {});
    return { batch, write };
  }

  async function flush(): Promise<void> {
    let inFlight = startWrite();
    while (inFlight) {
      const { batch, write } = inFlight;
      const failure = await write.then(
        () => undefined,
        (error: unknown) => ({ error }),
      );
      // The next group commit goes to the disk before this one's writers are woken, so that their answers (logging,
      // HTTP replies) overlap its write instead of delaying it.
      inFlight = startWrite();
      healthy = failure === undefined;
      for (const w of batch) {
        if (failure) w.reject(failure.error);
        else w.resolve();
      }
    }
    flushing = undefined;
  }

  return {
    append(line) {
      if (closed) return Promise.reject(new Error("The queue journal is closed"));
      bytes += line.length;
      const promise = new Promise<void>((resolve, reject) => waiting.push({ line, resolve, reject }));
      flushing ??= flush();
      return promise;
    },
    get bytesSinceRotation() {
      return bytes;
    },
    get healthy() {
      return healthy;
    },
    rotate() {
      const previous = current;
      current = openGeneration(file, previous.generation + 1);
      open.push(current);
      bytes = 0;
      return { generation: previous.generation, path: previous.path };
    },
    async retireBefore(generation) {
      const old = open.filter((j) => j.generation < generation);
      for (const journal of old) {
        await journal.lastWrite;
        await closeHandle(journal);
        open.splice(open.indexOf(journal), 1);
      }
      const onDisk = await listJournalFiles(file);
      await Promise.all(onDisk.filter((j) => j.generation < generation).map((j) => unlink(j.path).catch(() => {})));
    },
    async drain() {
      while (flushing) await flushing;
    },
    async close() {
      closed = true;
      while (flushing) await flushing;
      for (const journal of open.splice(0)) {
        await closeHandle(journal);
      }
    },
  };
}

function openGeneration(file: string, generation: number): OpenJournal {
  return { generation, path: journalPath(file, generation), length: 0, lastWrite: Promise.resolve() };
}

/**
 * Where the system has it, the journal is opened with O_DSYNC: each write returns once its data is on disk, which is
 * what a write followed by fdatasync gives, in one system call instead of two (one trip through libuv's thread pool,
 * not two, per group commit). Elsewhere (Windows) every write is followed by an explicit datasync.
 */
const DSYNC = constants.O_DSYNC;
const APPEND_FLAGS = DSYNC === undefined ? "a" : constants.O_WRONLY | constants.O_CREAT | constants.O_APPEND | DSYNC;

/** Opens a generation at its first write, so an idle rotation leaves no empty file behind. */
function handleOf(journal: OpenJournal, file: string): Promise<FileHandle> {
  // The folder is fsync'd once the file exists, so a crash cannot lose the new name with its acknowledged lines.
  journal.handle ??= open(journal.path, APPEND_FLAGS, 0o666).then(async (h) => {
    journal.length = (await h.stat()).size;
    await syncFolder(dirname(file));
    journal.ready = h;
    return h;
  });
  // A failed open is tried again at the next write.
  journal.handle.catch(() => (journal.handle = undefined));
  return journal.handle;
}

async function writeBatch(journal: OpenJournal, file: string, text: string): Promise<void> {
  const handle = journal.ready ?? (await handleOf(journal, file));
  try {
    await handle.write(text);
    if (DSYNC === undefined) await handle.datasync();
    journal.length += Buffer.byteLength(text);
  } catch (error) {
    await handle.truncate(journal.length).catch(() => {});
    throw error;
  }
}

async function closeHandle(journal: OpenJournal): Promise<void> {
  const handle = await journal.handle?.catch(() => undefined);
  journal.ready = undefined;
  await handle?.close().catch(() => {});
}
