import { readFile, stat } from "node:fs/promises";
import type { Logger } from "../core/logger.ts";
import { createMountLookers, HELPER_GONE, type LookOp } from "./mount-looker.ts";
import type { ListAnswer } from "./dir-listing.ts";
import { parentFolder } from "./normalize.ts";

/**
 * What is at a local path: `unanswered` when the disk did not answer in time (a hung rclone or NFS mount). Callers
 * count it as "not there yet".
 */
export type DiskEntry = "file" | "directory" | "missing" | "unanswered";

/**
 * Every look at the media disks (file checks, kind resolution, folder watchers) goes through one probe, because a stat
 * on a mount that stopped answering blocks its thread until the mount answers, however long that takes. The looks run
 * in a helper process per mount (`mount-looker.ts`), never on libuv's thread pool, which the queue's journal writes
 * need. So:
 * - at most one look runs under a mount at a time, counted until it really returns, a timed-out one included: a
 *   mount that hangs costs one helper thread, and N hung mounts cost N, whatever the thread pool's size; mounts are
 *   looked at side by side;
 * - each look answers within `timeoutMs` (5 s) whatever the disk does, waiting for its turn included (within about
 *   three times that when the process itself was too busy to hear the answer, see below): `unanswered`,
 *   and a stat already started is left to finish in its own time;
 * - a mount whose look has taken longer than `slowMs` (1 s) is slow: the looks waiting behind it, and new ones under
 *   it, answer `unanswered` at once without a look (`slowMounts`), so that callers hold their work for that mount
 *   (`onMountAnswers` tells them when its look returns) instead of waiting with it;
 * - while a mount has a stat that timed out and has not returned, it is hung (`unresponsiveMounts`), slow with it;
 * - one stat per path at a time: a look at a path whose stat has not returned yet waits for that stat (within its own
 *   timeout) instead of starting another, so a slow disk never piles up stats of the same file;
 * - one warning names the mount when it stops answering, one info line when it answers again (and `onMountAnswers`
 *   listeners hear of it); never a line per file.
 * A path's mount comes from `/proc/self/mountinfo` (never from a stat: that would hang on the very mount in question),
 * read again whenever a look times out, so a mount that appeared after the last read is named, never `/`. The timeout
 * runs on real time, from when the stat started (a look still waiting for its turn is not a disk that did not answer),
 * and a process that was too busy to hear the answer (the event loop held, the thread pool full) gives the look its
 * time again before the disk is called hung.
 */
export interface DiskProbeOptions {
  readonly log: Logger;
  /** How long a look may take, waiting for its turn included (default 5000 ms). */
  readonly timeoutMs?: number;
  /** How long a mount's look may run before the looks waiting behind it give up at once (default 1000 ms). */
  readonly slowMs?: number;
  /** Where the mount points are listed (default `/proc/self/mountinfo`; elsewhere than Linux a folder stands for it). */
  readonly mountInfoFile?: string;
}

export interface DiskProbe {
  /** Never rejects; answers within the timeout (about three, while the process is too busy to hear an answer). Unreadable
   *  counts as missing, as `os.path.exists` did. */
  stat(localPath: string): Promise<DiskEntry>;
  /**
   * A directory's entries (`dir-listing.ts`: its identity, subfolders, links to folders, files with size and mtime),
   * under the same budget, timeout and hung-mount rules as a stat (one look for all of it, what the folder is
   * included, so a caller needs no look of its own at it): `unanswered` when the disk did not answer. A path that is a
   * symbolic link is listed through it unless `followLink` is false (then it answers `link`).
   */
  list(localPath: string, options?: { readonly followLink?: boolean }): Promise<ListAnswer | "unanswered">;
  /** Stats started and not returned yet (timed-out ones included). */
  inFlight(): number;
  /** Mounts that have stopped answering, by mount point. */
  unresponsiveMounts(): string[];
  /** Mounts whose one look has run longer than `slowMs` (the hung ones included): looks under them wait without a look. */
  slowMounts(): string[];
  /** The mount point a local path lies under (from the mount table, never from a stat). */
  mountOf(localPath: string): Promise<string>;
  /** `listener` hears of each mount that answers again after it was slow or stopped; returns the unsubscribe. */
  onMountAnswers(listener: (mount: string) => void): () => void;
}

