import { closeSync, fstatSync, ftruncateSync, mkdirSync, openSync, renameSync, rmSync, statSync, writeSync } from "node:fs";
import { dirname } from "node:path";
import { describeFsError } from "./describe-fs-error.ts";

/**
 * A log file rotated by size, like plex_autoscan's (2 MiB × 5 by default): `autoscan.log` → `autoscan.log.1` … The
 * writes are synchronous so that nothing logged before a crash is lost; log volume here is a few lines per scan.
 *
 * The file is best effort: the console gets every line first, and a line the file cannot take (a full disk, a
 * read-only mount, a folder removed, a rotation that fails) is dropped and counted, never thrown at the caller. A
 * log call sits in request handlers and promise chains; an exception from it turned a full disk into a 500, or an
 * unhandled rejection and a crash loop. `report` hears once when the file starts failing and once when it takes a
 * line again (with the count dropped in between), so the reader of the console learns of the gap exactly once.
 * Every write tries again, so the file recovers as soon as the disk has room; a file removed or moved aside by
 * someone else is noticed at the next line and created afresh.
 */
export interface RotatingFileOptions {
  readonly path: string;
  readonly maxBytes: number;
  readonly maxFiles: number;
}

export type RotatingFileEvent =
  /** The first line of an episode that could not be written; `reason` is in words (`disk full (ENOSPC)`). */
  | { readonly kind: "failing"; readonly path: string; readonly action: "written" | "rotated"; readonly reason: string }
  /** A line was written again after `dropped` lines were lost. */
  | { readonly kind: "recovered"; readonly path: string; readonly dropped: number };

export interface RotatingFile {
  /** Appends a whole line, or drops it: true when it was written. Never throws. */
  write(line: string): boolean;
  /** Lines dropped since the file was opened. */
  readonly dropped: number;
  close(): void;
}

interface Handle {
  readonly fd: number;
  readonly dev: number;
  readonly ino: number;
  size: number;
}

export function openRotatingFile(options: RotatingFileOptions, report: (event: RotatingFileEvent) => void = () => undefined): RotatingFile {
  const { path, maxBytes, maxFiles } = options;
  let handle: Handle | undefined;
  /** The episode in progress: lines dropped since the last line written. */
  let failing: { dropped: number } | undefined;
  let droppedTotal = 0;
  let closed = false;

  function open(): Handle {
    mkdirSync(dirname(path), { recursive: true });
    const fd = openSync(path, "a", 0o640);
    try {
      const { dev, ino, size } = fstatSync(fd);
      return { fd, dev, ino, size };
    } catch (error) {
      closeQuietly(fd);
      throw error;
    }
  }

  /** The handle for `path`: the one held, unless the file there is gone or another one (removed, moved aside). */
  function current(): Handle {
    if (handle && isStill(handle)) return handle;
    if (handle) closeQuietly(handle.fd);
    handle = undefined;
    return (handle = open());
  }

  function isStill(held: Handle): boolean {
    try {
      const { dev, ino } = statSync(path);
      return dev === held.dev && ino === held.ino;
    } catch {
      return false;
    }
  }

  /** `.1` newest … `.maxFiles` oldest. The old handle is closed whatever happens; the next line opens afresh. */
  function rotate(held: Handle): Handle {
    handle = undefined;
    try {
      if (maxFiles > 0) {
        rmSync(`${path}.${maxFiles}`, { force: true });
        for (let n = maxFiles - 1; n >= 1; n--) renameIfPresent(`${path}.${n}`, `${path}.${n + 1}`);
        renameSync(path, `${path}.1`);
      } else {
        rmSync(path, { force: true });
      }
    } finally {
      closeQuietly(held.fd);
    }
    return (handle = open());
  }

  /** Writes all of `bytes` or none: a partial write (the disk filled up mid-line) is cut off again. */
  function append(target: Handle, bytes: Buffer): void {
    let written = 0;
    try {
      while (written < bytes.length) written += writeSync(target.fd, bytes, written);
    } catch (error) {
      if (written > 0) {
        try {
          ftruncateSync(target.fd, target.size);
        } catch {
          // Best effort: the torn line stays.
        }
      }
      throw error;
    }
    target.size += bytes.length;
  }

  return {
    write(line) {
      if (closed) return false;
      const bytes = Buffer.from(line, "utf8");
      let action: "written" | "rotated" = "written";
      try {
        let target = current();
        if (target.size > 0 && target.size + bytes.length > maxBytes) {
          action = "rotated";
          target = rotate(target);
          action = "written";
        }
        append(target, bytes);
      } catch (error) {
        droppedTotal++;
        if (failing) failing.dropped++;
        else {
          failing = { dropped: 1 };
          report({ kind: "failing", path, action, reason: describeFsError(error) });
        }
        return false;
      }
      if (failing) {
        const { dropped } = failing;
        failing = undefined;
        report({ kind: "recovered", path, dropped });
      }
      return true;
    },
    get dropped() {
      return droppedTotal;
    },
    close() {
      closed = true;
      if (handle) closeQuietly(handle.fd);
      handle = undefined;
    },
  };
}

function renameIfPresent(from: string, to: string): void {
  try {
    renameSync(from, to);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
}

function closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    // Already closed, or the file system is gone: nothing left to release.
  }
}
