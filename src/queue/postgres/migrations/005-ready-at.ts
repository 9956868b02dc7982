import type { PgMigration } from "./migration.ts";

/** When each waiting folder is next ready, stored and indexed, and the due work walked in order (as the embedded store's schema step 9). */
export const pgReadyAt: PgMigration = {
  version: 5,
  name: "ready time of waiting folders",
  sql: `
    ALTER TABLE items ADD COLUMN ready_at BIGINT NOT NULL DEFAULT 0;
    UPDATE items SET ready_at = GREATEST(due_at, next_at);
    CREATE INDEX items_pending_ready ON items (ready_at) WHERE state = 'pending';
    CREATE INDEX items_due_check ON items (priority, first_at, id, ready_at) WHERE state = 'pending' AND scan_folder IS NULL;
    CREATE INDEX items_due_target ON items (priority, first_at, id, ready_at) WHERE state = 'pending' AND scan_folder IS NOT NULL;
  `,
};
