import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadDoctorConfig, runDoctor } from "../src/ops/doctor/doctor.ts";
import { resolveSettings } from "../src/config/settings.ts";
import type { CheckResult } from "../src/ops/doctor/check.ts";
import { databaseChecks, versionCheck } from "../src/ops/doctor/database.ts";
import { pgMigrations } from "../src/queue/postgres/migrations/index.ts";
import { captureLog, makeTempDir } from "./support/capture-log.ts";
import { freePort } from "./support/free-port.ts";
import { createTestDatabase, describeWithPostgres, dropTestDatabase } from "./support/postgres.ts";
import { runCli } from "./support/run-cli.ts";

/**
 * `autoscan doctor`'s database family against the test run's real PostgreSQL (test/support/postgres.ts): connected,
 * version, the schema (none yet, as this autoscan expects, behind, ahead: tables made by hand here, as the store would),
 * the clock offset, and each refusal named with its fix. The password given in the URL never shows.
 */
const PASSWORD = "doctor-db-Pa55word-0123";
const SERVER_PASS = "doctor-db-pass-0123456789abcdef";
const KNOWN = Math.max(...pgMigrations.map((step) => step.version));

/** The test URL with a password (the test server trusts local connections, so any password is taken). */
function withPassword(url: string, change: { user?: string; database?: string; port?: number; host?: string } = {}): string {
  const parsed = new URL(url);
  if (change.user) parsed.username = change.user;
  parsed.password = PASSWORD;
  if (change.database) parsed.pathname = `/${change.database}`;
  if (change.port) parsed.port = String(change.port);
  if (change.host) parsed.hostname = change.host;
  return parsed.toString();
}

async function check(url: string, options: { knownVersion?: number; now?: () => number } = {}): Promise<CheckResult[]> {
  const results = await databaseChecks(
    { kind: "postgresql", url, knownVersion: options.knownVersion ?? KNOWN, inContainer: false, ...(options.now ? { now: options.now } : {}) },
    new AbortController().signal,
  );
  expect(JSON.stringify(results)).not.toContain(PASSWORD);
  return results;
}

const byId = (results: readonly CheckResult[], id: string): CheckResult => {
  const found = results.find((result) => result.id === id);
  if (!found) throw new Error(`no check ${id} in ${results.map((r) => r.id).join(", ")}`);
  return found;
};

