import type { Clock } from "../../core/clock.ts";
import { StoreUnavailableError, TargetAuthError, TargetConfigError, describeError } from "../../core/errors.ts";
import type { Logger } from "../../core/logger.ts";
import { timedCall, type DispatchMetrics, type TargetCallMetrics } from "../../core/metrics.ts";
import type { ScanContext, ScanOutcome, Target } from "../../core/target.ts";
import type { LandedStart } from "../rules/landed.ts";
import { backoffDelay } from "./backoff.ts";
import type { DispatchQueue, WorkItem } from "./dispatch-port.ts";
import type { ScanRoundCommands } from "./scan-round-commands.ts";
import { isTargetWideError, markDown, markUp, type TargetChange, type TargetHealth } from "./target-health.ts";
import { untilStored } from "./until-stored.ts";

/**
 * One scan of one folder by one target, and the availability probe of a target that was down. Every outcome is
 * recorded in the queue here; errors are classified once (see `Target`): a target-wide error holds the target back,
 * any other error retries this folder later. A folder failing for longer than `retryMaxMs` becomes `failed`.
 */
export interface TargetDeliveryOptions {
  readonly queue: DispatchQueue;
  readonly clock: Clock;
  readonly log: Logger;
  readonly rounds: ScanRoundCommands;
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

export function createTargetDelivery(options: TargetDeliveryOptions) {
  const { queue, clock, log, rounds, signal, metrics } = options;
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
  };
}

/** From the folder's first request to now (the target's answer). */
function waitedSeconds(item: WorkItem, clock: Clock): number | undefined {
  return item.firstAt === undefined ? undefined : (clock.now() - item.firstAt) / 1000;
}
