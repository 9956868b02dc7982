import type { Clock } from "../core/clock.ts";
import { describeError } from "../core/errors.ts";
import type { Logger } from "../core/logger.ts";
import type { ConnectionInspection } from "./inspect-connection.ts";

/**
 * The server's look at each *arr app's connection to autoscan, at start and every `intervalMs`
 * (`SERVER_BACKFILL_INTERVAL`): the check doctor makes (inspect-connection.ts). An app that stopped sending — its
 * connection missing, disabled, pointing elsewhere, or held by the app after failed deliveries ("unavailable due to
 * failures") — is said once: one WARNING with the fix, `onDisconnected` (the `arr_disconnected` notification), and
 * the console's banner until it is right again (one INFO line then). An app that cannot be asked (down, wrong key)
 * changes nothing here: the backfill and doctor say that.
 */
export interface ArrConnectionWatchOptions {
  readonly apps: readonly { readonly name: string; inspect(signal: AbortSignal): Promise<ConnectionInspection> }[];
  readonly intervalMs: number;
  readonly clock: Clock;
  readonly log: Logger;
  readonly onDisconnected?: (app: string, detail: string) => void;
}

export interface ArrDisconnection {
  readonly app: string;
  readonly detail: string;
  readonly since: number;
}

export interface ArrConnectionWatch {
  start(): void;
  stop(): void;
  /** The apps whose connection is not right now, with why. */
  problems(): readonly ArrDisconnection[];
}

export function createArrConnectionWatch(options: ArrConnectionWatchOptions): ArrConnectionWatch {
  const { clock, log } = options;
  const problems = new Map<string, ArrDisconnection>();
  const stopping = new AbortController();
  let running: Promise<void> | undefined;

  async function lookAt(app: ArrConnectionWatchOptions["apps"][number]): Promise<void> {
    let inspection: ConnectionInspection;
    try {
      inspection = await app.inspect(stopping.signal);
    } catch (error) {
      log.debug({ app: app.name, err: error }, `Could not read ${app.name}'s connections: ${describeError(error)}`);
      return;
    }
    const known = problems.get(app.name);
    if (inspection.state === "ok") {
      if (known) {
        problems.delete(app.name);
        log.info({ app: app.name }, `${app.name} sends to autoscan again.`);
      }
      return;
    }
    if (known?.detail === inspection.detail) return;
    problems.set(app.name, { app: app.name, detail: inspection.detail, since: clock.now() });
    log.warn(
      { app: app.name, state: inspection.state },
      `${app.name} does not send its imports to autoscan: ${inspection.detail} Fix: autoscan arr connect --app ${app.name}`,
    );
    options.onDisconnected?.(app.name, inspection.detail);
  }

  async function loop(): Promise<void> {
    while (!stopping.signal.aborted) {
      for (const app of options.apps) {
        if (stopping.signal.aborted) return;
        await lookAt(app);
      }
      await clock.sleep(options.intervalMs, stopping.signal).catch(() => undefined);
    }
  }

  return {
    start() {
      running ??= loop();
    },
    stop() {
      stopping.abort();
    },
    problems: () => [...problems.values()],
  };
}
