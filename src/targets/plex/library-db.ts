import { stat } from "node:fs/promises";
import { DatabaseSync, type SQLOutputValue, type StatementSync } from "node:sqlite";
import type { Logger } from "../../core/logger.ts";

/**
 * Reads Plex's library database (`PLEX_DATABASE_PATH`, `com.plexapp.plugins.library.db`) without loading it: SQLite
 * opened read-only, one indexed lookup per question (`index_media_parts_on_file`). Facts: integrations.md §3.3.
 *
 * - Never writes: opened with `readOnly`, so even a bug cannot touch Plex's data.
 * - Sees Plex's latest writes: a read-only connection still reads the `-wal` file (the `-wal`/`-shm` siblings must be
 *   readable, and the folder must allow the `-shm` file to exist).
 * - Plex's custom pieces (FTS4 tables with `tokenize=collating`, an index `COLLATE icu_root`) only bite when a
 *   statement touches them: writes to `metadata_items` and reads of the `fts4_*` tables fail outside Plex, but the
 *   plain tables read here (`media_parts`, `media_items`, `metadata_items` by id / parent) read normally.
 *   test/plex-library-db.test.ts checks this on a database carrying those pieces.
 */

/** "Is this file already in Plex?" — what the drive monitor receives. */
export type IsInLibrary = (serverPath: string, localPath?: string) => Promise<boolean>;

export interface LibraryItem {
  /** `metadata_items.id`, the item's ratingKey. */
  readonly id: string;
  /** The season (for an episode) or album (for a track); absent for a movie. */
  readonly parentId?: string;
  readonly sectionId: string;
  readonly file: string;
}

/** What analysis and trash handling ask the library. */
export interface LibraryIndex {
  /** Live items whose media part is one of `files` (server form). */
  findItems(files: readonly string[]): Promise<LibraryItem[]>;
  /** Live children of an item (episodes of a season, tracks of an album). */
  childrenOf(parentId: string): Promise<string[]>;
  /** Items and parts of a section that Plex marked deleted but has not removed yet (the trash). */
  countDeleted(sectionId: string): Promise<number>;
}

export interface LibraryDbOptions {
  /** `PLEX_DATABASE_PATH`. */
  readonly path: string;
  readonly log: Logger;
  /** `GOOGLE.DISABLE_DISK_FILE_SIZE_CHECK`: a database hit alone means "in Plex". */
  readonly disableSizeCheck?: boolean;
  /** How long a read waits while Plex holds a lock (default 2 s). */
  readonly busyTimeoutMs?: number;
}

export interface LibraryDb extends LibraryIndex {
  readonly isInLibrary: IsInLibrary;
  /** Opens the database now if it is not open yet; throws why it cannot (SQLite's own open is synchronous). */
  open(): void;
  close(): void;
}

interface Statements {
  readonly partSizes: StatementSync;
  readonly items: StatementSync;
  readonly children: StatementSync;
  readonly deleted: StatementSync;
}

const SQL = {
  partSizes: "SELECT size FROM media_parts WHERE file = ? AND deleted_at IS NULL",
  items: `SELECT mp.file AS file, md.id AS id, md.parent_id AS parentId, md.library_section_id AS sectionId
    FROM media_parts mp
    JOIN media_items mi ON mi.id = mp.media_item_id
    JOIN metadata_items md ON md.id = mi.metadata_item_id
    WHERE mp.file = ? AND mp.deleted_at IS NULL AND mi.deleted_at IS NULL AND md.deleted_at IS NULL`,
  children: "SELECT id FROM metadata_items WHERE parent_id = ? AND deleted_at IS NULL ORDER BY id",
  deleted: `SELECT
      (SELECT count(*) FROM metadata_items WHERE library_section_id = ?1 AND deleted_at IS NOT NULL)
    + (SELECT count(*) FROM media_parts mp JOIN media_items mi ON mi.id = mp.media_item_id
        WHERE mi.library_section_id = ?1 AND mp.deleted_at IS NOT NULL) AS n`,
} as const;

/** Opens lazily, on the first question, and again after a failure (the mount may come back). */
export function createLibraryDb(options: LibraryDbOptions): LibraryDb {
  const log = options.log.child({ component: "PLEX" });
  let db: DatabaseSync | undefined;
  let statements: Statements | undefined;

  function open(): Statements {
    if (statements) return statements;
    const handle = new DatabaseSync(options.path, { readOnly: true, timeout: options.busyTimeoutMs ?? 2_000 });
    try {
      const tables = handle
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name IN ('media_parts','media_items','metadata_items')")
        .all();
      if (tables.length < 3) {
        throw new Error(`${options.path} is not a Plex library database (media_parts/media_items/metadata_items missing)`);
      }
      statements = {
        partSizes: handle.prepare(SQL.partSizes),
        items: handle.prepare(SQL.items),
        children: handle.prepare(SQL.children),
        deleted: handle.prepare(SQL.deleted),
      };
    } catch (error) {
      handle.close();
      throw error;
    }
    db = handle;
    log.debug({ path: options.path }, "Opened the Plex library database read-only");
    return statements;
  }

  let lastProblem: string | undefined;

  /** A database that cannot be read answers "not in Plex": a needless scan is harmless, a missed one is not. */
  async function isInLibrary(serverPath: string, localPath?: string): Promise<boolean> {
    let rows: { size: number | bigint | null }[];
    try {
      rows = open().partSizes.all(serverPath) as { size: number | bigint | null }[];
      lastProblem = undefined;
    } catch (error) {
      const problem = error instanceof Error ? error.message : String(error);
      if (problem !== lastProblem) log.warn({ err: error, path: options.path }, "Cannot read the Plex library database");
      lastProblem = problem;
      return false;
    }
    if (rows.length === 0) return false;
    if (options.disableSizeCheck) return true;
    // A file with the same name but another size is an upgrade Plex has not seen yet: scan it.
    if (localPath === undefined) return false;
    const local = await stat(localPath).then(
      (info) => info.size,
      () => undefined,
    );
    return local !== undefined && rows.some((row) => row.size !== null && Number(row.size) === local);
  }

  return {
    isInLibrary,
    open: () => void open(),
    async findItems(files) {
      const { items } = open();
      const found: LibraryItem[] = [];
      for (const file of new Set(files)) {
        for (const row of items.all(file)) found.push(toItem(row));
      }
      return found;
    },
    async childrenOf(parentId) {
      return (open().children.all(parentId) as { id: number | bigint }[]).map((row) => String(row.id));
    },
    async countDeleted(sectionId) {
      const row = open().deleted.get(sectionId) as { n: number | bigint } | undefined;
      return Number(row?.n ?? 0);
    },
    close() {
      statements = undefined;
      db?.close();
      db = undefined;
    },
  };
}

function toItem(row: Record<string, SQLOutputValue>): LibraryItem {
  const { id, parentId, sectionId, file } = row;
  return {
    id: String(id),
    sectionId: String(sectionId ?? ""),
    file: String(file),
    ...(parentId !== null && parentId !== undefined ? { parentId: String(parentId) } : {}),
  };
}
