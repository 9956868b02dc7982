import { systemClock, type Clock } from "../core/clock.ts";
import { describeError } from "../core/errors.ts";
import type { Hono } from "hono";
import { effectiveLogLevel } from "../config/reload.ts";
import type { Config } from "../config/schema.ts";
import { createLivePathMapper, type PathMapper } from "../paths/mapping.ts";
import { createDispatcher, type Dispatcher, type DispatcherOptions } from "../queue/dispatch/dispatcher.ts";
import { createAnchorWatch, guardServerPath } from "../paths/anchors.ts";
import type { ScanQueue } from "../queue/scan-queue.ts";
import { createApp } from "../web/app.ts";
import { createRejectionLog, type RejectionLog } from "../web/rejections.ts";
import { createGuessBrake, type GuessBrake } from "../web/guess-brake.ts";
import { startWebServer, type WebServer } from "../web/server.ts";
import type { ServiceMetrics } from "../ops/metrics/create-metrics.ts";
import type { Runtime } from "./runtime.ts";
import { createPlexFromConfig, type PrimaryPlex } from "../targets/plex/from-config.ts";
import { createTargetsFromConfig } from "../targets/from-config.ts";
import type { BackfillInput } from "../backfill/from-config.ts";
import type { DriveInput } from "../drive/from-config.ts";
import type { Backfill } from "../backfill/backfill.ts";
import type { Target } from "../core/target.ts";
import type { ScanSink } from "../core/scan.ts";
import { createUnroutableGuard, unroutableJudge } from "../intake/submit.ts";
import { consolePreviewFromConfig } from "./wiring/console-preview.ts";
import { newInstanceId } from "../cluster/instance-id.ts";
import { openQueue } from "./wiring/open-queue.ts";
import { instanceHealth, type InstanceHealth } from "../cluster/instance-health.ts";
import { sharedDiskProbe } from "../paths/shared-disk-probe.ts";
import { dispatcherOptionsFromConfig, rcRefresherFromConfig, scanQueueOptionsFromConfig } from "./wiring/queue.ts";
import { queueAdminFromScanQueue, queueHealth, webOptionsFromConfig } from "./wiring/web.ts";
import type { DriveMonitor } from "../drive/poller.ts";
import type { ConsoleSources } from "../web/console/sources.ts";
import type { BackfillAdmin } from "../web/options.ts";
import { startLandedCheck, type LandedCheck } from "../landed/from-config.ts";
import type { Notifications } from "../notify/from-config.ts";

/** The running service: everything the server command started, stopped in the reverse order. */
export interface Service {
  readonly url: string;
  /**
   * Applies a new config's live keys (see config/reload.ts) without dropping a request or a connection: the path
   * mappings, merge delay and priorities, file checks, commands, web settings and the log level. The caller has
   * validated it and names the keys that need a restart.
   */
  reload(next: Config): void;
  /** Stops taking requests, lets scans in progress finish (bounded), saves the queue, releases everything. */
  stop(budgetMs: number): Promise<void>;
}

export interface ServiceOptions {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly clock?: Clock;
}

/**
 * The one composition root: config → capabilities → modules. Order: the queue file first (so nothing is accepted
 * before it can be stored), then Plex, the HTTP server, the dispatcher, and last the drive monitor.
 */
