import { StoreUnavailableError, describeError } from "../../core/errors.ts";
import type { Logger } from "../../core/logger.ts";
import type { StoreHealth } from "../store-port.ts";
import { classifyDatabaseError, type PgPool } from "./pool.ts";

/**
 * Whether the database takes writes, from memory: a write that could not reach it marks the store unavailable (the
 * webhook gets 503, the dispatcher starts nothing), and a probe every few seconds marks it available again.
 */
export function createDatabaseHealth(pool: PgPool, where: string, log: Logger, probeMs: number) {
  let state: StoreHealth = { writable: true };
  let probe: NodeJS.Timeout | undefined;
  let stopped = false;
  const down = (error: StoreUnavailableError): void => {
    if (!state.writable || stopped) return;
    state = {
      writable: false,
      problem: `The queue database at ${where} cannot be reached (${error.message}). Webhooks are answered 503 until it answers; check that PostgreSQL runs and SERVER_DATABASE_URL.`,
      since: Date.now(),
    };
    log.error({ err: error, database: where }, `The queue database cannot be reached; requests are refused until it answers.`);
    probe = setInterval(() => {
      pool
        .query("SELECT 1")
        .then(() => up())
        .catch(() => undefined);
    }, probeMs);
    probe.unref();
  };
  const up = (): void => {
    if (state.writable) return;
    const since = state.since ?? Date.now();
    state = { writable: true };
    if (probe) clearInterval(probe);
    probe = undefined;
    log.info({ database: where, downSeconds: Math.round((Date.now() - since) / 1000) }, "The queue database answers again; requests are taken.");
  };
  return {
    current: () => state,
    async track<T>(operation: Promise<T>): Promise<T> {
      try {
        const result = await operation;
        up();
        return result;
      } catch (error) {
        if (error instanceof StoreUnavailableError) down(error);
        throw error;
      }
    },
    stop() {
      stopped = true;
      if (probe) clearInterval(probe);
    },
  };
}

/** Runs `open` until the database answers, for at most `waitMs`; says once that it waits. */
export async function untilReachable<T>(open: () => Promise<T>, where: string, log: Logger, waitMs: number): Promise<T> {
  const deadline = Date.now() + waitMs;
  let said = false;
  for (;;) {
    try {
      return await open();
    } catch (error) {
      const classified = classifyDatabaseError(error);
      if (!(classified instanceof StoreUnavailableError) || Date.now() >= deadline) {
        if (classified instanceof StoreUnavailableError) {
          throw new StoreUnavailableError(
            `The queue database at ${where} did not answer within ${String(Math.round(waitMs / 1000))} s (${describeError(error)}). ` +
              "Check that PostgreSQL runs and that SERVER_DATABASE_URL names it; `autoscan doctor` tells more.",
            { cause: error },
          );
        }
        throw classified;
      }
      if (!said) log.warn({ database: where, err: error }, `Waiting for the queue database at ${where} (${describeError(error)})...`);
      said = true;
      await new Promise((resolve) => setTimeout(resolve, 2_000));
    }
  }
}
