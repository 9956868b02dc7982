import { readFile, rename } from "node:fs/promises";
import { copyFileDurably, writeFileDurably } from "../../core/durable-file.ts";
import { FatalError, describeError } from "../../core/errors.ts";
import type { Logger } from "../../core/logger.ts";
import { describeNonRegularFile } from "../regular-file.ts";
import type { Database, SqlJsStatic } from "../../core/sql-js.ts";

/**
 * The snapshot: the queue file itself (`queue.db`), a whole SQLite database written by `writeSnapshot` (durably, see
 * `core/durable-file.ts`). The snapshot it replaces is kept as `queue.db.prev`, and the log since that previous one
 * is kept too, so a damaged or deleted `queue.db` still loses nothing: the previous snapshot plus the log rebuild it.
 */
export const previousPath = (file: string): string => `${file}.prev`;

export interface LoadedSnapshot {
  readonly db: Database;
  /** How the database was obtained, for the start-up log line. */
  readonly from: "file" | "previous" | "salvaged" | "empty";
}

export async function loadSnapshot(sql: SqlJsStatic, file: string, now: number, log: Logger): Promise<LoadedSnapshot> {
  const current = await readIfPresent(file);
  if (current && current.length > 0) {
    const checked = openChecked(sql, current);
    if (checked.db) return { db: checked.db, from: "file" };
    const aside = await moveAside(file, now);
    const previous = await openPrevious(sql, file);
    if (previous) {
      log.error(
        { file, movedTo: aside, reason: checked.reason },
        `The queue file '${file}' is damaged (${checked.reason}); moved it aside to '${aside}' and rebuilt the queue ` +
          `from the previous snapshot '${previousPath(file)}' and the log since.`,
      );
      return { db: previous, from: "previous" };
    }
    const salvaged = salvage(sql, current);
    log.error(
      { file, movedTo: aside, reason: checked.reason, salvaged: salvaged.counts },
      `The queue file '${file}' is damaged (${checked.reason}) and there is no usable previous snapshot; moved it ` +
        `aside to '${aside}' and salvaged ${describeCounts(salvaged.counts)} from it before replaying the log.`,
    );
    return { db: salvaged.db, from: "salvaged" };
  }
  const previous = await openPrevious(sql, file);
  if (previous) {
    log.error(
      { file },
      `The queue file '${file}' is missing but its previous snapshot is there: it was deleted. Rebuilt the queue ` +
        `from '${previousPath(file)}' and the log since.`,
    );
    return { db: previous, from: "previous" };
  }
  return { db: new sql.Database(), from: "empty" };
}

/**
 * Replaces the snapshot with `data`, keeping the one it replaces as `.prev`. Both steps are atomic replacements (see
 * `core/durable-file.ts`): a crash at any point leaves a complete `queue.db`. `.prev` is a copy, never a second name
 * of the same file, so damage to one cannot reach the other. `fresh`: `.prev` is `data` too (a new chain: nothing
 * older is needed to rebuild the queue).
 */
export async function writeSnapshot(file: string, data: Uint8Array, log: Logger, options: { fresh?: boolean } = {}): Promise<void> {
  const prev = previousPath(file);
  if (options.fresh) await writeFileDurably(prev, data, { log });
  else {
    await copyFileDurably(file, prev, { log }).catch((error: unknown) => {
      // No current file (a first checkpoint, or it was deleted): there is nothing to keep.
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    });
  }
  await writeFileDurably(file, data, { log });
}

