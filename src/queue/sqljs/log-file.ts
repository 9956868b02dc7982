import { open, readdir } from "node:fs/promises";
import type { FileHandle } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { syncFolder } from "../../core/durable-file.ts";
import { describeError } from "../../core/errors.ts";
import type { Logger } from "../../core/logger.ts";

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
