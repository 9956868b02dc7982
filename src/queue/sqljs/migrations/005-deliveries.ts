import type { Migration } from "./migration.ts";

/**
 * Each target's delivery of a folder that failed, stored: a target that is down, or fails the folder, waits on its
 * own (`next_at`), keeps its backoff across a restart, and is given up alone (`failed`) once it has failed the folder
 * for SERVER_RETRY_MAX_HOURS; the other targets deliver the folder meanwhile. A delivery that succeeds is an
 * `item_targets` row, as before.
 */
export const deliveries: Migration = {
  version: 5,
  name: "deliveries",
  sql: `
    CREATE TABLE deliveries (
      item_id         INTEGER NOT NULL,
      target          TEXT    NOT NULL,
      attempts        INTEGER NOT NULL,
      next_at         INTEGER NOT NULL,
      first_failed_at INTEGER NOT NULL,
      last_error      TEXT    NOT NULL,
      failed          INTEGER NOT NULL DEFAULT 0,
      PRIMARY KEY (item_id, target)
    );
  `,
};
