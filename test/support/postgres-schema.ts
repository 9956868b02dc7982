import pg from "pg";
import { migratePostgres } from "../../src/queue/postgres/migrate.ts";
import { PG_SCHEMA, pgMigrations } from "../../src/queue/postgres/migrations/index.ts";
import { openPgPool } from "../../src/queue/postgres/pool.ts";
import type { Logger } from "../../src/core/logger.ts";
import { createTestDatabase, dropTestDatabase } from "./postgres.ts";

/** A fresh test database with autoscan's schema, and one connection to it working in that schema (as a role's is). */
export interface MigratedDatabase {
  readonly url: string;
  readonly client: pg.Client;
  drop(): Promise<void>;
}

export async function createMigratedDatabase(log: Logger): Promise<MigratedDatabase> {
  const url = await createTestDatabase();
  const pool = openPgPool({ url, log, applicationName: "autoscan test" });
  await migratePostgres(pool, pgMigrations, log);
  await pool.end();
  const client = new pg.Client({ connectionString: url, options: `-c search_path=${PG_SCHEMA}` });
  await client.connect();
  return {
    url,
    client,
    async drop() {
      await client.end();
      await dropTestDatabase(url);
    },
  };
}
