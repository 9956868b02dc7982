import { FatalError } from "../../core/errors.ts";
import type { Database } from "../../core/sql-js.ts";
import type { Migration } from "./migrations/migration.ts";

export interface MigrationResult {
  readonly from: number;
  readonly to: number;
}

/** The schema version stored in the file (`PRAGMA user_version`; 0 for a file we never wrote). */
export function readSchemaVersion(db: Database): number {
  const row = db.exec("PRAGMA user_version")[0]?.values[0]?.[0];
  return typeof row === "number" ? row : 0;
}

/**
 * Brings the file up to the newest schema, one step per transaction. A file written by a newer autoscan is refused
 * with a message saying so: guessing at an unknown schema could lose queued work.
 */
export function migrateDatabase(db: Database, steps: readonly Migration[], file: string): MigrationResult {
  const from = readSchemaVersion(db);
  const latest = steps.reduce((max, step) => Math.max(max, step.version), 0);
  if (from > latest) {
    throw new FatalError(
      `The queue file '${file}' has schema version ${from}, but this autoscan knows versions up to ${latest}: ` +
        "it was written by a newer autoscan. Upgrade autoscan, or point --queuefile at another file.",
    );
  }
  for (const step of [...steps].sort((a, b) => a.version - b.version)) {
    if (step.version <= from) continue;
    for (const [name, fn] of Object.entries(step.functions ?? {})) db.create_function(name, fn);
    db.exec("BEGIN");
    try {
      db.exec(step.sql);
      db.exec(`PRAGMA user_version = ${String(step.version)}`);
      db.exec("COMMIT");
    } catch (error) {
      db.exec("ROLLBACK");
      throw new FatalError(`Could not apply queue schema step ${String(step.version)} (${step.name})`, {
        cause: error,
      });
    }
  }
  return { from, to: Math.max(from, latest) };
}
