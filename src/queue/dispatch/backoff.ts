/**
 * Exponential backoff with jitter: 5 s after the first failure, doubling up to 5 min, each delay spread over ±20 %
 * (within those bounds) so that several autoscans, or several targets, do not retry in step.
 */
export interface BackoffOptions {
  readonly minMs?: number;
  readonly maxMs?: number;
  /** A number in [0, 1), injected in tests. */
  readonly random?: () => number;
}

export const BACKOFF_MIN_MS = 5_000;
export const BACKOFF_MAX_MS = 5 * 60_000;

/** The wait after the `failures`-th consecutive failure (1 = the first). */
export function backoffDelay(failures: number, options: BackoffOptions = {}): number {
  const min = options.minMs ?? BACKOFF_MIN_MS;
  const max = options.maxMs ?? BACKOFF_MAX_MS;
  const random = options.random ?? Math.random;
  const exponent = Math.min(Math.max(0, failures - 1), 30);
  const base = Math.min(max, min * 2 ** exponent);
  const jittered = base * (0.8 + 0.4 * random());
  return Math.round(Math.min(max, Math.max(min, jittered)));
}
