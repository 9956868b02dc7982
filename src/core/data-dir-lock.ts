import { randomBytes } from "node:crypto";
import { mkdir, readFile, readlink, rename, rm, utimes, stat, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import { join } from "node:path";
import { FatalError } from "./errors.ts";
import type { Logger } from "./logger.ts";

/**
 * One autoscan per data directory. Two processes writing the same queue log (an old container still stopping, a
 * second `docker run` on the same volume) would interleave their writes and lose work, so the second one refuses to
 * start and names the first.
 *
 * `autoscan.lock` holds the owner's pid, host, PID namespace (`/proc/self/ns/pid`), boot id and start time; its owner
 * touches it every `heartbeatMs` (2 s). A lock is stale, and taken over, when its owner is gone:
 * - when it has not been touched for `staleMs` (60 s), wherever its owner ran;
 * - sooner only when its owner's pid means something here: the same host name, the same PID namespace and the same
 *   boot. Then no process with that pid (or the pid is our own) means the owner is gone.
 * A pid from another namespace says nothing: in containers both processes are often pid 1, or cannot see each other,
 * and two containers may share a host name (host networking, `hostname:` in compose). Such a lock is only stale by
 * its heartbeat's age.
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
  /** `pid:[4026531836]`; empty when unknown (a lock of an older autoscan, or no /proc). */
  readonly pidns: string;
  /** `/proc/sys/kernel/random/boot_id`; empty when unknown. */
  readonly boot: string;
  readonly started: string;
  readonly token: string;
}

/** Where this process's pid means something: its PID namespace and this boot of the kernel. */
async function processPlace(): Promise<{ pidns: string; boot: string }> {
  const pidns = await readlink("/proc/self/ns/pid").catch(() => "");
  const boot = await readFile("/proc/sys/kernel/random/boot_id", "utf8").then((text) => text.trim(), () => "");
  return { pidns, boot };
}

export async function acquireDataDirLock(options: DataDirLockOptions): Promise<DataDirLock> {
  const { dir, log } = options;
  const heartbeatMs = options.heartbeatMs ?? 2_000;
  const staleMs = options.staleMs ?? Math.max(60_000, 6 * heartbeatMs);
  const file = join(dir, "autoscan.lock");
  await mkdir(dir, { recursive: true });
  const place = await processPlace();
  const me: Owner = { pid: process.pid, host: hostname(), ...place, started: new Date().toISOString(), token: randomBytes(8).toString("hex") };

  /** Another live owner's lock, if any; else the lock is ours now (written beside it and renamed into place). */
  async function claim(): Promise<{ other: Owner; age: number } | undefined> {
    for (let attempt = 0; ; attempt++) {
      const held = await readOwner(file);
      const age = await stat(file).then((s) => Date.now() - s.mtimeMs, () => Number.POSITIVE_INFINITY);
      if (held?.token === me.token) return undefined;
      if (held && !isStale(held, me, age, staleMs)) return { other: held, age };
      if (age === Number.POSITIVE_INFINITY) {
        // No lock at all: created exclusively, so two processes starting at once cannot both get it.
        try {
          await writeFile(file, `${JSON.stringify(me)}\n`, { flag: "wx" });
          return undefined;
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== "EEXIST") {
            await rmIfEmpty(file);
            throw error;
          }
          continue;
        }
      }
      const temp = `${file}.${me.token}.tmp`;
      try {
        await writeFile(temp, `${JSON.stringify(me)}\n`);
        await rename(temp, file);
      } catch (error) {
        await rm(temp, { force: true }).catch(() => {});
        throw error;
      }
      // Another process may have taken it over at the same moment: the last rename wins, so look again.
      const now = await readOwner(file);
      if (now?.token === me.token) {
        if (held) {
          log.warn(
            { lock: file, previous: held },
            `Took over the data directory lock of autoscan pid ${String(held.pid)} on host '${held.host}', which is gone.`,
          );
        }
        return undefined;
      }
      if (attempt > 3) return now ? { other: now, age: 0 } : undefined;
    }
  }

  try {
    const busy = await claim();
    if (busy) {
      const { other, age } = busy;
      const seconds = String(Math.round(staleMs / 1000));
      const when = samePlace(other, me)
        ? "at once once its process has ended"
        : `${seconds} s after it was last seen (it runs in another container or PID namespace, whose processes cannot be checked from here)`;
      throw new FatalError(
        `The data directory '${dir}' is in use by another autoscan (pid ${String(other.pid)} on host '${other.host}', ` +
          `started ${other.started}, last seen ${String(Math.round(age / 1000))} s ago; lock '${file}'). Stop that one ` +
          `first: two processes on one queue would lose work. If it is gone, its lock is taken over by itself: ${when}.`,
      );
    }
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? "";
    if (!UNWRITABLE.has(code)) throw error;
    // A data directory that cannot take the lock (full, read-only) cannot take the queue either: the server starts
    // anyway, answers 503 with the cause, and the heartbeat writes the lock as soon as it can.
    log.warn(
      { lock: file, code },
      `Could not write the data directory lock '${file}' (${code}); autoscan goes on and writes it once the disk ` +
        "takes writes again. Until then it cannot tell whether another autoscan uses this directory.",
    );
  }

  // The heartbeat keeps the lock fresh, writes it again if it is missing (the folder emptied under us, or a disk that
  // was full at start), and says so (once) if another process has taken it over, which only happens after this one
  // stalled for longer than `staleMs`.
  let lost = false;
  const heartbeat = async (): Promise<void> => {
    const held = await readOwner(file);
    if (held?.token === me.token) {
      const at = new Date();
      await utimes(file, at, at);
      return;
    }
    await mkdir(dir, { recursive: true });
    const busy = await claim();
    if (!busy) {
      log.warn({ lock: file }, `The data directory lock '${file}' was missing while autoscan was running; wrote it again.`);
    } else if (!lost) {
      lost = true;
      log.error(
        { lock: file, other: busy.other },
        `Another autoscan (pid ${String(busy.other.pid)} on host '${busy.other.host}') has taken over the data directory ` +
          `'${dir}': two processes now write one queue. Stop one of them.`,
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

/** A lock file left empty by a write the disk refused holds nothing: it goes. */
async function rmIfEmpty(file: string): Promise<void> {
  const size = await stat(file).then((s) => s.size, () => undefined);
  if (size === 0) await rm(file, { force: true }).catch(() => {});
}

/** What a directory answers when it cannot take a write now; see above. */
const UNWRITABLE = new Set(["ENOSPC", "EDQUOT", "EROFS", "EIO"]);

/** Whether `owner`'s pid names a process this one can look up: same host, same PID namespace, same boot. */
function samePlace(owner: Owner, me: Owner): boolean {
  return owner.host === me.host && owner.pidns !== "" && owner.pidns === me.pidns && owner.boot !== "" && owner.boot === me.boot;
}

function isStale(owner: Owner, me: Owner, ageMs: number, staleMs: number): boolean {
  if (ageMs > staleMs) return true;
  // Another namespace's pid may be ours or invisible here and say nothing of its owner: only the heartbeat counts.
  if (!samePlace(owner, me)) return false;
  if (owner.pid === me.pid) return true;
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
    return {
      pid: parsed.pid,
      host: parsed.host,
      pidns: typeof parsed.pidns === "string" ? parsed.pidns : "",
      boot: typeof parsed.boot === "string" ? parsed.boot : "",
      started: String(parsed.started ?? "?"),
      token: String(parsed.token ?? ""),
    };
  } catch {
    return undefined;
  }
}
