import type { Migration } from "./migration.ts";

/**
 * Refresh in place (`rules/refresh.ts`): a folder's wish to have its items re-read after the scan, stored with the
 * item (0 none, 1 metadata, 2 metadata and streams), and what each target did about it, stored with its delivery row.
 * Rows stored before this step read as never asked (0, null).
 */
export const refresh: Migration = {
  version: 10,
  name: "refresh in place",
  sql: `
    ALTER TABLE items ADD COLUMN refresh INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE item_targets ADD COLUMN refresh TEXT;
    ALTER TABLE item_targets ADD COLUMN refresh_detail TEXT;
  `,
};
