import type { Clock } from "../core/clock.ts";
import { describeError } from "../core/errors.ts";
import type { Logger } from "../core/logger.ts";
import type { ConnectionInspection, ConnectionState } from "./inspect-connection.ts";

/**
 * The server's look at each *arr app's connection to autoscan, at start and every `intervalMs`
 * (`SERVER_BACKFILL_INTERVAL`): the check doctor makes (inspect-connection.ts).
 *
 * An app that stopped sending — its connection missing, disabled, pointing elsewhere, or held by the app after failed
 * deliveries ("unavailable due to failures") — is said once: one WARNING with the fix, `onDisconnected` (the
 * `arr_disconnected` notification), and the console's banner. The warning ends as soon as the app is seen sending:
 * - an accepted webhook from it (`heard`, from the intake: the app's name is the URL's label);
 * - a look asked for now (`recheck`: `autoscan arr connect` asks the running server after it fixed a connection);
 * - a look a few seconds after the app sent a Test to its URL while it was flagged (the apps test a connection before
 *   they save it, so the look waits for the save): a fix made by hand in the app, then Test or Save;
 * - the next periodic look.
 * Then one INFO line, and `onReconnected` (a notification not sent yet is withdrawn). A look that began before a
 * webhook from the app arrived is older news than that webhook: a problem it found is not raised.
 *
 * A connection that sends, with some of autoscan's events unticked (`wrong-events`; often on purpose), is not a
 * disconnection: a quieter note (one INFO line, the console's note), never a notification. An app that cannot be
 * asked (down, wrong key) changes nothing here: the backfill and doctor say that.
 */
export interface ArrConnectionWatchOptions {
  readonly apps: readonly { readonly name: string; inspect(signal: AbortSignal): Promise<ConnectionInspection> }[];
  readonly intervalMs: number;
  readonly clock: Clock;
  readonly log: Logger;
  readonly onDisconnected?: (app: string, detail: string) => void;
  /** The app sends again (its `arr_disconnected` no longer holds). */
  readonly onReconnected?: (app: string) => void;
}

export interface ArrDisconnection {
  readonly app: string;
  readonly detail: string;
  readonly since: number;
}

/** One app's look: its state, or `unknown` when the app could not be asked (`detail` says why). */
export interface ArrCheck {
  readonly app: string;
  readonly state: ConnectionState | "unknown";
  readonly detail: string;
  /** A warning about the app ended with this look. */
  readonly cleared: boolean;
}

export interface ArrConnectionWatch {
  start(): void;
  stop(): void;
  /** The apps whose connection does not send now, with why. */
  problems(): readonly ArrDisconnection[];
  /** The apps that send, with some of autoscan's events unticked. */
  notes(): readonly ArrDisconnection[];
  /** An accepted webhook from the app of this `ARR` name: it sends. */
  heard(app: string): void;
  /** A Test from the app of this `ARR` name: if it is flagged, a look `AFTER_TEST_MS` later (after the app's save). */
  tested(app: string): void;
  /** Looks at one app (its `ARR` name) or all now; after any look already under way. Undefined: no such app. */
  recheck(app?: string): Promise<readonly ArrCheck[]> | undefined;
  /** Called when `problems()` or `notes()` changed (the console's live update); returns the unsubscribe. */
  onChange(listener: () => void): () => void;
}

type WatchedApp = ArrConnectionWatchOptions["apps"][number];

/** An app tests a connection before it saves it: the look after a Test waits this long for the save. */
export const AFTER_TEST_MS = 5_000;