export async function startService(runtime: Runtime, options: ServiceOptions): Promise<Service> {
  const { config, settings, log } = runtime;
  const clock = options.clock ?? systemClock;
  // SERVER_METRICS: one registry for the service's life (reloads keep counting into it); off → nothing is counted,
  // and prom-client is never loaded (it costs ~20 MB of memory).
  const metrics = config.SERVER_METRICS ? (await import("../ops/metrics/create-metrics.ts")).createMetrics() : undefined;
  const mapper = createLivePathMapper({
    mappings: config.SERVER_PATH_MAPPINGS,
    existMappings: config.SERVER_FILE_EXIST_PATH_MAPPINGS,
    log: log.child({ component: "PATHS" }),
  });
  // SERVER_ANCHORS: folders under a missing anchor wait (no checks, no scans, no trash) until it is back.
  const anchorWatch = createAnchorWatch({ anchors: config.SERVER_ANCHORS, stat: sharedDiskProbe(log).stat, clock, log });
  anchorWatch.start();
  const anchorGuard = guardServerPath(anchorWatch, mapper.localForms);
  const anchors = { guard: anchorGuard, onReturn: anchorWatch.onReturn, check: anchorWatch.check };
  const instance = newInstanceId();
  const queue = await openQueue(runtime, clock, mapper, metrics, instance);
  metrics?.countQueueWith(() => queue.countByState());
  // NOTIFY (loaded only when a notifier is configured): events are kept in memory and sent on timers; nothing here
  // ever waits for a notifier.
  const notify = Object.keys(config.NOTIFY).length > 0 ? (await import("../notify/from-config.ts")).notifyFromConfig({ config, clock, log, instance }) : undefined;
  if (notify) queue.onFailed(notify.foldersFailed);
  // Refused requests are summarised per client across config reloads (each reload makes a new web app).
  const rejections = createRejectionLog({ log: log.child({ component: "WEB" }) });
  // One per process: a config reload does not give a guesser its free answers back.
  const guesses = createGuessBrake({ clock });
  const plex = await createPlexFromConfig({ config, dockerHost: settings.dockerHost, clock, log, metrics, guard: anchorGuard });
  // TARGETS: the further servers every folder fans out to, beside the primary Plex.
  const others = createTargetsFromConfig({ config, clock, log, metrics });
  const targets = [plex.target, ...others.targets];
  let current = config;
  // A request no server can scan (no mapping, no library) is stored and answered, then moved to History as failed.
  const guard = createUnroutableGuard({
    sink: queue.enqueue,
    refuse: (refused) => queue.refuseWaiting(refused),
    judge: unroutableJudge({
      mapper,
      mappings: () => current.SERVER_PATH_MAPPINGS,
      sections: config.PLEX_TOKEN === "" ? undefined : plex.plex.sections,
      otherTargets: () => others.targets.length > 0,
    }),
    log: log.child({ component: "QUEUE" }),
    clock,
  });
  // SERVER_DATABASE_URL: one instance polls Google Drive and one reads the *arr history (src/cluster's roles).
  const database = config.SERVER_DATABASE_URL ? { url: config.SERVER_DATABASE_URL, instance } : undefined;
  const roles = database ? await import("../cluster/from-config.ts") : undefined;
  // The Google clients are loaded only when Drive monitoring is on (they cost ~20 MB of memory).
  const driveInput: DriveInput | undefined = config.CLOUD.ENABLED
    ? {
        config,
        settings,
        env: options.env,
        sink: guard.sink,
        isInLibrary: plex.isInLibrary,
        mapper,
        clock,
        log,
        onSecret: (value) => runtime.logs.scrubber.add(value),
        metrics,
      }
    : undefined;
  const drive = driveInput
    ? roles && database
      ? roles.driveByRoleFromConfig(driveInput, database)
      : (await import("../drive/from-config.ts")).createDriveMonitorFromConfig(driveInput)
    : undefined;
  // ARR: the *arr apps' history, read back at start and every SERVER_BACKFILL_INTERVAL for what no webhook brought.
  const backfillInput: BackfillInput = {
    config,
    dataDir: settings.dataDir,
    sink: notify ? notify.backfillSink(guard.sink) : guard.sink,
    isCovered: (request, since) => queue.isCovered(request, since),
    mapper,
    clock,
    log,
    ...(metrics ? { metrics } : {}),
  };
  const backfillApps = Object.keys(config.ARR).filter((name) => config.ARR[name]?.BACKFILL);
  const backfillWiring = backfillApps.length > 0 ? await import("../backfill/from-config.ts") : undefined;
  const backfill = !backfillWiring
    ? undefined
    : roles && database
      ? roles.backfillByRoleFromConfig(backfillInput, database)
      : await backfillWiring.createBackfillFromConfig(backfillInput);
  // ARR: each app's connection to autoscan, looked at every SERVER_BACKFILL_INTERVAL (loaded only with apps listed).
  const arrWatch =
    Object.keys(config.ARR).length > 0
      ? (await import("../arr/watch-from-config.ts")).arrWatchFromConfig({ config, clock, log, ...(notify ? { onDisconnected: notify.arrDisconnected } : {}) })
      : undefined;
  const ofInstance = instanceHealth({ database: database !== undefined, instance, drive, backfill });
  // WATCH (loaded only when a watcher is configured): library folders' changes, as manual requests of those files.
  const watch =
    Object.keys(config.WATCH).length > 0
      ? await (await import("../watch/from-config.ts")).startWatchers({
          config,
          dataDir: settings.dataDir,
          mapper,
          sink: guard.sink,
          probe: sharedDiskProbe(log),
          clock,
          log,
          metrics,
          inLibrary: libraryHolds(config, plex, others.targets.length > 0),
        })
      : undefined;
  const health = (): InstanceHealth => ({ ...ofInstance(), ...notify?.health(), ...watch?.health() });
  const admin = backfill && backfillWiring ? backfillWiring.backfillAdmin(backfill, backfillApps) : undefined;
  // /health says 503 "starting" until the dispatcher runs.
  const state: { ready: boolean; dispatcher?: Dispatcher } = { ready: false };
  // The console: live changes, what the dispatcher works on, and the open event streams' end at stop.
  const closing = new AbortController();
  const consoleSources: ConsoleSources = {
    changes: { subscribe: (listener) => queue.onChange(listener) },
    activity: () => state.dispatcher?.activity() ?? { checking: [], scanning: [] },
    targets: () => targets.map((target) => target.name),
    ...(backfill ? { backfill: () => backfill.status() } : {}),
    ...(drive ? { drive: () => drive.status() } : {}),
    refused: { recent: () => guard.recent(), dismiss: () => guard.dismiss() },
    ...(arrWatch ? { arrProblems: () => arrWatch.problems() } : {}),
    ...(watch ? { watchers: () => watch.statuses() } : {}),
    closing: closing.signal,
  };
  const web = await startWeb(runtime, { queue, sink: guard.sink, mapper, plex, drive, isReady: () => state.ready, instanceHealth: health, rejections, guesses, metrics, console: consoleSources, backfill: admin }).catch(async (error: unknown) => {
    await queue.close();
    plex.close();
    others.close();
    anchorWatch.stop();
    notify?.stop();
    throw error;
  });
  const landed = startLandedCheck({ config, queue, targets, clock, log, metrics, notify: notify?.notifiers.emit });
  const dispatcher = startDispatcher(runtime, queue, targets, mapper.localForms, clock, options.env, metrics, anchors, notify, landed);
  state.dispatcher = dispatcher;
  state.ready = true;
  backfill?.start();
  arrWatch?.start();
  if (drive) void drive.start().catch((error) => log.error({ err: error }, `Google Drive monitoring stopped: ${describeError(error)}`));
  return {
    url: web.url,
    reload(next) {
      const pathsLog = log.child({ component: "PATHS" });
      mapper.replace({ mappings: next.SERVER_PATH_MAPPINGS, existMappings: next.SERVER_FILE_EXIST_PATH_MAPPINGS, log: pathsLog });
      anchorWatch.reconfigure(next.SERVER_ANCHORS);
      queue.reconfigure(scanQueueOptionsFromConfig({ config: next, queueFile: settings.queueFile, clock, log, localForms: mapper.localForms }));
      dispatcher.reconfigure(dispatcherOptionsFromConfig({ config: next, queue, targets: [], localForms: mapper.localForms, clock, log, env: options.env }));
      landed.reconfigure(next);
      if (next.SERVER_PASS !== current.SERVER_PASS) runtime.logs.scrubber.add(next.SERVER_PASS);
      if (next.SERVER_AUTH_PASSWORD !== "") runtime.logs.scrubber.add(next.SERVER_AUTH_PASSWORD);
      // The level first: the new app decides at its creation whether it writes the (DEBUG) access log.
      runtime.logs.setLevel(effectiveLogLevel(settings, next));
      const parts = { queue, sink: guard.sink, mapper, plex, drive, isReady: () => state.ready, instanceHealth: health, rejections, guesses, metrics, console: consoleSources, backfill: admin, announce: false };
      web.replaceApp(buildApp({ ...runtime, config: next }, parts));
      current = next;
    },
    stop: async (budgetMs) => {
      closing.abort();
      // First: nothing more is sent at a stop (unsent events are dropped, and said now, while the log still flushes).
      notify?.stop();
      arrWatch?.stop();
      await watch?.stop();
      await stopAll({ web, dispatcher, drive, backfill, queue, plex, budgetMs, runtime, rejections, landed });
      others.close();
      anchorWatch.stop();
    },
  };
}

