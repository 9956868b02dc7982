import { afterEach, beforeEach, expect, it } from "vitest";
import { migratePostgres } from "../src/queue/postgres/migrate.ts";
import { PG_SCHEMA, pgMigrations } from "../src/queue/postgres/migrations/index.ts";
import { openPgPool, type PgPool } from "../src/queue/postgres/pool.ts";
import { captureLog } from "./support/capture-log.ts";
import { createTestDatabase, describeWithPostgres, dropTestDatabase } from "./support/postgres.ts";

/** A database an older autoscan wrote takes the newer steps, and its rows with them. */
describeWithPostgres("PostgreSQL schema steps on a database an older autoscan wrote", () => {
  const log = captureLog().log;
  let url: string;
  let pool: PgPool;
  beforeEach(async () => {
    url = await createTestDatabase();
    pool = openPgPool({ url, log, applicationName: "migrate test" });
  });
  afterEach(async () => {
    await pool.end();
    await dropTestDatabase(url);
  });

  it("gives the items it holds their ready time at step 5, and the waiting ones an index on it", async () => {
    await migratePostgres(pool, pgMigrations.filter((step) => step.version < 5), log);
    await pool.query(`INSERT INTO ${PG_SCHEMA}.items (id, folder, state, priority, first_at, last_at, due_at, next_at) VALUES
      (1, '/a', 'pending', 0, 0, 0, 5000, 0), (2, '/b', 'pending', 0, 0, 0, 5000, 9000), (3, '/c', 'done', 0, 0, 0, 100, 0)`);
    expect(await migratePostgres(pool, pgMigrations, log)).toEqual({ from: 4, to: pgMigrations.length });
    const rows = await pool.query<{ id: number; ready_at: number }>(`SELECT id, ready_at FROM ${PG_SCHEMA}.items ORDER BY id`);
    expect(rows.rows).toEqual([{ id: 1, ready_at: 5000 }, { id: 2, ready_at: 9000 }, { id: 3, ready_at: 100 }]);
    const indexes = await pool.query<{ indexdef: string }>(
      "SELECT indexdef FROM pg_indexes WHERE schemaname = $1 AND indexname = 'items_pending_ready'",
      [PG_SCHEMA],
    );
    expect(indexes.rows[0]?.indexdef).toMatch(/\(ready_at\) WHERE \(state = 'pending'::text\)/);
  });
});
