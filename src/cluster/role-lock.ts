import pg from "pg";
import { describeError } from "../core/errors.ts";
import type { Logger } from "../core/logger.ts";
import { AUTOSCAN_LOCKS, LOCKS, type RoleName } from "../queue/postgres/locks.ts";
import { PG_SCHEMA } from "../queue/postgres/migrations/index.ts";
import { isDatabaseUnavailable } from "../queue/postgres/pool.ts";
import { applicationName, instanceOf, ROLE_WORDS } from "./role-names.ts";

/**
 * A job only one instance may do at a time (`drive`: poll Google Drive; `backfill`: read the *arr history), held as a
 * SESSION-level advisory lock `(AUTOSCAN_LOCKS, LOCKS.<role>)` on a connection of its own. The lock lives exactly as
 * long as that connection: when the holder dies (even SIGKILL), the OS closes its socket, PostgreSQL ends the session
 * and frees the lock, and a standby takes it at its next try (every `retryMs`, at most a minute). A holder that stops
 * gives the role back and says so (`NOTIFY autoscan_role_freed, '<role>'`): a standby takes it at once (a rolling
 * update leaves no gap).
 *
 * The holder watches its connection (its `error`/`end` events, and a `SELECT 1` every `checkMs`): a connection that
 * broke means the role may already be someone else's, so `onLost` runs at once (stop the work), and this instance
 * competes again one retry interval later (a standby whose connection is healthy goes first).
 *
 * The role's own writes (page tokens, cursors) go through `HeldRole.connection`, the lock's connection: a write can
 * only succeed while the session that holds the lock is alive, so an instance that lost the role cannot overwrite
 * what the new holder wrote. Each connection's `application_name` is `autoscan <instance> <role>`, so `holder()` (and
 * a person reading `pg_stat_activity`) can tell which instance holds it.
 */
export type RoleState = "active" | "standby";

/** One connection, used by one caller at a time (a transaction runs on it as BEGIN … COMMIT). */
export type PgConnection = Pick<pg.ClientBase, "query">;

export interface HeldRole {
  /** The lock's own connection (search_path `autoscan`), for the role's writes: valid until `onLost`. */
  readonly connection: PgConnection;
}

export interface RoleLockOptions {
  readonly url: string;
  readonly role: RoleName;
  /** This instance's id (`<host>-<pid>-<hex>`). */
  readonly instance: string;
  readonly log: Logger;
  /** How often a standby tries to take the role (the poll interval); at most a minute is used. */
  readonly retryMs: number;
  /** How often the holder checks its connection (default 5 s). */
  readonly checkMs?: number;
  /** This instance took the role: start the work. A throw gives the role back (tried again later). */
  readonly onAcquired: (held: HeldRole) => Promise<void> | void;
  /** The role is gone (connection lost) or given back (`stop`): stop the work at once. */
  readonly onLost: () => Promise<void> | void;
}

export interface RoleLock {
  /** Competes for the role in the background. */
  start(): void;
  /** Stops the work (`onLost`), gives the role back and closes the connection. */
  stop(): Promise<void>;
  state(): RoleState;
  /** The instance holding the role now, asked of the database (`pg_locks` × `pg_stat_activity`). */
  holder(): Promise<string | undefined>;
  /** The holder as last seen (from memory; this instance's id while active). */
  lastHolder(): string | undefined;
}

const MAX_RETRY_MS = 60_000;
/** NOTIFY channel on which a holder that gives its role back names it (payload: the role). */
const FREED_CHANNEL = "autoscan_role_freed";
const DEFAULT_CHECK_MS = 5_000;

