import type { Clock } from "../../core/clock.ts";
import { StoreUnavailableError, describeError } from "../../core/errors.ts";
import type { Logger } from "../../core/logger.ts";

/**
 * The dispatcher's engine, apart from what it dispatches: run `pass` (which starts tasks and says when to look
 * again), sleep on the clock until then, a task ends, or `wake` is called; count the tasks so that `stop` can wait
 * for them and `whenIdle` can tell a test that a step of a manual clock has played out.
 */
export interface DispatchLoop {
  start(): void;
  /** Look again now. */
  wake(): void;
  /** Look again if `at` is earlier than the planned wake-up. */
  wakeBy(at: number): void;
  /** Runs a task; its end wakes the loop. */
  track(task: () => Promise<void>): void;
  /** Wraps a wait on an outside system (a target's answer): not our own work, for `whenIdle`. */
  waitOutside<T>(answer: Promise<T>): Promise<T>;
  /** Ends the loop, then waits up to `timeoutMs` for the tasks; resolves whether they all ended. */
  stop(timeoutMs: number): Promise<boolean>;
  readonly running: number;
  whenIdle(): Promise<void>;
}

const MAX_PARK_MS = 60 * 60_000;
const RETRY_AFTER_ERROR_MS = 5_000;

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

export function createDispatchLoop(options: { clock: Clock; log: Logger; pass: () => Promise<number> }): DispatchLoop {
  const { clock, log } = options;
  let running = 0;
  let outside = 0;
  let started = false;
  let stopping = false;
  let parked = false;
  let wakeRequested = false;
  let plannedWake = Number.POSITIVE_INFINITY;
  let sleep: AbortController | undefined;
  let done: Promise<void> = Promise.resolve();
  const idleWaiters: (() => void)[] = [];

  const wake = (): void => {
    wakeRequested = true;
    sleep?.abort();
  };
  const isIdle = (): boolean => !started || stopping || (parked && running === outside && !wakeRequested);
  const notifyIdle = (): void => {
    if (isIdle()) for (const resolve of idleWaiters.splice(0)) resolve();
  };

  async function loop(): Promise<void> {
    while (!stopping) {
      wakeRequested = false;
      try {
        plannedWake = await options.pass();
      } catch (error) {
        // A broken pass must not stop dispatching for good (Cloudbox/autoscan's silent stall): look again soon.
        log.error({ err: error }, `Could not read due work from the queue (${describeError(error)}); retrying soon`);
        plannedWake = clock.now() + RETRY_AFTER_ERROR_MS;
      }
      if (wakeRequested || stopping) continue;
      sleep = new AbortController();
      parked = true;
      notifyIdle();
      await clock.sleep(Math.min(MAX_PARK_MS, Math.max(0, plannedWake - clock.now())), sleep.signal);
      parked = false;
      sleep = undefined;
    }
  }

  async function waitForTasks(timeoutMs: number): Promise<boolean> {
    // Real time, not the injected clock: this bounds a shutdown, it is not a rule under test.
    const deadline = Date.now() + timeoutMs;
    while (running > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    return running === 0;
  }

  return {
    start() {
      if (started) return;
      started = true;
      done = loop();
    },
    wake,
    wakeBy(at) {
      if (at < plannedWake) wake();
    },
    track(task) {
      running++;
      void task()
        .catch((error: unknown) => {
          if (stopping) log.debug({ err: error }, "A scan task ended during shutdown");
          else if (error instanceof StoreUnavailableError) log.debug({ err: error }, "A scan task could not be recorded now");
          else log.error({ err: error }, `A scan task failed: ${describeError(error)}`);
        })
        .finally(() => {
          running--;
          wake();
          notifyIdle();
        });
    },
    async waitOutside(answer) {
      outside++;
      notifyIdle();
      try {
        return await answer;
      } finally {
        outside--;
      }
    },
    async stop(timeoutMs) {
      stopping = true;
      wake();
      await done;
      const drained = await waitForTasks(timeoutMs);
      notifyIdle();
      return drained;
    },
    get running() {
      return running;
    },
    async whenIdle() {
      // Idle twice in a row across a turn of the event loop: a target's answer that is already there has been
      // taken in by then (it settles in microtasks), so "idle" is not just the instant before it.
      for (;;) {
        await nextTurn();
        if (!isIdle()) {
          await new Promise<void>((resolve) => idleWaiters.push(resolve));
          continue;
        }
        await nextTurn();
        if (isIdle()) return;
      }
    },
  };
}
