import type { Logger } from "../core/logger.ts";
import type { DriveStateStore, StoreCommit } from "../drive/drive-store.ts";
import type { CacheDiff, CacheEntry } from "../drive/path-cache.ts";
import type { PgConnection } from "./role-lock.ts";

/**
 * The Google Drive monitor's state in PostgreSQL (`SERVER_DATABASE_URL`): the same tables as the embedded `cache.db`
 * (`drive_feed`: each feed's page token, `drive_item`: the id → (name, parent) cache, `drive_meta`), in the schema
 * `autoscan`. Everything is read at open, as the file store does; only the instance holding the drive role writes,
 * through the role lock's own connection (`connection`), so an instance that lost the role cannot write any more.
 *
 * A page token commits in one transaction with its page's cache changes: a crash (or a lost role) leaves the previous
 * page's state, and the next holder reads that page again, never skips it. The in-memory view changes only after the
 * commit went through.
 */
export interface PgDriveStoreOptions {
  /** One connection, not a pool: the transaction runs on it (the drive role lock's connection). */
  readonly connection: PgConnection;
  readonly log: Logger;
}

export async function openPgDriveStore(options: PgDriveStoreOptions): Promise<DriveStateStore> {
  const db = options.connection;
  const [feeds, metas, items] = [
    await db.query<{ feed: string; page_token: string }>("SELECT feed, page_token FROM drive_feed"),
    await db.query<{ key: string; value: string }>("SELECT key, value FROM drive_meta"),
    await db.query<{ id: string; name: string; parent: string | null; folder: number; md5: string | null }>(
      "SELECT id, name, parent, folder, md5 FROM drive_item",
    ),
  ];
  const tokens = new Map(feeds.rows.map((row) => [row.feed, row.page_token]));
  const meta = new Map(metas.rows.map((row) => [row.key, row.value]));
  const cache = new Map<string, CacheEntry>(items.rows.map((row) => [row.id, entryOf(row)]));
  let closed = false;
  // One statement sequence at a time on the one connection: two transactions must never interleave on it.
  let chain: Promise<unknown> = Promise.resolve();
  const exclusive = (work: () => Promise<void>): Promise<void> => {
    if (closed) return Promise.reject(new Error("The Google Drive state store is closed"));
    const run = chain.then(work, work);
    chain = run.catch(() => undefined);
    return run;
  };
  const inTransaction = async (work: () => Promise<void>): Promise<void> => {
    await db.query("BEGIN");
    try {
      await work();
      await db.query("COMMIT");
    } catch (error) {
      await db.query("ROLLBACK").catch(() => undefined);
      throw error;
    }
  };

  return {
    path: "PostgreSQL (autoscan.drive_feed, drive_item, drive_meta)",
    pageToken: (feed) => tokens.get(feed),
    pageTokens: () => Object.fromEntries(tokens),
    meta: (key) => meta.get(key),
    metas: () => Object.fromEntries(meta),
    entries: () => [...cache],
    commit: (change) =>
      exclusive(async () => {
        await inTransaction(async () => {
          await applyDiff(db, change.diff);
          await applyTokens(db, change.pageTokens);
          await applyMeta(db, change.meta);
        });
        applyInMemory(change, { tokens, meta, cache });
      }),
    clearItems: () =>
      exclusive(async () => {
        await db.query("DELETE FROM drive_item");
        cache.clear();
      }),
    clearPageTokens: () =>
      exclusive(async () => {
        await db.query("DELETE FROM drive_feed");
        tokens.clear();
      }),
    close() {
      // The connection is the role lock's: it closes it.
      closed = true;
    },
  };
}

function entryOf(row: { name: string; parent: string | null; folder: number; md5: string | null }): CacheEntry {
  return {
    name: row.name,
    ...(row.parent === null ? {} : { parent: row.parent }),
    folder: Number(row.folder) === 1,
    ...(row.md5 === null ? {} : { md5: row.md5 }),
  };
}

/** Upserts first, then removals (as the file store): one statement each, whatever the page's size. */
async function applyDiff(db: PgConnection, diff: CacheDiff | undefined): Promise<void> {
  if (!diff) return;
  if (diff.upserts.size > 0) {
    const ids: string[] = [];
    const names: string[] = [];
    const parents: (string | null)[] = [];
    const folders: number[] = [];
    const md5s: (string | null)[] = [];
    for (const [id, entry] of diff.upserts) {
      ids.push(id);
      names.push(entry.name);
      parents.push(entry.parent ?? null);
      folders.push(entry.folder ? 1 : 0);
      md5s.push(entry.md5 ?? null);
    }
    await db.query(
      `INSERT INTO drive_item (id, name, parent, folder, md5)
       SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::smallint[], $5::text[])
       ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, parent = EXCLUDED.parent, folder = EXCLUDED.folder, md5 = EXCLUDED.md5`,
      [ids, names, parents, folders, md5s],
    );
  }
  if (diff.removals.size > 0) await db.query("DELETE FROM drive_item WHERE id = ANY($1::text[])", [[...diff.removals]]);
}

async function applyTokens(db: PgConnection, pageTokens: StoreCommit["pageTokens"]): Promise<void> {
  for (const [feed, token] of Object.entries(pageTokens ?? {})) {
    if (token === null) await db.query("DELETE FROM drive_feed WHERE feed = $1", [feed]);
    else {
      await db.query(
        "INSERT INTO drive_feed (feed, page_token) VALUES ($1, $2) ON CONFLICT (feed) DO UPDATE SET page_token = EXCLUDED.page_token",
        [feed, token],
      );
    }
  }
}

async function applyMeta(db: PgConnection, meta: StoreCommit["meta"]): Promise<void> {
  for (const [key, value] of Object.entries(meta ?? {})) {
    await db.query("INSERT INTO drive_meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value", [key, value]);
  }
}

function applyInMemory(
  change: StoreCommit,
  into: { tokens: Map<string, string>; meta: Map<string, string>; cache: Map<string, CacheEntry> },
): void {
  for (const [id, entry] of change.diff?.upserts ?? []) into.cache.set(id, entry);
  for (const id of change.diff?.removals ?? []) into.cache.delete(id);
  for (const [feed, token] of Object.entries(change.pageTokens ?? {})) {
    if (token === null) into.tokens.delete(feed);
    else into.tokens.set(feed, token);
  }
  for (const [key, value] of Object.entries(change.meta ?? {})) into.meta.set(key, value);
}
