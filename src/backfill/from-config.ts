import { join } from "node:path";
import type { Config } from "../config/schema.ts";
import type { Clock } from "../core/clock.ts";
import type { Logger } from "../core/logger.ts";
import type { ScanRequest, ScanSink } from "../core/scan.ts";
import { createArrClient } from "../arr/arr-client.ts";
import { ArrApiError, ArrAuthError, ArrUnavailableError } from "../arr/arr-errors.ts";
import { ARR_TYPE_FACTS } from "../arr/arr-type.ts";
import { createBackfill, type Backfill, type BackfillApp } from "./backfill.ts";
import type { AppProblem } from "../core/backfill-status.ts";
import { openCursorStore, type CursorStore } from "./cursor-store.ts";
import { recordRequests } from "./history-record.ts";
import type { HistoryRecord } from "../arr/history-wire.ts";
import { sourceName } from "../intake/webhook.ts";
import type { PathMapper } from "../paths/mapping.ts";
import type { BackfillAdmin, BackfillEvent } from "../web/options.ts";

/**
 * `ARR` → the backfill: one history client per app with `BACKFILL` on, the cursors in `<data dir>/backfill.json`,
 * the queue's sink and its "covered" check. Undefined when no app is configured.
 */
export interface BackfillInput {
  readonly config: Config;
  readonly dataDir: string;
  readonly sink: ScanSink;
  readonly isCovered: (request: ScanRequest, since: number) => Promise<boolean>;
  readonly mapper: PathMapper;
  readonly clock: Clock;
  readonly log: Logger;
  readonly metrics?: { backfillRead(app: string, result: "ok" | AppProblem, queued: number): void };
  /** Where the cursors live; default `<data dir>/backfill.json` (the PostgreSQL store when instances share a database). */
  readonly cursors?: CursorStore;
}

export async function createBackfillFromConfig(input: BackfillInput): Promise<Backfill | undefined> {
  const { config, log } = input;
  const apps: BackfillApp<HistoryRecord>[] = Object.entries(config.ARR)
    .filter(([, app]) => app.BACKFILL)
    .map(([name, app]) => {
      const client = createArrClient({ name, type: app.TYPE, url: app.URL, apiKey: app.API_KEY, timeoutMs: app.TIMEOUT * 1000, log });
      // The same source as this app's webhooks at /<SERVER_PASS>/<name>, so both read alike in logs and the console.
      const source = sourceName(ARR_TYPE_FACTS[app.TYPE].appName, name);
      return {
        name,
        pages: client,
        toRequests: (record: HistoryRecord) => recordRequests(record, { type: app.TYPE, source, mapper: input.mapper }),
        classify: classifyArrError,
      };
    });
  if (apps.length === 0) return undefined;
  const cursors = input.cursors ?? (await openCursorStore(join(input.dataDir, "backfill.json"), log));
  return createBackfill({
    apps,
    cursors,
    sink: input.sink,
    isCovered: input.isCovered,
    clock: input.clock,
    log,
    intervalMs: config.SERVER_BACKFILL_INTERVAL * 1000,
    ...(input.metrics ? { metrics: input.metrics } : {}),
  });
}

export function classifyArrError(error: unknown): AppProblem {
  if (error instanceof ArrUnavailableError) return "down";
  if (error instanceof ArrAuthError) return "auth";
  if (error instanceof ArrApiError) return "api";
  return "other";
}

/** The backfill as the API's `cmd=backfill` runs it. */
export function backfillAdmin(backfill: Backfill, apps: readonly string[]): BackfillAdmin {
  return {
    apps,
    async run(options, report, signal) {
      const summaries = await backfill.run({
        ...options,
        signal,
        onProgress: (app, progress) => report({ kind: "progress", app, ...progress }),
        onRequest: (app, request, date) =>
          report({ kind: "request", app, path: request.path, event: request.event, date: new Date(date).toISOString() } satisfies BackfillEvent),
      });
      return summaries.map((summary) => ({
        app: summary.app,
        ok: summary.ok,
        records: summary.result?.records ?? 0,
        queued: summary.result?.queued ?? 0,
        covered: summary.result?.covered ?? 0,
        ...(summary.error ? { error: summary.error } : {}),
      }));
    },
  };
}
