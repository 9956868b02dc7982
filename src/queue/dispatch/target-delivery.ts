import type { Clock } from "../../core/clock.ts";
import { StoreUnavailableError, TargetAuthError, TargetConfigError, TargetUnavailableError, describeError } from "../../core/errors.ts";
import type { Logger } from "../../core/logger.ts";
import { timedCall, type DispatchMetrics, type TargetCallMetrics } from "../../core/metrics.ts";
import type { ScanContext, ScanOutcome, Target } from "../../core/target.ts";
import type { LandedStart } from "../rules/landed.ts";
import { BACKOFF_MAX_MS, backoffDelay } from "../../core/backoff.ts";
import type { DispatchQueue, WorkItem } from "./dispatch-port.ts";
import type { HookContext } from "./run-command.ts";

/**
 * One scan of one folder by one target, and the availability probe of a target that was down. Every outcome is
 * recorded in the queue here (`untilStored`); errors are classified once (see `Target`): a target-wide error holds the
 * target back (its `TargetHealth`), any other error retries this folder later. A folder failing for longer than
 * `retryMaxMs` becomes `failed`. The user's before/after commands run around a folder's round of scans.
 */
export interface TargetDeliveryOptions {
  readonly queue: DispatchQueue;
  readonly clock: Clock;
  readonly log: Logger;
  /** `RUN_COMMAND_BEFORE_SCAN` / `RUN_COMMAND_AFTER_SCAN`, once per dispatch round of a folder. */
  readonly commands: CommandHooks | undefined;
  readonly signal: AbortSignal;
  readonly targetNames: readonly string[];
  readonly retryMaxMs: number;
  readonly random?: () => number;
  /** Wraps a wait on the target (the dispatcher counts it as not its own work). */
  readonly waitOutside: <T>(answer: Promise<T>) => Promise<T>;
  readonly metrics?: DispatchMetrics & TargetCallMetrics;
  /** Told when a target stops answering and when it answers again, once each way; must return at once. */
  readonly onTargetChange?: (change: TargetChange) => void;
  /** Whether a target's scan gets a landed check (absent: none). */
  readonly landed?: (target: Target, item: WorkItem) => LandedStart | undefined;
}

/**
 * What the dispatcher knows about one target. A target that is down (`TargetUnavailableError`) or refuses our
 * credentials (`TargetAuthError`) is held back as a whole, with backoff, while the other targets go on; when its wait
 * is over, `isAvailable()` is asked before any folder is sent to it again. Each folder's own wait with a target (a
 * failed delivery's backoff) is in the queue, stored.
 */
export interface TargetHealth {
  readonly target: Target;
  /** Folders (item ids) being scanned by this target now. */
  readonly inFlight: Set<number>;
  /** Consecutive failures of the target as a whole. */
  failures: number;
  /** Held back until then (0 = available). */
  downUntil: number;
  /** When the current outage began. */
  downSince?: number;
  /** Ask `isAvailable()` before sending work again. */
  needsProbe: boolean;
  probing: boolean;
}

/**
 * A target stopped answering (its first target-wide failure while it was up) or answers again (the first success
 * after that): said once each way, for `NOTIFY`'s `target_down` and `target_up`.
 */
export interface TargetChange {
  readonly target: string;
  readonly available: boolean;
  /** Why it cannot scan (when it went down). */
  readonly reason?: string;
  /** When the outage began (when it is back). */
  readonly downSince?: number;
}

export function createTargetHealth(target: Target): TargetHealth {
  return { target, inFlight: new Set(), failures: 0, downUntil: 0, needsProbe: false, probing: false };
}

/** True for the errors that hold the whole target back (rather than one folder). */
function isTargetWideError(error: unknown): boolean {
  return error instanceof TargetUnavailableError || error instanceof TargetAuthError || error instanceof TargetConfigError;
}

/** Marks the target down after a failure; returns the wait in ms. Credentials problems wait the longest. */
function markDown(health: TargetHealth, error: unknown, now: number, random?: () => number): number {
  health.failures += 1;
  const wait =
    error instanceof TargetAuthError || error instanceof TargetConfigError
      ? BACKOFF_MAX_MS
      : backoffDelay(health.failures, random === undefined ? {} : { random });
  health.downUntil = now + wait;
  health.downSince ??= now;
  health.needsProbe = true;
  return wait;
}

function markUp(health: TargetHealth): void {
  health.failures = 0;
  health.downUntil = 0;
  health.downSince = undefined;
  health.needsProbe = false;
}

/** How long the dispatcher waits before it looks at a store that refused a write again. */
export const STORE_RETRY_MS = 2_000;

/**
 * Records an outcome the queue must not forget (a scan the target already took, a file check's result), trying again
 * every `STORE_RETRY_MS` while the store cannot write (it logs that episode itself, once). A scan Plex accepted while
 * the disk was full is recorded once the disk takes writes again, instead of being sent again after recovery. Gives
 * up, rethrowing, only on shutdown: the folder then stays queued and is scanned again after the restart.
 */
