import type { Database, Statement, SqlValue } from "sql.js";
import { createPendingCache } from "./pending-cache.ts";

/**
 * The queue's rows as stored, and the only code that writes them. Every change is also a value (`RowChange`): the
 * store appends it to the journal, and replaying a journal applies the same changes through `applyChange`. Changes
 * are whole-row images, so replaying one twice, or onto a newer snapshot, does no harm.
 */
export type ItemState = "pending" | "done" | "failed";

export interface ItemRow {
  readonly id: number;
  readonly folder: string;
  readonly state: ItemState;
  readonly priority: number;
  /** First request for the folder (the oldest-first order and the 3 × delay cap count from it). */
  readonly first_at: number;
  readonly last_at: number;
  /** When the scan delay is over. */
  readonly due_at: number;
  /** Not before this time: the next file check, or a retry after a failure (0 = no extra wait). */
  readonly next_at: number;
  /** Bumped by every request that adds work, so a scan that started earlier does not count for it. */
  readonly rev: number;
  readonly checks: number;
  /** Set once the file checks passed: the folder the targets get. */
  readonly scan_folder: string | null;
  /** JSON list of the requested files found on disk (server form), set with `scan_folder`. */
  readonly files: string | null;
  readonly attempts: number;
  readonly first_failed_at: number | null;
  readonly last_error: string | null;
  readonly finished_at: number | null;
}

export interface RequestRow {
  readonly id: number;
  readonly item_id: number;
  readonly path: string;
  readonly kind: "file" | "folder" | "unknown";
  readonly deleted: 0 | 1;
  readonly source: string;
  readonly event: string;
  readonly received_path: string | null;
  readonly at: number;
}

export interface TargetRow {
  readonly item_id: number;
  readonly target: string;
  readonly status: "scanned" | "skipped";
  readonly detail: string | null;
  readonly at: number;
}

export type RowChange =
  | { readonly k: "item"; readonly r: ItemRow }
  | { readonly k: "req"; readonly r: RequestRow }
  | { readonly k: "tgt"; readonly r: TargetRow }
  /** Deletes an item with its requests and target results. */
  | { readonly k: "del"; readonly id: number }
  /** Forgets which targets finished an item (new work arrived for it). */
  | { readonly k: "clr"; readonly id: number }
  /** Drops history finished before `before`, and all but the newest `keep` history rows. */
  | { readonly k: "prune"; readonly before: number; readonly keep: number };

const ITEM_COLUMNS = [
  "id", "folder", "state", "priority", "first_at", "last_at", "due_at", "next_at", "rev", "checks", "scan_folder",
  "files", "attempts", "first_failed_at", "last_error", "finished_at",
] as const;
const REQUEST_COLUMNS = ["id", "item_id", "path", "kind", "deleted", "source", "event", "received_path", "at"] as const;
const TARGET_COLUMNS = ["item_id", "target", "status", "detail", "at"] as const;
const upsertSql = (table: string, columns: readonly string[]): string =>
  `INSERT OR REPLACE INTO ${table} (${columns.join(", ")}) VALUES (${columns.map(() => "?").join(", ")})`;
const UPSERT_ITEM = upsertSql("items", ITEM_COLUMNS);
const UPSERT_REQUEST = upsertSql("requests", REQUEST_COLUMNS);
const INSERT_REQUEST = UPSERT_REQUEST.replace("INSERT OR REPLACE", "INSERT");
const UPSERT_TARGET = upsertSql("item_targets", TARGET_COLUMNS);

const PRUNED_IDS = `
  SELECT id FROM items WHERE state <> 'pending' AND finished_at < ?1
  UNION
  SELECT id FROM (SELECT id FROM items WHERE state <> 'pending' ORDER BY finished_at DESC, id DESC LIMIT -1 OFFSET ?2)`;

/** Prepared statements, compiled once per database. */
export interface RowAccess {
  /** Runs a cached statement and returns its rows as objects. */
  all<T>(sql: string, params?: readonly SqlValue[]): T[];
  get<T>(sql: string, params?: readonly SqlValue[]): T | undefined;
  run(sql: string, params?: readonly SqlValue[]): void;
  /** The folder's waiting item, if any (kept in memory once read or written; see `pending-cache.ts`). */
  pendingItem(folder: string): ItemRow | undefined;
  /**
   * `stored`: the item's row as it is stored now, when the caller has just read it. An item image is then written as
   * an UPDATE of the columns that differ, which touches only the indexes on those columns (a REPLACE rewrites the
   * row in every index, and costs several times more). The result is the same row.
   */
  apply(change: RowChange, stored?: ItemRow): void;
  /** The id the next inserted item would get (AUTOINCREMENT: ids are never reused). */
  nextItemId(): number;
  nextRequestId(): number;
  free(): void;
}

interface Prepared {
  readonly stmt: Statement;
  /** Column names, read once: asking sql.js for them on every row costs more than the query. */
  columns?: string[];
}

