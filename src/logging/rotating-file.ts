import { writeSync } from "node:fs";
import { mkdir, open, rename, rm, stat, type FileHandle } from "node:fs/promises";
import { dirname } from "node:path";
import { describeFsError } from "./describe-fs-error.ts";

/**
 * A log file rotated by size, like plex_autoscan's (2 MiB × 5 by default): `autoscan.log` → `autoscan.log.1` …
 *
 * The file is best effort and never in the way: `write` queues the line and returns; the lines are written in order,
 * in batches, off the event loop, so a slow or stalled disk under the data directory never holds a request (or
 * `/health`) up. Lines that wait beyond `maxPendingBytes` (the disk stalled) are dropped and counted. A line the file
 * cannot take (a full disk, a read-only mount, a folder removed, a rotation that fails) is dropped and counted, never
 * thrown: a log call sits in request handlers and promise chains, where an exception turned a full disk into a 500 or
 * an unhandled rejection and a crash loop. A batch is written whole or cut back, so the file only holds whole lines.
 * `report` hears once when the file starts failing and once when it takes lines again (with the count dropped in
 * between). Every batch tries again, so the file recovers as soon as the disk has room; a file removed or moved aside
 * by someone else is noticed at the next batch and created afresh.
 */
export interface RotatingFileOptions {
  readonly path: string;
  readonly maxBytes: number;
  readonly maxFiles: number;
  /** Lines waiting for the disk beyond this many bytes are dropped (default 4 MiB). */
  readonly maxPendingBytes?: number;
}

export type RotatingFileEvent =
  /** The first line of an episode that could not be written; `reason` is in words (`disk full (ENOSPC)`). */
  | { readonly kind: "failing"; readonly path: string; readonly action: "written" | "rotated"; readonly reason: string }
  /** Lines were written again after `dropped` lines were lost. */
  | { readonly kind: "recovered"; readonly path: string; readonly dropped: number };

export interface RotatingFile {
  /** Queues a whole line for the file. Never throws, never waits. */
  write(line: string): void;
  /** Lines dropped since the file was opened. */
  readonly dropped: number;
  /** Resolves once every line queued so far has been written or dropped. */
  flushed(): Promise<void>;
  /** Stops taking lines; what still waits gets one synchronous try (unless a write is stuck in progress). */
  close(): void;
}

interface Handle {
  readonly file: FileHandle;
  readonly dev: number;
  readonly ino: number;
  size: number;
}

export function openRotatingFile(options: RotatingFileOptions, report: (event: RotatingFileEvent) => void = () => undefined): RotatingFile {
  const { path, maxBytes, maxFiles } = options;
  const maxPending = options.maxPendingBytes ?? 4 * 1024 * 1024;
  let handle: Handle | undefined;
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let writing: Promise<void> | undefined;
  /** The episode in progress: lines dropped since the last line written. */
  let failing: { dropped: number } | undefined;
  let droppedTotal = 0;
  let closed = false;

  function dropped(count: number, action: "written" | "rotated", error: unknown): void {
    droppedTotal += count;
    if (failing) failing.dropped += count;
    else {
      failing = { dropped: count };
      report({ kind: "failing", path, action, reason: describeFsError(error) });
    }
  }

  async function openHandle(): Promise<Handle> {
    await mkdir(dirname(path), { recursive: true });
    const file = await open(path, "a", 0o640);
    try {
      const { dev, ino, size } = await file.stat();
      return { file, dev, ino, size };
    } catch (error) {
      await file.close().catch(() => {});
      throw error;
    }
  }

  /**
   * The handle for `path`: the one held, unless the file there is gone or another one (removed, or moved aside by
   * logrotate). Looked at once per batch, not per line.
   */
  async function current(): Promise<Handle> {
    if (handle) {
      const held = handle;
      const now = await stat(path).catch(() => undefined);
      if (!now || now.dev !== held.dev || now.ino !== held.ino) {
        handle = undefined;
        await held.file.close().catch(() => {});
      }
    }
    return (handle ??= await openHandle());
  }

  /** `.1` newest … `.maxFiles` oldest. The old handle is closed whatever happens; the next write opens afresh. */
  async function rotate(held: Handle): Promise<Handle> {
    handle = undefined;
    try {
      if (maxFiles > 0) {
        await rm(`${path}.${maxFiles}`, { force: true });
        for (let n = maxFiles - 1; n >= 1; n--) await renameIfPresent(`${path}.${n}`, `${path}.${n + 1}`);
        await rename(path, `${path}.1`);
      } else {
        await rm(path, { force: true });
      }
    } finally {
      await held.file.close().catch(() => {});
    }
    return (handle = await openHandle());
  }

  /** Writes all of `bytes` or none: a partial write (the disk filled up mid-batch) is cut off again. */
  async function append(target: Handle, bytes: Buffer): Promise<void> {
    let written = 0;
    try {
      while (written < bytes.length) {
        const { bytesWritten } = await target.file.write(bytes, written, bytes.length - written);
        if (bytesWritten <= 0) throw new Error("the disk took no bytes");
        written += bytesWritten;
      }
    } catch (error) {
      if (written > 0) await target.file.truncate(target.size).catch(() => {}); // best effort: else the torn batch stays
      throw error;
    }
    target.size += bytes.length;
  }

  /** Writes `lines` in order, rotating before a line that would take the file past `maxBytes`. */
  async function writeBatch(lines: readonly Buffer[]): Promise<void> {
    let done = 0;
    let action: "written" | "rotated" = "written";
    try {
      let target = await current();
      while (done < lines.length) {
        // As many lines as fit (at least one, into an empty file).
        let end = done;
        let bytes = 0;
        while (end < lines.length) {
          const next = (lines[end] as Buffer).length;
          if (target.size + bytes + next > maxBytes && (target.size > 0 || bytes > 0)) break;
          bytes += next;
          end += 1;
        }
        if (end === done) {
          action = "rotated";
          target = await rotate(target);
          action = "written";
          continue;
        }
        await append(target, Buffer.concat(lines.slice(done, end), bytes));
        done = end;
      }
    } catch (error) {
      dropped(lines.length - done, action, error);
      return;
    }
    if (failing) {
      const count = failing.dropped;
      failing = undefined;
      report({ kind: "recovered", path, dropped: count });
    }
  }

  async function drain(): Promise<void> {
    try {
      while (pending.length > 0 && !closed) {
        const lines = pending;
        pending = [];
        pendingBytes = 0;
        await writeBatch(lines);
      }
    } finally {
      writing = undefined;
    }
  }

  return {
    write(line) {
      if (closed) return;
      const bytes = Buffer.from(line, "utf8");
      if (pendingBytes + bytes.length > maxPending) {
        return dropped(1, "written", Object.assign(new Error("the disk does not keep up"), { code: "EAGAIN" }));
      }
      pending.push(bytes);
      pendingBytes += bytes.length;
      writing ??= drain();
    },
    get dropped() {
      return droppedTotal;
    },
    async flushed() {
      while (writing) await writing;
    },
    close() {
      if (closed) return;
      closed = true;
      const held = handle;
      handle = undefined;
      // At exit: one synchronous try for what still waits, unless a write is in progress (it may be stuck).
      if (!writing && held && pending.length > 0) {
        try {
          writeSync(held.file.fd, Buffer.concat(pending));
        } catch {
          // Lost at exit: the disk cannot take it now, and the process will not wait for it.
        }
      }
      pending = [];
      void held?.file.close().catch(() => {});
    },
  };
}

async function renameIfPresent(from: string, to: string): Promise<void> {
  try {
    await rename(from, to);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
}
