/**
 * Exponential backoff with jitter, so that several autoscans, targets or calls do not retry in step: `minMs` after the
 * first failure, doubling up to `maxMs`. The jitter is one of two kinds, as the two policies in use want:
 * - spread (the default): the delay spread over ±20 %, kept within [minMs, maxMs]. Our own retries: a target's
 *   delivery (5 s … 5 min), a notifier (30 s … 15 min), a watched root's store write (1 s … 1 min);
 * - added (`addMs`): up to this much added on top, past `maxMs` too. Google's documented backoff for the Drive API,
 *   `min(2^n s, 64 s)` plus up to 1 s (src/drive/google-retry.ts).
 */
export interface BackoffOptions {
  readonly minMs?: number;
  readonly maxMs?: number;
  /** Jitter added on top, up to this many ms, instead of the ±20 % spread. */
  readonly addMs?: number;
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
  if (options.addMs !== undefined) return Math.round(base + random() * options.addMs);
  const jittered = base * (0.8 + 0.4 * random());
  return Math.round(Math.min(max, Math.max(min, jittered)));
}
