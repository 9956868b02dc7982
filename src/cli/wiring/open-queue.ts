import type { Clock } from "../../core/clock.ts";
import type { ServiceMetrics } from "../../ops/metrics/create-metrics.ts";
import type { PathMapper } from "../../paths/mapping.ts";
import { openScanQueue } from "../../queue/open-scan-queue.ts";
import type { ScanQueue } from "../../queue/scan-queue.ts";
import type { Runtime } from "../runtime.ts";
import { scanQueueOptionsFromConfig } from "../../queue/from-config.ts";

/** The queue the config asks for: the embedded file (`<data dir>/queue.db`), or with `SERVER_DATABASE_URL` PostgreSQL. */
export function openQueue(runtime: Runtime, clock: Clock, mapper: PathMapper, metrics: ServiceMetrics | undefined, instance: string): Promise<ScanQueue> {
  const { config, settings, log } = runtime;
  const url = config.SERVER_DATABASE_URL;
  return openScanQueue({
    ...scanQueueOptionsFromConfig({ config, queueFile: settings.queueFile, clock, log, localForms: mapper.localForms, toServer: mapper.toServer }),
    ...(metrics ? { metrics } : {}),
    ...(settings.pauseImportAt ? { pauseImportAt: settings.pauseImportAt } : {}),
    database: url ? { url, instance, leaseMs: config.SERVER_LEASE_SECONDS * 1000, dataDir: settings.dataDir } : undefined,
  });
}
