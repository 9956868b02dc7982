import type { Migration } from "./migration.ts";

/**
 * A folder's requests are read a page at a time in the order they arrived (`rules/work-item.ts`): `(item_id, id)` finds
 * each page without sorting the folder's requests again (the path index is in another order).
 */
export const requestOrder: Migration = {
  version: 8,
  name: "requests in arrival order",
  sql: `CREATE INDEX requests_item_order ON requests (item_id, id);`,
};
