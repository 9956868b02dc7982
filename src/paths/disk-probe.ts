import { readdir, readFile, stat } from "node:fs/promises";
import type { Logger } from "../core/logger.ts";
import { parentFolder } from "./normalize.ts";

/**
 * What is at a local path: `unanswered` when the disk did not answer in time (a hung rclone or NFS mount). Callers
 * count it as "not there yet".
 */
export type DiskEntry = "file" | "directory" | "missing" | "unanswered";

/**
 * Every look at the media disks (file checks, kind resolution) goes through one probe, because of how Node does it:
 * `fs.stat` runs on libuv's thread pool (4 threads unless UV_THREADPOOL_SIZE says otherwise), and a stat on a mount
 * that stopped answering holds its thread until the mount answers, however long that takes. Four such stats and the
 * queue's journal writes (the same pool) never run: every webhook waits and gets 503. So:
 * - at most `maxInFlight` stats run at once (2), counted until they really return, a timed-out one included; and at
 *   most `maxInFlightPerMount` (1 fewer) under one mount, so a mount that hangs leaves a slot to the other disks;
 * - each look answers within `timeoutMs` (5 s) whatever the disk does, waiting for a slot included (within about three
 *   times that when the process itself was too busy to hear the answer, see below): `unanswered`,
 *   and a stat already started is left to finish in its own time;
 * - while a mount has a stat that timed out and has not returned, new looks under it answer `unanswered` at once
 *   without a stat (it would only hang too);
 * - one stat per path at a time: a look at a path whose stat has not returned yet waits for that stat (within its own
 *   timeout) instead of starting another, so a slow disk never piles up stats of the same file;
 * - one warning names the mount when it stops answering, one info line when it answers again (and `onMountAnswers`
 *   listeners hear of it); never a line per file.
 * A path's mount comes from `/proc/self/mountinfo` (never from a stat: that would hang on the very mount in question),
 * read again whenever a look times out, so a mount that appeared after the last read is named, never `/`. The timeout
 * runs on real time, from when the stat started (a look still waiting for a slot is not a disk that did not answer),
 * and a process that was too busy to hear the answer (the event loop held, the thread pool full) gives the look its
 * time again before the disk is called hung.
 */
export interface DiskProbeOptions {
  readonly log: Logger;
  /** How long a look may take, waiting for a free slot included (default 5000 ms). */
  readonly timeoutMs?: number;
  /** Stats running at once, across everything that uses this probe (default 2; keep it below the thread pool). */
  readonly maxInFlight?: number;
  /** Stats running at once under one mount (default `maxInFlight - 1`, at least 1). */
  readonly maxInFlightPerMount?: number;
  /** Where the mount points are listed (default `/proc/self/mountinfo`; elsewhere than Linux a folder stands for it). */
  readonly mountInfoFile?: string;
}

export interface DiskProbe {
  /** Never rejects; answers within the timeout (about three, while the process is too busy to hear an answer). Unreadable
   *  counts as missing, as `os.path.exists` did. */
  stat(localPath: string): Promise<DiskEntry>;
  /**
   * A directory's entries, each file with its size and mtime, under the same budget, timeout and hung-mount rules as a
   * stat (one slot for the whole listing): `unanswered` when the disk did not answer, `missing` when it is not there
   * (or not a directory, or unreadable).
   */
  list(localPath: string): Promise<DirListing | "missing" | "unanswered">;
  /** Stats started and not returned yet (timed-out ones included). */
  inFlight(): number;
  /** Mounts that have stopped answering, by mount point. */
  unresponsiveMounts(): string[];
  /** The mount point a local path lies under (from the mount table, never from a stat). */
  mountOf(localPath: string): Promise<string>;
  /** `listener` hears of each mount that answers again after it stopped; returns the unsubscribe. */
  onMountAnswers(listener: (mount: string) => void): () => void;
}

/** What `list` found in a directory: its subfolders' names, and its files with size (bytes) and mtime (ms). */
export interface DirListing {
  readonly folders: readonly string[];
  readonly files: readonly { readonly name: string; readonly size: number; readonly mtimeMs: number }[];
}