export function createRowAccess(db: Database): RowAccess {
  const cache = new Map<string, Prepared>();
  const pending = createPendingCache();
  const statement = (sql: string): Prepared => {
    let prepared = cache.get(sql);
    if (!prepared) {
      prepared = { stmt: db.prepare(sql) };
      cache.set(sql, prepared);
    }
    return prepared;
  };
  const all = <T>(sql: string, params: readonly SqlValue[] = []): T[] => {
    const prepared = statement(sql);
    const { stmt } = prepared;
    try {
      stmt.bind(params as SqlValue[]);
      const rows: T[] = [];
      while (stmt.step()) {
        const columns = (prepared.columns ??= stmt.getColumnNames());
        const values = stmt.get();
        const row: Record<string, SqlValue> = {};
        for (let i = 0; i < columns.length; i++) row[columns[i] as string] = values[i] ?? null;
        rows.push(row as T);
      }
      return rows;
    } finally {
      stmt.reset();
    }
  };
  const run = (sql: string, params: readonly SqlValue[] = []): void => {
    // Rows written by a transaction that is rolled back are gone again: the cached ones may be among them.
    if (sql.startsWith("ROLLBACK")) pending.clear();
    const { stmt } = statement(sql);
    // sql.js's run() binds (resetting first), steps and resets; a failed step still leaves it to our reset.
    try {
      stmt.bind(params as SqlValue[]);
      stmt.step();
    } finally {
      stmt.reset();
    }
  };
  const upsert = (sql: string, columns: readonly string[], row: object): void => {
    const record = row as Record<string, SqlValue | undefined>;
    run(sql, columns.map((column) => record[column] ?? null));
  };
  // Request ids above every stored one cannot collide: those rows are written with a plain INSERT, which costs about
  // half of a REPLACE (that looks the id up first). Lower ids (a request moved to another item, a journal replayed
  // onto a newer file) are REPLACEd as before.
  let highestRequestId: number | undefined;
  const writeRequest = (row: RequestRow): void => {
    highestRequestId ??= (all<{ m: number | null }>("SELECT MAX(id) AS m FROM requests")[0]?.m ?? 0);
    if (row.id <= highestRequestId) return upsert(UPSERT_REQUEST, REQUEST_COLUMNS, row);
    upsert(INSERT_REQUEST, REQUEST_COLUMNS, row);
    highestRequestId = row.id;
  };
  const writeItem = (row: ItemRow, stored: ItemRow | undefined): void => {
    // A new folder or state can collide with another row's unique index, which the REPLACE resolves.
    if (!stored || stored.id !== row.id || stored.folder !== row.folder || stored.state !== row.state) {
      upsert(UPSERT_ITEM, ITEM_COLUMNS, row);
    } else {
      const changed = ITEM_COLUMNS.filter((column) => row[column] !== stored[column]);
      if (changed.length > 0) {
        run(`UPDATE items SET ${changed.map((column) => `${column} = ?`).join(", ")} WHERE id = ?`, [
          ...changed.map((column) => row[column]),
          row.id,
        ]);
      }
    }
    pending.written(row);
  };

  return {
    all,
    get<T>(sql: string, params?: readonly SqlValue[]): T | undefined {
      return all<T>(sql, params)[0];
    },
    run,
    pendingItem(folder) {
      const cached = pending.get(folder);
      if (cached) return cached;
      const row = all<ItemRow>("SELECT * FROM items WHERE state = 'pending' AND folder = ?", [folder])[0];
      if (row) pending.written(row);
      return row;
    },
    apply(change, stored) {
      switch (change.k) {
        case "item":
          return writeItem(change.r, stored);
        case "req":
          return writeRequest(change.r);
        case "tgt":
          return upsert(UPSERT_TARGET, TARGET_COLUMNS, change.r);
        case "del":
          run("DELETE FROM requests WHERE item_id = ?", [change.id]);
          run("DELETE FROM item_targets WHERE item_id = ?", [change.id]);
          run("DELETE FROM items WHERE id = ?", [change.id]);
          return pending.deleted(change.id);
        case "clr":
          return run("DELETE FROM item_targets WHERE item_id = ?", [change.id]);
        case "prune": {
          const params = [change.before, change.keep];
          run(`DELETE FROM requests WHERE item_id IN (${PRUNED_IDS})`, params);
          run(`DELETE FROM item_targets WHERE item_id IN (${PRUNED_IDS})`, params);
          return run(`DELETE FROM items WHERE id IN (${PRUNED_IDS})`, params);
        }
      }
    },
    nextItemId() {
      const used = all<{ seq: number }>("SELECT seq FROM sqlite_sequence WHERE name = 'items'")[0]?.seq ?? 0;
      const max = all<{ m: number | null }>("SELECT MAX(id) AS m FROM items")[0]?.m ?? 0;
      return Math.max(used, max) + 1;
    },
    nextRequestId() {
      return (all<{ m: number | null }>("SELECT MAX(id) AS m FROM requests")[0]?.m ?? 0) + 1;
    },
    free() {
      for (const { stmt } of cache.values()) stmt.free();
      cache.clear();
      pending.clear();
    },
  };
}
