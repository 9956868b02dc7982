import type { Clock } from "../../core/clock.ts";
import type { ServiceMetrics } from "../../ops/metrics/create-metrics.ts";
import type { PathMapper } from "../../paths/mapping.ts";
import { type ScanQueue } from "../../queue/scan-queue.ts";
import { createScanQueue } from "../../queue/sqljs/sqljs-adapter.ts";
import type { Runtime } from "../runtime.ts";
import { moveQueueFileInto } from "./move-queue.ts";
import { scanQueueOptionsFromConfig } from "./queue.ts";

/**
 * The queue the config asks for: the embedded file (`<data dir>/queue.db`), or with `SERVER_DATABASE_URL` PostgreSQL,
 * shared with any other instance on the same database (the driver is loaded only then). A first start on PostgreSQL
 * moves the waiting folders of an existing queue file in.
 */
export async function openQueue(
  runtime: Runtime,
  clock: Clock,
  mapper: PathMapper,
  metrics: ServiceMetrics | undefined,
  instance: string,
): Promise<ScanQueue> {
  const { config, settings, log } = runtime;
  const queueOptions = scanQueueOptionsFromConfig({ config, queueFile: settings.queueFile, clock, log, localForms: mapper.localForms });
  if (!config.SERVER_DATABASE_URL) return createScanQueue({ ...queueOptions, metrics });
  // SERVER_DATABASE_URL: the queue in PostgreSQL, shared with any other instance on the same database.
  const { createPgScanQueue } = await import("../../queue/postgres/pg-scan-queue.ts");
  const queue = await createPgScanQueue({
    ...queueOptions,
    url: config.SERVER_DATABASE_URL,
    instance,
    leaseMs: config.SERVER_LEASE_SECONDS * 1000,
    dataDir: settings.dataDir,
    ...(metrics ? { metrics } : {}),
  });
  try {
    await moveQueueFileInto(queue, settings.queueFile, clock, log);
  } catch (error) {
    await queue.close();
    throw error;
  }
  return queue;
}
