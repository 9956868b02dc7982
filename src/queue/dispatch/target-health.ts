import { TargetAuthError, TargetConfigError, TargetUnavailableError } from "../../core/errors.ts";
import type { Target } from "../../core/target.ts";
import { BACKOFF_MAX_MS, backoffDelay } from "./backoff.ts";

/**
 * What the dispatcher knows about one target. A target that is down (`TargetUnavailableError`) or refuses our
 * credentials (`TargetAuthError`) is held back as a whole, with backoff, while the other targets go on; when its wait
 * is over, `isAvailable()` is asked before any folder is sent to it again.
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
  /**
   * Folders this target failed with a target-wide error (it was down, or refused): each waits for this target alone,
   * with its own backoff, while the other targets deliver it. In memory: a restart tries again at once.
   */
  readonly retryAt: Map<number, { at: number; tries: number; since: number; rev: number }>;
}

export function createTargetHealth(target: Target): TargetHealth {
  return { target, inFlight: new Set(), failures: 0, downUntil: 0, needsProbe: false, probing: false, retryAt: new Map() };
}

/** The folders this target must not be sent yet: in progress, or waiting out their own backoff with it. */
export function heldFolders(health: TargetHealth, now: number): ReadonlySet<number> {
  if (health.retryAt.size === 0) return health.inFlight;
  const held = new Set(health.inFlight);
  for (const [id, wait] of health.retryAt) if (wait.at > now) held.add(id);
  return held;
}

/** The earliest end of a folder's backoff with this target after `now`. */
export function nextFolderRetry(health: TargetHealth, now: number): number {
  let next = Number.POSITIVE_INFINITY;
  for (const wait of health.retryAt.values()) if (wait.at > now && wait.at < next) next = wait.at;
  return next;
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
