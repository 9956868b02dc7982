import type { PgMigration } from "./migration.ts";

/** A folder's requests read a page at a time in the order they arrived (as the embedded store's schema step 8). */
export const pgRequestOrder: PgMigration = {
  version: 4,
  name: "requests in arrival order",
  sql: `CREATE INDEX requests_item_order ON requests (item_id, id);`,
};
