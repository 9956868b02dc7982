import { readFile, rename } from "node:fs/promises";
import { removeStaleTempFiles, writeFileDurably } from "../core/durable-file.ts";
import type { Logger } from "../core/logger.ts";
import { loadSqlJs, type Database, type SqlJsStatic } from "../core/sql-js.ts";
import type { CacheDiff, CacheEntry } from "./path-cache.ts";

/**
 * What the monitor keeps between runs, in one SQLite file in the data dir (plex_autoscan's `--cachefile`,
 * `cache.db`): the page token of each feed, the id → (name, parent) cache and a few facts (My Drive's root id).
 * Tables are prefixed `drive_` so an old plex_autoscan `cache.db` opened here keeps its own tables untouched.
 *
 * sql.js works in memory; every commit writes the whole file durably (temp file, fsync, rename), so a crash leaves
 * the previous commit, never a torn file. A page token is committed together with the cache changes of its page.
 */
export interface StoreCommit {
  readonly diff?: CacheDiff;
  /** feed → page token (`null` forgets it). */
  readonly pageTokens?: Readonly<Record<string, string | null>>;
  readonly meta?: Readonly<Record<string, string>>;
}

export interface DriveStateStore {
  readonly path: string;
  pageToken(feed: string): string | undefined;
  /** Every feed's page token (feed → token). */
  pageTokens(): Readonly<Record<string, string>>;
  meta(key: string): string | undefined;
  /** Every fact kept (key → value). */
  metas(): Readonly<Record<string, string>>;
  entries(): Array<[string, CacheEntry]>;
  commit(change: StoreCommit): Promise<void>;
  clearItems(): Promise<void>;
  clearPageTokens(): Promise<void>;
  close(): void;
}

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS drive_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
  CREATE TABLE IF NOT EXISTS drive_feed (feed TEXT PRIMARY KEY, page_token TEXT NOT NULL);
  CREATE TABLE IF NOT EXISTS drive_item (
    id TEXT PRIMARY KEY, name TEXT NOT NULL, parent TEXT, folder INTEGER NOT NULL, md5 TEXT
  );
`;

export async function openDriveStateStore(options: { readonly path: string; readonly log: Logger }): Promise<DriveStateStore> {
  const SQL = await loadSqlJs();
  // Only the monitor writes this file; a temp file beside it is what a crash mid-write left, and never replaced it.
  await removeStaleTempFiles(options.path);
  const db = await openDatabase(SQL, options.path, options.log);
  db.exec(SCHEMA);
  const tokens = new Map<string, string>(rows(db, "SELECT feed, page_token FROM drive_feed") as [string, string][]);
  const metas = new Map<string, string>(rows(db, "SELECT key, value FROM drive_meta") as [string, string][]);
  const save = (): Promise<void> => writeFileDurably(options.path, db.export(), { mode: 0o600, log: options.log });

  return {
    path: options.path,
    pageToken: (feed) => tokens.get(feed),
    pageTokens: () => Object.fromEntries(tokens),
    meta: (key) => metas.get(key),
    metas: () => Object.fromEntries(metas),
    entries() {
      return rows(db, "SELECT id, name, parent, folder, md5 FROM drive_item").map(([id, name, parent, folder, md5]) => [
        String(id),
        {
          name: String(name),
          ...(parent === null ? {} : { parent: String(parent) }),
          folder: folder === 1,
          ...(md5 === null ? {} : { md5: String(md5) }),
        },
      ]);
    },
    async commit(change) {
      db.exec("BEGIN");
      try {
        applyDiff(db, change.diff);
        for (const [feed, token] of Object.entries(change.pageTokens ?? {})) {
          if (token === null) db.run("DELETE FROM drive_feed WHERE feed = ?", [feed]);
          else db.run("INSERT OR REPLACE INTO drive_feed (feed, page_token) VALUES (?, ?)", [feed, token]);
        }
        for (const [key, value] of Object.entries(change.meta ?? {})) {
          db.run("INSERT OR REPLACE INTO drive_meta (key, value) VALUES (?, ?)", [key, value]);
        }
        db.exec("COMMIT");
      } catch (error) {
        db.exec("ROLLBACK");
        throw error;
      }
      await save();
      for (const [feed, token] of Object.entries(change.pageTokens ?? {})) {
        if (token === null) tokens.delete(feed);
        else tokens.set(feed, token);
      }
      for (const [key, value] of Object.entries(change.meta ?? {})) metas.set(key, value);
    },
    async clearItems() {
      db.exec("DELETE FROM drive_item");
      await save();
    },
    async clearPageTokens() {
      db.exec("DELETE FROM drive_feed");
      await save();
      tokens.clear();
    },
    close() {
      db.close();
    },
  };
}

function applyDiff(db: Database, diff: CacheDiff | undefined): void {
  if (!diff) return;
  const upsert = db.prepare("INSERT OR REPLACE INTO drive_item (id, name, parent, folder, md5) VALUES (?, ?, ?, ?, ?)");
  const remove = db.prepare("DELETE FROM drive_item WHERE id = ?");
  try {
    for (const [id, entry] of diff.upserts) {
      upsert.run([id, entry.name, entry.parent ?? null, entry.folder ? 1 : 0, entry.md5 ?? null]);
    }
    for (const id of diff.removals) remove.run([id]);
  } finally {
    upsert.free();
    remove.free();
  }
}

async function openDatabase(SQL: SqlJsStatic, path: string, log: Logger): Promise<Database> {
  let bytes: Buffer;
  try {
    bytes = await readFile(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return new SQL.Database();
    throw error;
  }
  try {
    const db = new SQL.Database(bytes);
    db.exec("SELECT count(*) FROM sqlite_master"); // sql.js reads lazily: touch the file to find corruption now.
    return db;
  } catch (error) {
    const aside = `${path}.corrupt-${Date.now()}`;
    await rename(path, aside);
    log.warn({ path, movedTo: aside, err: error }, "The Google Drive cache file was unreadable; moved it aside and starting a new one");
    return new SQL.Database();
  }
}

function rows(db: Database, sql: string): unknown[][] {
  const result = db.exec(sql);
  return result[0]?.values ?? [];
}
