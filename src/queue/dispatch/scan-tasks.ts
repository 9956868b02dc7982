import type { Clock } from "../../core/clock.ts";
import { StoreUnavailableError, TargetAuthError, TargetConfigError, describeError } from "../../core/errors.ts";
import type { Logger } from "../../core/logger.ts";
import { timedCall, type DispatchMetrics, type TargetCallMetrics } from "../../core/metrics.ts";
import type { ScanContext, ScanOutcome } from "../../core/target.ts";
import { backoffDelay } from "./backoff.ts";
import type { DispatchQueue, WorkItem } from "./dispatch-port.ts";
import type { RoundHooks } from "./round-hooks.ts";
import { isTargetWideError, markDown, markUp, type TargetHealth } from "./target-health.ts";
import { untilStored } from "./until-stored.ts";

/**
 * One scan of one folder by one target, and the availability probe of a target that was down. Every outcome is
 * recorded in the queue here; errors are classified once (see `Target`): a target-wide error holds the target back,
 * any other error retries this folder later. A folder failing for longer than `retryMaxMs` becomes `failed`.
 */
export interface ScanTaskOptions {
  readonly queue: DispatchQueue;
  readonly clock: Clock;
  readonly log: Logger;
  readonly hooks: RoundHooks;
  readonly signal: AbortSignal;
  readonly targetNames: readonly string[];
  readonly retryMaxMs: number;
  readonly random?: () => number;
  /** Wraps a wait on the target (the dispatcher counts it as not its own work). */
  readonly waitOutside: <T>(answer: Promise<T>) => Promise<T>;
  readonly metrics?: DispatchMetrics & TargetCallMetrics;
}

