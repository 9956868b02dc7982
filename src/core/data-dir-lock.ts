import { randomBytes } from "node:crypto";
import { mkdir, readFile, rename, rm, utimes, stat, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import { join } from "node:path";
import { FatalError } from "./errors.ts";
import type { Logger } from "./logger.ts";

/**
 * One autoscan per data directory. Two processes writing the same queue log (an old container still stopping, a
 * second `docker run` on the same volume) would interleave their writes and lose work, so the second one refuses to
 * start and names the first.
 *
 * `autoscan.lock` holds the owner's pid, host and start time; its owner touches it every `heartbeatMs` (2 s). A lock is
 * stale, and taken over, when its owner is gone: on the same host, when no process has its pid (or the pid is our
 * own: a container restarted with the same pid 1); on any host, when it has not been touched for `staleMs` (60 s; a
 * container's host name differs per container, and its pids cannot be checked from another one).
 */
export interface DataDirLockOptions {
  readonly dir: string;
  readonly log: Logger;
  readonly heartbeatMs?: number;
  readonly staleMs?: number;
}

export interface DataDirLock {
  readonly file: string;
  release(): Promise<void>;
}

interface Owner {
  readonly pid: number;
  readonly host: string;
  readonly started: string;
  readonly token: string;
}

export async function acquireDataDirLock(options: DataDirLockOptions): Promise<DataDirLock> {
  const { dir, log } = options;
  const heartbeatMs = options.heartbeatMs ?? 2_000;
  const staleMs = options.staleMs ?? Math.max(60_000, 6 * heartbeatMs);
  const file = join(dir, "autoscan.lock");
  await mkdir(dir, { recursive: true });
  const me: Owner = { pid: process.pid, host: hostname(), started: new Date().toISOString(), token: randomBytes(8).toString("hex") };

  for (let attempt = 0; ; attempt++) {
    try {
      await writeFile(file, `${JSON.stringify(me)}\n`, { flag: "wx" });
      break;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? "";
      // A data directory that cannot take the lock (full, read-only) cannot take the queue either: the server
      // starts anyway, answers 503 with the cause, and the heartbeat writes the lock as soon as it can.
      if (UNWRITABLE.has(code)) {
        await removeIfEmpty(file);
        log.warn(
          { lock: file, code },
          `Could not write the data directory lock '${file}' (${code}); autoscan goes on and writes it once the disk ` +
            "takes writes again. Until then it cannot tell whether another autoscan uses this directory.",
        );
        break;
      }
      if (code !== "EEXIST" || attempt > 3) throw error;
    }
    const held = await readOwner(file);
    const age = await stat(file).then((s) => Date.now() - s.mtimeMs, () => Number.POSITIVE_INFINITY);
    if (held && !isStale(held, age, staleMs)) {
      throw new FatalError(
        `The data directory '${dir}' is in use by another autoscan (pid ${String(held.pid)} on host '${held.host}', ` +
          `started ${held.started}, last seen ${String(Math.round(age / 1000))} s ago). Stop that one first: two ` +
          `processes on one queue would lose work. If it is gone, its lock '${file}' is taken over by itself: at once ` +
          `on the same host, ${String(Math.round(staleMs / 1000))} s after it was last seen from another host.`,
      );
    }
    // Stale: take it over. Written beside it and renamed, so a reader never sees half a lock.
    const temp = `${file}.${me.token}.tmp`;
    await writeFile(temp, `${JSON.stringify(me)}\n`);
    await rename(temp, file);
    const now = await readOwner(file);
    if (now?.token !== me.token) continue; // another process took it over at the same moment: look again.
    if (held) {
      log.warn(
        { lock: file, previous: held },
        `Took over the data directory lock of autoscan pid ${String(held.pid)} on host '${held.host}', which is gone.`,
      );
    }
    break;
  }

  // The heartbeat keeps the lock fresh, writes it again if the folder was emptied under us, and says so (once) if
  // another process has taken it over, which only happens after this one stalled for longer than `staleMs`.
  let lost = false;
  const heartbeat = async (): Promise<void> => {
    const held = await readOwner(file);
    if (held?.token === me.token) {
      const at = new Date();
      await utimes(file, at, at);
    } else if (!held) {
      await mkdir(dir, { recursive: true });
      await removeIfEmpty(file);
      await writeFile(file, `${JSON.stringify(me)}\n`, { flag: "wx" }).catch(async (error: unknown) => {
        await removeIfEmpty(file);
        throw error;
      });
      log.warn({ lock: file }, `The data directory lock '${file}' was missing while autoscan was running; wrote it again.`);
    } else if (!lost) {
      lost = true;
      log.error(
        { lock: file, other: held },
        `Another autoscan (pid ${String(held.pid)} on host '${held.host}') has taken over the data directory '${dir}': ` +
          "two processes now write one queue. Stop one of them.",
      );
    }
  };
  const timer = setInterval(() => void heartbeat().catch(() => {}), heartbeatMs);
  timer.unref();
  return {
    file,
    async release() {
      clearInterval(timer);
      const held = await readOwner(file);
      if (held?.token === me.token) await rm(file, { force: true });
    },
  };
}

/** What a directory answers when it cannot take a write now; see above. */
const UNWRITABLE = new Set(["ENOSPC", "EDQUOT", "EROFS", "EIO"]);

/** A lock file left empty by a write the disk refused holds nothing: it goes. */
async function removeIfEmpty(file: string): Promise<void> {
  const size = await stat(file).then((s) => s.size, () => undefined);
  if (size === 0) await rm(file, { force: true }).catch(() => {});
}

function isStale(owner: Owner, ageMs: number, staleMs: number): boolean {
  if (ageMs > staleMs) return true;
  if (owner.host !== hostname()) return false;
  if (owner.pid === process.pid) return true;
  try {
    process.kill(owner.pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ESRCH";
  }
}

async function readOwner(file: string): Promise<Owner | undefined> {
  try {
    const parsed = JSON.parse(await readFile(file, "utf8")) as Partial<Owner>;
    if (typeof parsed.pid !== "number" || typeof parsed.host !== "string") return undefined;
    return { pid: parsed.pid, host: parsed.host, started: String(parsed.started ?? "?"), token: String(parsed.token ?? "") };
  } catch {
    return undefined;
  }
}
