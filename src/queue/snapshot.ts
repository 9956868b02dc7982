import { readFile, rename } from "node:fs/promises";
import { FatalError, describeError } from "../core/errors.ts";
import type { Logger } from "../core/logger.ts";
import type { Database, SqlJsStatic } from "./sql-js.ts";

export interface LoadedSnapshot {
  readonly db: Database;
  /** False when there was no file (or an empty one): a first start. */
  readonly existed: boolean;
}

/**
 * Opens the queue file into memory. A file SQLite cannot read (truncated, overwritten, not a database) is renamed
 * to `<file>.corrupt-<time>` and the queue starts empty: a crash loop on a damaged file would lose every new request
 * too. The journal beside it is still replayed by the caller.
 */
export async function loadSnapshot(sql: SqlJsStatic, file: string, now: number, log: Logger): Promise<LoadedSnapshot> {
  let data: Buffer;
  try {
    data = await readFile(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return { db: new sql.Database(), existed: false };
    throw new FatalError(`Cannot read the queue file '${file}': ${describeError(error)}`, { cause: error });
  }
  if (data.length === 0) return { db: new sql.Database(), existed: false };
  const problem = checkDatabase(sql, data);
  if (problem.db) return { db: problem.db, existed: true };
  const aside = `${file}.corrupt-${new Date(now).toISOString().replace(/[:.]/g, "-")}`;
  try {
    await rename(file, aside);
  } catch (error) {
    throw new FatalError(
      `The queue file '${file}' is damaged (${problem.reason}) and could not be moved aside: ${describeError(error)}`,
      { cause: error },
    );
  }
  log.error(
    { file, movedTo: aside, reason: problem.reason },
    `The queue file '${file}' is damaged or truncated (${problem.reason}). Moved it aside to '${aside}' and ` +
      "starting with an empty queue; the journal beside it is still replayed.",
  );
  return { db: new sql.Database(), existed: false };
}

function checkDatabase(sql: SqlJsStatic, data: Uint8Array): { db?: Database; reason: string } {
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