export const DEFAULT_STAT_TIMEOUT_MS = 5_000;
export const DEFAULT_STATS_IN_FLIGHT = 2;

/** One look at a path, from the call to the stat's return (which may come long after the caller got its answer). */
interface Look {
  readonly path: string;
  mount: string;
  answered: boolean;
  /** Waits for a stat of the same path already on its way. */
  joined: boolean;
  started: boolean;
  startedAt: number;
  returned: boolean;
  start(): void;
  /** Answers `unanswered` at once (a look still waiting for a slot, under a mount found hung meanwhile). */
  giveUp(): void;
}

export function createDiskProbe(options: DiskProbeOptions): DiskProbe {
  const log = options.log.child({ component: "DISK" });
  const timeoutMs = Math.max(1, options.timeoutMs ?? DEFAULT_STAT_TIMEOUT_MS);
  const max = Math.max(1, options.maxInFlight ?? DEFAULT_STATS_IN_FLIGHT);
  const perMount = Math.max(1, Math.min(max, options.maxInFlightPerMount ?? max - 1));
  const mounts = createMountTable(options.mountInfoFile ?? "/proc/self/mountinfo");
  /** Mount point → when it stopped answering. */
  const hung = new Map<string, number>();
  /** Mount point → stats running under it. */
  const runningUnder = new Map<string, number>();
  const waiting: Look[] = [];
  /** Look key (the operation and the path) → the one call of it that has not returned yet (and what it will find). */
  const statting = new Map<string, Promise<Found<unknown>>>();
  const answerListeners = new Set<(mount: string) => void>();
  let running = 0;

  const canStart = (mount: string): boolean => running < max && (runningUnder.get(mount) ?? 0) < perMount;

  function startWaiting(): void {
    for (let i = 0; i < waiting.length && running < max; ) {
      const next = waiting[i];
      if (next && canStart(next.mount)) {
        waiting.splice(i, 1);
        next.start();
      } else i += 1;
    }
  }

  function warnHung(look: Look): void {
    if (look.returned || hung.has(look.mount)) return;
    hung.set(look.mount, Date.now());
    for (const waiter of waiting.filter((w) => w.mount === look.mount)) waiter.giveUp();
    log.warn(
      { mount: look.mount, path: look.path, timeoutMs },
      `Mount '${look.mount}' does not answer: a look at '${look.path}' got no answer in ${timeoutMs / 1000} s. ` +
        "Files under it count as not there yet until it answers again.",
    );
  }

  /** A stat under a mount that had stopped answering returned (an answer or an error): it answers again. */
  function noteAnswer(look: Look, code: string | undefined): void {
    const since = hung.get(look.mount);
    if (since === undefined) return;
    hung.delete(look.mount);
    const seconds = Math.round((Date.now() - since) / 1000);
    const how = code === undefined || code === "ENOENT" || code === "ENOTDIR" ? "" : ` (with ${code})`;
    log.info({ mount: look.mount, path: look.path }, `Mount '${look.mount}' answers again${how} after ${seconds} s.`);
    for (const listener of answerListeners) listener(look.mount);
  }

  /** The one call of `op` on its path in flight, started now unless one is already on its way. */
  function runOnce<T>(op: DiskOp<T>): Promise<Found<T>> {
    let pending = statting.get(op.key) as Promise<Found<T>> | undefined;
    if (!pending) {
      pending = op.run();
      statting.set(op.key, pending);
      void pending.then(() => statting.delete(op.key));
    }
    return pending;
  }

  /** A look timed out: the mount table is read again first, so a mount that appeared since is the one named. */
  async function blame(look: Look): Promise<void> {
    const mount = await mounts.mountOf(look.path, { fresh: true });
    if (mount !== look.mount && !look.returned) {
      runningUnder.set(look.mount, (runningUnder.get(look.mount) ?? 1) - 1);
      runningUnder.set(mount, (runningUnder.get(mount) ?? 0) + 1);
      look.mount = mount;
    }
    warnHung(look);
  }

  function look<T>(op: DiskOp<T>, mount: string): Promise<T | "unanswered"> {
    const { path } = op;
    return new Promise<T | "unanswered">((resolve) => {
      const state: Look = {
        path,
        mount,
        answered: false,
        joined: false,
        started: false,
        startedAt: 0,
        returned: false,
        start() {
          state.started = true;
          state.startedAt = Date.now();
          running += 1;
          runningUnder.set(state.mount, (runningUnder.get(state.mount) ?? 0) + 1);
          void runOnce(op).then(({ value, code }) => returned(value, code));
        },
        giveUp() {
          waiting.splice(waiting.indexOf(state), 1);
          answer("unanswered");
        },
      };
      const answer = (entry: T | "unanswered"): void => {
        if (state.answered) return;
        state.answered = true;
        clearTimeout(timer);
        resolve(entry);
      };
      // The stat returned, maybe long after its caller got "unanswered": only now is its slot free.
      const returned = (entry: T, code?: string): void => {
        state.returned = true;
        running -= 1;
        runningUnder.set(state.mount, (runningUnder.get(state.mount) ?? 1) - 1);
        noteAnswer(state, code);
        answer(entry);
        startWaiting();
      };
      let extensions = 0;
      let dueAt = Date.now() + timeoutMs;
      const settled = (): boolean => state.returned || state.answered;
      const onTimeout = async (): Promise<void> => {
        const left = state.started ? timeoutMs - (Date.now() - state.startedAt) : 0;
        // A process that was busy (the event loop held, the thread pool full of other work) is not a disk that did
        // not answer: the look is given its time again, twice at most.
        if (left <= 0 && extensions < 2 && (await processWasBusy(dueAt, settled))) {
          if (state.answered) return;
          extensions += 1;
          dueAt = Date.now() + timeoutMs;
          timer = setTimeout(() => void onTimeout(), timeoutMs);
          return;
        }
        if (state.answered) return;
        if (state.started) {
          // The mount is named (the table read again) before the caller hears "unanswered": it finds the mount hung.
          if (left <= 0) return void blame(state).finally(() => answer("unanswered"));
          // A stat that got its slot late has not hung yet: the mount is named once its own stat took that long.
          answer("unanswered");
          const blameAt = Date.now() + left;
          return void setTimeout(() => {
            void processWasBusy(blameAt, settled).then(async (busy) => {
              if (!busy) await blame(state);
            });
          }, left);
        }
        answer("unanswered");
        if (state.joined) return;
        // No free slot in time (stats on a mount that hangs hold them, most likely): this look never starts.
        const index = waiting.indexOf(state);
        if (index >= 0) waiting.splice(index, 1);
        log.debug({ path }, `No free slot to look at '${path}' within ${timeoutMs} ms; counted as not there yet`);
      };
      let timer = setTimeout(() => void onTimeout(), timeoutMs);
      if (hung.has(mount)) return answer("unanswered");
      // The same path's stat is on its way: this look waits for it (no second stat, no slot of its own).
      const already = statting.get(op.key) as Promise<Found<T>> | undefined;
      if (already) {
        state.joined = true;
        return void already.then(({ value }) => answer(value));
      }
      if (canStart(mount)) state.start();
      else waiting.push(state);
    });
  }

  return {
    async stat(localPath) {
      const mount = await mounts.mountOf(localPath);
      return hung.has(mount) ? "unanswered" : look(statOp(localPath), mount);
    },
    async list(localPath) {
      const mount = await mounts.mountOf(localPath);
      return hung.has(mount) ? "unanswered" : look(listOp(localPath), mount);
    },
    inFlight: () => running,
    unresponsiveMounts: () => [...hung.keys()],
    mountOf: (localPath) => mounts.mountOf(localPath),
    onMountAnswers(listener) {
      answerListeners.add(listener);
      return () => answerListeners.delete(listener);
    },
  };
}