export async function untilStored<T>(write: () => Promise<T>, clock: Clock, signal: AbortSignal): Promise<T> {
  for (;;) {
    try {
      return await write();
    } catch (error) {
      if (!(error instanceof StoreUnavailableError) || signal.aborted) throw error;
      await clock.sleep(STORE_RETRY_MS, signal);
    }
  }
}

export function createTargetDelivery(options: TargetDeliveryOptions) {
  const { queue, clock, log, signal, metrics } = options;
  const rounds = createScanRoundCommands({ commands: options.commands, log, signal });
  const jitter = options.random ? { random: options.random } : {};
  const seconds = (ms: number): number => Math.round(ms / 1000);
  const hours = (ms: number): string => `${Math.round((ms / 3_600_000) * 10) / 10} hour(s)`;

  /** The target answered: up again, said once when it had been down. */
  function cameUp(health: TargetHealth): void {
    const downSince = health.downSince;
    markUp(health);
    if (downSince !== undefined) options.onTargetChange?.({ target: health.target.name, available: true, downSince });
  }

  async function recorded(health: TargetHealth, item: WorkItem, outcome: ScanOutcome): Promise<void> {
    const folder = item.scanFolder ?? item.folder;
    const fields = { id: item.id, folder, target: health.target.name };
    const landed = outcome.status === "scanned" ? options.landed?.(health.target, item) : undefined;
    const record = (): ReturnType<DispatchQueue["recordScan"]> =>
      queue.recordScan(item.id, item.rev, health.target.name, outcome, options.targetNames, landed);
    const result = await untilStored(record, clock, signal);
    const left = result?.completed ? `; ${await queue.pendingCount()} folder(s) left in the queue` : "";
    if (outcome.status === "scanned") log.info(fields, `Finished scan of '${folder}' by '${health.target.name}'${left}.`);
    else log.info({ ...fields, reason: outcome.reason }, `Skipped the scan of '${folder}' by '${health.target.name}': ${outcome.reason}${left}.`);
    if (result === undefined) log.debug(fields, "The folder got new requests (or was removed) during the scan");
  }

  async function failed(health: TargetHealth, item: WorkItem, attempt: number, error: unknown): Promise<void> {
    const folder = item.scanFolder ?? item.folder;
    const name = health.target.name;
    const fields = { id: item.id, folder, target: name, err: error };
    const why = describeError(error);
    const targetWide = isTargetWideError(error);
    metrics?.scanFinished(name, targetWide ? "unavailable" : "failed");
    // The delivery to this target waits on its own, with a backoff that grows with the folder's attempts (a server
    // that answers its availability probe but keeps failing this folder does not get it every few seconds). It is
    // stored: a restart keeps it. The other targets deliver the folder meanwhile.
    const retryInMs = backoffDelay(attempt, jitter);
    if (targetWide) {
      // The target is held back as a whole too (its health): nothing is sent to it until it answers a probe.
      const wasUp = health.downSince === undefined;
      const wait = markDown(health, error, clock.now(), options.random);
      if (wasUp) options.onTargetChange?.({ target: name, available: false, reason: why });
      const level = error instanceof TargetAuthError || error instanceof TargetConfigError ? "error" : "warn";
      log[level](fields, `Target '${name}' cannot scan now (${why}). Trying again in ${seconds(wait)} seconds.`);
    } else {
      log.warn(fields, `Scan of '${folder}' by '${name}' failed (${why}). Retrying in ${seconds(retryInMs)} seconds.`);
    }
    const failure = { error: `${name}: ${why}`, retryMaxMs: options.retryMaxMs, retryInMs };
    const result = await untilStored(() => queue.recordFailure(item.id, item.rev, name, failure, options.targetNames), clock, signal);
    if (result.failed) {
      const limit = hours(options.retryMaxMs);
      log.error(fields, `Giving up on '${folder}' for '${name}' after it failed for ${limit}; kept as failed once the other targets are done, it can be retried.`);
    }
  }

  return {
    /** New commands (a config reload), for the rounds that start from now on. */
    setCommands: rounds.setCommands,

    async scan(health: TargetHealth, item: WorkItem): Promise<void> {
      let attempt: number | undefined;
      try {
        // The store cannot write: the dispatcher pauses until it can (nothing is lost: the folder stays queued).
        const start = await queue.beginAttempt(item.id, item.rev, options.targetNames.length).catch((error: unknown) => {
          if (error instanceof StoreUnavailableError) return undefined;
          throw error;
        });
        if (start === undefined) return;
        if (!start.go) return void log.error({ id: item.id, folder: item.folder }, `Giving up on '${item.folder}': ${start.reason}`);
        attempt = start.attempt;
        await rounds.enter(item);
        if (signal.aborted) return void (await queue.recordInterrupted(item.id));
        const folder = item.scanFolder ?? item.folder;
        log.debug({ id: item.id, folder, target: health.target.name }, "Scan request is now being processed...");
        const context = contextOf(item, attempt, signal);
        const target = health.target;
        const outcome = await timedCall(metrics, target.name, "scan", () => options.waitOutside(target.scan(folder, context)));
        cameUp(health);
        metrics?.scanFinished(target.name, outcome.status, outcome.status === "scanned" ? waitedSeconds(item, clock) : undefined);
        await recorded(health, item, outcome);
      } catch (error) {
        if (signal.aborted) {
          log.info({ id: item.id, folder: item.folder }, "Scan interrupted by shutdown; the folder stays queued.");
          if (attempt !== undefined) await queue.recordInterrupted(item.id).catch(() => {});
        } else if (attempt !== undefined) {
          await failed(health, item, attempt, error);
        } else {
          throw error;
        }
      } finally {
        health.inFlight.delete(item.id);
        if (attempt !== undefined) await rounds.leave(item);
      }
    },

    async probe(health: TargetHealth): Promise<void> {
      health.probing = true;
      const name = health.target.name;
      try {
        const target = health.target;
        const available = await timedCall(metrics, name, "probe", () => options.waitOutside(target.isAvailable())).catch(() => false);
        const now = clock.now();
        if (available) {
          cameUp(health);
          return void log.info({ target: name }, `Target '${name}' is available again.`);
        }
        const wait = markDown(health, undefined, now, options.random);
        log.warn({ target: name }, `Target '${name}' is still unavailable. Trying again in ${seconds(wait)} seconds.`);
        if (health.downSince !== undefined && now - health.downSince >= options.retryMaxMs) {
          const reason = `${name}: unavailable for more than ${hours(options.retryMaxMs)}`;
          const count = await queue.failWaitingFor(name, options.retryMaxMs, reason, options.targetNames);
          const message = `Gave up on ${count} folder(s) waiting for '${name}' (${reason}).`;
          if (count > 0) log.error({ target: name, count }, message);
        }
      } finally {
        health.probing = false;
      }
    },
  };
}

