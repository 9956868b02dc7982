import type pg from "pg";
import { checkDatabaseUrl, databaseUrlSecrets, maskDatabaseUrl, type DatabaseUrlParts } from "../../core/database-url.ts";
import { describeError } from "../../core/errors.ts";
import { PG_SCHEMA } from "../../queue/postgres/migrations/index.ts";
import { fail, ok, skipAfter, warn, type CheckResult } from "./check.ts";
import { blankerOf } from "./secrets.ts";
import { unreachableCheck } from "./unreachable.ts";

/**
 * The queue's store: the embedded file (one line), or PostgreSQL in four steps, a failed connection skipping the rest:
 * can autoscan connect (one `pg` Client, 5 s to connect and per query; a socket error in unreachable.ts's words,
 * PostgreSQL's refusals by SQLSTATE), the server's version (`GENERATED … AS IDENTITY` needs 10; below 13, end of
 * life, a warning), the schema `autoscan` (none yet, behind this autoscan: the next start migrates, or written by a
 * newer one, which this one refuses), and the clock offset, as information only: leases and due times are kept on
 * the database's clock, so an offset only shifts this instance's log timestamps. Every message is blanked of the
 * password; the URL shown has it as `***`.
 */
export type DatabaseCheckOptions =
  | { readonly kind: "embedded"; readonly queueFile: string }
  | {
      readonly kind: "postgresql";
      readonly url: string;
      /** The newest schema version this autoscan knows (the last of its migrations). */
      readonly knownVersion: number;
      readonly inContainer: boolean;
      readonly connectTimeoutMs?: number;
      /** This machine's clock (ms since the epoch); injected to test the offset check. */
      readonly now?: () => number;
    };

const TITLE = "Database";
/** The checks in order: a failed one skips those after it. */
const STEPS = { database: TITLE, "database.version": "PostgreSQL version", "database.schema": "Queue schema", "database.clock": "Clock offset" };
const SETTING = "SERVER_DATABASE_URL";
const AUTH_CODES = new Set(["28P01", "28000"]);
/** Beyond this offset the check says how far this clock is off (information only). */
export const MAX_CLOCK_OFFSET_MS = 2000;

export async function databaseChecks(options: DatabaseCheckOptions, signal: AbortSignal): Promise<CheckResult[]> {
  if (options.kind === "embedded") {
    return [ok("database", TITLE, `The queue is embedded, in ${options.queueFile} (${SETTING} is not set: one instance).`)];
  }
  const { url, knownVersion } = options;
  const checked = checkDatabaseUrl(url);
  // The config validated it; a bad one still reads as a target with no host.
  const target = checked.ok ? checked.parts : { host: "", port: 5432, database: "", user: "" };
  const timeoutMs = options.connectTimeoutMs ?? 5000;
  // The driver (pg) is loaded only when a database is set, as the service itself does.
  const { default: driver } = await import("pg");
  const client = new driver.Client({ connectionString: url, connectionTimeoutMillis: timeoutMs, query_timeout: timeoutMs, application_name: "autoscan doctor" });
  // A connection lost later (the server restarting) must not crash the doctor: the next query fails instead.
  client.on("error", () => {});
  const abort = (): void => void client.end().catch(() => {});
  signal.addEventListener("abort", abort, { once: true });
  try {
    try {
      await client.connect();
    } catch (error) {
      return connectFailed(error, target, timeoutMs, blankerOf(databaseUrlSecrets(url)), options.inContainer);
    }
    const out: CheckResult[] = [ok("database", TITLE, `Connected to ${maskDatabaseUrl(url)} as ${target.user || "(the default user)"}.`)];
    const version = versionCheck((await client.query<{ server_version: string }>("SHOW server_version")).rows[0]?.server_version ?? "");
    out.push(version);
    if (version.status === "error") return [...out, ...skipAfter(STEPS, "database.version", "This PostgreSQL is too old for autoscan.")];
    out.push(await schemaCheck(client, knownVersion, target));
    out.push(await clockCheck(client, options.now ?? Date.now));
    return out;
  } finally {
    signal.removeEventListener("abort", abort);
    await client.end().catch(() => {});
  }
}

/** Why connecting failed, classified where the error enters: a socket error, or PostgreSQL's refusal by SQLSTATE. */
function connectFailed(error: unknown, target: DatabaseUrlParts, timeoutMs: number, blank: (text: string) => string, inContainer: boolean): CheckResult[] {
  const refused = (detail: string, fix: string): CheckResult[] => [fail("database", TITLE, detail, fix), ...skipAfter(STEPS, "database", "PostgreSQL refused the connection.")];
  const { host, port, database, user } = target;
  const code = (error as { code?: unknown }).code;
  const message = blank(describeError(error));
  if (typeof code === "string" && AUTH_CODES.has(code)) {
    return refused(
      `PostgreSQL at ${host}:${port} refused the password or user '${user}' (${code}: ${message}).`,
      `Check the user and password in ${SETTING} (special characters percent-encoded: @ as %40), and that pg_hba.conf lets '${user}' in from this host.`,
    );
  }
  if (code === "3D000") {
    return refused(
      `PostgreSQL at ${host}:${port} has no database '${database}'.`,
      `Create it: CREATE DATABASE "${database}" OWNER "${user || "autoscan"}"; (or with the postgres image: POSTGRES_DB=${database}), or correct the name in ${SETTING}.`,
    );
  }
  // pg's connectionTimeoutMillis: "timeout expired" or "Connection terminated due to connection timeout", no code.
  const socket = typeof code === "string" && /^E[A-Z_]+$/.test(code);
  if (socket || (error instanceof Error && /timeout/i.test(error.message))) {
    const url = `postgres://${host.includes(":") ? `[${host}]` : host}:${port}`;
    const server = { id: "database", title: TITLE, url, label: "PostgreSQL", setting: SETTING, portHint: "PostgreSQL listens on 5432" };
    const example = "postgres://autoscan:PASSWORD@postgres:5432/autoscan";
    const cause = socket ? error : Object.assign(new Error(message), { name: "TimeoutError" });
    const unreachable = unreachableCheck({ ...server, example, timeoutSeconds: Math.round(timeoutMs / 100) / 10 }, cause, inContainer);
    return [unreachable, ...skipAfter(STEPS, "database", "PostgreSQL did not answer.")];
  }
  return refused(
    `PostgreSQL at ${host}:${port} refused the connection${typeof code === "string" ? ` (${code})` : ""}: ${message}`,
    `Check ${SETTING} (TLS: sslmode=require or disable as the server wants) and PostgreSQL's log.`,
  );
}

