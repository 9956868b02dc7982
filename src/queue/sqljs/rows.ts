import type { Database, Statement, SqlValue } from "sql.js";
import { PRUNED_IDS } from "../rules/admin.ts";
import { readyAt } from "../rules/due.ts";
import type { DeliveryRow, ItemRow, RequestRow, TargetRow } from "../store-rows.ts";

/**
 * The embedded store's rows (the types are the queue's, `store-rows.ts`), and `applyChange`, the only code that
 * writes them. A change is a value (`RowChange`):
 * the store applies it while a write is built, logs it, and applies the same value again once it is on disk; a
 * restart replays the log through the same function. Item, request and target changes are whole-row images.
 */
export type RowChange =
  | { readonly k: "item"; readonly r: ItemRow }
  | { readonly k: "req"; readonly r: RequestRow }
  | { readonly k: "tgt"; readonly r: TargetRow }
  /** A target's failed delivery of an item (its wait, or given up). */
  | { readonly k: "dlv"; readonly r: DeliveryRow }
  /** Forgets a target's failed delivery of an item (the target has scanned it). */
  | { readonly k: "undlv"; readonly id: number; readonly target: string }
  /** Forgets an item's failed deliveries (a retry). */
  | { readonly k: "clrdlv"; readonly id: number }
  /** Deletes an item with its requests and target results. */
  | { readonly k: "del"; readonly id: number }
  /** Forgets which targets finished an item, and their failed deliveries (new work arrived for it). */
  | { readonly k: "clr"; readonly id: number }
  /** Keeps only an item's first `keep` requests (by id). */
  | { readonly k: "trim"; readonly id: number; readonly keep: number }
  /** Deletes an item's requests numbered `from` to `to` (a finished folder's extra requests, a batch at a time). */
  | { readonly k: "dropreq"; readonly id: number; readonly from: number; readonly to: number }
  /** Drops history finished before `before`, and all but the newest `keep` history rows. */
  | { readonly k: "prune"; readonly before: number; readonly keep: number }
  /** Keeps a note in `meta` (`value` null: forgets it). */
  | { readonly k: "note"; readonly key: string; readonly value: string | null };

/**
 * The short key a request's path is indexed by (`requests (item_id, path_key)`): 32-bit FNV-1a over the path's UTF-16
 * code units, as a signed integer so SQLite stores it in at most 4 bytes. Indexing the whole path repeated every path
 * in the index: a quarter of the queue file with 100,000 requests waiting. Keys of different paths may collide; a
 * lookup compares the path too. Stored in the queue file: never change the function.
 */
export function pathKey(path: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < path.length; i++) hash = Math.imul(hash ^ path.charCodeAt(i), 0x01000193);
  return hash | 0;
}

const ITEM_COLUMNS = [
  "id", "folder", "state", "priority", "first_at", "last_at", "due_at", "next_at", "rev", "checks", "scan_folder",
  "files", "attempts", "unfinished", "first_failed_at", "last_error", "finished_at", "requests_dropped", "ready_at",
] as const;
const REQUEST_COLUMNS = ["id", "item_id", "path", "kind", "deleted", "source", "event", "received_path", "at", "path_key"] as const;
const TARGET_COLUMNS = [
  "item_id", "target", "status", "detail", "at", "landed", "landed_detail", "landed_after_ms", "landed_check_at", "landed_looks",
] as const;
const DELIVERY_COLUMNS = ["item_id", "target", "attempts", "next_at", "first_failed_at", "last_error", "failed"] as const;

/**
 * A row image replaces the row with the same key (`key`), and only that one: a row that conflicts with another unique
 * key (a second waiting item for a folder) fails the write, as it does in PostgreSQL.
 */
const upsertSql = (table: string, columns: readonly string[], key: readonly string[]): string =>
  `INSERT INTO ${table} (${columns.join(", ")}) VALUES (${columns.map(() => "?").join(", ")})
   ON CONFLICT (${key.join(", ")}) DO UPDATE SET ${columns.filter((c) => !key.includes(c)).map((c) => `${c} = excluded.${c}`).join(", ")}`;
const ITEM_UPSERT = upsertSql("items", ITEM_COLUMNS, ["id"]);
const REQUEST_UPSERT = upsertSql("requests", REQUEST_COLUMNS, ["id"]);
const TARGET_UPSERT = upsertSql("item_targets", TARGET_COLUMNS, ["item_id", "target"]);
const DELIVERY_UPSERT = upsertSql("deliveries", DELIVERY_COLUMNS, ["item_id", "target"]);

/** Reads through prepared statements (compiled once per database; that is all this keeps). */
export interface RowReader {
  all<T>(sql: string, params?: readonly SqlValue[]): T[];
  get<T>(sql: string, params?: readonly SqlValue[]): T | undefined;
}

export interface RowAccess extends RowReader {
  run(sql: string, params?: readonly SqlValue[]): void;
  free(): void;
}