function contextOf(item: WorkItem, attempt: number, signal: AbortSignal): ScanContext {
  return {
    id: item.id,
    sources: item.requests.map((r) => ({ source: r.source, event: r.event, path: r.path, deleted: r.deleted })),
    files: item.files,
    priority: item.priority,
    attempt,
    signal,
    ...(item.refresh ? { refresh: item.refresh } : {}),
  };
}

/** From the folder's first request to now (the target's answer). */
function waitedSeconds(item: WorkItem, clock: Clock): number | undefined {
  return item.firstAt === undefined ? undefined : (clock.now() - item.firstAt) / 1000;
}

/**
 * Runs the before/after commands once per dispatch round of a folder, however many targets scan it: the before
 * command when the first target starts on the folder (the others wait for it), the after command when the last one
 * finishes, whatever the outcome.
 */
export interface CommandHooks {
  readonly before?: string;
  readonly after?: string;
  readonly timeoutMs: number;
  /** The shell (default `/bin/sh`), replaceable in tests. */
  readonly shell?: string;
  /** The environment the commands run in (autoscan's own; the composition root passes it). */
  readonly baseEnv?: Readonly<Record<string, string | undefined>>;
}

interface ScanRoundCommands {
  enter(item: WorkItem): Promise<void>;
  leave(item: WorkItem): Promise<void>;
  /** New commands (a config reload), for the rounds that start from now on. */
  setCommands(commands: CommandHooks | undefined): void;
}

interface Round {
  inside: number;
  readonly before: Promise<void>;
}

function createScanRoundCommands(options: {
  readonly commands: CommandHooks | undefined;
  readonly log: Logger;
  readonly signal: AbortSignal;
}): ScanRoundCommands {
  const rounds = new Map<number, Round>();
  let { commands } = options;
  const run = async (command: string | undefined, stage: "before" | "after", item: WorkItem): Promise<void> => {
    if (!commands || !command || command.trim().length === 0 || options.signal.aborted) return;
    // The child-process machinery is loaded with the first command that runs, not by every start.
    const { runCommandHook } = await import("./run-command.ts");
    await runCommandHook(command, stage, hookContextOf(item), {
      timeoutMs: commands.timeoutMs,
      log: options.log,
      signal: options.signal,
      ...(commands.shell ? { shell: commands.shell } : {}),
      ...(commands.baseEnv ? { baseEnv: commands.baseEnv } : {}),
    });
  };

  return {
    setCommands(next) {
      commands = next;
    },
    enter(item) {
      const round = rounds.get(item.id);
      if (round) {
        round.inside++;
        return round.before;
      }
      const before = run(commands?.before, "before", item);
      rounds.set(item.id, { inside: 1, before });
      return before;
    },
    async leave(item) {
      const round = rounds.get(item.id);
      if (!round || --round.inside > 0) return;
      rounds.delete(item.id);
      await run(commands?.after, "after", item);
    },
  };
}

function hookContextOf(item: WorkItem): HookContext {
  return {
    folder: item.scanFolder ?? item.folder,
    files: item.files,
    sources: item.requests.map((request) => request.source),
  };
}
