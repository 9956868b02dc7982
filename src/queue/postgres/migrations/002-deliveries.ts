import type { PgMigration } from "./migration.ts";

/** Each target's delivery of a folder that failed, stored (as the embedded store's schema step 5). */
export const pgDeliveries: PgMigration = {
  version: 2,
  name: "deliveries",
  sql: `
    CREATE TABLE deliveries (
      item_id         BIGINT   NOT NULL REFERENCES items (id) ON DELETE CASCADE,
      target          TEXT     NOT NULL,
      attempts        INTEGER  NOT NULL,
      next_at         BIGINT   NOT NULL,
      first_failed_at BIGINT   NOT NULL,
      last_error      TEXT     NOT NULL,
      failed          SMALLINT NOT NULL DEFAULT 0,
      PRIMARY KEY (item_id, target)
    );
  `,
};
