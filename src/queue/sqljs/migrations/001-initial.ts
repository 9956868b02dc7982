import type { Migration } from "./migration.ts";

/**
 * The first schema. One row per folder to scan (`items`): `pending` rows are the queue (at most one per folder),
 * `done` and `failed` rows are the history (bounded by age and count). Every request that merged into a folder is a
 * `requests` row; every target that finished a folder is an `item_targets` row, so a retry only re-sends to the
 * targets that have not. Times are milliseconds since the epoch.
 */
export const initialSchema: Migration = {
  version: 1,
  name: "initial",
  sql: `
    CREATE TABLE meta (
      key   TEXT PRIMARY KEY,
      value TEXT NOT NULL
    );

    CREATE TABLE items (
      id              INTEGER PRIMARY KEY AUTOINCREMENT,
      folder          TEXT    NOT NULL,
      state           TEXT    NOT NULL CHECK (state IN ('pending', 'done', 'failed')),
      priority        INTEGER NOT NULL,
      first_at        INTEGER NOT NULL,
      last_at         INTEGER NOT NULL,
      due_at          INTEGER NOT NULL,
      next_at         INTEGER NOT NULL DEFAULT 0,
      rev             INTEGER NOT NULL DEFAULT 1,
      checks          INTEGER NOT NULL DEFAULT 0,
      scan_folder     TEXT,
      files           TEXT,
      attempts        INTEGER NOT NULL DEFAULT 0,
      first_failed_at INTEGER,
      last_error      TEXT,
      finished_at     INTEGER
    );
    CREATE UNIQUE INDEX items_pending_folder ON items (folder) WHERE state = 'pending';
    CREATE INDEX items_pending_order ON items (priority, first_at) WHERE state = 'pending';
    CREATE INDEX items_pending_due ON items (due_at) WHERE state = 'pending';
    CREATE INDEX items_pending_next ON items (next_at) WHERE state = 'pending';
    CREATE INDEX items_history ON items (finished_at) WHERE state <> 'pending';

    CREATE TABLE requests (
      id            INTEGER PRIMARY KEY,
      item_id       INTEGER NOT NULL,
      path          TEXT    NOT NULL,
      kind          TEXT    NOT NULL CHECK (kind IN ('file', 'folder', 'unknown')),
      deleted       INTEGER NOT NULL DEFAULT 0,
      source        TEXT    NOT NULL,
      event         TEXT    NOT NULL,
      received_path TEXT,
      at            INTEGER NOT NULL
    );
    CREATE INDEX requests_item ON requests (item_id);

    CREATE TABLE item_targets (
      item_id INTEGER NOT NULL,
      target  TEXT    NOT NULL,
      status  TEXT    NOT NULL CHECK (status IN ('scanned', 'skipped')),
      detail  TEXT,
      at      INTEGER NOT NULL,
      PRIMARY KEY (item_id, target)
    );
  `,
};