interface WebParts {
  readonly queue: ScanQueue;
  /** Where the web's requests go: the queue, behind the unroutable guard. */
  readonly sink: ScanSink;
  readonly mapper: PathMapper;
  readonly plex: PrimaryPlex;
  readonly drive: DriveMonitor | undefined;
  readonly isReady: () => boolean;
  /** `/health`'s store, instance id and roles (from memory). */
  readonly instanceHealth: () => InstanceHealth;
  readonly rejections: RejectionLog;
  readonly guesses: GuessBrake;
  readonly metrics: ServiceMetrics | undefined;
  readonly console: ConsoleSources;
  readonly backfill: BackfillAdmin | undefined;
  /** False for the app a reload builds: the start-up lines are not repeated. */
  readonly announce?: boolean;
}

/** The web server with a replaceable app: a reload builds a new app; requests in flight finish on the old one. */
interface LiveWebServer extends WebServer {
  replaceApp(app: Hono): void;
}

async function startWeb(runtime: Runtime, parts: WebParts): Promise<LiveWebServer> {
  const { config, log } = runtime;
  let app = buildApp(runtime, parts);
  try {
    const server = await startWebServer({
      app: { fetch: (request, env, context) => app.fetch(request, env, context) },
      hostname: config.SERVER_IP,
      port: config.SERVER_PORT,
      log,
    });
    return { ...server, replaceApp: (next) => void (app = next) };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const hint = code === "EADDRINUSE" ? ` Port ${config.SERVER_PORT} is in use: change SERVER_PORT or stop the other service.` : "";
    throw new Error(`Cannot listen on ${config.SERVER_IP}:${config.SERVER_PORT}: ${describeError(error)}.${hint}`, { cause: error });
  }
}