/** `SHOW server_version` → a check: below 10 autoscan cannot run, below 13 (out of support) a warning. */
export function versionCheck(text: string): CheckResult {
  const id = "database.version";
  const title = "PostgreSQL version";
  const match = /^(\d+)(?:\.(\d+))?/.exec(text.trim());
  const shown = text.trim().split(" ")[0] ?? text;
  if (!match) return warn(id, title, `The server says its version is '${shown}', which autoscan does not recognise.`, "Use PostgreSQL 13 or newer.");
  const major = Number(match[1]);
  if (major < 10) {
    return fail(
      id,
      title,
      `PostgreSQL ${shown} is too old: autoscan needs 10 or newer (GENERATED AS IDENTITY; FOR UPDATE SKIP LOCKED is 9.5+).`,
      "Upgrade PostgreSQL (13 or newer; the compose example uses postgres:17).",
    );
  }
  if (major < 13) {
    return warn(id, title, `PostgreSQL ${shown} works, but is out of support.`, "Upgrade PostgreSQL to 13 or newer when you can.");
  }
  return ok(id, title, `PostgreSQL ${shown}.`);
}

/** The schema's migrations table: there, the highest version applied (0: none), and whether the user may create it. */
async function schemaCheck(client: pg.Client, known: number, target: DatabaseUrlParts): Promise<CheckResult> {
  const id = "database.schema";
  const title = "Queue schema";
  const found = await client.query<{ found: string | null; may_create: boolean }>(
    "SELECT to_regclass($1)::text AS found, has_database_privilege(current_database(), 'CREATE') AS may_create",
    [`${PG_SCHEMA}.schema_migrations`],
  );
  const row = found.rows[0];
  const applied = row?.found ? await client.query<{ version: number | null }>(`SELECT max(version) AS version FROM ${PG_SCHEMA}.schema_migrations`) : undefined;
  const state = { exists: Boolean(row?.found), version: Number(applied?.rows[0]?.version ?? 0), canCreate: row?.may_create ?? false };
  if (!state.exists || state.version === 0) {
    if (!state.canCreate && !state.exists) {
      return fail(
        id,
        title,
        `No autoscan tables yet, and '${target.user}' may not create the schema "autoscan" in '${target.database}'.`,
        `Let it: GRANT CREATE ON DATABASE "${target.database}" TO "${target.user}"; (or make it the database's owner).`,
      );
    }
    return ok(id, title, `No autoscan tables yet: they will be created at the first start (schema ${known}).`);
  }
  if (state.version < known) return ok(id, title, `Schema ${state.version}: the next start migrates it from ${state.version} to ${known}.`);
  if (state.version > known) {
    return fail(
      id,
      title,
      `Written by a newer autoscan (schema ${state.version}, this one knows ${known}): this instance refuses to start on it.`,
      "Upgrade this instance to the image the others run.",
    );
  }
  return ok(id, title, `Schema ${known}, as this autoscan expects.`);
}

/** This machine's clock just before and just after the database read its own `clock_timestamp()` (ms). */
async function clockCheck(client: pg.Client, now: () => number): Promise<CheckResult> {
  const id = "database.clock";
  const title = "Clock offset";
  const sentAt = now();
  const result = await client.query<{ at: string }>("SELECT extract(epoch from clock_timestamp()) * 1000 AS at");
  const roundTrip = Math.max(0, now() - sentAt);
  const offset = Number(result.rows[0]?.at) - (sentAt + roundTrip / 2);
  // Only what lies beyond the round trip's uncertainty counts.
  const beyond = Math.max(0, Math.abs(offset) - roundTrip / 2);
  const seconds = (Math.abs(offset) / 1000).toFixed(1);
  const side = offset > 0 ? "behind" : "ahead of";
  if (beyond > MAX_CLOCK_OFFSET_MS) {
    // Information, not a fault: the queue keeps time on the database's clock.
    return ok(
      id,
      title,
      `This machine's clock is ${seconds} s ${side} the database's. The queue keeps its time on the database's clock, ` +
        "so this only shifts this instance's log timestamps; NTP (systemd-timesyncd, chrony) keeps logs comparable.",
    );
  }
  return ok(id, title, `Within ${Math.max(0.1, Math.abs(offset) / 1000).toFixed(1)} s of the database's clock.`);
}