export function createScanTasks(options: ScanTaskOptions) {
  const { queue, clock, log, hooks, signal, metrics } = options;
  const jitter = options.random ? { random: options.random } : {};
  const seconds = (ms: number): number => Math.round(ms / 1000);
  const hours = (ms: number): string => `${Math.round((ms / 3_600_000) * 10) / 10} hour(s)`;

  async function recorded(health: TargetHealth, item: WorkItem, outcome: ScanOutcome): Promise<void> {
    const folder = item.scanFolder ?? item.folder;
    const fields = { id: item.id, folder, target: health.target.name };
    const record = (): ReturnType<DispatchQueue["recordScan"]> =>
      queue.recordScan(item.id, item.rev, health.target.name, outcome, options.targetNames);
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
    const now = clock.now();
    // The folder's own backoff grows with its own failures, whatever the target's state: a target that answers its
    // availability probe but keeps failing this folder does not get it again every few seconds.
    const folderWait = backoffDelay(attempt, jitter);
    metrics?.scanFinished(name, isTargetWideError(error) ? "unavailable" : "failed");
    if (isTargetWideError(error)) {
      const wait = markDown(health, error, now, options.random);
      const level = error instanceof TargetAuthError || error instanceof TargetConfigError ? "error" : "warn";
      log[level](fields, `Target '${name}' cannot scan now (${why}). Trying again in ${seconds(wait)} seconds.`);
      // The target is held back as a whole (its health), and the folder waits for this target with a backoff of its
      // own (a server that answers its probe but fails this folder is not sent it every few seconds). The folder's
      // schedule in the queue is not touched, so the other targets deliver it (and the folders behind it) at once.
      // It waits for this target until it is back, or until that has been down for SERVER_RETRY_MAX_HOURS.
      // An entry from before a retry (or new requests) is another round: it starts again.
      const entry = health.retryAt.get(item.id);
      const previous = entry?.rev === item.rev ? entry : undefined;
      const since = previous?.since ?? now;
      if (now - since < options.retryMaxMs) {
        const tries = (previous?.tries ?? 0) + 1;
        forgetOldRetries(health, now);
        health.retryAt.set(item.id, { at: now + backoffDelay(tries, jitter), tries, since, rev: item.rev });
        await untilStored(() => queue.recordInterrupted(item.id), clock, signal);
        return;
      }
      // This target has failed this folder for SERVER_RETRY_MAX_HOURS: the folder is given up (a retry re-sends it
      // to the targets that did not scan it).
      health.retryAt.delete(item.id);
      const given = { error: `${name}: ${why}`, retryMaxMs: 0, retryInMs: 0 };
      await untilStored(() => queue.recordFailure(item.id, item.rev, given), clock, signal);
      log.error(fields, `Giving up on '${folder}' after '${name}' failed it for ${hours(options.retryMaxMs)}; kept as failed, it can be retried.`);
      return;
    }
    log.warn(fields, `Scan of '${folder}' by '${name}' failed (${why}). Retrying in ${seconds(folderWait)} seconds.`);
    const failure = { error: `${name}: ${why}`, retryMaxMs: options.retryMaxMs, retryInMs: folderWait };
    const result = await untilStored(() => queue.recordFailure(item.id, item.rev, failure), clock, signal);
    if (result.failed) {
      const limit = hours(options.retryMaxMs);
      log.error(fields, `Giving up on '${folder}' after failing for ${limit}; kept as failed, it can be retried.`);
    }
  }

  return {
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
        await hooks.enter(item);
        if (signal.aborted) return void (await queue.recordInterrupted(item.id));
        const folder = item.scanFolder ?? item.folder;
        log.debug({ id: item.id, folder, target: health.target.name }, "Scan request is now being processed...");
        const context = contextOf(item, attempt, signal);
        const target = health.target;
        const outcome = await timedCall(metrics, target.name, "scan", () => options.waitOutside(target.scan(folder, context)));
        markUp(health);
        health.retryAt.delete(item.id);
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
        if (attempt !== undefined) await hooks.leave(item);
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
          markUp(health);
          return void log.info({ target: name }, `Target '${name}' is available again.`);
        }
        const wait = markDown(health, undefined, now, options.random);
        log.warn({ target: name }, `Target '${name}' is still unavailable. Trying again in ${seconds(wait)} seconds.`);
        if (health.downSince !== undefined && now - health.downSince >= options.retryMaxMs) {
          const reason = `${name}: unavailable for more than ${hours(options.retryMaxMs)}`;
          const count = await queue.failWaitingFor(name, options.retryMaxMs, reason);
          // Those folders are failed now: their waits with this target are over (a retry starts a new one).
          for (const [id, wait] of health.retryAt) if (wait.since <= now - options.retryMaxMs) health.retryAt.delete(id);
          const message = `Gave up on ${count} folder(s) waiting for '${name}' (${reason}).`;
          if (count > 0) log.error({ target: name, count }, message);
        }
      } finally {
        health.probing = false;
      }
    },
  };
}

/**
 * Waits whose time is over hold nothing; past a bound they are let go (their folder may have been deleted or failed
 * meanwhile), so the map follows the folders this target is failing now, not every folder it ever failed.
 */
const RETRY_ENTRIES_KEPT = 10_000;
function forgetOldRetries(health: TargetHealth, now: number): void {
  if (health.retryAt.size < RETRY_ENTRIES_KEPT) return;
  for (const [id, wait] of health.retryAt) if (wait.at <= now) health.retryAt.delete(id);
}

function contextOf(item: WorkItem, attempt: number, signal: AbortSignal): ScanContext {
  return {
    id: item.id,
    sources: item.requests.map((r) => ({ source: r.source, event: r.event, path: r.path, deleted: r.deleted })),
    files: item.files,
    priority: item.priority,
    attempt,
    signal,
  };
}

/** From the folder's first request to now (the target's answer). */
function waitedSeconds(item: WorkItem, clock: Clock): number | undefined {
  return item.firstAt === undefined ? undefined : (clock.now() - item.firstAt) / 1000;
}
