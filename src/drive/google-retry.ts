import { backoffDelay } from "../core/backoff.ts";
import type { Clock } from "../core/clock.ts";
import type { Logger } from "../core/logger.ts";
import { classifyGoogleError, type GoogleFailure } from "./google-errors.ts";

/**
 * Retries one Google call with Google's backoff (`min(2^n s, cap) + jitter`, core/backoff.ts), never shorter than
 * `Retry-After`. Rate limits (403 `userRateLimitExceeded`/`rateLimitExceeded`, 429) and 5xx/network errors are
 * retried; gaxios' own retry is switched off (it never retries a 403, and two retry layers would multiply the waits).
 * After `maxAttempts` the call fails with a GoogleCallError and the poller waits for its next interval: it never spins.
 */
export interface RetryPolicy {
  readonly maxAttempts: number;
  readonly baseMs: number;
  readonly capMs: number;
  readonly jitterMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { maxAttempts: 6, baseMs: 1000, capMs: 64_000, jitterMs: 1000 };

export class GoogleCallError extends Error {
  override name = "GoogleCallError";
  readonly failure: GoogleFailure;
  constructor(what: string, failure: GoogleFailure, options?: ErrorOptions) {
    super(`${what}: ${failure.detail}`, options);
    this.failure = failure;
  }
}

export interface RetryContext {
  readonly clock: Clock;
  readonly log: Logger;
  readonly policy?: RetryPolicy;
  readonly random?: () => number;
  readonly signal?: AbortSignal;
}

export async function withGoogleRetry<T>(what: string, call: () => Promise<T>, context: RetryContext): Promise<T> {
  const policy = context.policy ?? DEFAULT_RETRY;
  const random = context.random ?? Math.random;
  for (let attempt = 1; ; attempt++) {
    throwIfAborted(context.signal);
    try {
      return await call();
    } catch (error) {
      if (error instanceof GoogleCallError) throw error;
      const failure = classifyGoogleError(error, context.clock.now());
      const retryable = failure.kind === "rate-limit" || failure.kind === "transient";
      if (!retryable || attempt >= policy.maxAttempts || context.signal?.aborted) {
        throw new GoogleCallError(what, failure, { cause: error });
      }
      const exponential = backoffDelay(attempt, { minMs: policy.baseMs, maxMs: policy.capMs, addMs: policy.jitterMs, random });
      const delay = Math.max("retryAfterMs" in failure ? (failure.retryAfterMs ?? 0) : 0, exponential);
      const message = failure.kind === "rate-limit" ? "Google Drive rate limit hit" : "Google Drive call failed";
      context.log.warn({ call: what, attempt, delayMs: delay, reason: failure.detail }, `${message}; retrying`);
      await context.clock.sleep(delay, context.signal);
    }
  }
}

export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new DOMException("The operation was aborted", "AbortError");
}
