import type { AsyncRows } from "../store-port.ts";
import { classifyDatabaseError, type PgQueryable } from "./pool.ts";

/**
 * `AsyncRows` over a pool or a transaction's client. The shared SQL is written with SQLite's `?` and `?N`
 * placeholders; they are numbered here (`$1`, …), once per statement text.
 */
const converted = new Map<string, string>();

export function toPgPlaceholders(sql: string): string {
  let out = converted.get(sql);
  if (out !== undefined) return out;
  let next = 0;
  out = sql.replace(/\?(\d+)?/g, (_match, n: string | undefined) => `$${n ?? String(++next)}`);
  converted.set(sql, out);
  return out;
}

export function pgRows(db: PgQueryable): AsyncRows {
  const run = async <T>(sql: string, params: readonly (string | number | null)[] = []): Promise<T[]> => {
    try {
      const result = await db.query(toPgPlaceholders(sql), params as unknown[]);
      return result.rows as T[];
    } catch (error) {
      throw classifyDatabaseError(error);
    }
  };
  return {
    all: run,
    get: async <T>(sql: string, params?: readonly (string | number | null)[]) => (await run<T>(sql, params))[0],
  };
}
