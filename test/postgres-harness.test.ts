import { existsSync } from "node:fs";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findPostgresBin, startPostgresCluster, type PostgresCluster } from "./support/postgres-cluster.ts";
import {
  createTestDatabase,
  describeWithPostgres,
  dropTestDatabase,
  postgresMajor,
  terminateConnections,
} from "./support/postgres.ts";

/** The test harness's own PostgreSQL (test/support/postgres.ts) does what the store tests rely on. */

describe("finding PostgreSQL's binaries", () => {
  it("names the folder it looked in when AUTOSCAN_PG_BIN has no initdb", () => {
    const found = findPostgresBin({ AUTOSCAN_PG_BIN: "/nonexistent" });
    expect(found).toEqual({ ok: false, reason: "no initdb and pg_ctl in /nonexistent (AUTOSCAN_PG_BIN)" });
  });
});

async function connect(url: string): Promise<{ client: pg.Client; errors: Error[] }> {
  const client = new pg.Client({ connectionString: url });
  const errors: Error[] = [];
  client.on("error", (error) => errors.push(error));
  await client.connect();
  return { client, errors };
}

describeWithPostgres("the test PostgreSQL", () => {
  let first: string;
  let second: string;
  const clients: pg.Client[] = [];
  const open = async (url: string) => {
    const opened = await connect(url);
    clients.push(opened.client);
    return opened;
  };

  beforeAll(async () => {
    [first, second] = await Promise.all([createTestDatabase(), createTestDatabase()]);
  });
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.end().catch(() => undefined)));
    await Promise.all([first, second].filter(Boolean).map((url) => dropTestDatabase(url)));
  });

  it("hands out fresh databases on 127.0.0.1 as the postgres superuser, running the installed major version", async () => {
    expect(first).toMatch(/^postgres:\/\/postgres@127\.0\.0\.1:\d+\/autoscan_test_[0-9a-f]{12}$/);
    expect(second).not.toBe(first);
    const { client } = await open(first);
    const { rows } = await client.query<{ version: string; db: string; su: string }>(
      "SELECT version() AS version, current_database() AS db, current_setting('is_superuser') AS su",
    );
    expect(rows[0]?.version).toMatch(new RegExp(`^PostgreSQL ${postgresMajor()}\\.\\d+ `));
    expect(postgresMajor()).toBeGreaterThanOrEqual(15);
    expect(rows[0]?.db).toBe(new URL(first).pathname.slice(1));
    expect(rows[0]?.su).toBe("on");
  });

  it("keeps two databases apart", async () => {
    const a = (await open(first)).client;
    const b = (await open(second)).client;
    await a.query("CREATE TABLE only_in_first (n INTEGER)");
    await a.query("INSERT INTO only_in_first VALUES (1)");
    const inFirst = await a.query<{ t: string | null }>("SELECT to_regclass('only_in_first')::text AS t");
    const inSecond = await b.query<{ t: string | null }>("SELECT to_regclass('only_in_first')::text AS t");
    expect(inFirst.rows[0]?.t).toBe("only_in_first");
    expect(inSecond.rows[0]?.t).toBeNull();
  });

  it("terminateConnections ends the connections to one database, and no other", async () => {
    const victim = await open(first);
    const bystander = await open(second);
    await victim.client.query("SELECT 1");

    const ended = await terminateConnections(first);

    expect(ended).toBeGreaterThanOrEqual(1);
    // The server's FATAL reaches the client as an error event; its next query fails.
    await expect.poll(() => victim.errors.map((error) => error.message).join("\n")).toMatch(/terminating connection/);
    await expect(victim.client.query("SELECT 1")).rejects.toThrow();
    const still = await bystander.client.query<{ one: number }>("SELECT 1 AS one");
    expect(still.rows[0]?.one).toBe(1);
    // The database itself is fine: a new connection works.
    const again = await open(first);
    await expect(again.client.query("SELECT 1")).resolves.toBeDefined();
  });

  it("dropTestDatabase removes a database even while clients are connected", async () => {
    const extra = await createTestDatabase();
    const { client } = await open(extra);
    await client.query("SELECT 1");
    await dropTestDatabase(extra);
    const { client: other } = await open(first);
    const { rows } = await other.query("SELECT 1 FROM pg_database WHERE datname = $1", [new URL(extra).pathname.slice(1)]);
    expect(rows).toEqual([]);
  });

  it("refuses to drop or terminate a database it did not create", async () => {
    const admin = new URL(first);
    admin.pathname = "/postgres";
    await expect(dropTestDatabase(admin.toString())).rejects.toThrow(/not a test database: postgres/);
    await expect(terminateConnections(admin.toString())).rejects.toThrow(/not a test database: postgres/);
  });
});

describeWithPostgres("a cluster of a test's own", () => {
  let cluster: PostgresCluster | undefined;
  afterAll(async () => {
    await cluster?.stop();
  });

  it("goes down (connections lost and refused) and comes back with what was committed", async () => {
    const found = findPostgresBin();
    if (!found.ok) throw new Error(found.reason);
    cluster = await startPostgresCluster(found, { watchdog: false });
    const before = await connect(cluster.url);
    await before.client.query("CREATE TABLE kept (n INTEGER); INSERT INTO kept VALUES (42)");

    await cluster.pause();

    await expect.poll(() => before.errors.length).toBeGreaterThan(0);
    await expect(connect(cluster.url)).rejects.toThrow(/ECONNREFUSED/);
    await before.client.end().catch(() => undefined);

    await cluster.resume();

    const after = await connect(cluster.url);
    const { rows } = await after.client.query<{ n: number }>("SELECT n FROM kept");
    expect(rows).toEqual([{ n: 42 }]);
    await after.client.end();
    const dir = cluster.dir;
    await cluster.stop();
    expect(existsSync(dir)).toBe(false);
  });
});