/** What one call on the disk found, with the error code when it failed (a mount that answers again says it). */
interface Found<T> {
  readonly value: T;
  readonly code?: string;
}

/** One kind of call on the disk: `key` makes a second call of the same kind on the same path wait for the first. */
interface DiskOp<T> {
  readonly key: string;
  readonly path: string;
  run(): Promise<Found<T>>;
}

const failed = (error: NodeJS.ErrnoException): Found<"missing"> => ({ value: "missing", ...(error.code ? { code: error.code } : {}) });

function statOp(path: string): DiskOp<DiskEntry> {
  return {
    key: `s:${path}`,
    path,
    run: () => stat(path).then((info) => ({ value: info.isDirectory() ? ("directory" as const) : ("file" as const) }), failed),
  };
}

/** A directory listing: the entries, then each file's size and mtime (one slot for all of it). */
function listOp(path: string): DiskOp<DirListing | "missing"> {
  return {
    key: `l:${path}`,
    path,
    async run() {
      try {
        const entries = await readdir(path, { withFileTypes: true });
        const folders: string[] = [];
        const files: { name: string; size: number; mtimeMs: number }[] = [];
        for (const entry of entries) {
          if (entry.isDirectory()) folders.push(entry.name);
          else if (entry.isFile() || entry.isSymbolicLink()) {
            // A file gone between the listing and its stat is simply not there any more.
            const info = await stat(`${path}/${entry.name}`).catch(() => undefined);
            if (info?.isDirectory()) folders.push(entry.name);
            else if (info) files.push({ name: entry.name, size: info.size, mtimeMs: Math.trunc(info.mtimeMs) });
          }
        }
        return { value: { folders, files } };
      } catch (error) {
        return failed(error as NodeJS.ErrnoException);
      }
    },
  };
}

