import { open, readdir, readFile } from "node:fs/promises";
import type { FileHandle } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { crc32 } from "node:zlib";
import { syncFolder } from "../../core/durable-file.ts";
import { describeError } from "../../core/errors.ts";
import type { Logger } from "../../core/logger.ts";
import type { RowAccess } from "./row-access.ts";
import type { RowChange } from "./sqljs-adapter.ts";

// The sql.js store's journal: the record format, the append-only log files beside the queue file (an append is
// durable before it is acknowledged), and their replay at open.

/**
 * One log record per write: a line `<crc32 hex> <json>\n`, the JSON being `{"s": seq, "c": [changes]}`. JSON never
 * holds a raw newline, so records are self-delimiting: a damaged record (bad checksum, bytes overwritten, a torn write
 * in the middle of a file) is skipped alone and reading goes on at the next line. `seq` counts the writes that were
 * acknowledged: gaps at replay are acknowledged writes that are missing.
 */
interface LogRecord {
  readonly seq: number;
  readonly changes: readonly RowChange[];
}

export function encodeRecord(record: LogRecord): Buffer {
  const json = JSON.stringify({ s: record.seq, c: record.changes });
  return Buffer.from(`${crc32(json).toString(16).padStart(8, "0")} ${json}\n`, "utf8");
}

interface DecodedLog {
  readonly records: LogRecord[];
  /** Complete lines that failed their checksum or did not parse. */
  readonly damaged: number;
  /** Bytes after the last newline: a write cut short (never acknowledged), or a file cut short. */
  readonly tornTailBytes: number;
}

function decodeLog(text: string): DecodedLog {
  const records: LogRecord[] = [];
  let damaged = 0;
  const lines = text.split("\n");
  const tail = lines.pop() ?? "";
  for (const line of lines) {
    // NUL bytes are what a file extended past its last write holds: not a record, not damage of one.
    if (line.length === 0 || /^\0+$/.test(line)) continue;
    const record = decodeLine(line);
    if (record) records.push(record);
    else damaged++;
  }
  return { records, damaged, tornTailBytes: Buffer.byteLength(tail.replace(/\0+$/, ""), "utf8") };
}

