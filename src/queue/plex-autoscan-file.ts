import { DatabaseSync, type StatementSync } from "node:sqlite";
import type { ScanRequest } from "../core/scan.ts";
import { isAbsolutePath } from "../paths/normalize.ts";
import { describeNonRegularFile } from "./regular-file.ts";

/**
 * plex_autoscan's queue file, read: l3uddz's `queueitemmodel(scan_path, scan_for, scan_section, scan_type)` (peewee)
 * or by275's `scan_item(path, request_from, section_id, event_type, created_at)`. A file is plex_autoscan's by its
 * table alone (and autoscan's own has `items`); of its columns only the path is needed, the others are taken where
 * they are. Their paths are already in the media server's form (plex_autoscan mapped before queueing); a path may
 * name a file or a folder, so the kind is `unknown` and the dispatcher's file checks decide.
 *
 * The file is read from disk with Node's SQLite, never copied into memory whole, and never written. A damaged file
 * (a bad disk, a copy cut short) is read as far as SQLite can: past a page it cannot read, the rows are looked for id
 * by id, and each stretch of ids that could not be read is handed on with the rows, so the loss can be said.
 */
export interface PlexAutoscanQueue {
  readonly path: string;
  /** Rows in the file (all of them, the ones already imported included); undefined when damage hides the count. */
  readonly total: number | undefined;
  /** The rows after `afterRowid`, in order, and the stretches of ids that could not be read between them. */
  rows(afterRowid: number): Iterable<PlexAutoscanRow>;
  /** Rows up to and including `rowid` (how far an interrupted import got); undefined when damage hides the count. */
  countThrough(rowid: number): number | undefined;
  close(): void;
}

/** A row (`request` undefined: a path that is not a full path, skipped), or ids that could not be read. */
export type PlexAutoscanRow =
  | { readonly rowid: number; readonly request: ScanRequest | undefined }
  | { readonly unreadable: UnreadableIds };

/** Ids after `after` that could not be read: those before `until`, or every one (`until` undefined: none read after). */
export interface UnreadableIds {
  readonly after: number;
  readonly until?: number;
}

export type OpenedPlexAutoscanQueue =
  | { readonly kind: "queue"; readonly queue: PlexAutoscanQueue }
  /** Not plex_autoscan's: no such file, not SQLite, or neither table (autoscan's own queue, for one). */
  | { readonly kind: "other" }
  /** A FIFO, a directory, a device: never opened. `reason` says what it is. */
  | { readonly kind: "refused"; readonly reason: string };

const SOURCES = [
  { table: "queueitemmodel", path: "scan_path", from: "scan_for", event: "scan_type" },
  { table: "scan_item", path: "path", from: "request_from", event: "event_type" },
] as const;

/** SQLite's answers for a page it cannot read: SQLITE_CORRUPT (11), SQLITE_IOERR (10, a short read). */
const DAMAGE = new Set([10, 11]);
const isDamage = (error: unknown): boolean => DAMAGE.has((error as { errcode?: number }).errcode ?? -1);

/** Past damage, ids are tried one by one this far; beyond it, at doubling distances (a tail cut off ends the search). */
const ID_BY_ID = 10_000;

