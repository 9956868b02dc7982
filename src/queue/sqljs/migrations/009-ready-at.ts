import type { Migration } from "./migration.ts";

/**
 * When each waiting folder is next ready (`ready_at`, see `rules/due.ts`), stored with the row and indexed, so the
 * dispatcher's "what is due, and when to wake" is a query on an index (it was a schedule kept in memory beside the
 * rows). The rows already stored get theirs here; `due_at` and `next_at` are no longer looked up on their own.
 * The due work is walked in dispatch order, the unchecked and the checked folders each on an index of their own (with
 * the index of all waiting folders in that order beside them, SQLite took that one and read past every checked folder).
 * `deliveries (next_at)` finds when the next failed delivery's wait ends without reading every waiting item.
 */
export const readyAt: Migration = {
  version: 9,
  name: "ready time of waiting folders",
  sql: `
    ALTER TABLE items ADD COLUMN ready_at INTEGER NOT NULL DEFAULT 0;
    UPDATE items SET ready_at = MAX(due_at, next_at);
    CREATE INDEX items_pending_ready ON items (ready_at) WHERE state = 'pending';
    CREATE INDEX items_due_check ON items (priority, first_at, id, ready_at) WHERE state = 'pending' AND scan_folder IS NULL;
    CREATE INDEX items_due_target ON items (priority, first_at, id, ready_at) WHERE state = 'pending' AND scan_folder IS NOT NULL;
    DROP INDEX items_pending_order;
    DROP INDEX items_pending_due;
    DROP INDEX items_pending_next;
    CREATE INDEX deliveries_next ON deliveries (next_at);
  `,
};
