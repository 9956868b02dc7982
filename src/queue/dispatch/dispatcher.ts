import type { Clock } from "../../core/clock.ts";
import { StoreUnavailableError, describeError } from "../../core/errors.ts";
import { withLogId } from "../../core/log-context.ts";
import type { Logger } from "../../core/logger.ts";
import type { DispatchMetrics, TargetCallMetrics } from "../../core/metrics.ts";
import type { Target } from "../../core/target.ts";
import type { LandedStart } from "../rules/landed.ts";
import type { DispatchQueue, WorkItem } from "./dispatch-port.ts";
import { createDiskProbe } from "../../paths/disk-probe.ts";
import { checkItemFiles, type DiskEntry, type FileCheckSettings } from "./file-check.ts";
import { createHolds, type DispatchAnchors, type DispatchDisk } from "./holds.ts";
import {
  createTargetDelivery,
  createTargetHealth,
  STORE_RETRY_MS,
  untilStored,
  type CommandHooks,
  type TargetChange,
  type TargetHealth,
} from "./target-delivery.ts";

/**
 * Takes due folders off the queue and hands them to the targets. Each target has its own slots (`concurrency`, 1 by
 * default: Plex serialises scans anyway) and its own backoff, so a target that is down never holds back another.
 * Due folders go out by priority (lower number first), then oldest first. File checks run beside the scans and
 * never hold a slot while they wait. There is no fixed sleep between scans: the loop sleeps until the next folder is
 * due, a scan finishes, or new work arrives. A round (`schedule`): take due folders for their file checks
 * (`file-check.ts`), then each target's due folders for its delivery (`target-delivery.ts`), leaving out what the
 * holds keep (`holds.ts`); the loop's engine is at the end of this file.
 */
export interface DispatcherOptions {
  readonly queue: DispatchQueue;
  readonly targets: readonly Target[];
  readonly clock: Clock;
  readonly log: Logger;
  /** Server form → the forms under which autoscan finds the path on its own disk, best first (`localForms`). */
  readonly localForms: (serverPath: string) => readonly string[];
  /** `SERVER_MAX_FILE_CHECKS` (10). */
  readonly maxFileChecks: number;
  /** `SERVER_FILE_CHECK_DELAY`, in ms (60 s). */
  readonly fileCheckDelayMs: number;
  /** `SERVER_SCAN_FOLDER_ON_FILE_EXISTS_EXHAUSTION` (false). */
  readonly scanFolderOnFileExistsExhaustion?: boolean;
  /** `SERVER_SCAN_CONCURRENCY`: scans at once per target (1). */
  readonly concurrency?: number;
  /** `SERVER_RETRY_MAX_HOURS` in ms (24 h): a folder failing that long becomes `failed`. */
  readonly retryMaxMs?: number;
  /** `RUN_COMMAND_BEFORE_SCAN` / `RUN_COMMAND_AFTER_SCAN` with `SERVER_COMMAND_TIMEOUT`. */
  readonly commands?: CommandHooks;
  /**
   * What is at a local path. The service passes the `DiskProbe` it shares with kind resolution (one budget of stats
   * for the process); the default is a probe of this dispatcher's own (5 s timeout, 2 stats in flight).
   */
  readonly statPath?: (localPath: string) => Promise<DiskEntry>;
  /**
   * The probe's view of the mounts, so that a folder whose disk does not answer waits for its mount (no check spent)
   * and is checked again when it answers. The service passes its `DiskProbe`; without it (and with `statPath`), an
   * unanswered check is tried again after `fileCheckDelayMs`, also without spending a check.
   */
  readonly disk?: DispatchDisk;
  /** Called for each file still missing before the next check (rclone cache refresh). */
  readonly onFileMissing?: (serverPath: string, localPath: string) => Promise<void>;
  /** Called before each file check of a request with its local forms (the rclone refresh for Google Drive files). */
  readonly beforeFileCheck?: FileCheckSettings["beforeFileCheck"];
  /** Folders being checked at once (4); the stats themselves are bounded by `statPath`'s probe. */
  readonly checkConcurrency?: number;
  /** Jitter source in [0, 1), injected in tests. */
  readonly random?: () => number;
  /** `SERVER_METRICS`: scans, file checks and target calls are counted here. */
  readonly metrics?: DispatchMetrics & TargetCallMetrics;
  /** `SERVER_ANCHORS`: folders under a missing anchor wait (no check spent, nothing sent) until it is back. */
  readonly anchors?: DispatchAnchors;
  /** Told when a target stops answering and when it answers again, once each way (`NOTIFY`); must return at once. */
  readonly onTargetChange?: (change: TargetChange) => void;
  /** Whether a target's scan gets a landed check, and when its first look is due (`landed/landed-start.ts`);
   *  `undefined`: the scan records no landed state (a landed check's own rescan). */
  readonly landed?: (target: Target, item: WorkItem) => LandedStart | undefined;
}

