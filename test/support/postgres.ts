import { randomBytes } from "node:crypto";
import pg from "pg";
import { describe, inject, it } from "vitest";

/**
 * The test run's PostgreSQL (started once by test/support/postgres-global-setup.ts) as test files see it: a fresh
 * database per suite, dropped after it. Suites that need it use `describeWithPostgres`: it runs them, or skips them
 * LOUDLY (a console line with the reason, and vitest's skip), never passes them silently; under CI=true with
 * AUTOSCAN_REQUIRE_POSTGRES=1 they fail instead.
 */
export type PostgresProvided =
  | { readonly ok: true; readonly url: string; readonly major: number }
  | { readonly ok: false; readonly reason: string };

declare module "vitest" {
  export interface ProvidedContext {
    autoscanPostgres: PostgresProvided;
  }
}

export type PostgresAvailability = { readonly ok: true } | { readonly ok: false; readonly reason: string };

function provided(): PostgresProvided {
  const state = inject("autoscanPostgres") as PostgresProvided | undefined;
  return (
    state ?? {
      ok: false,
      reason: "the test PostgreSQL was not started (vitest.config.ts must list test/support/postgres-global-setup.ts in globalSetup)",
    }
  );
}

export function postgresAvailable(): PostgresAvailability {
  const state = provided();
  return state.ok ? { ok: true } : { ok: false, reason: state.reason };
}

/** The major version of the test server (15 on Debian bookworm). Throws when PostgreSQL is unavailable. */
export function postgresMajor(): number {
  return running().major;
}

/** `describe` for suites that need PostgreSQL: runs them, or skips them loudly, or fails when PostgreSQL is required. */
export function describeWithPostgres(name: string, body: () => void): void {
  const available = postgresAvailable();
  if (available.ok) {
    describe(name, body);
    return;
  }
  if (process.env.CI === "true" && process.env.AUTOSCAN_REQUIRE_POSTGRES === "1") {
    describe(name, () => {
      it("needs PostgreSQL (CI=true, AUTOSCAN_REQUIRE_POSTGRES=1)", () => {
        throw new Error(`PostgreSQL tests are required here but ${available.reason}`);
      });
    });
    return;
  }
  console.warn(`\n*** SKIPPED PostgreSQL tests "${name}": ${available.reason} ***\n`);
  describe.skip(`${name} [SKIPPED: ${available.reason}]`, body);
}

function running(): PostgresProvided & { ok: true } {
  const state = provided();
  if (!state.ok) throw new Error(`PostgreSQL is unavailable: ${state.reason}`);
  return state;
}

async function withAdmin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: running().url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

const TEST_DATABASE = /^autoscan_test_[0-9a-f]+$/;

function databaseOf(url: string): string {
  const name = decodeURIComponent(new URL(url).pathname.slice(1));
  if (!TEST_DATABASE.test(name)) throw new Error(`not a test database: ${name} (from createTestDatabase: autoscan_test_<hex>)`);
  return name;
}

/** CREATE DATABASE autoscan_test_<random>; resolves with `postgres://postgres@127.0.0.1:<port>/<db>`. */
export async function createTestDatabase(): Promise<string> {
  const name = `autoscan_test_${randomBytes(6).toString("hex")}`;
  await withAdmin((client) => client.query(`CREATE DATABASE "${name}"`));
  const url = new URL(running().url);
  url.pathname = `/${name}`;
  return url.toString();
}

/** DROP DATABASE … WITH (FORCE): connections still open to it are ended. */
export async function dropTestDatabase(url: string): Promise<void> {
  const name = databaseOf(url);
  await withAdmin((client) => client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
}

/**
 * Ends every server connection to the database of `url` (pg_terminate_backend, waiting up to 5 s for each to be
 * gone): its clients see the connection lost, as when the database restarts. Resolves with how many were ended.
 */
export async function terminateConnections(url: string): Promise<number> {
  const name = databaseOf(url);
  const result = await withAdmin((client) =>
    client.query<{ ended: boolean }>(
      "SELECT pg_terminate_backend(pid, 5000) AS ended FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()",
      [name],
    ),
  );
  return result.rows.filter((row) => row.ended).length;
}
