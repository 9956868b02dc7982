import type { Migration } from "./migration.ts";

/**
 * Attempts are counted before a scan starts, so a scan that kills the process still counts. `unfinished` is how
 * many attempts in a row started and never recorded an outcome (the process died during them): a folder whose
 * scan keeps taking autoscan down is given up instead of being retried at every restart.
 */
export const unfinishedAttempts: Migration = {
  version: 3,
  name: "unfinished attempts",
  sql: `ALTER TABLE items ADD COLUMN unfinished INTEGER NOT NULL DEFAULT 0;`,
};
