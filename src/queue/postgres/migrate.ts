import { FatalError } from "../../core/errors.ts";
import type { Logger } from "../../core/logger.ts";
import type { PgMigration } from "./migrations/migration.ts";
import { PG_SCHEMA } from "./migrations/index.ts";
import { AUTOSCAN_LOCKS, LOCKS } from "./locks.ts";
import type { PgPool } from "./pool.ts";


export interface MigrationResult {
  readonly from: number;
  readonly to: number;
}

/**
 * Brings the schema up to date at start. Instances starting together wait for each other on an advisory lock, so
 * each step runs once; each step runs in its own transaction with its row in `schema_migrations`. A database
 * written by a newer autoscan (a version this one does not know) stops the start: this instance must be upgraded.
 */
export async function migratePostgres(pool: PgPool, migrations: readonly PgMigration[], log: Logger): Promise<MigrationResult> {
  const client = await pool.connect();
  // Checked out, the connection has no listener of the pool's: a server ending it must fail the start, not crash it.
  let broken: Error | undefined;
  const onError = (error: Error): void => {
    broken = error;
  };
  client.on("error", onError);
  try {
    await client.query("SELECT pg_advisory_lock($1, $2)", [AUTOSCAN_LOCKS, LOCKS.migrations]);
    try {
      await client.query(`CREATE SCHEMA IF NOT EXISTS ${PG_SCHEMA}`);
      await client.query(
        `CREATE TABLE IF NOT EXISTS ${PG_SCHEMA}.schema_migrations (
           version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())`,
      );
      const applied = await client.query<{ v: number | null }>(`SELECT MAX(version) AS v FROM ${PG_SCHEMA}.schema_migrations`);
      const from = applied.rows[0]?.v ?? 0;
      const known = migrations.at(-1)?.version ?? 0;
      if (from > known) {
        throw new FatalError(
          `The queue database has schema version ${from}, written by a newer autoscan; this one knows up to ${known}. ` +
            "Upgrade this instance to the version the others run.",
        );
      }
      for (const step of migrations.filter((m) => m.version > from)) {
        await client.query("BEGIN");
        try {
          await client.query(`SET LOCAL search_path = ${PG_SCHEMA}`);
          await client.query(step.sql);
          await client.query(`INSERT INTO ${PG_SCHEMA}.schema_migrations (version, name) VALUES ($1, $2)`, [step.version, step.name]);
          await client.query("COMMIT");
        } catch (error) {
          await client.query("ROLLBACK").catch(() => undefined);
          throw error;
        }
        log.info({ version: step.version, name: step.name }, `Database schema step ${step.version} (${step.name}) applied.`);
      }
      return { from, to: Math.max(from, known) };
    } finally {
      await client.query("SELECT pg_advisory_unlock($1, $2)", [AUTOSCAN_LOCKS, LOCKS.migrations]).catch(() => undefined);
    }
  } finally {
    client.removeListener("error", onError);
    client.release(broken);
  }
}
