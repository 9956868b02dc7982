import { initialSchema } from "./001-initial.ts";
import { requestLookup } from "./002-request-lookup.ts";
import { unfinishedAttempts } from "./003-unfinished-attempts.ts";
import { requestsDropped } from "./004-requests-dropped.ts";
import { deliveries } from "./005-deliveries.ts";
import { landed } from "./006-landed.ts";
import { requestPathKey } from "./007-request-path-key.ts";
import { requestOrder } from "./008-request-order.ts";
import { readyAt } from "./009-ready-at.ts";
import { refresh } from "./010-refresh.ts";
import type { Migration } from "./migration.ts";

/**
 * Every schema step, in order. Migrations are TypeScript modules (not .sql files) so that the build output carries
 * them without a copy step. Add a step by appending `NNN-name.ts`; never edit a released one.
 */
export const migrations: readonly Migration[] = [initialSchema, requestLookup, unfinishedAttempts, requestsDropped, deliveries, landed, requestPathKey, requestOrder, readyAt, refresh];
