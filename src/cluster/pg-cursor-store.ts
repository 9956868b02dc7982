import type { Cursor, CursorStore } from "../backfill/cursor-store.ts";
import type { Logger } from "../core/logger.ts";
import type { PgConnection } from "./role-lock.ts";

/**
 * The backfill cursors in PostgreSQL (`SERVER_DATABASE_URL`): one `shared_state` row per *arr app, key
 * `backfill:<app>`, value `{"date":"<ISO>","id":<n>}` (the newest record read). All are read at open; only the instance
 * holding the backfill role writes, through the role lock's own connection, so an instance that lost the role cannot
 * move a cursor any more. As with the file, a cursor moves only after the requests of its read were stored.
 */
export interface PgCursorStoreOptions {
  /** The backfill role lock's connection (search_path `autoscan`). */
  readonly connection: PgConnection;
  readonly log: Logger;
}

const PREFIX = "backfill:";

export async function openPgCursorStore(options: PgCursorStoreOptions): Promise<CursorStore> {
  const db = options.connection;
  const { rows } = await db.query<{ key: string; value: string }>("SELECT key, value FROM shared_state WHERE LEFT(key, LENGTH($1)) = $1", [PREFIX]);
  const cursors = new Map<string, Cursor>();
  for (const row of rows) {
    const app = row.key.slice(PREFIX.length);
    const cursor = parseCursor(row.value);
    // A damaged row: that app's history is read from now on (nothing old is flooded in), as with a damaged file.
    if (cursor) cursors.set(app, cursor);
    else options.log.warn({ app, key: row.key }, `The backfill cursor of '${app}' in the database could not be read; its history is read from now on.`);
  }
  let chain: Promise<void> = Promise.resolve();
  return {
    get: (app) => cursors.get(app),
    set(app, cursor) {
      const value = JSON.stringify({ date: new Date(cursor.date).toISOString(), id: cursor.id });
      const run = chain.then(async () => {
        await db.query(
          `INSERT INTO shared_state (key, value, updated_at) VALUES ($1, $2, now())
           ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, updated_at = EXCLUDED.updated_at`,
          [PREFIX + app, value],
        );
        cursors.set(app, cursor);
      });
      chain = run.catch(() => undefined);
      return run;
    },
  };
}

function parseCursor(text: string): Cursor | undefined {
  try {
    const value = JSON.parse(text) as { date?: unknown; id?: unknown };
    const date = typeof value.date === "string" ? Date.parse(value.date) : Number.NaN;
    if (!Number.isFinite(date) || !Number.isInteger(value.id)) return undefined;
    return { date, id: value.id as number };
  } catch {
    return undefined;
  }
}