export function createRoleLock(options: RoleLockOptions): RoleLock {
  const { role, instance, log } = options;
  const key = LOCKS[role];
  const words = ROLE_WORDS[role];
  const retryMs = Math.max(10, Math.min(options.retryMs, MAX_RETRY_MS));
  const checkMs = Math.max(10, options.checkMs ?? DEFAULT_CHECK_MS);
  const stopping = new AbortController();
  let state: RoleState = "standby";
  let seenHolder: string | undefined;
  let loop: Promise<void> | undefined;
  /** Aborted when a holder announces it gave the role back; replaced before each wait. */
  let freed = new AbortController();

  /**
   * A dedicated connection whose death is noticed: `broken` aborts with the reason (the `error` event must be handled
   * anyway, or the process exits).
   */
  async function connect(): Promise<{ client: pg.Client; broken: AbortSignal }> {
    const client = new pg.Client({
      connectionString: options.url,
      application_name: applicationName(instance, role),
      connectionTimeoutMillis: 5_000,
      keepAlive: true,
      keepAliveInitialDelayMillis: 5_000,
      statement_timeout: 15_000,
      // The server's side of the same watch: a holder whose host vanished without closing its socket (power loss, a
      // network cut) has its session ended, and the role freed, after about 25 s instead of the OS's two hours.
      options: `-c search_path=${PG_SCHEMA} -c tcp_keepalives_idle=10 -c tcp_keepalives_interval=5 -c tcp_keepalives_count=3`,
    });
    const broke = new AbortController();
    client.on("error", (error) => broke.abort(describeError(error)));
    client.on("end", () => broke.abort("the connection was closed"));
    client.on("notification", (message) => {
      if (message.channel === FREED_CHANNEL && message.payload === role) freed.abort();
    });
    try {
      await client.connect();
      // A holder that stops says so: a standby takes the role at once instead of at its next try.
      await client.query(`LISTEN ${FREED_CHANNEL}`);
    } catch (error) {
      await client.end().catch(() => undefined);
      throw error;
    }
    return { client, broken: broke.signal };
  }

  async function tryLock(client: pg.Client): Promise<boolean> {
    const result = await client.query<{ locked: boolean }>("SELECT pg_try_advisory_lock($1, $2) AS locked", [AUTOSCAN_LOCKS, key]);
    return result.rows[0]?.locked === true;
  }

  /** Resolves with why the holder's connection is gone, or undefined when the lock is being stopped. */
  async function watch(client: pg.Client, broken: AbortSignal): Promise<string | undefined> {
    for (;;) {
      await wait(checkMs, [stopping.signal, broken]);
      if (stopping.signal.aborted) return undefined;
      if (broken.aborted) return String(broken.reason);
      const failure = await check(client);
      if (failure) return failure;
    }
  }

  /** `SELECT 1` on the lock's connection: an unreachable database or a silent connection means the role is gone. */
  async function check(client: pg.Client): Promise<string | undefined> {
    const timeoutMs = Math.max(10_000, checkMs * 2);
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<string>((resolve) => {
      timer = setTimeout(() => resolve(`the database did not answer within ${Math.round(timeoutMs / 1000)} s`), timeoutMs);
    });
    try {
      return await Promise.race([
        client.query("SELECT 1").then(
          () => undefined,
          // A statement error on a live connection (a role's own transaction failed around it) is not a lost role.
          (error: unknown) => (isDatabaseUnavailable(error) ? describeError(error) : undefined),
        ),
        late,
      ]);
    } finally {
      clearTimeout(timer);
    }
  }

  const sleep = (ms: number): Promise<void> => wait(ms, [stopping.signal]);

  async function run(): Promise<void> {
    let unreachable = false;
    let announcedStandby = false;
    while (!stopping.signal.aborted) {
      let connection: Awaited<ReturnType<typeof connect>>;
      try {
        connection = await connect();
      } catch (error) {
        if (!unreachable) log.warn({ err: error, role }, `Cannot reach the database to take the ${role} role (${describeError(error)}); trying again every ${seconds(retryMs)}.`);
        unreachable = true;
        await sleep(retryMs);
        continue;
      }
      unreachable = false;
      const { client, broken } = connection;
      let lostWhy: string | undefined;
      try {
        // Standby: try every retryMs on this connection until the lock is ours or the connection breaks.
        while (!stopping.signal.aborted) {
          // Replaced before the try: a "freed" notice that arrives while it runs still cuts the wait after it short.
          freed = new AbortController();
          if (await tryLock(client)) break;
          const now = await whoHolds(client).catch(() => undefined);
          if (now && (!announcedStandby || now !== seenHolder)) {
            log.info({ role, holder: now }, `Instance ${now} ${words}; this instance takes over if it stops.`);
          }
          announcedStandby = true;
          seenHolder = now ?? seenHolder;
          await wait(retryMs, [stopping.signal, broken, freed.signal]);
          if (broken.aborted) throw new Error(String(broken.reason));
        }
        if (stopping.signal.aborted) break;
        const before = seenHolder;
        state = "active";
        seenHolder = instance;
        log.info(
          { role, previous: before },
          `This instance now ${words} (${before && before !== instance ? `instance ${before} stopped` : "the role was free"}).`,
        );
        try {
          await options.onAcquired({ connection: client });
        } catch (error) {
          log.error({ err: error, role }, `Could not start the ${role} role's work: ${describeError(error)}. Giving the role back; trying again in ${seconds(retryMs)}.`);
          await giveBack(client);
          await sleep(retryMs);
          continue;
        }
        lostWhy = await watch(client, broken);
        if (lostWhy === undefined) {
          await giveBack(client);
          log.info({ role }, `This instance no longer ${words} (stopping); another instance takes over.`);
          break;
        }
        log.warn({ role, reason: lostWhy }, `This instance lost the ${role} role: its database connection broke (${lostWhy}). It stopped and competes for the role again.`);
        await release();
      } catch (error) {
        // The standby's connection broke, or a query on it failed: connect again after one interval.
        log.debug({ err: error, role }, "The role's database connection broke while standing by");
      } finally {
        await client.end().catch(() => undefined);
      }
      await sleep(retryMs);
    }
  }

  /** The work stops before the lock is given back: no instance ever works while another holds the role. */
  async function release(): Promise<void> {
    if (state !== "active") return;
    state = "standby";
    await (async () => options.onLost())().catch((error: unknown) => log.error({ err: error, role }, `Stopping the ${role} role's work failed: ${describeError(error)}`));
  }

  async function giveBack(client: pg.Client): Promise<void> {
    await release();
    await client.query("SELECT pg_advisory_unlock($1, $2)", [AUTOSCAN_LOCKS, key]).catch(() => undefined);
    await client.query("SELECT pg_notify($1, $2)", [FREED_CHANNEL, role]).catch(() => undefined);
    seenHolder = undefined;
  }

  async function whoHolds(client: Pick<pg.ClientBase, "query">): Promise<string | undefined> {
    const result = await client.query<{ application_name: string | null }>(
      `SELECT a.application_name
         FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
        WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2
          AND l.classid = $1::bigint::oid AND l.objid = $2::bigint::oid
          AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
        LIMIT 1`,
      [AUTOSCAN_LOCKS, key],
    );
    const name = result.rows[0]?.application_name;
    return name ? instanceOf(name) : undefined;
  }

  return {
    start() {
      loop ??= run().catch((error: unknown) => log.error({ err: error, role }, `The ${role} role's lock stopped: ${describeError(error)}`));
    },
    async stop() {
      stopping.abort();
      await loop;
      // Stopped before it ever ran, or while connecting: nothing is held.
      await release();
    },
    state: () => state,
    lastHolder: () => seenHolder,
    async holder() {
      const client = new pg.Client({ connectionString: options.url, connectionTimeoutMillis: 5_000, application_name: applicationName(instance, role) });
      client.on("error", () => undefined);
      await client.connect();
      try {
        return await whoHolds(client);
      } finally {
        await client.end().catch(() => undefined);
      }
    },
  };
}

/**
 * Waits `ms`, or less when one of `signals` aborts. Its listeners are removed when it ends: a connection held for days
 * waits thousands of times on the same signals.
 */
function wait(ms: number, signals: readonly AbortSignal[]): Promise<void> {
  if (signals.some((signal) => signal.aborted)) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      for (const signal of signals) signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    for (const signal of signals) signal.addEventListener("abort", done, { once: true });
  });
}

function seconds(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${Math.round(ms / 1000)} s`;
}
