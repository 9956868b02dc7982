import { TargetAuthError, TargetConfigError, TargetUnavailableError } from "../../core/errors.ts";
import type { Target } from "../../core/target.ts";
import { BACKOFF_MAX_MS, backoffDelay } from "./backoff.ts";

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
export function isTargetWideError(error: unknown): boolean {
  return error instanceof TargetUnavailableError || error instanceof TargetAuthError || error instanceof TargetConfigError;
}

/** Marks the target down after a failure; returns the wait in ms. Credentials problems wait the longest. */
export function markDown(health: TargetHealth, error: unknown, now: number, random?: () => number): number {
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

export function markUp(health: TargetHealth): void {
  health.failures = 0;
  health.downUntil = 0;
  health.downSince = undefined;
  health.needsProbe = false;
}