function decodeLine(line: string): LogRecord | undefined {
  // A record may follow garbage on the same line (bytes damaged on disk before it): try every place one may start.
  for (const match of line.matchAll(/[0-9a-f]{8} \{/g)) {
    const record = decodeAt(line.slice(match.index));
    if (record) return record;
  }
  return undefined;
}

function decodeAt(text: string): LogRecord | undefined {
  const json = text.slice(9);
  if (text.slice(0, 8) !== crc32(json).toString(16).padStart(8, "0")) return undefined;
  try {
    const parsed = JSON.parse(json) as { s?: unknown; c?: unknown };
    if (typeof parsed.s !== "number" || !Array.isArray(parsed.c)) return undefined;
    return { seq: parsed.s, changes: parsed.c as RowChange[] };
  } catch {
    return undefined;
  }
}

/**
 * One generation of the append-only log beside the queue file: `queue.db.journal.<generation>` (not
 * `queue.db-journal`, which SQLite would take for its own). A checkpoint starts a new generation; a write that fails
 * ends the current one.
 *
 * `append` writes every byte (a short write, as a filling disk gives, is continued, and a write that makes no
 * progress is an error), then `fdatasync`s. Only then is the write acknowledged. When anything fails the file is cut
 * back to its last acknowledged byte, so no torn record stays in it, and the caller must not append to it again. (A log
 * deleted or replaced under the running process is noticed by the store's `verifyFiles`, which writes the whole queue
 * again from memory.)
 */
export interface LogFileRef {
  readonly generation: number;
  readonly path: string;
}

export interface LogFile extends LogFileRef {
  /** Bytes acknowledged. */
  readonly length: number;
  /** The file's inode, to notice it being deleted or replaced. */
  readonly ino: number;
  append(data: Uint8Array): Promise<void>;
  close(): Promise<void>;
}

export class LogWriteError extends Error {
  override name = "LogWriteError";
  /** False when the torn bytes could not be cut back off the file either. */
  readonly cutBack: boolean;
  constructor(message: string, cutBack: boolean, options?: ErrorOptions) {
    super(message, options);
    this.cutBack = cutBack;
  }
}

export function logPath(file: string, generation: number): string {
  return `${file}.journal.${String(generation)}`;
}

/** The log files beside `file`, oldest generation first. */
export async function listLogFiles(file: string): Promise<LogFileRef[]> {
  const prefix = `${basename(file)}.journal.`;
  const names = await readdir(dirname(file)).catch(() => [] as string[]);
  return names
    .filter((name) => name.startsWith(prefix) && /^\d+$/.test(name.slice(prefix.length)))
    .map((name) => ({ generation: Number(name.slice(prefix.length)), path: join(dirname(file), name) }))
    .sort((a, b) => a.generation - b.generation);
}

/** Creates (or reopens) a generation for appending; its name is made durable before the first write counts. */
export async function openLogFile(file: string, generation: number, log?: Logger): Promise<LogFile> {
  const path = logPath(file, generation);
  const handle = await open(path, "a");
  let length: number;
  let ino: number;
  try {
    const info = await handle.stat();
    length = info.size;
    ino = info.ino;
    await syncFolder(dirname(path), log);
  } catch (error) {
    await handle.close().catch(() => {});
    throw error;
  }
  let broken: LogWriteError | undefined;

  async function writeAll(data: Uint8Array, fd: FileHandle): Promise<void> {
    let offset = 0;
    while (offset < data.length) {
      const { bytesWritten } = await fd.write(data, offset, data.length - offset);
      if (bytesWritten <= 0) throw new Error(`the disk took no bytes of a ${data.length}-byte write`);
      offset += bytesWritten;
    }
  }

  return {
    generation,
    path,
    get length() {
      return length;
    },
    ino,
    async append(data) {
      if (broken) throw broken;
      try {
        await writeAll(data, handle);
        await handle.datasync();
        length += data.length;
      } catch (error) {
        const cutBack = await handle.truncate(length).then(
          () => true,
          () => false,
        );
        const reason = (error as NodeJS.ErrnoException).code === "ENOENT" ? `'${path}' was deleted` : describeError(error);
        broken = new LogWriteError(`Could not write the queue log: ${reason}`, cutBack, { cause: error });
        throw broken;
      }
    },
    close: () => handle.close().catch(() => {}),
  };
}

export interface ReplayReport {
  /** The newest acknowledged write now in the database. */
  readonly lastSeq: number;
  /** The newest log generation found (0: none). */
  readonly lastGeneration: number;
  readonly applied: number;
  /** Complete records that were damaged on disk (skipped). */
  readonly damaged: number;
  /** Acknowledged writes that are missing between the snapshot and the newest record. */
  readonly missing: number;
}

/**
 * Replays the log written after the snapshot (generations from its `generation` on, records with a `seq` above its
 * `seq`), oldest first, each record in
 * its own savepoint. Every intact record counts: a damaged one is skipped and reading goes on after it. When two
 * records carry the same `seq`, the one in the later generation wins (the earlier was a write that failed and was
 * refused, and its number was given to the next write). Every loss is logged with its count.
 */
export async function replayLogs(
  rows: RowAccess,
  file: string,
  base: { readonly seq: number; readonly generation: number },
  log: Logger,
  /** Applies one change to the rows: the adapter's `applyChange`, the one code that writes them. */
  apply: (rows: RowAccess, change: RowChange) => void,
): Promise<ReplayReport> {
  const all = await listLogFiles(file);
  // Generations before the snapshot's own were written before it (they only serve the previous snapshot).
  const refs = all.filter((ref) => ref.generation >= base.generation);
  const baseSeq = base.seq;
  const bySeq = new Map<number, LogRecord>();
  let damaged = 0;
  for (const ref of refs) {
    const decoded = decodeLog(await readFile(ref.path, "utf8"));
    for (const record of decoded.records) bySeq.set(record.seq, record);
    if (decoded.damaged > 0) {
      damaged += decoded.damaged;
      log.error(
        { journal: ref.path, damaged: decoded.damaged },
        `The queue log '${ref.path}' holds ${String(decoded.damaged)} damaged record(s); they were skipped and ` +
          "the intact records after them were replayed.",
      );
    }
    if (decoded.tornTailBytes > 0) {
      log.warn(
        { journal: ref.path, bytes: decoded.tornTailBytes },
        `The queue log '${ref.path}' ends in an incomplete record (${String(decoded.tornTailBytes)} bytes): a write ` +
          "cut short by a crash, never confirmed to its sender — or a log file cut short on disk.",
      );
    }
  }
  const seqs = [...bySeq.keys()].filter((seq) => seq > baseSeq).sort((a, b) => a - b);
  let applied = 0;
  rows.run("BEGIN");
  for (const seq of seqs) {
    const record = bySeq.get(seq);
    if (!record) continue;
    rows.run("SAVEPOINT record");
    try {
      for (const change of record.changes) apply(rows, change);
      applied++;
    } catch (error) {
      rows.run("ROLLBACK TO record");
      damaged++;
      log.error({ err: error, seq }, `Skipped queue log record ${String(seq)}: it does not apply`);
    }
    rows.run("RELEASE record");
  }
  rows.run("COMMIT");
  const lastSeq = Math.max(baseSeq, seqs.at(-1) ?? baseSeq);
  const missing = lastSeq - baseSeq - seqs.length;
  if (missing > 0) {
    log.error(
      { file, missing, from: baseSeq + 1, to: lastSeq },
      `${String(missing)} acknowledged write(s) between ${String(baseSeq + 1)} and ${String(lastSeq)} are missing ` +
        `from the queue log beside '${file}' (deleted or damaged files); the requests they held are lost.`,
    );
  }
  return { lastSeq, lastGeneration: Math.max(all.at(-1)?.generation ?? 0, base.generation - 1), applied, damaged, missing };
}
