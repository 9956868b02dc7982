import pg from "pg";
import { StoreUnavailableError } from "../../core/errors.ts";
import type { Logger } from "../../core/logger.ts";
import { PG_SCHEMA } from "./migrations/index.ts";

/**
 * The connection pool of the PostgreSQL store. Every connection works in the `autoscan` schema, reads BIGINT columns
 * (ids, times in ms) as JS numbers, and gives up on a statement after `statement_timeout`, so a stuck database turns
 * into errors the callers handle (503 to a webhook) instead of requests that hang.
 */
export type PgPool = pg.Pool;
export type PgClient = pg.PoolClient;
export type PgQueryable = Pick<pg.Pool, "query"> | Pick<pg.PoolClient, "query">;

const INT8 = 20;
const types = {
  getTypeParser: ((oid: number, format?: string) =>
    oid === INT8 ? (value: string) => Number(value) : pg.types.getTypeParser(oid, format as "text")) as typeof pg.types.getTypeParser,
};

export interface PoolOptions {
  readonly url: string;
  readonly log: Logger;
  /** Shown in `pg_stat_activity` (the instance id). */
  readonly applicationName: string;
  /** Connections at most (default 10). */
  readonly max?: number;
  /** A statement running longer than this is cancelled by the server (default 15 s). */
  readonly statementTimeoutMs?: number;
}

export function openPgPool(options: PoolOptions): PgPool {
  const statementTimeoutMs = options.statementTimeoutMs ?? 15_000;
  const pool = new pg.Pool({
    connectionString: options.url,
    application_name: options.applicationName.slice(0, 63),
    max: options.max ?? 10,
    connectionTimeoutMillis: 5_000,
    idleTimeoutMillis: 30_000,
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
    statement_timeout: statementTimeoutMs,
    // The server's statement_timeout cannot help when the server (or the network to it) went silent without closing
    // the connection: the answer is given up here too, a little later, and the connection is dropped.
    query_timeout: statementTimeoutMs * 2,
    options: `-c search_path=${PG_SCHEMA}`,
    types,
  });
  // An idle connection that the server closed (a restart, a failover) must not take the process down.
  pool.on("error", (error) => options.log.warn({ err: error }, `A database connection was lost (${error.message}); it is replaced on next use`));
  return pool;
}

/** `postgres://user:secret@host/db` → `postgres://user:***@host/db`, for messages and logs. */
export function maskDatabaseUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = "***";
    return parsed.toString();
  } catch {
    return "(an unreadable database URL)";
  }
}

/** SQLSTATE classes that mean "the database cannot be used right now" (connection, resources, operator, timeout). */
const UNAVAILABLE_CLASSES = ["08", "53", "57", "58"];
const UNAVAILABLE_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EPIPE", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH"]);

/** Whether `error` says the database is out of reach or refusing work (as opposed to a bug in a statement). */
export function isDatabaseUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === "string" && (UNAVAILABLE_CODES.has(code) || UNAVAILABLE_CLASSES.includes(code.slice(0, 2)))) return true;
  return /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Query read timeout/i.test(
    error.message,
  );
}

/** Classifies a database error where it enters: out of reach → `StoreUnavailableError` (a 503 for a webhook). */
export function classifyDatabaseError(error: unknown): unknown {
  if (error instanceof StoreUnavailableError) return error;
  if (isDatabaseUnavailable(error)) {
    return new StoreUnavailableError(`The queue database cannot be reached: ${(error as Error).message}`, { cause: error });
  }
  return error;
}
