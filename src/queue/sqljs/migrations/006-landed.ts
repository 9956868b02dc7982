import type { Migration } from "./migration.ts";

/**
 * Whether each target's library shows the files after its scan (`rules/landed.ts`): the outcome lives with the
 * target's delivery row. Rows stored before this step read as never asked (null).
 */
export const landed: Migration = {
  version: 6,
  name: "landed",
  sql: `
    ALTER TABLE item_targets ADD COLUMN landed TEXT;
    ALTER TABLE item_targets ADD COLUMN landed_detail TEXT;
    ALTER TABLE item_targets ADD COLUMN landed_after_ms INTEGER;
    ALTER TABLE item_targets ADD COLUMN landed_check_at INTEGER;
    ALTER TABLE item_targets ADD COLUMN landed_looks INTEGER;
    CREATE INDEX item_targets_landed_due ON item_targets (landed_check_at) WHERE landed = 'pending';
  `,
};