/**
 * Whether a look that ran out of time was held by the process rather than the disk: its timer fired more than a second
 * late (the event loop was busy), its answer was only waiting for the event loop, or a look at the Node binary
 * (a local disk) does not come back within a second either (the thread pool is busy with other work).
 */
async function processWasBusy(dueAt: number, settled: () => boolean): Promise<boolean> {
  if (Date.now() - dueAt > BUSY_MS) return true;
  await new Promise((resolve) => setImmediate(resolve));
  if (settled()) return true;
  let timer: NodeJS.Timeout | undefined;
  const control = await Promise.race([
    stat(process.execPath).then(() => "answered" as const, () => "answered" as const),
    new Promise<"late">((resolve) => (timer = setTimeout(() => resolve("late"), BUSY_MS))),
  ]);
  clearTimeout(timer);
  return control === "late" || settled();
}

const BUSY_MS = 1_000;

/**
 * Mount points from `/proc/self/mountinfo`, read again when the copy is older than 30 s (mounts come and go), and on
 * demand (`fresh`: a look timed out, and the mount to blame must be the real one). A path's mount is the longest mount
 * point holding it, on whole names; the path is not resolved (that would stat the very mount that hangs). Without the
 * file (not Linux) a path's parent folder stands for its mount.
 */
function createMountTable(file: string): { mountOf(path: string, options?: { fresh?: boolean }): Promise<string> } {
  let points: readonly string[] | undefined;
  let reading: Promise<readonly string[]> | undefined;
  let readAt = 0;

  async function current(fresh: boolean): Promise<readonly string[]> {
    if (points && !fresh && Date.now() - readAt < 30_000) return points;
    reading ??= readFile(file, "utf8")
      .then(parseMountPoints, () => [])
      .then((list) => {
        points = list;
        readAt = Date.now();
        reading = undefined;
        return list;
      });
    return fresh || !points ? reading : points;
  }

  return {
    async mountOf(path, options = {}) {
      const list = await current(options.fresh === true);
      return list.find((point) => point === "/" || path === point || path.startsWith(`${point}/`)) ?? parentFolder(path);
    },
  };
}

/** Field 5 of each line is the mount point, with space, tab, newline and backslash written as `\ooo`. */
export function parseMountPoints(text: string): string[] {
  const points = text
    .split("\n")
    .map((line) => line.split(" ")[4])
    .filter((point): point is string => point !== undefined && point.startsWith("/"))
    .map((point) => point.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8))));
  return [...new Set(points)].sort((a, b) => b.length - a.length);
}
