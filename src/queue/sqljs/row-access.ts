import type { Database, Statement, SqlValue } from "sql.js";

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