function buildApp(runtime: Pick<Runtime, "config" | "log">, parts: WebParts): Hono {
  const { config, log } = runtime;
  const { queue, drive } = parts;
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
      ...parts.instanceHealth(),
      ...mediaHealth(sharedDiskProbe(log).unresponsiveMounts(), parts.console.activity?.().waitingForMount?.length ?? 0),
    }),
    rejections: parts.rejections,
    guesses: parts.guesses,
    metrics: parts.metrics,
    // The preview and the Libraries page read the config this app is built from (a reload builds them again).
    ...(parts.backfill ? { backfill: parts.backfill } : {}),
    console: {
      ...parts.console,
      ...consolePreviewFromConfig({ config, mapper: parts.mapper, sections: parts.plex.plex.sections, stat: sharedDiskProbe(log).stat }),
    },
  });
  return createApp(parts.announce === false ? { ...options, announce: false } : options);
}

/** `/health`'s word on the media disks, only while one does not answer (a detail: autoscan itself is fine). */
/** Whether a server-form folder lies in a Plex library, for WATCH's check at start; `undefined` when it cannot be told
 *  (no token, other targets whose libraries may hold it, Plex not answering within 5 s). */
function libraryHolds(config: Config, plex: PrimaryPlex, otherTargets: boolean): ((serverPath: string) => Promise<boolean | undefined>) | undefined {
  if (config.PLEX_TOKEN === "" || otherTargets) return undefined;
  return async (serverPath) => {
    const held = await plex.plex.sections.resolve(serverPath, AbortSignal.timeout(5_000)).catch(() => undefined);
    return held === undefined ? undefined : held.length > 0;
  };
}

function mediaHealth(notAnswering: readonly string[], foldersWaiting: number): { disks?: { notAnswering: readonly string[]; foldersWaiting: number } } {
  return notAnswering.length === 0 ? {} : { disks: { notAnswering, foldersWaiting } };
}

function startDispatcher(
  runtime: Runtime,
  queue: ScanQueue,
  targets: readonly Target[],
  localForms: (serverPath: string) => readonly string[],
  clock: Clock,
  env: ServiceOptions["env"],
  metrics: ServiceMetrics | undefined,
  anchors: DispatcherOptions["anchors"],
  notify: Notifications | undefined,
  landed: LandedCheck,
): Dispatcher {
  const { config, log } = runtime;
  const refresh = rcRefresherFromConfig(config, log);
  const dispatcher = createDispatcher({
    ...dispatcherOptionsFromConfig({
      config,
      queue,
      targets,
      localForms,
      clock,
      log,
      env,
      metrics,
      ...(refresh ? { refreshMissing: refresh } : {}),
    }),
    ...(anchors ? { anchors } : {}),
    ...(notify ? { onTargetChange: notify.targetChanged } : {}),
    landed: landed.start,
  });
  dispatcher.start();
  return dispatcher;
}

interface Parts {
  readonly backfill: Backfill | undefined;
  readonly web: WebServer;
  readonly dispatcher: Dispatcher;
  readonly drive: DriveMonitor | undefined;
  readonly queue: ScanQueue;
  readonly plex: PrimaryPlex;
  readonly budgetMs: number;
  readonly runtime: Runtime;
  readonly rejections: RejectionLog;
  readonly landed: LandedCheck;
}

async function stopAll(parts: Parts): Promise<void> {
  const log = parts.runtime.log.child({ component: "AUTOSCAN" });
  const started = Date.now();
  const left = (): number => Math.max(0, parts.budgetMs - (Date.now() - started));
  await Promise.all([parts.web.close(), parts.drive?.stop(), parts.backfill?.stop(), parts.landed.stop()]);
  const result = await parts.dispatcher.stop({ timeoutMs: Math.max(0, left() - 500) });
  if (!result.drained) log.warn({ abandoned: result.abandoned }, `${result.abandoned} scan(s) were still running; they stay queued for the next start`);
  await parts.queue.close();
  parts.plex.close();
  parts.rejections.close();
}