async function readIfPresent(file: string): Promise<Buffer | undefined> {
  const refused = await describeNonRegularFile(file);
  if (refused) throw new FatalError(`The queue file ${refused}: move it away, or name a file with --queuefile.`);
  try {
    return await readFile(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw new FatalError(`Cannot read the queue file '${file}': ${describeError(error)}`, { cause: error });
  }
}

async function openPrevious(sql: SqlJsStatic, file: string): Promise<Database | undefined> {
  const data = await readIfPresent(previousPath(file));
  if (!data || data.length === 0) return undefined;
  return openChecked(sql, data).db;
}

async function moveAside(file: string, now: number): Promise<string> {
  const aside = `${file}.corrupt-${new Date(now).toISOString().replace(/[:.]/g, "-")}`;
  try {
    await rename(file, aside);
    return aside;
  } catch (error) {
    throw new FatalError(`The queue file '${file}' is damaged and could not be moved aside: ${describeError(error)}`, {
      cause: error,
    });
  }
}

function openChecked(sql: SqlJsStatic, data: Uint8Array): { db?: Database; reason: string } {
  let db: Database | undefined;
  try {
    db = new sql.Database(data);
    const verdict = db.exec("PRAGMA quick_check")[0]?.values.map((row) => String(row[0])) ?? [];
    if (verdict.length === 1 && verdict[0] === "ok") return { db, reason: "" };
    db.close();
    return { reason: `integrity check: ${verdict.slice(0, 3).join("; ") || "no answer"}` };
  } catch (error) {
    db?.close();
    return { reason: describeError(error) };
  }
}

const SALVAGED_TABLES = ["meta", "items", "requests", "item_targets", "deliveries"] as const;

/**
 * Copies every row SQLite can still read out of a damaged file into a new database with the same schema. A table
 * that cannot be read in order is read row by row over its rowids; what stays unreadable is counted as lost.
 */
function salvage(sql: SqlJsStatic, data: Uint8Array): { db: Database; counts: Record<string, number> } {
  const fresh = new sql.Database();
  const counts: Record<string, number> = {};
  let damaged: Database | undefined;
  try {
    damaged = new sql.Database(data);
    const schema = damaged.exec("SELECT sql FROM sqlite_master WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%'");
    for (const [statement] of schema[0]?.values ?? []) fresh.exec(String(statement));
    const version = damaged.exec("PRAGMA user_version")[0]?.values[0]?.[0];
    fresh.exec(`PRAGMA user_version = ${Number(version ?? 0)}`);
  } catch {
    damaged?.close();
    return { db: new sql.Database(), counts: {} };
  }
  for (const table of SALVAGED_TABLES) counts[table] = copyTable(damaged, fresh, table);
  damaged.close();
  return { db: fresh, counts };
}

function copyTable(from: Database, to: Database, table: string): number {
  let copied = 0;
  const insert = (columns: string[], values: unknown[]): void => {
    try {
      to.run(
        `INSERT OR REPLACE INTO ${table} (${columns.join(", ")}) VALUES (${columns.map(() => "?").join(", ")})`,
        values as never,
      );
      copied++;
    } catch {
      // A row that does not fit the schema any more is lost with the damage.
    }
  };
  try {
    const result = from.exec(`SELECT * FROM ${table}`)[0];
    for (const row of result?.values ?? []) insert(result?.columns ?? [], row);
    return copied;
  } catch {
    // The table's pages are damaged somewhere: read what can be read, one rowid at a time.
  }
  copied = 0;
  let max = 0;
  try {
    max = Number(from.exec(`SELECT MAX(rowid) FROM ${table}`)[0]?.values[0]?.[0] ?? 0);
  } catch {
    return 0;
  }
  for (let rowid = 1; rowid <= Math.min(max, 5_000_000); rowid++) {
    try {
      const result = from.exec(`SELECT * FROM ${table} WHERE rowid = ${String(rowid)}`)[0];
      for (const row of result?.values ?? []) insert(result?.columns ?? [], row);
    } catch {
      // unreadable row
    }
  }
  return copied;
}

function describeCounts(counts: Record<string, number>): string {
  const items = counts.items ?? 0;
  const requests = counts.requests ?? 0;
  return `${String(items)} folder(s) and ${String(requests)} request(s)`;
}
