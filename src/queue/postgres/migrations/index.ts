import { pgInitialSchema } from "./001-initial.ts";
import { pgDeliveries } from "./002-deliveries.ts";
import { pgLanded } from "./003-landed.ts";
import { pgRequestOrder } from "./004-request-order.ts";
import { pgReadyAt } from "./005-ready-at.ts";
import { pgRefresh } from "./006-refresh.ts";
import type { PgMigration } from "./migration.ts";

/** Every PostgreSQL schema step, in order. Append `NNN-name.ts`; never edit a released one. */
export const pgMigrations: readonly PgMigration[] = [pgInitialSchema, pgDeliveries, pgLanded, pgRequestOrder, pgReadyAt, pgRefresh];

/** The schema autoscan's tables live in (a database shared with other applications keeps them apart). */
export const PG_SCHEMA = "autoscan";
