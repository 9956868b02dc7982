import type { Clock } from "../../src/core/clock.ts";

/**
 * A clock that moves only when the test says so. `sleep` timers fire in time order during `advance`; between two
 * timers the test's `settle` callback runs (e.g. "wait until the dispatcher is idle"), so code that reacts to a timer
 * with real I/O (fsync, stat) finishes before time moves on.
 */
export interface ManualClock extends Clock {
  advance(ms: number, settle?: () => Promise<void>): Promise<void>;
  /** Timers waiting to fire (for assertions that nothing is scheduled). */
  pendingTimers(): number;
}

interface Timer {
  readonly at: number;
  readonly resolve: () => void;
}

export function createManualClock(start = Date.UTC(2026, 0, 1, 12, 0, 0)): ManualClock {
  let now = start;
  let timers: Timer[] = [];

  const yieldToIo = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

  return {
    now: () => now,
    sleep(ms, signal) {
      return new Promise<void>((resolve) => {
        if (signal?.aborted) return resolve();
        const timer: Timer = {
          at: now + Math.max(0, ms),
          resolve: () => {
            signal?.removeEventListener("abort", onAbort);
            resolve();
          },
        };
        function onAbort(): void {
          timers = timers.filter((t) => t !== timer);
          resolve();
        }
        signal?.addEventListener("abort", onAbort, { once: true });
        timers.push(timer);
      });
    },
    async advance(ms, settle = yieldToIo) {
      const target = now + ms;
      await settle();
      for (;;) {
        const next = timers.filter((t) => t.at <= target).sort((a, b) => a.at - b.at)[0];
        if (!next) {
          if (now >= target) return;
          now = target;
          await settle();
          continue;
        }
        now = Math.max(now, next.at);
        timers = timers.filter((t) => t !== next);
        next.resolve();
        await settle();
      }
    },
    pendingTimers: () => timers.length,
  };
}
