import type { Migration } from "./migration.ts";

/**
 * Finds every item of a folder, waiting or finished, by its latest request: the backfill from the *arr apps' history
 * asks "was this folder requested since that import?" once per history record (see `queue/coverage.ts`). And the
 * sources of the requests kept, for the console's history filter, without reading every request.
 */
export const folderLookup: Migration = {
  version: 5,
  name: "items by folder and latest request; request sources",
  sql: `CREATE INDEX items_folder_last ON items (folder, last_at);
    CREATE INDEX requests_source ON requests (source);`,
};