export interface StopResult {
  /** True when every scan in progress finished within the time allowed. */
  readonly drained: boolean;
  /** Scans that were still running and were told to abort (their folders stay queued). */
  readonly abandoned: number;
}

export interface Dispatcher {
  start(): void;
  /** Takes no new work, waits up to `timeoutMs` (30 s) for scans in progress, then aborts the rest. */
  stop(options?: { readonly timeoutMs?: number }): Promise<StopResult>;
  /**
   * Resolves when the loop waits for time, new work or a target's answer, and nothing else is in progress (tests
   * use it to let a manual clock's step play out).
   */
  whenIdle(): Promise<void>;
  /** The items whose files are being checked, and those being sent to each target, right now (from memory). */
  activity(): {
    checking: number[];
    scanning: { id: number; target: string }[];
    held: { id: number; anchor: string }[];
    /** Folders whose disk does not answer: they wait for that mount. */
    waitingForMount: { id: number; mount: string }[];
  };
  /** New file-check settings and commands (a config reload): for the checks and rounds that start from now on. */
  reconfigure(
    options: Pick<DispatcherOptions, "maxFileChecks" | "fileCheckDelayMs" | "scanFolderOnFileExistsExhaustion" | "commands">,
  ): void;
}

export function createDispatcher(options: DispatcherOptions): Dispatcher {
  const { queue, clock } = options;
  const log = options.log.child({ component: "DISPATCH" });
  const healths: TargetHealth[] = options.targets.map(createTargetHealth);
  const concurrency = Math.max(1, options.concurrency ?? 1);
  const checkConcurrency = Math.max(1, options.checkConcurrency ?? 4);
  const checking = new Set<number>();
  const abort = new AbortController();
  const { metrics } = options;
  const ownProbe = options.statPath ? undefined : createDiskProbe({ log });
  const statPath = options.statPath ?? (ownProbe as NonNullable<typeof ownProbe>).stat;
  const { release } = queue;
  // Several instances: a folder held here for a missing anchor is let go, so an instance that has the mount takes it.
  const releaseClaim = release ? (id: number) => release(id) : undefined;
  const holds = createHolds({ anchors: options.anchors, disk: options.disk ?? ownProbe, log, release: releaseClaim });
  let settings: FileCheckSettings = {
    maxChecks: options.maxFileChecks,
    delayMs: options.fileCheckDelayMs,
    folderOnExhaustion: options.scanFolderOnFileExistsExhaustion ?? false,
    localForms: options.localForms,
    statPath: metrics ? countTimeouts(statPath, metrics) : statPath,
    log,
    ...(options.onFileMissing ? { onFileMissing: options.onFileMissing } : {}),
    ...(options.beforeFileCheck ? { beforeFileCheck: options.beforeFileCheck } : {}),
  };

  const loop = createDispatchLoop({ clock, log, pass: schedule });
  const { track } = loop;
  let unsubscribe: (() => void) | undefined;

  const delivery = createTargetDelivery({
    queue,
    clock,
    log,
    commands: options.commands,
    signal: abort.signal,
    targetNames: options.targets.map((t) => t.name),
    retryMaxMs: options.retryMaxMs ?? 24 * 60 * 60_000,
    waitOutside: (answer) => loop.waitOutside(answer),
    ...(options.random ? { random: options.random } : {}),
    ...(metrics ? { metrics } : {}),
    ...(options.onTargetChange ? { onTargetChange: options.onTargetChange } : {}),
    ...(options.landed ? { landed: options.landed } : {}),
  });

  async function launchChecks(now: number): Promise<void> {
    const free = checkConcurrency - checking.size;
    if (free <= 0) return;
    holds.refresh();
    const skip = new Set([...checking, ...holds.ids("mount")]);
    for (const item of await takeDue(free, skip, (limit, skipped) => queue.dueForCheck(now, limit, skipped))) {
      checking.add(item.id);
      track(() => withLogId(item.id, async () => {
        try {
          const outcome = await checkItemFiles(item, clock.now(), settings);
          // Files missing because their mount has just gone: not a check spent, the folder waits for its anchor.
          if (outcome.kind !== "ready" && (await holds.holdForAnchor(item))) return;
          if (outcome.kind === "unanswered") metrics?.fileChecked("unanswered");
          // The disk did not answer: the folder waits for its mount (held while the mount hangs, else looked at again
          // after the check delay), and no check is spent either way.
          if (outcome.kind === "unanswered" && (await holds.holdForMount(item, outcome.local))) return;
          const result = outcome.kind === "unanswered" ? { kind: "wait" as const, checks: item.checks, waitMs: settings.delayMs } : outcome;
          if (result.kind !== "wait" || result.checks > item.checks) metrics?.fileChecked(CHECK_RESULTS[result.kind]);
          await untilStored(() => queue.recordCheck(item.id, item.rev, result), clock, abort.signal);
        } finally {
          checking.delete(item.id);
        }
      }));
    }
  }

  /** The folders `health`'s target may take now (or a probe started when it needs one). */
  async function dueScans(health: TargetHealth, now: number): Promise<WorkItem[]> {
    if (health.downUntil > now || health.probing) return [];
    if (health.needsProbe) {
      track(() => delivery.probe(health));
      return [];
    }
    const free = concurrency - health.inFlight.size;
    if (free <= 0) return [];
    const due = (limit: number, skip: ReadonlySet<number>) => queue.dueForTarget(health.target.name, now, limit, skip);
    return takeDue(free, health.inFlight, due);
  }

  /**
   * Up to `limit` due items that may go out now: `read` is asked with `inProgress` and the anchor-held ids left out;
   * the holds keep those under a missing anchor, and `read` is asked again for the rest.
   */
  async function takeDue(
    limit: number,
    inProgress: ReadonlySet<number>,
    read: (limit: number, skip: ReadonlySet<number>) => Promise<WorkItem[]>,
  ): Promise<WorkItem[]> {
    const out: WorkItem[] = [];
    for (;;) {
      const due = await read(limit - out.length, new Set([...inProgress, ...holds.ids("anchor"), ...out.map((item) => item.id)]));
      const free = holds.letOut(due);
      out.push(...free);
      // Each round either holds a new item (left out of the next) or is the last: this ends.
      if (free.length === due.length || out.length >= limit) return out;
    }
  }

  function launchScans(health: TargetHealth, items: readonly WorkItem[]): void {
    for (const item of items) {
      health.inFlight.add(item.id);
      track(() => withLogId(item.id, () => delivery.scan(health, item)));
    }
  }

  /** Starts what is due; returns when to look again. */
  async function schedule(): Promise<number> {
    const now = clock.now();
    if (healths.length === 0) return Number.POSITIVE_INFINITY;
    // While the store cannot write, nothing new starts: its outcome could not be recorded (and the store says so).
    if (!queue.writable()) return now + STORE_RETRY_MS;
    await launchChecks(now);
    // Every target's due folders are read first, then all their scans start together: a folder due for two targets
    // starts on both in the same turn (one round for its commands), as when the reads were synchronous.
    const picked: WorkItem[][] = [];
    for (const health of healths) picked.push(await dueScans(health, now));
    healths.forEach((health, i) => launchScans(health, picked[i] ?? []));
    const downs = healths.filter((h) => h.downUntil > now && !h.probing).map((h) => h.downUntil);
    return Math.min((await queue.nextWakeAt(now)) ?? Number.POSITIVE_INFINITY, ...downs);
  }

  return {
    start() {
      if (unsubscribe) return;
      if (healths.length === 0) log.warn("No scan targets are configured: scan requests are queued but not sent.");
      unsubscribe = queue.onWork((earliest) => loop.wakeBy(earliest));
      holds.start(() => loop.wake());
      loop.start();
    },
    async stop(stopOptions = {}) {
      unsubscribe?.();
      holds.stop();
      const timeoutMs = stopOptions.timeoutMs ?? 30_000;
      const waiting = loop.running;
      if (waiting > 0) log.info(`Waiting up to ${Math.round(timeoutMs / 1000)} seconds for ${waiting} scan task(s)...`);
      if (await loop.stop(timeoutMs)) return { drained: true, abandoned: 0 };
      const abandoned = loop.running;
      abort.abort();
      await loop.stop(5_000);
      return { drained: false, abandoned };
    },
    whenIdle: () => loop.whenIdle(),
    activity: () => ({
      checking: [...checking],
      scanning: healths.flatMap((health) => [...health.inFlight].map((id) => ({ id, target: health.target.name }))),
      held: holds.held("anchor").map(({ id, by }) => ({ id, anchor: by })),
      waitingForMount: holds.held("mount").map(({ id, by }) => ({ id, mount: by })),
    }),
    reconfigure(next) {
      settings = {
        ...settings,
        maxChecks: next.maxFileChecks,
        delayMs: next.fileCheckDelayMs,
        folderOnExhaustion: next.scanFolderOnFileExistsExhaustion ?? false,
      };
      delivery.setCommands(next.commands);
    },
  };
}

