import type { Config } from "../../config/schema.ts";
import { isInContainer } from "../in-container.ts";
import type { Logger } from "../../core/logger.ts";
import type { MetricsExposition, RequestMetrics } from "../../core/metrics.ts";
import type { ScanSink } from "../../core/scan.ts";
import { createPathMapper, type PathMapper } from "../../paths/mapping.ts";
import type { ScanQueue } from "../../queue/scan-queue.ts";
import type { GuessBrake } from "../../web/guess-brake.ts";
import type { RejectionLog } from "../../web/rejections.ts";
import type { ConsoleSources } from "../../web/console/sources.ts";
import type { BackfillAdmin, DriveAdmin, HealthReport, QueueAdmin, WebOptions } from "../../web/options.ts";

/**
 * Config → the web app's options. The capabilities (the sink, the queue and Drive ports, the health view) come from
 * the server command, which owns their lifetimes.
 */
export interface WebWiringInput {
  readonly config: Config;
  readonly log: Logger;
  /** `queue.enqueue`. */
  readonly sink: ScanSink;
  readonly queue: QueueAdmin;
  /** Only when Google Drive monitoring is on. */
  readonly drive?: DriveAdmin;
  readonly health: () => HealthReport | Promise<HealthReport>;
  /** The process's one path mapper, if the server command already made it; else one is made from the config. */
  readonly mapper?: PathMapper;
  /** Where refused requests are summarised (one per process, across reloads). */
  readonly rejections?: RejectionLog;
  /** How wrong secrets are slowed (one per process, across reloads). */
  readonly guesses?: GuessBrake;
  /** `SERVER_METRICS`: the service's metrics (one per process, across reloads). */
  readonly metrics?: RequestMetrics & MetricsExposition;
  /** What the console shows beyond the queue. */
  readonly console?: ConsoleSources;
  /** `ARR`: the backfill for `cmd=backfill`. */
  readonly backfill?: BackfillAdmin;
}

export function webOptionsFromConfig(input: WebWiringInput): WebOptions {
  const { config } = input;
  const username = config.SERVER_AUTH_USERNAME;
  const password = config.SERVER_AUTH_PASSWORD;
  return {
    sink: input.sink,
    mapper:
      input.mapper ??
      createPathMapper({
        mappings: config.SERVER_PATH_MAPPINGS,
        existMappings: config.SERVER_FILE_EXIST_PATH_MAPPINGS,
        log: input.log.child({ component: "PATHS" }),
      }),
    queue: input.queue,
    ...(input.drive ? { drive: input.drive } : {}),
    health: input.health,
    log: input.log,
    serverPass: config.SERVER_PASS,
    ...(config.SERVER_URL_BASE ? { urlBase: config.SERVER_URL_BASE } : {}),
    allowManualScan: config.SERVER_ALLOW_MANUAL_SCAN,
    ignoreList: config.SERVER_IGNORE_LIST,
    ...(username !== "" && password !== "" ? { auth: { username, password } } : {}),
    maxBodyBytes: config.SERVER_MAX_REQUEST_BYTES,
    ...(input.rejections ? { rejections: input.rejections } : {}),
    ...(input.guesses ? { guesses: input.guesses } : {}),
    ...(input.metrics ? { metrics: input.metrics } : {}),
    ...(input.console ? { console: input.console } : {}),
    ...(input.backfill ? { backfill: input.backfill } : {}),
    connectApps: { apps: config.ARR, port: config.SERVER_PORT, urlBase: config.SERVER_URL_BASE, inContainer: isInContainer() },
  };
}

/** The queue module's API → the web's queue port (ids arrive as URL text; the queue's are integers). */
export function queueAdminFromScanQueue(queue: ScanQueue): QueueAdmin {
  const toId = (id: string): number | undefined => (/^\d{1,15}$/.test(id) ? Number(id) : undefined);
  return {
    pendingCount: () => queue.pendingCount(),
    listPending: async (page = {}) => ({ items: await queue.listPending(page), total: await queue.pendingCount() }),
    listHistory: async (query = {}) => ({ items: await queue.listHistory(query), total: await queue.historyCount(query) }),
    getItem: (id) => {
      const n = toId(id);
      return n === undefined ? undefined : queue.getItem(n);
    },
    sources: () => queue.sources(),
    retryFailed: () => queue.retryFailed(),
    retry: (id) => {
      const n = toId(id);
      return n === undefined ? false : queue.retry(n);
    },
    remove: (id) => {
      const n = toId(id);
      return n === undefined ? false : queue.remove(n);
    },
    importing: () => queue.importing?.(),
  };
}

/**
 * `GET /health` from the queue's state, kept in memory (never waits on the disk): ready once the queue file is open,
 * and 503 whenever a webhook would get 503 right now (the store cannot write, or the disk has stalled).
 */
export async function queueHealth(queue: ScanQueue | undefined): Promise<HealthReport> {
  if (!queue) return { ready: false, status: "starting" };
  const store = queue.health();
  if (store.writable) return { ready: true, queue: "ok", pending: await pendingWithin(queue, HEALTH_COUNT_MS) };
  return {
    ready: false,
    status: "error",
    queue: store.problem ?? `the queue file '${queue.file}' cannot be written`,
    ...(store.since === undefined ? {} : { since: new Date(store.since).toISOString() }),
  };
}

/** How long `/health` waits for the pending count (a database under load must not make the health check hang). */
const HEALTH_COUNT_MS = 1_000;

async function pendingWithin(queue: ScanQueue, ms: number): Promise<number | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), ms)));
  try {
    return await Promise.race([queue.pendingCount().catch(() => undefined), late]);
  } finally {
    clearTimeout(timer);
  }
}