export type { DirListing, ListAnswer } from "./dir-listing.ts";

export const DEFAULT_STAT_TIMEOUT_MS = 5_000;
export const DEFAULT_SLOW_MS = 1_000;

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
  /** Answers `unanswered` at once (a look still waiting for its turn, under a mount found slow or hung meanwhile). */
  giveUp(): void;
}

export function createDiskProbe(options: DiskProbeOptions): DiskProbe {
  const log = options.log.child({ component: "DISK" });
  const timeoutMs = Math.max(1, options.timeoutMs ?? DEFAULT_STAT_TIMEOUT_MS);
  const slowMs = Math.max(1, options.slowMs ?? DEFAULT_SLOW_MS);
  const lookers = createMountLookers();
  const mounts = createMountTable(options.mountInfoFile ?? "/proc/self/mountinfo");
  /** Mount point → when it stopped answering. */
  const hung = new Map<string, number>();
  /** Mount point → stats running under it. */
  const runningUnder = new Map<string, number>();
  /** Mounts whose look has run longer than `slowMs` and not returned yet. */
  const slow = new Set<string>();
  const waiting: Look[] = [];
  /** Look key (the operation and the path) → the one call of it that has not returned yet (and what it will find). */
  const statting = new Map<string, Promise<Found<unknown>>>();
  const answerListeners = new Set<(mount: string) => void>();
  let running = 0;

  const canStart = (mount: string): boolean => (runningUnder.get(mount) ?? 0) === 0;
  const waitsWithoutLook = (mount: string): boolean => hung.has(mount) || slow.has(mount);

  function startWaiting(): void {
    for (let i = 0; i < waiting.length; ) {
      const next = waiting[i];
      if (next && canStart(next.mount)) {
        waiting.splice(i, 1);
        next.start();
      } else i += 1;
    }
  }

  /** The looks waiting behind `mount`'s look give up: the mount is slow (or hung). */
  function giveUpWaiting(mount: string): void {
    for (const waiter of waiting.filter((w) => w.mount === mount)) waiter.giveUp();
  }

  function markSlow(look: Look): void {
    if (look.returned) return;
    slow.add(look.mount);
    giveUpWaiting(look.mount);
  }

  function warnHung(look: Look): void {
    if (look.returned || hung.has(look.mount)) return;
    hung.set(look.mount, Date.now());
    markSlow(look);
    log.warn(
      { mount: look.mount, path: look.path, timeoutMs },
      `Mount '${look.mount}' does not answer: a look at '${look.path}' got no answer in ${timeoutMs / 1000} s. ` +
        "Files under it count as not there yet until it answers again.",
    );
  }

  /** A stat under a mount that was slow or had stopped answering returned (an answer or an error): it answers again. */
  function noteAnswer(look: Look, code: string | undefined): void {
    const wasSlow = slow.delete(look.mount);
    const since = hung.get(look.mount);
    if (since === undefined) {
      if (wasSlow) for (const listener of answerListeners) listener(look.mount);
      return;
    }
    hung.delete(look.mount);
    const seconds = Math.round((Date.now() - since) / 1000);
    const how = code === undefined || code === "ENOENT" || code === "ENOTDIR" ? "" : ` (with ${code})`;
    log.info({ mount: look.mount, path: look.path }, `Mount '${look.mount}' answers again${how} after ${seconds} s.`);
    for (const listener of answerListeners) listener(look.mount);
  }

  /** The one call of `op` on its path in flight, started now unless one is already on its way. */
  function runOnce<T>(op: DiskOp<T>, mount: string): Promise<Found<T>> {
    let pending = statting.get(op.key) as Promise<Found<T>> | undefined;
    if (!pending) {
      pending = lookers.look(mount, op.op, op.path) as Promise<Found<T>>;
      statting.set(op.key, pending);
      void pending.then(() => statting.delete(op.key));
    }
    return pending;
  }

  /** A look timed out: the mount table is read again first, so a mount that appeared since is the one named. */
  async function blame(look: Look): Promise<void> {
    const mount = await mounts.mountOf(look.path, { fresh: true });
    if (mount !== look.mount && !look.returned) {
      const named = look.mount;
      runningUnder.set(named, (runningUnder.get(named) ?? 1) - 1);
      runningUnder.set(mount, (runningUnder.get(mount) ?? 0) + 1);
      lookers.move(named, mount);
      look.mount = mount;
      // The mount first named was never slow: its folders are looked at again, the one that hangs is the slow one.
      if (slow.delete(named)) {
        slow.add(mount);
        for (const listener of answerListeners) listener(named);
      }
      startWaiting();
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
          watchSlow();
          // A helper that died (killed, out of memory) found nothing out: not there yet, never "missing".
          void runOnce(op, state.mount).then(({ value, code }) => returned(code === HELPER_GONE ? "unanswered" : value, code));
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
      // The stat returned, maybe long after its caller got "unanswered": only now is its mount free for the next look.
      const returned = (entry: T | "unanswered", code?: string): void => {
        state.returned = true;
        clearTimeout(slowTimer);
        running -= 1;
        runningUnder.set(state.mount, (runningUnder.get(state.mount) ?? 1) - 1);
        noteAnswer(state, code);
        answer(entry);
        startWaiting();
      };
      let slowTimer: NodeJS.Timeout | undefined;
      // The mount is slow once its look has run `slowMs`, unless the process was too busy to hear the answer.
      const watchSlow = (): void => {
        const slowAt = Date.now() + slowMs;
        slowTimer = setTimeout(() => {
          void processWasBusy(slowAt, () => state.returned).then((busy) => {
            if (state.returned) return;
            if (busy) watchSlow();
            else markSlow(state);
          });
        }, slowMs);
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
          // A stat that got its turn late has not hung yet: the mount is named once its own stat took that long.
          answer("unanswered");
          // A busy process looks again a timeout later: the mount is named once the process could have heard it.
          const blameLater = (ms: number): void => {
            const blameAt = Date.now() + ms;
            setTimeout(() => {
              void processWasBusy(blameAt, () => state.returned).then(async (busy) => {
                if (state.returned) return;
                if (busy) blameLater(timeoutMs);
                else await blame(state);
              });
            }, ms);
          };
          return blameLater(left);
        }
        answer("unanswered");
        if (state.joined) return;
        // Its turn did not come in time (the look ahead of it under its mount hangs, most likely): it never starts.
        const index = waiting.indexOf(state);
        if (index >= 0) waiting.splice(index, 1);
        log.debug({ path }, `No turn to look at '${path}' within ${timeoutMs} ms; counted as not there yet`);
      };
      let timer = setTimeout(() => void onTimeout(), timeoutMs);
      if (waitsWithoutLook(mount)) return answer("unanswered");
      // The same path's stat is on its way: this look waits for it (no second stat, no turn of its own).
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
      return waitsWithoutLook(mount) ? "unanswered" : look(statOp(localPath), mount);
    },
    async list(localPath, options = {}) {
      const mount = await mounts.mountOf(localPath);
      return waitsWithoutLook(mount) ? "unanswered" : look(listOp(localPath, options.followLink !== false), mount);
    },
    inFlight: () => running,
    unresponsiveMounts: () => [...hung.keys()],
    slowMounts: () => [...slow],
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
  readonly op: LookOp;
  readonly path: string;
  /** Only a type tag: what the call finds. */
  readonly found?: T;
}

const statOp = (path: string): DiskOp<DiskEntry> => ({ key: `s:${path}`, op: "stat", path });
/** A directory listing: what the folder is, its entries, then each file's size and mtime (one look for all of it). */
const listOp = (path: string, follow: boolean): DiskOp<ListAnswer> =>
  follow ? { key: `l:${path}`, op: "list", path } : { key: `L:${path}`, op: "list-here", path };

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