export function createArrConnectionWatch(options: ArrConnectionWatchOptions): ArrConnectionWatch {
  const { clock, log } = options;
  const problems = new Map<string, ArrDisconnection>();
  const notes = new Map<string, ArrDisconnection>();
  /** When a webhook from each app last arrived. */
  const heardAt = new Map<string, number>();
  /** Each app's latest look: a new one waits for it, so two never race over the app's state. */
  const looks = new Map<string, Promise<ArrCheck>>();
  /** Apps with a look after a Test already waiting. */
  const afterTest = new Set<string>();
  const stopping = new AbortController();
  let running: Promise<void> | undefined;
  const listeners = new Set<() => void>();
  const changed = (): void => {
    for (const listener of listeners) listener();
  };

  function reconnected(app: string, how: string): boolean {
    if (!problems.delete(app)) return false;
    changed();
    log.info({ app }, `${app} sends to autoscan again${how}.`);
    options.onReconnected?.(app);
    return true;
  }

  async function lookAt(app: WatchedApp): Promise<ArrCheck> {
    const startedAt = clock.now();
    let inspection: ConnectionInspection;
    try {
      inspection = await app.inspect(stopping.signal);
    } catch (error) {
      log.debug({ app: app.name, err: error }, `Could not read ${app.name}'s connections: ${describeError(error)}`);
      return { app: app.name, state: "unknown", detail: `could not read ${app.name}'s connections: ${describeError(error)}`, cleared: false };
    }
    const { state, detail } = inspection;
    const check = (cleared: boolean): ArrCheck => ({ app: app.name, state, detail, cleared });
    if (state === "ok" || state === "wrong-events") {
      const cleared = reconnected(app.name, "");
      if (state === "ok") {
        if (notes.delete(app.name)) {
          changed();
          log.debug({ app: app.name }, `${app.name} ticks every event autoscan scans on now.`);
        }
      } else if (notes.get(app.name)?.detail !== detail) {
        notes.set(app.name, { app: app.name, detail, since: clock.now() });
        changed();
        log.info(
          { app: app.name, state },
          `${app.name} sends to autoscan, with some events unticked: ${detail} If that is not on purpose: autoscan arr connect --app ${app.name}`,
        );
      }
      return check(cleared);
    }
    // A webhook from the app arrived while the app was asked: that is newer than what the app's lists said.
    if ((heardAt.get(app.name) ?? -Infinity) >= startedAt) return check(false);
    const hadNote = notes.delete(app.name);
    if (problems.get(app.name)?.detail === detail) {
      if (hadNote) changed();
      return check(false);
    }
    problems.set(app.name, { app: app.name, detail, since: clock.now() });
    changed();
    log.warn({ app: app.name, state }, `${app.name} does not send its imports to autoscan: ${detail} Fix: autoscan arr connect --app ${app.name}`);
    options.onDisconnected?.(app.name, detail);
    return check(false);
  }

  function look(app: WatchedApp): Promise<ArrCheck> {
    const next = (looks.get(app.name) ?? Promise.resolve()).catch(() => undefined).then(() => lookAt(app));
    looks.set(app.name, next);
    return next;
  }

  async function loop(): Promise<void> {
    while (!stopping.signal.aborted) {
      for (const app of options.apps) {
        if (stopping.signal.aborted) return;
        await look(app);
      }
      await clock.sleep(options.intervalMs, stopping.signal).catch(() => undefined);
    }
  }

  /** The app of an `ARR` name, as the URL's label spells it (the case aside). */
  function find(name: string): WatchedApp | undefined {
    return options.apps.find((app) => app.name === name) ?? options.apps.find((app) => app.name.toLowerCase() === name.toLowerCase());
  }

  return {
    start() {
      running ??= loop();
    },
    stop() {
      stopping.abort();
    },
    onChange(listener) {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
    problems: () => [...problems.values()],
    notes: () => [...notes.values()],
    heard(name) {
      const app = find(name);
      if (!app) return;
      heardAt.set(app.name, clock.now());
      reconnected(app.name, ": a webhook from it arrived");
    },
    tested(name) {
      const app = find(name);
      if (!app || !problems.has(app.name) || afterTest.has(app.name)) return;
      afterTest.add(app.name);
      void clock.sleep(AFTER_TEST_MS, stopping.signal).then(async () => {
        afterTest.delete(app.name);
        if (!stopping.signal.aborted) await look(app);
      });
    },
    recheck(name) {
      const chosen = name === undefined ? options.apps : [find(name)].filter((app) => app !== undefined);
      if (chosen.length === 0 && name !== undefined) return undefined;
      return Promise.all(chosen.map(look));
    },
  };
}
