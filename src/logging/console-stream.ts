import { write, writeSync } from "node:fs";
import { describeFsError } from "./describe-fs-error.ts";

/**
 * The console the log goes to first (stdout for the server, stderr for the other commands), written so that it can
 * neither crash nor stall the process:
 * - `async` (the server): one `fs.write` at a time, off the event loop, lines in order. A reader that falls behind (a
 *   busy log collector, a paused pipe) makes lines wait in memory up to `maxPendingBytes`, then they are dropped and
 *   counted; the server goes on answering. A write that fails (a closed pipe, stdout redirected to a full disk) is
 *   tried again later; what waits is kept within the same bound.
 * - sync (short CLI commands, which exit right after): each line is written before the log call returns; a line
 *   that cannot be written is dropped and counted.
 * `flush()` (before exit) tries once to write what waits, at once, unless a write is still in progress (it may be
 * stuck on a reader that never reads); what it cannot write is lost: an exit never hangs on its log.
 * A problem with the console is told once per episode through `report`, and so is its end, with the lines dropped.
 * (pino's own destination retries a failed synchronous flush forever: a full disk under `> file` hung the exit.)
 */
export interface ConsoleStreamOptions {
  readonly fd: number;
  /** `stdout`, in the words of the reports. */
  readonly name: string;
  readonly async: boolean;
  readonly maxPendingBytes?: number;
  readonly report?: (text: string) => void;
}

export interface ConsoleStream {
  /** Never throws. */
  write(line: string): void;
  flush(): void;
  /** Lines dropped since the stream was opened. */
  readonly dropped: number;
}

const DEFAULT_MAX_PENDING_BYTES = 16 * 1024 * 1024;
/** A reader that is only slow (the pipe is full) is tried again soon; a write that failed, in a while. */
const RETRY_BUSY_MS = 10;
const RETRY_FAILED_MS = 1000;
/** How long a synchronous write waits for a full pipe before the line is given up. */
const PATIENCE_MS = 1000;

export function openConsoleStream(options: ConsoleStreamOptions): ConsoleStream {
  const { fd, name } = options;
  const maxPending = options.maxPendingBytes ?? DEFAULT_MAX_PENDING_BYTES;
  const report = options.report ?? (() => undefined);
  let pending: Buffer[] = [];
  /** Bytes waiting, the write in progress included. */
  let waiting = 0;
  let inFlight = false;
  let retry: NodeJS.Timeout | undefined;
  let failing: { dropped: number } | undefined;
  let droppedTotal = 0;

  const drop = (reason: string): void => {
    droppedTotal++;
    if (failing) failing.dropped++;
    else {
      failing = { dropped: 1 };
      report(`autoscan: cannot write the log to ${name}: ${reason}; its lines are dropped until it can be written again`);
    }
  };
  const fail = (error: unknown): void => {
    if (failing) return;
    failing = { dropped: 0 };
    report(`autoscan: cannot write the log to ${name}: ${describeFsError(error)}; lines wait (up to ${maxPending} bytes) and are dropped beyond that`);
  };
  const recover = (): void => {
    if (!failing || waiting > 0) return;
    const { dropped } = failing;
    failing = undefined;
    report(`autoscan: the log is written to ${name} again; ${dropped === 0 ? "no line was lost" : `${dropped} line(s) were dropped`}`);
  };

  function pump(): void {
    if (inFlight || retry || pending.length === 0) return;
    const chunk = pending.length === 1 ? (pending[0] as Buffer) : Buffer.concat(pending);
    pending = [];
    inFlight = true;
    write(fd, chunk, 0, chunk.length, null, (error, written) => {
      inFlight = false;
      if (error) {
        pending.unshift(chunk);
        const busy = error.code === "EAGAIN";
        if (!busy) fail(error);
        retry = setTimeout(() => {
          retry = undefined;
          pump();
        }, busy ? RETRY_BUSY_MS : RETRY_FAILED_MS);
        retry.unref();
        return;
      }
      waiting -= written;
      if (written < chunk.length) pending.unshift(chunk.subarray(written));
      recover();
      pump();
    });
  }

  return {
    write(line) {
      const bytes = Buffer.from(line, "utf8");
      if (!options.async) {
        try {
          writeAll(fd, bytes, PATIENCE_MS);
        } catch (error) {
          drop(describeFsError(error));
          return;
        }
        waiting = 0;
        recover();
        return;
      }
      if (waiting + bytes.length > maxPending) return drop(`it cannot keep up (${waiting} bytes waiting)`);
      pending.push(bytes);
      waiting += bytes.length;
      pump();
    },
    flush() {
      if (!options.async || inFlight || pending.length === 0) return;
      clearTimeout(retry);
      retry = undefined;
      const chunk = Buffer.concat(pending);
      pending = [];
      try {
        writeAll(fd, chunk, PATIENCE_MS);
        waiting -= chunk.length;
        recover();
      } catch {
        // Lost at exit: the console cannot take it now, and the process will not wait for it.
      }
    },
    get dropped() {
      return droppedTotal;
    },
  };
}

/**
 * Writes all of `bytes` synchronously (a pipe may take part of it at a time); throws what the write throws. A full
 * non-blocking pipe (`EAGAIN`: Node makes stdio pipes non-blocking) is waited for up to `patienceMs`, no longer.
 */
function writeAll(fd: number, bytes: Buffer, patienceMs: number): void {
  let offset = 0;
  let waited = 0;
  while (offset < bytes.length) {
    try {
      offset += writeSync(fd, bytes, offset);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EAGAIN" || waited >= patienceMs) throw error;
      Atomics.wait(SLEEPER, 0, 0, RETRY_BUSY_MS);
      waited += RETRY_BUSY_MS;
    }
  }
}

/** A synchronous wait only: nothing ever notifies it. */
const SLEEPER = new Int32Array(new SharedArrayBuffer(4));
