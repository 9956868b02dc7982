import type { Hono } from "hono";
import type { Config } from "../config/schema.ts";
import { isInContainer } from "../core/in-container.ts";
import { describeError } from "../core/errors.ts";
import type { Logger } from "../core/logger.ts";
import type { MetricsExposition, RequestMetrics } from "../core/metrics.ts";
import type { ScanSink } from "../core/scan.ts";
import { createPathMapper, type PathMapper } from "../paths/mapping.ts";
import { sharedDiskProbe } from "../paths/shared-disk-probe.ts";
import type { ScanQueue } from "../queue/scan-queue.ts";
import { createApp } from "./app.ts";
import { consolePreviewFromConfig, type ConsolePreviewInput } from "./console/libraries-from-config.ts";
import { arrRootFolders } from "../arr/root-folders.ts";
import type { GuessBrake } from "./guess-brake.ts";
import type { RejectionLog } from "./rejections.ts";
import type { ConsoleSources } from "./console/sources.ts";
import type { ArrConnectionsAdmin, BackfillAdmin, DriveAdmin, HealthReport, QueueAdmin, WebOptions } from "./options.ts";
import { startWebServer, type WebServer } from "./server.ts";

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
  /** `ARR`: the watch on the apps' connections (told of webhooks, asked by `cmd=arr_check`). */
  readonly arrConnections?: ArrConnectionsAdmin;
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
    ...(input.arrConnections ? { arrConnections: input.arrConnections } : {}),
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
    retryRemapped: () => queue.retryRemapped(),
    remappedCount: () => queue.remappedCount(),
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

/** What the server command hands the web app beside the config: one of each per process, kept across reloads. */
export interface WebParts {
  readonly queue: ScanQueue;
  /** Where the web's requests go: the queue, behind the unroutable guard. */
  readonly sink: ScanSink;
  readonly mapper: PathMapper;
  /** Plex's section resolver, for the console's preview and Libraries page. */
  readonly sections: ConsolePreviewInput["sections"];
  /** Only when Google Drive monitoring is on. */
  readonly drive: { resetPageTokens(): Promise<unknown>; clearCache(): Promise<unknown> } | undefined;
  /** False until the dispatcher runs: `/health` says 503 "starting". */
  readonly isReady: () => boolean;
  /** `/health`'s details beside the queue's and the disks' (store, instance, roles, notifiers, watchers; from memory). */
  readonly health: () => object;
  readonly rejections: RejectionLog;
  readonly guesses: GuessBrake;
  readonly metrics: (RequestMetrics & MetricsExposition) | undefined;
  readonly console: ConsoleSources;
  readonly backfill: BackfillAdmin | undefined;
  readonly arrConnections?: ArrConnectionsAdmin | undefined;
  readonly log: Logger;
}

/** The web server with a replaceable app: a reload builds a new app; requests in flight finish on the old one. */
export interface LiveWebServer extends WebServer {
  reload(next: Config): void;
}

export async function startWebFromConfig(config: Config, parts: WebParts): Promise<LiveWebServer> {
  let app = buildApp(config, parts, true);
  try {
    const server = await startWebServer({
      app: { fetch: (request, env, context) => app.fetch(request, env, context) },
      hostname: config.SERVER_IP,
      port: config.SERVER_PORT,
      log: parts.log,
    });
    // The app a reload builds does not repeat the start-up lines.
    return { ...server, reload: (next) => void (app = buildApp(next, parts, false)) };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const hint = code === "EADDRINUSE" ? ` Port ${config.SERVER_PORT} is in use: change SERVER_PORT or stop the other service.` : "";
    throw new Error(`Cannot listen on ${config.SERVER_IP}:${config.SERVER_PORT}: ${describeError(error)}.${hint}`, { cause: error });
  }
}

function buildApp(config: Config, parts: WebParts, announce: boolean): Hono {
  const { queue, drive, log } = parts;
  const disk = sharedDiskProbe(log);
  const options = webOptionsFromConfig({
    config,
    log,
    sink: parts.sink,
    mapper: parts.mapper,
    queue: queueAdminFromScanQueue(queue),
    ...(drive
      ? {
          drive: {
            resetPageToken: async () => void (await drive.resetPageTokens()),
            clearCache: async () => void (await drive.clearCache()),
          },
        }
      : {}),
    health: async () => ({
      ...(parts.isReady() ? await queueHealth(queue) : { ready: false, status: "starting" }),
      ...parts.health(),
      ...mediaHealth(disk.unresponsiveMounts(), parts.console.activity?.().waitingForMount?.length ?? 0),
    }),
    rejections: parts.rejections,
    guesses: parts.guesses,
    metrics: parts.metrics,
    ...(parts.backfill ? { backfill: parts.backfill } : {}),
    ...(parts.arrConnections ? { arrConnections: parts.arrConnections } : {}),
    // The preview and the Libraries page read the config this app is built from (a reload builds them again).
    console: {
      ...parts.console,
      ...consolePreviewFromConfig({ config, mapper: parts.mapper, sections: parts.sections, stat: disk.stat, appRoots: arrRootFolders(config.ARR, log) }),
    },
  });
  return createApp(announce ? options : { ...options, announce: false });
}

/** `/health`'s word on the media disks, only while one does not answer (a detail: autoscan itself is fine). */
function mediaHealth(notAnswering: readonly string[], foldersWaiting: number): { disks?: { notAnswering: readonly string[]; foldersWaiting: number } } {
  return notAnswering.length === 0 ? {} : { disks: { notAnswering, foldersWaiting } };
}
