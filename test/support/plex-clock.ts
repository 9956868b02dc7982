import type { Clock } from "../../src/core/clock.ts";

/**
 * Time for the Plex tests: `sleep(ms)` moves the clock forward by `ms` at once (yielding to the event loop), so a
 * polling loop runs its whole course without real waiting, and `sleeps` shows what it waited for.
 */
export interface SteppingClock extends Clock {
  readonly sleeps: number[];
  advance(ms: number): void;
  /** Called at every sleep (after the clock moved): lets a test change the world while the code under test waits. */
  onSleep?: (ms: number) => void;
}

export function createSteppingClock(start = Date.UTC(2026, 0, 1)): SteppingClock {
  let now = start;
  const sleeps: number[] = [];
  const clock: SteppingClock = {
    sleeps,
    now: () => now,
    advance(ms) {
      now += ms;
    },
    sleep(ms, signal) {
      if (signal?.aborted) return Promise.resolve();
      sleeps.push(ms);
      now += Math.max(0, ms);
      clock.onSleep?.(ms);
      return new Promise((resolve) => setImmediate(resolve));
    },
  };
  return clock;
}