export async function openPlexAutoscanQueue(path: string): Promise<OpenedPlexAutoscanQueue> {
  const refused = await describeNonRegularFile(path);
  if (refused) return { kind: "refused", reason: refused };
  let db: DatabaseSync;
  try {
    // Not defensive, and the schema "writable" (the connection is read-only): SQLite then reads a file shorter than
    // its header says up to where it ends, instead of refusing it whole.
    db = new DatabaseSync(path, { readOnly: true, defensive: false });
    db.exec("PRAGMA writable_schema = ON");
  } catch {
    return { kind: "other" };
  }
  try {
    const tables = new Set(db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all().map((row) => String(row.name)));
    const source = tables.has("items") ? undefined : SOURCES.find((s) => tables.has(s.table));
    if (!source) return close(db);
    const columns = new Set(db.prepare(`PRAGMA table_info(${source.table})`).all().map((row) => String(row.name)));
    const column = (name: string): string => (columns.has(name) ? name : "NULL");
    const fields = `rowid AS rowid, ${column(source.path)} AS path, ${column(source.from)} AS source, ${column(source.event)} AS event`;
    const select = db.prepare(`SELECT ${fields} FROM ${source.table} WHERE rowid > ? ORDER BY rowid`);
    const firstFrom = db.prepare(`SELECT ${fields} FROM ${source.table} WHERE rowid >= ? ORDER BY rowid LIMIT 1`);
    const through = db.prepare(`SELECT count(*) AS n FROM ${source.table} WHERE rowid <= ?`);
    const count = (statement: StatementSync, ...params: number[]): number | undefined => {
      try {
        return Number(statement.get(...params)?.n ?? 0);
      } catch (error) {
        if (isDamage(error)) return undefined;
        throw error;
      }
    };
    return {
      kind: "queue",
      queue: {
        path,
        total: count(db.prepare(`SELECT count(*) AS n FROM ${source.table}`)),
        rows: (afterRowid) => walkRows(select, firstFrom, afterRowid),
        countThrough: (rowid) => count(through, rowid),
        close: () => db.close(),
      },
    };
  } catch {
    // Not a database we can read at all (autoscan's own file is read by its store, which says what is wrong with it).
    return close(db);
  }
}

function close(db: DatabaseSync): { kind: "other" } {
  db.close();
  return { kind: "other" };
}

/**
 * The rows in id order. At a page SQLite cannot read (or reads as rows out of order), the next row it can read is looked for (`nextReadable`), the
 * ids in between are handed on as unreadable, and the walk goes on after that row (each round moves on by a row).
 */
function* walkRows(select: StatementSync, firstFrom: StatementSync, afterRowid: number): Generator<PlexAutoscanRow> {
  const rowOf = (row: Record<string, unknown>): PlexAutoscanRow => ({ rowid: Number(row.rowid), request: toRequest(row.path, row.source, row.event) });
  let last = afterRowid;
  for (;;) {
    try {
      let inOrder = true;
      for (const row of select.iterate(last)) {
        // A page of zeros (a file cut mid-page) reads as rows with id 0: damage, not rows.
        inOrder = Number(row.rowid) > last;
        if (!inOrder) break;
        last = Number(row.rowid);
        yield rowOf(row);
      }
      if (inOrder) return;
    } catch (error) {
      if (!isDamage(error)) throw error;
    }
    const next = nextReadable(firstFrom, last);
    if (next.at === undefined) {
      yield { unreadable: { after: last } };
      return;
    }
    if (next.at > last + 1) yield { unreadable: { after: last, until: next.at } };
    if (!next.row) return;
    last = Number(next.row.rowid);
    yield rowOf(next.row);
  }
}

/**
 * The first row after `last` SQLite can read, tried id by id past the damage (then at doubling distances), and the id
 * `at` which the search got an answer (no `row`: the table ends before it). `at` undefined: nothing after `last`
 * could be read.
 */
function nextReadable(firstFrom: StatementSync, last: number): { at?: number; row?: Record<string, unknown> } {
  for (let step = 1, id = last + 1; id <= Number.MAX_SAFE_INTEGER; id += step) {
    try {
      const row = firstFrom.get(id);
      if (!row) return { at: id };
      if (Number(row.rowid) >= id) return { at: id, row };
    } catch (error) {
      if (!isDamage(error)) throw error;
    }
    if (id - last >= ID_BY_ID) step *= 2;
  }
  return {};
}

function toRequest(path: unknown, source: unknown, event: unknown): ScanRequest | undefined {
  // A row whose path is not a full path could not have been scanned either; it stays behind (in the file kept aside).
  if (typeof path !== "string" || !isAbsolutePath(path)) return undefined;
  return {
    path,
    kind: "unknown",
    source: typeof source === "string" && source.length > 0 ? source : "plex_autoscan",
    event: typeof event === "string" && event.length > 0 ? event : "Restored",
  };
}
