import type { Migration } from "./migration.ts";

/**
 * A request that merges into a waiting folder is first looked up among that folder's requests (an *arr retrying its
 * webhook adds no work). With `requests (item_id)` alone that lookup read every request row of the folder, so a busy
 * folder made each new request slower; `(item_id, path)` finds it directly and still serves the `item_id` lookups.
 */
export const requestLookup: Migration = {
  version: 2,
  name: "request lookup by folder and path",
  sql: `
    CREATE INDEX requests_item_path ON requests (item_id, path);
    DROP INDEX requests_item;
  `,
};
