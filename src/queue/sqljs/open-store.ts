import { mkdir } from "node:fs/promises";
import { dirname } from "node:path";
import { removeStaleTempFiles } from "../../core/durable-file.ts";
import type { Logger } from "../../core/logger.ts";
import { loadSqlJs, type Database } from "../../core/sql-js.ts";
import { migrateDatabase } from "./migrate.ts";
import { migrations } from "./migrations/index.ts";
import { createRowAccess, type RowAccess, type RowReader } from "./row-access.ts";
import { loadSnapshot, previousPath } from "./snapshot-file.ts";

/**
 * Opens the queue file's database in memory: the snapshot (`queue.db`, or the one before it, `queue.db.prev`) loaded,
 * migrated to this version's schema, with the point in the journal it holds. The store (`sqljs-adapter.ts`) replays
 * the journal written after that point (`journal.ts`) before it takes writes.
 */
export interface OpenedDatabase {
  readonly db: Database;
  readonly rows: RowAccess;
  /** Where the snapshot stands in the log: the last write it holds, and the first generation written after it. */
  readonly position: { readonly seq: number; readonly generation: number };
}

export async function openQueueDatabase(options: { readonly file: string; readonly log: Logger; readonly now: () => number }): Promise<OpenedDatabase> {
  const { file, log } = options;
  const sql = await loadSqlJs();
  await mkdir(dirname(file), { recursive: true });
  await removeStaleTempFiles(file);
  await removeStaleTempFiles(previousPath(file));

  const snapshot = await loadSnapshot(sql, file, options.now(), log);
  const { db } = snapshot;
  // The database lives in memory and our log is what makes it durable. The schema steps and the one-time VACUUM of
  // an older file journal in sql.js's in-memory files, freed after each (a VACUUM journals the whole database).
  db.exec("PRAGMA journal_mode = DELETE; PRAGMA synchronous = OFF; PRAGMA temp_store = FILE");
  // A fresh file gets the schema before the log is replayed into it; a file from a newer autoscan stops here.
  // Schema steps only add (columns, indexes), and records of older versions apply to the newer schema.
  migrateDatabase(db, migrations, file);
  useIncrementalVacuum(db);
  // From here on the journal lives in SQLite's own heap: an in-memory file grows by doubling and is thrown away after
  // each transaction, ~2.5 MB of garbage for one finished folder's trim (a burst's 400 folders: ~1 GB for V8 to
  // collect), where SQLite's heap reuses the same memory. Our transactions journal little (new pages and pages that
  // become free are not journaled): deleting 100,000 requests at once and the checkpoint's incremental vacuum left
  // the WebAssembly heap where it was.
  db.exec("PRAGMA journal_mode = MEMORY");
  const rows = createRowAccess(db);
  return { db, rows, position: readLogPosition(rows) };
}

function readLogPosition(rows: RowReader): { seq: number; generation: number } {
  const value = (key: string): number =>
    Number(rows.get<{ value: string }>("SELECT value FROM meta WHERE key = ?", [key])?.value ?? 0) || 0;
  return { seq: value("journal_seq"), generation: value("journal_gen") };
}

/**
 * Free pages (pruned history) are given back page by page at a checkpoint (`PRAGMA incremental_vacuum`), not by a
 * VACUUM, which holds the database three times over while it runs. A file written before this needs one VACUUM to
 * switch, once, at open.
 */
function useIncrementalVacuum(db: Database): void {
  const mode = db.exec("PRAGMA auto_vacuum")[0]?.values[0]?.[0];
  if (mode === 2) return;
  db.exec("PRAGMA auto_vacuum = INCREMENTAL");
  db.exec("VACUUM");
}