async function sql(url: string, text: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

/** The migrations table as the store makes it, with the given versions applied. */
async function applied(url: string, versions: readonly number[]): Promise<void> {
  await sql(
    url,
    `CREATE SCHEMA IF NOT EXISTS autoscan;
     CREATE TABLE IF NOT EXISTS autoscan.schema_migrations (
       version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now());
     ${versions.map((v) => `INSERT INTO autoscan.schema_migrations (version, name) VALUES (${v}, 'step ${v}');`).join("\n")}`,
  );
}

describe("PostgreSQL versions", () => {
  it.each([
    ["17.2 (Debian 17.2-1.pgdg120+1)", "ok", "PostgreSQL 17.2."],
    ["13.0", "ok", "PostgreSQL 13.0."],
    ["12.22", "warn", "PostgreSQL 12.22 works, but is out of support."],
    ["10.23", "warn", "PostgreSQL 10.23 works, but is out of support."],
    ["9.6.24", "error", "PostgreSQL 9.6.24 is too old: autoscan needs 10 or newer (GENERATED AS IDENTITY; FOR UPDATE SKIP LOCKED is 9.5+)."],
  ])("%s → %s", (text, status, detail) => {
    expect(versionCheck(text)).toMatchObject({ status, detail });
  });
});

describe("autoscan config check", () => {
  it("shows the database URL with its password as *** (real process)", async () => {
    const { dir, cleanup } = await makeTempDir("autoscan-config-check-db-");
    try {
      const path = join(dir, "config.json");
      await writeFile(path, JSON.stringify({ SERVER_PASS, SERVER_LEASE_SECONDS: 20 }));
      const url = `postgres://autoscan:${PASSWORD}@db.lan:5432/autoscan`;
      const result = await runCli(["config", "check", "--config", path], { env: { SERVER_DATABASE_URL: url } });
      expect(result.code).toBe(0);
      expect(result.stdout).toContain("Queue:           PostgreSQL at postgres://autoscan:***@db.lan:5432/autoscan (lease 20 s)");
      expect(result.stdout + result.stderr).not.toContain(PASSWORD);
    } finally {
      await cleanup();
    }
  });
});

describeWithPostgres("autoscan doctor: the database", () => {
  let url: string;
  let root: string;
  let cleanup: () => Promise<void>;
  const databases: string[] = [];

  async function freshDatabase(): Promise<string> {
    const created = await createTestDatabase();
    databases.push(created);
    return created;
  }

  beforeAll(async () => {
    ({ dir: root, cleanup } = await makeTempDir("autoscan-doctor-db-"));
    url = await freshDatabase();
  });

  afterAll(async () => {
    await Promise.all(databases.map((created) => dropTestDatabase(created)));
    await cleanup();
  });

  async function writeCase(name: string, config: Record<string, unknown>): Promise<string> {
    const dir = join(root, name);
    await mkdir(dir, { recursive: true });
    const path = join(dir, "config.json");
    const plex = `http://127.0.0.1:${await freePort()}`;
    await writeFile(path, JSON.stringify({ SERVER_PASS, SERVER_IP: "127.0.0.1", SERVER_PORT: await freePort(), PLEX_LOCAL_URL: plex, ...config }));
    return path;
  }

  it("a fresh database: connected, version, no tables yet (created at the first start), clock in sync (real process, URL from a _FILE)", async () => {
    const path = await writeCase("fresh", {});
    const secret = join(root, "fresh", "database-url");
    await writeFile(secret, `${withPassword(url)}\n`);
    const result = await runCli(["doctor", "--config", path], { env: { SERVER_DATABASE_URL_FILE: secret } });
    const output = result.stdout + result.stderr;
    expect(output).not.toContain(PASSWORD);
    const shown = withPassword(url).replace(PASSWORD, "***");
    expect(result.stdout).toMatch(new RegExp(`✓ Database +Connected to ${escape(shown)} as postgres\\.`));
    expect(result.stdout).toMatch(/✓ PostgreSQL version +PostgreSQL \d+\.\d+\./);
    expect(result.stdout).toContain(`No autoscan tables yet: they will be created at the first start (schema ${KNOWN}).`);
    expect(result.stdout).toMatch(/✓ Clock offset +Within \d+\.\d s of the database's clock\./);
  });

  it("without SERVER_DATABASE_URL: one line, the embedded queue and its file", async () => {
    const path = await writeCase("embedded", {});
    const settings = resolveSettings({ config: path }, {}, root);
    const loaded = await loadDoctorConfig(settings, {});
    const report = await runDoctor({ settings, env: {}, loaded, log: captureLog().log, inContainer: false });
    const lines = report.checks.filter((c) => c.id.startsWith("database"));
    expect(lines).toEqual([
      { id: "database", status: "ok", title: "Database", detail: `The queue is embedded, in ${join(root, "embedded", "queue.db")} (SERVER_DATABASE_URL is not set: one instance).` },
    ]);
  });

  it("the schema as this autoscan expects, behind it, and ahead of it", async () => {
    const current = await freshDatabase();
    await applied(current, pgMigrations.map((step) => step.version));
    expect(byId(await check(withPassword(current)), "database.schema")).toMatchObject({ status: "ok", detail: `Schema ${KNOWN}, as this autoscan expects.` });
    // An autoscan that knows one step more: the next start migrates.
    expect(byId(await check(withPassword(current), { knownVersion: KNOWN + 1 }), "database.schema")).toMatchObject({
      status: "ok",
      detail: `Schema ${KNOWN}: the next start migrates it from ${KNOWN} to ${KNOWN + 1}.`,
    });
    // Written by a newer autoscan.
    await applied(current, [KNOWN + 1]);
    const ahead = byId(await check(withPassword(current)), "database.schema");
    expect(ahead).toMatchObject({
      status: "error",
      detail: `Written by a newer autoscan (schema ${KNOWN + 1}, this one knows ${KNOWN}): this instance refuses to start on it.`,
      fix: "Upgrade this instance to the image the others run.",
    });
  });

  it("an empty migrations table reads as no tables yet", async () => {
    const empty = await freshDatabase();
    await applied(empty, []);
    expect(byId(await check(withPassword(empty)), "database.schema").detail).toMatch(/^No autoscan tables yet/);
  });

  it("a user who may not create the schema is told the GRANT", async () => {
    const limited = await freshDatabase();
    const role = `doctor_${Math.random().toString(16).slice(2, 8)}`;
    await sql(url, `CREATE ROLE ${role} LOGIN`);
    try {
      const results = await check(withPassword(limited, { user: role }));
      expect(byId(results, "database")).toMatchObject({ status: "ok" });
      const database = new URL(limited).pathname.slice(1);
      expect(byId(results, "database.schema")).toMatchObject({
        status: "error",
        fix: `Let it: GRANT CREATE ON DATABASE "${database}" TO "${role}"; (or make it the database's owner).`,
      });
    } finally {
      await sql(url, `DROP ROLE ${role}`);
    }
  });

  it("a clock 5 s ahead of the database's: said, as information (the queue keeps time on the database's clock)", async () => {
    const results = await check(withPassword(url), { now: () => Date.now() + 5000 });
    const clock = byId(results, "database.clock");
    expect(clock.status).toBe("ok");
    expect(clock.detail).toMatch(/^This machine's clock is [45]\.\d s ahead of the database's\. The queue keeps its time on the database's clock/);
    expect(clock.detail).toMatch(/NTP/);
  });

  it("a missing database is named, with the CREATE DATABASE that makes it", async () => {
    const results = await check(withPassword(url, { database: "autoscan_nope" }));
    const port = new URL(url).port;
    expect(byId(results, "database")).toMatchObject({
      status: "error",
      detail: `PostgreSQL at 127.0.0.1:${port} has no database 'autoscan_nope'.`,
      fix: `Create it: CREATE DATABASE "autoscan_nope" OWNER "postgres"; (or with the postgres image: POSTGRES_DB=autoscan_nope), or correct the name in SERVER_DATABASE_URL.`,
    });
    expect(results.slice(1).map((r) => [r.id, r.status])).toEqual([
      ["database.version", "skip"],
      ["database.schema", "skip"],
      ["database.clock", "skip"],
    ]);
  });

  it("a user the server refuses: the password or user refused", async () => {
    const results = await check(withPassword(url, { user: "no_such_role" }));
    const database = byId(results, "database");
    expect(database.status).toBe("error");
    expect(database.detail).toMatch(/^PostgreSQL at 127\.0\.0\.1:\d+ refused the password or user 'no_such_role' \((28000|28P01): /);
    expect(database.fix).toMatch(/Check the user and password in SERVER_DATABASE_URL/);
  });

  it("nothing listening, and a name that does not resolve: cannot reach, in the words every family uses", async () => {
    const port = await freePort();
    const refused = byId(await check(withPassword(url, { port })), "database");
    expect(refused).toMatchObject({
      status: "error",
      detail: `connection refused: nothing listens at postgres://127.0.0.1:${port} (is PostgreSQL running? is the port right?).`,
      fix: "Start PostgreSQL, or correct the address and port in SERVER_DATABASE_URL (PostgreSQL listens on 5432).",
    });
    const unknown = byId(await check(withPassword(url, { host: "no-such-database-host.invalid" })), "database");
    expect(unknown.status).toBe("error");
    expect(unknown.detail).toMatch(/^no-such-database-host\.invalid does not resolve \((ENOTFOUND|EAI_AGAIN)[):].*SERVER_DATABASE_URL/);
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
}