const CHECK_RESULTS = { ready: "found", wait: "waiting", failed: "not_found" } as const;

/** A look at the disk that did not answer in time is a file check's "timeout". */
function countTimeouts(statPath: (localPath: string) => Promise<DiskEntry>, metrics: DispatchMetrics) {
  return async (localPath: string): Promise<DiskEntry> => {
    const entry = await statPath(localPath);
    if (entry === "unanswered") metrics.fileCheckTimedOut();
    return entry;
  };
}

/**
 * The dispatcher's engine, apart from what it dispatches: run `pass` (which starts tasks and says when to look
 * again), sleep on the clock until then, a task ends, or `wake` is called; count the tasks so that `stop` can wait
 * for them and `whenIdle` can tell a test that a step of a manual clock has played out.
 */
interface DispatchLoop {
  start(): void;
  /** Look again now. */
  wake(): void;
  /** Look again if `at` is earlier than the planned wake-up. */
  wakeBy(at: number): void;
  /** Runs a task; its end wakes the loop. */
  track(task: () => Promise<void>): void;
  /** Wraps a wait on an outside system (a target's answer): not our own work, for `whenIdle`. */
  waitOutside<T>(answer: Promise<T>): Promise<T>;
  /** Ends the loop, then waits up to `timeoutMs` for the tasks; resolves whether they all ended. */
  stop(timeoutMs: number): Promise<boolean>;
  readonly running: number;
  whenIdle(): Promise<void>;
}

