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

/**
 * A statement the connection keeps parsed and planned: each distinct text gets one name, and a connection prepares it
 * on first use. PostgreSQL then skips parsing and planning it on every webhook (about a third of its work per write).
 */
const names = new Map<string, string>();

export function prepared(text: string, values: readonly unknown[]): { name: string; text: string; values: unknown[] } {
  let name = names.get(text);
  if (name === undefined) {
    name = `autoscan_${String(names.size + 1)}`;
    names.set(text, name);
  }
  return { name, text, values: values as unknown[] };
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