export function createRowAccess(db: Database): RowAccess {
  const statements = new Map<string, Statement>();
  const prepare = (sql: string): Statement => {
    let stmt = statements.get(sql);
    if (!stmt) {
      stmt = db.prepare(sql);
      statements.set(sql, stmt);
    }
    return stmt;
  };
  const all = <T>(sql: string, params: readonly SqlValue[] = []): T[] => {
    const stmt = prepare(sql);
    try {
      stmt.bind(params as SqlValue[]);
      const rows: T[] = [];
      while (stmt.step()) rows.push(stmt.getAsObject() as T);
      return rows;
    } finally {
      stmt.reset();
    }
  };
  const get = <T>(sql: string, params: readonly SqlValue[] = []): T | undefined => {
    const stmt = prepare(sql);
    try {
      stmt.bind(params as SqlValue[]);
      return stmt.step() ? (stmt.getAsObject() as T) : undefined;
    } finally {
      stmt.reset();
    }
  };
  return {
    all,
    get,
    run(sql, params = []) {
      const stmt = prepare(sql);
      try {
        stmt.bind(params as SqlValue[]);
        stmt.step();
      } finally {
        stmt.reset();
      }
    },
    free() {
      for (const stmt of statements.values()) stmt.free();
      statements.clear();
    },
  };
}

const values = (columns: readonly string[], row: object): SqlValue[] =>
  columns.map((column) => (row as Record<string, SqlValue | undefined>)[column] ?? null);

/** Applies one change. Whole-row images replace the row with the same key; an item is stored with its `ready_at`. */
export function applyChange(rows: RowAccess, change: RowChange): void {
  switch (change.k) {
    case "item": {
      // Records written before schema 3 carry no `unfinished`, before schema 4 no `requests_dropped`.
      const row: Partial<ItemRow> = change.r;
      const filled = { ...change.r, unfinished: row.unfinished ?? 0, requests_dropped: row.requests_dropped ?? 0 };
      return rows.run(ITEM_UPSERT, values(ITEM_COLUMNS, { ...filled, ready_at: readyAt(filled) }));
    }
    case "req":
      return rows.run(REQUEST_UPSERT, values(REQUEST_COLUMNS, { ...change.r, path_key: pathKey(change.r.path) }));
    case "tgt":
      return rows.run(TARGET_UPSERT, values(TARGET_COLUMNS, change.r));
    case "dlv":
      return rows.run(DELIVERY_UPSERT, values(DELIVERY_COLUMNS, change.r));
    case "undlv":
      return rows.run("DELETE FROM deliveries WHERE item_id = ? AND target = ?", [change.id, change.target]);
    case "clrdlv":
      return rows.run("DELETE FROM deliveries WHERE item_id = ?", [change.id]);
    case "del":
      rows.run("DELETE FROM requests WHERE item_id = ?", [change.id]);
      rows.run("DELETE FROM item_targets WHERE item_id = ?", [change.id]);
      rows.run("DELETE FROM deliveries WHERE item_id = ?", [change.id]);
      return rows.run("DELETE FROM items WHERE id = ?", [change.id]);
    case "clr":
      rows.run("DELETE FROM deliveries WHERE item_id = ?", [change.id]);
      return rows.run("DELETE FROM item_targets WHERE item_id = ?", [change.id]);
    case "trim":
      return rows.run(
        "DELETE FROM requests WHERE item_id = ?1 AND id NOT IN (SELECT id FROM requests WHERE item_id = ?1 ORDER BY id LIMIT ?2)",
        [change.id, change.keep],
      );
    case "dropreq":
      return rows.run("DELETE FROM requests WHERE item_id = ? AND id BETWEEN ? AND ?", [change.id, change.from, change.to]);
    case "note":
      if (change.value === null) return rows.run("DELETE FROM meta WHERE key = ?", [change.key]);
      return rows.run("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", [change.key, change.value]);
    case "prune": {
      const params = [change.before, change.keep];
      rows.run(`DELETE FROM requests WHERE item_id IN (${PRUNED_IDS})`, params);
      rows.run(`DELETE FROM item_targets WHERE item_id IN (${PRUNED_IDS})`, params);
      rows.run(`DELETE FROM deliveries WHERE item_id IN (${PRUNED_IDS})`, params);
      return rows.run(`DELETE FROM items WHERE id IN (${PRUNED_IDS})`, params);
    }
  }
}

/** The id the next new item gets (AUTOINCREMENT semantics: an id is never reused, even after its row is pruned). */
export function nextItemId(rows: RowReader): number {
  const used = rows.get<{ seq: number }>("SELECT seq FROM sqlite_sequence WHERE name = 'items'")?.seq ?? 0;
  const max = rows.get<{ m: number | null }>("SELECT MAX(id) AS m FROM items")?.m ?? 0;
  return Math.max(used, max) + 1;
}

export function nextRequestId(rows: RowReader): number {
  return (rows.get<{ m: number | null }>("SELECT MAX(id) AS m FROM requests")?.m ?? 0) + 1;
}
