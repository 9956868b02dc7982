import type { RowReader } from "./sqljs/rows.ts";

/**
 * Reads that both stores answer: the embedded store's in memory at once, PostgreSQL's over the network. The views
 * (`queue-views.ts`), the covered check (`coverage.ts`) and the dispatcher's items (`queue-work.ts`) are written once
 * against this, in SQL both engines read alike (`?` and `?N` placeholders; the PostgreSQL reader numbers them).
 */
export interface AsyncRows {
  all<T>(sql: string, params?: readonly (string | number | null)[]): Promise<T[]>;
  get<T>(sql: string, params?: readonly (string | number | null)[]): Promise<T | undefined>;
}

/** The embedded store's reader behind the shared interface (each read is still one synchronous step). */
export function asyncRows(rows: RowReader): AsyncRows {
  return {
    all: (sql, params) => Promise.resolve(rows.all(sql, params)),
    get: (sql, params) => Promise.resolve(rows.get(sql, params)),
  };
}
