import type { Migration } from "./migration.ts";

/**
 * A finished folder keeps only its first requests (see `HISTORY_REQUESTS_KEPT` in `rules/dispatch-records.ts`), so the history
 * held in memory stays bounded by its row limit, whatever number of requests merged into each folder.
 * `requests_dropped` counts the ones let go, for the pages that list them.
 */
export const requestsDropped: Migration = {
  version: 4,
  name: "requests dropped from finished folders",
  sql: `ALTER TABLE items ADD COLUMN requests_dropped INTEGER NOT NULL DEFAULT 0;`,
};
