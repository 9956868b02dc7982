import type { PgMigration } from "./migration.ts";

/** Refresh in place: each folder's wish, each target's outcome (as the embedded store's schema step 10). */
export const pgRefresh: PgMigration = {
  version: 6,
  name: "refresh in place",
  sql: `
    ALTER TABLE items ADD COLUMN refresh SMALLINT NOT NULL DEFAULT 0 CHECK (refresh IN (0, 1, 2));
    ALTER TABLE item_targets ADD COLUMN refresh TEXT CHECK (refresh IN ('refreshed', 'not_refreshed'));
    ALTER TABLE item_targets ADD COLUMN refresh_detail TEXT;
  `,
};
