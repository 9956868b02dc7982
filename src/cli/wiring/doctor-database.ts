import pg from "pg";
import { checkDatabaseUrl, databaseUrlSecrets, maskDatabaseUrl } from "../../core/database-url.ts";
import { describeError } from "../../core/errors.ts";
import type { DatabaseConnect, DatabaseProbe, DatabaseSession } from "../../ops/doctor/database.ts";
import { PG_SCHEMA } from "../../queue/postgres/migrations/index.ts";

/**
 * SERVER_DATABASE_URL → doctor's probe: one `pg` Client (5 s to connect, 5 s a query), its errors classified here
 * where they enter: a socket error (nothing listens, a name that does not resolve, no answer in time) is handed on
 * with its code for unreachable.ts; PostgreSQL's own refusals by SQLSTATE (28P01 / 28000 user or password, 3D000 no
 * such database). Every message is blanked of the password before it leaves.
 */
export interface DatabaseProbeOptions {
  readonly url: string;
  readonly connectTimeoutMs?: number;
  /** This machine's clock (ms since the epoch); injected to test the offset check. */
  readonly now?: () => number;
}

const CONNECT_TIMEOUT_MS = 5000;
const AUTH_CODES = new Set(["28P01", "28000"]);

export function databaseProbe(options: DatabaseProbeOptions): DatabaseProbe {
  const checked = checkDatabaseUrl(options.url);
  // The config validated it; a bad one still reads as a target with no host.
  const parts = checked.ok ? checked.parts : { host: "", port: 5432, database: "", user: "" };
  const timeoutMs = options.connectTimeoutMs ?? CONNECT_TIMEOUT_MS;
  const now = options.now ?? Date.now;
  const secrets = databaseUrlSecrets(options.url);
  const blank = (text: string): string => secrets.reduce((out, secret) => out.split(secret).join("***"), text);
  return {
    target: { shown: maskDatabaseUrl(options.url), ...parts, timeoutSeconds: Math.round(timeoutMs / 100) / 10 },
    async connect(signal) {
      const client = new pg.Client({
        connectionString: options.url,
        connectionTimeoutMillis: timeoutMs,
        query_timeout: timeoutMs,
        application_name: "autoscan doctor",
      });
      // A connection lost later (the server restarting) must not crash the doctor: the next query fails instead.
      client.on("error", () => {});
      const abort = (): void => void client.end().catch(() => {});
      signal.addEventListener("abort", abort, { once: true });
      try {
        await client.connect();
      } catch (error) {
        signal.removeEventListener("abort", abort);
        await client.end().catch(() => {});
        return classify(error, blank);
      }
      return { ok: true, session: session(client, now, () => signal.removeEventListener("abort", abort)) };
    },
  };
}

function session(client: pg.Client, now: () => number, release: () => void): DatabaseSession {
  return {
    async serverVersion() {
      const result = await client.query<{ server_version: string }>("SHOW server_version");
      return result.rows[0]?.server_version ?? "";
    },
    async schema() {
      const found = await client.query<{ found: string | null; may_create: boolean }>(
        "SELECT to_regclass($1)::text AS found, has_database_privilege(current_database(), 'CREATE') AS may_create",
        [`${PG_SCHEMA}.schema_migrations`],
      );
      const row = found.rows[0];
      if (!row?.found) return { exists: false, version: 0, canCreate: row?.may_create ?? false };
      const applied = await client.query<{ version: number | null }>(`SELECT max(version) AS version FROM ${PG_SCHEMA}.schema_migrations`);
      return { exists: true, version: Number(applied.rows[0]?.version ?? 0), canCreate: row.may_create };
    },
    async clock() {
      const sentAt = now();
      const result = await client.query<{ at: string }>("SELECT extract(epoch from clock_timestamp()) * 1000 AS at");
      const receivedAt = now();
      return { sentAt, receivedAt, databaseAt: Number(result.rows[0]?.at) };
    },
    async close() {
      release();
      await client.end().catch(() => {});
    },
  };
}

function classify(error: unknown, blank: (text: string) => string): DatabaseConnect & { ok: false } {
  const code = (error as { code?: unknown }).code;
  const message = blank(describeError(error));
  if (typeof code === "string" && AUTH_CODES.has(code)) return { ok: false, problem: "auth", message, code };
  if (code === "3D000") return { ok: false, problem: "database", message, code };
  if (typeof code === "string" && /^E[A-Z_]+$/.test(code)) return { ok: false, problem: "unreachable", error };
  // pg's connectionTimeoutMillis: "timeout expired" or "Connection terminated due to connection timeout", no code.
  if (error instanceof Error && /timeout/i.test(error.message)) {
    return { ok: false, problem: "unreachable", error: Object.assign(new Error(message), { name: "TimeoutError" }) };
  }
  return { ok: false, problem: "other", message, ...(typeof code === "string" ? { code } : {}) };
}
