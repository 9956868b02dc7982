import { createArrConnectionWatch, type ArrConnectionWatch } from "./connection-watch.ts";
import { expectedConnection, inspectArrConnection } from "./inspect-connection.ts";
import { createArrClient } from "./arr-client.ts";
import type { Config } from "../config/schema.ts";
import type { Clock } from "../core/clock.ts";
import type { Logger } from "../core/logger.ts";

/**
 * `ARR` → the server's watch on each app's connection to autoscan (src/arr/connection-watch.ts), every
 * `SERVER_BACKFILL_INTERVAL`, through the backfill's *arr client and doctor's judgement of a connection.
 */
export interface ArrWatchInput {
  readonly config: Config;
  readonly clock: Clock;
  readonly log: Logger;
  /** `arr_disconnected` for the notifiers. */
  readonly onDisconnected?: (app: string, detail: string) => void;
  /** The app sends again: its `arr_disconnected` not sent yet is withdrawn. */
  readonly onReconnected?: (app: string) => void;
}

export function arrWatchFromConfig(input: ArrWatchInput): ArrConnectionWatch | undefined {
  const { config, clock } = input;
  const log = input.log.child({ component: "ARR" });
  const apps = Object.entries(config.ARR).flatMap(([name, app]) => {
    const expected = expectedConnection(name, app.TYPE, config);
    if (!expected) return [];
    const client = createArrClient({ name, type: app.TYPE, url: app.URL, apiKey: app.API_KEY, timeoutMs: Math.min(app.TIMEOUT, 10) * 1000, log });
    return [{ name, inspect: (signal: AbortSignal) => inspectArrConnection(client, expected, signal) }];
  });
  if (apps.length === 0) return undefined;
  return createArrConnectionWatch({
    apps,
    intervalMs: config.SERVER_BACKFILL_INTERVAL * 1000,
    clock,
    log,
    ...(input.onDisconnected ? { onDisconnected: input.onDisconnected } : {}),
    ...(input.onReconnected ? { onReconnected: input.onReconnected } : {}),
  });
}
