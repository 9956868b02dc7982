import type { PgMigration } from "./migration.ts";

/** Whether each target's library shows the files after its scan (as the embedded store's schema step 6). */
export const pgLanded: PgMigration = {
  version: 3,
  name: "landed",
  sql: `
    ALTER TABLE item_targets ADD COLUMN landed TEXT CHECK (landed IN ('pending', 'landed', 'not_visible', 'not_checked'));
    ALTER TABLE item_targets ADD COLUMN landed_detail TEXT;
    ALTER TABLE item_targets ADD COLUMN landed_after_ms BIGINT;
    ALTER TABLE item_targets ADD COLUMN landed_check_at BIGINT;
    ALTER TABLE item_targets ADD COLUMN landed_looks INTEGER;
    CREATE INDEX item_targets_landed_due ON item_targets (landed_check_at) WHERE landed = 'pending';
  `,
};
