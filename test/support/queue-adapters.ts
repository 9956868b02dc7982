import { join } from "node:path";
import { describe } from "vitest";
import { type ScanQueue } from "../../src/queue/scan-queue.ts";
import { createPgScanQueue, createScanQueue, type ScanQueueOptions } from "../../src/queue/open-scan-queue.ts";
import { makeTempDir } from "./capture-log.ts";
import { createTestDatabase, describeWithPostgres, dropTestDatabase } from "./postgres.ts";

/**
 * The two stores behind one `ScanQueue`, for the behaviour suites that must hold on both: the embedded sql.js file,
 * and PostgreSQL (the test run's real server, a fresh database per place). A "place" is where one queue lives across
 * restarts: a data folder, or a database.
 */
export type QueueOpenOptions = Omit<ScanQueueOptions, "file">;

export interface QueuePlace {
  /** Opens the queue kept here (again, after a close: a restart). */
  open(options: QueueOpenOptions): Promise<ScanQueue>;
  /** Where, for messages: the folder or the database URL. */
  readonly where: string;
  cleanup(): Promise<void>;
}

export interface QueueAdapter {
  readonly name: "sql.js" | "postgresql";
  /** A new, empty place. */
  place(): Promise<QueuePlace>;
}

/** One instance id for every open of a place: a restarted instance takes back the folders it had claimed. */
const INSTANCE = "test-instance";
const LEASE_MS = 30_000;

export const sqlJsAdapter: QueueAdapter = {
  name: "sql.js",
  async place() {
    const temp = await makeTempDir("autoscan-queue-");
    const file = join(temp.dir, "queue.db");
    return { where: file, open: (options) => createScanQueue({ ...options, file }), cleanup: temp.cleanup };
  },
};

export const postgresAdapter: QueueAdapter = {
  name: "postgresql",
  async place() {
    const url = await createTestDatabase();
    return {
      where: url,
      open: (options) =>
        createPgScanQueue({
          url,
          instance: INSTANCE,
          leaseMs: LEASE_MS,
          clock: options.clock,
          timeFromClock: true,
          log: options.log,
          scanDelayMs: options.scanDelayMs,
          ...(options.priorities ? { priorities: options.priorities } : {}),
          ...(options.historyMaxDays === undefined ? {} : { historyMaxDays: options.historyMaxDays }),
          ...(options.historyMaxRows === undefined ? {} : { historyMaxRows: options.historyMaxRows }),
          ...(options.maintenanceIntervalMs === undefined ? {} : { maintenanceIntervalMs: options.maintenanceIntervalMs }),
          ...(options.resolveKind ? { resolveKind: options.resolveKind } : {}),
          ...(options.remap ? { remap: options.remap } : {}),
        }),
      cleanup: () => dropTestDatabase(url),
    };
  },
};

export const queueAdapters: readonly QueueAdapter[] = [sqlJsAdapter, postgresAdapter];

/** `describe` once per store; the PostgreSQL one skips loudly (or fails under CI) when no server is there. */
export function describeEachStore(name: string, body: (adapter: QueueAdapter) => void): void {
  describe(`${name} (sql.js)`, () => body(sqlJsAdapter));
  describeWithPostgres(`${name} (postgresql)`, () => body(postgresAdapter));
}