const MAX_PARK_MS = 60 * 60_000;
const RETRY_AFTER_ERROR_MS = 5_000;

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

function createDispatchLoop(options: { clock: Clock; log: Logger; pass: () => Promise<number> }): DispatchLoop {
  const { clock, log } = options;
  let running = 0;
  let outside = 0;
  let started = false;
  let stopping = false;
  let parked = false;
  let wakeRequested = false;
  let plannedWake = Number.POSITIVE_INFINITY;
  let sleep: AbortController | undefined;
  let done: Promise<void> = Promise.resolve();
  const idleWaiters: (() => void)[] = [];

  const wake = (): void => {
    wakeRequested = true;
    sleep?.abort();
  };
  const isIdle = (): boolean => !started || stopping || (parked && running === outside && !wakeRequested);
  const notifyIdle = (): void => {
    if (isIdle()) for (const resolve of idleWaiters.splice(0)) resolve();
  };

  async function loop(): Promise<void> {
    while (!stopping) {
      wakeRequested = false;
      try {
        plannedWake = await options.pass();
      } catch (error) {
        // A broken pass must not stop dispatching for good (Cloudbox/autoscan's silent stall): look again soon.
        log.error({ err: error }, `Could not read due work from the queue (${describeError(error)}); retrying soon`);
        plannedWake = clock.now() + RETRY_AFTER_ERROR_MS;
      }
      if (wakeRequested || stopping) continue;
      sleep = new AbortController();
      parked = true;
      notifyIdle();
      await clock.sleep(Math.min(MAX_PARK_MS, Math.max(0, plannedWake - clock.now())), sleep.signal);
      parked = false;
      sleep = undefined;
    }
  }

  async function waitForTasks(timeoutMs: number): Promise<boolean> {
    // Real time, not the injected clock: this bounds a shutdown, it is not a rule under test.
    const deadline = Date.now() + timeoutMs;
    while (running > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    return running === 0;
  }

  return {
    start() {
      if (started) return;
      started = true;
      done = loop();
    },
    wake,
    wakeBy(at) {
      if (at < plannedWake) wake();
    },
    track(task) {
      running++;
      void task()
        .catch((error: unknown) => {
          if (stopping) log.debug({ err: error }, "A scan task ended during shutdown");
          else if (error instanceof StoreUnavailableError) log.debug({ err: error }, "A scan task could not be recorded now");
          else log.error({ err: error }, `A scan task failed: ${describeError(error)}`);
        })
        .finally(() => {
          running--;
          wake();
          notifyIdle();
        });
    },
    async waitOutside(answer) {
      outside++;
      notifyIdle();
      try {
        return await answer;
      } finally {
        outside--;
      }
    },
    async stop(timeoutMs) {
      stopping = true;
      wake();
      await done;
      const drained = await waitForTasks(timeoutMs);
      notifyIdle();
      return drained;
    },
    get running() {
      return running;
    },
    async whenIdle() {
      // Idle twice in a row across a turn of the event loop: a target's answer that is already there has been
      // taken in by then (it settles in microtasks), so "idle" is not just the instant before it.
      for (;;) {
        await nextTurn();
        if (!isIdle()) {
          await new Promise<void>((resolve) => idleWaiters.push(resolve));
          continue;
        }
        await nextTurn();
        if (isIdle()) return;
      }
    },
  };
}
