import { systemClock, type Clock } from "../core/clock.ts";
import { describeError } from "../core/errors.ts";
import type { Logger } from "../core/logger.ts";
import type { ScanQueue } from "../queue/scan-queue.ts";
import { effectiveLogLevel } from "../config/reload.ts";
import type { Config } from "../config/schema.ts";
import { createLivePathMapper } from "../paths/mapping.ts";
import { createDispatcher, type Dispatcher } from "../queue/dispatch/dispatcher.ts";
import { createAnchorWatch, guardServerPath } from "../paths/anchors.ts";
import { createRejectionLog } from "../web/rejections.ts";
import { createGuessBrake } from "../web/guess-brake.ts";
import type { Runtime } from "./runtime.ts";
import { createPlexFromConfig, inPlexLibrary } from "../targets/plex/from-config.ts";
import { createTargetsFromConfig } from "../targets/from-config.ts";
import type { BackfillInput } from "../backfill/from-config.ts";
import type { DriveInput } from "../drive/from-config.ts";
import { createUnroutableGuard, unroutableJudge } from "../intake/submit.ts";
import { newInstanceId } from "../core/instance-id.ts";
import { openQueue } from "./wiring/open-queue.ts";
import { instanceHealth } from "../web/instance-health.ts";
import { sharedDiskProbe } from "../paths/shared-disk-probe.ts";
import { dispatcherOptionsFromConfig, rcRefresherFromConfig } from "../queue/dispatch/from-config.ts";
import { scanQueueOptionsFromConfig } from "../queue/from-config.ts";
import { startWebFromConfig } from "../web/from-config.ts";
import type { ConsoleSources } from "../web/console/sources.ts";
import { startLandedChecker } from "../landed/landed-checker.ts";
import { landedStart } from "../landed/landed-start.ts";

/**
 * At start and after SERVER_PATH_MAPPINGS changed: the requests refused for lack of a mapping that the mappings in force
 * reach are counted, and the log says how to retry them (the console shows the same offer with its button).
 */
function offerRemappedRetry(queue: Pick<ScanQueue, "remappedCount">, log: Logger): void {
  void queue
    .remappedCount()
    .then((count) => {
      if (count === 0) return;
      const what = count === 1 ? "1 request" : `${String(count)} requests`;
      log.child({ component: "QUEUE" }).info(
        { count },
        `SERVER_PATH_MAPPINGS now reach ${what} refused for lack of a mapping: retry ${count === 1 ? "it" : "them"} with "Retry the unmapped requests" on the console's Queue or History page (or the API's cmd=retry_unmapped); each waits under its mapped folder.`,
      );
    })
    .catch((error: unknown) => log.debug({ err: error }, "Could not count the refused requests the new mappings reach"));
}

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
 * The one composition root: each part builds itself from the config in its own room (`<room>/from-config.ts`); this
 * passes the capabilities in (clock, log, metrics, queue, sink, targets) and starts and stops the parts in order. The
 * queue first (so nothing is accepted before it can be stored), then Plex and the other targets, the HTTP server, the
 * dispatcher, and last the backfill, the *arr watch and the drive monitor. A stop silences the notifiers first, then
 * closes the server, lets the scans in progress finish, and closes the queue last.
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
  const instance = newInstanceId();
  const queue = await openQueue(runtime, clock, mapper, metrics, instance);
  metrics?.countQueueWith(() => queue.countByState());
  // A restart on an edited config is a mapping change too: refused requests the mappings now reach are offered again.
  offerRemappedRetry(queue, log);
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
  // Jellyfin and Emby: one line each on how they scan (the TargetedScan plugin or the server's monitor), off the start's path.
  void others.detectScanRoutes(true);
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
  const driveInput: DriveInput = {
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
  };
  const drive = !config.CLOUD.ENABLED
    ? undefined
    : roles && database
      ? roles.driveByRoleFromConfig(driveInput, database)
      : (await import("../drive/from-config.ts")).createDriveMonitorFromConfig(driveInput);
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
  const backfillRoom = backfillApps.length > 0 ? await import("../backfill/from-config.ts") : undefined;
  const backfill = !backfillRoom
    ? undefined
    : roles && database
      ? roles.backfillByRoleFromConfig(backfillInput, database)
      : await backfillRoom.createBackfillFromConfig(backfillInput);
  // ARR: each app's connection to autoscan, looked at every SERVER_BACKFILL_INTERVAL (loaded only with apps listed).
  const arrWatch =
    Object.keys(config.ARR).length > 0
      ? (await import("../arr/watch-from-config.ts")).arrWatchFromConfig({
          config,
          clock,
          log,
          ...(notify ? { onDisconnected: notify.arrDisconnected, onReconnected: notify.arrReconnected } : {}),
        })
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
          inLibrary: inPlexLibrary(config, plex, others.targets.length > 0),
        })
      : undefined;
  // /health says 503 "starting" until the dispatcher runs.
  const live: { dispatcher?: Dispatcher } = {};
  // The console: live changes, what the dispatcher works on, and the open event streams' end at stop.
  const closing = new AbortController();
  const consoleSources: ConsoleSources = {
    // The queue's changes, and the *arr watch's (its banner goes as soon as an app sends again).
    changes: {
      subscribe: (listener) => {
        const fromQueue = queue.onChange(listener);
        const fromArr = arrWatch?.onChange(listener);
        return () => {
          fromQueue();
          fromArr?.();
        };
      },
    },
    activity: () => live.dispatcher?.activity() ?? { checking: [], scanning: [] },
    targets: () => targets.map((target) => target.name),
    ...(backfill ? { backfill: () => backfill.status() } : {}),
    ...(drive ? { drive: () => drive.status() } : {}),
    // A refused path today's mappings reach is no longer news: the offer to retry it (remap-offer.ts) takes its place.
    refused: { recent: () => guard.recent().filter((r) => !mapper.toServer(r.path).known), dismiss: () => guard.dismiss() },
    ...(arrWatch ? { arrProblems: () => arrWatch.problems(), arrNotes: () => arrWatch.notes() } : {}),
    ...(watch ? { watchers: () => watch.statuses() } : {}),
    ...(others.scanRoutes().length > 0 ? { scanRoutes: () => others.scanRoutes() } : {}),
    closing: closing.signal,
  };
  const web = await startWebFromConfig(config, {
    queue,
    sink: guard.sink,
    mapper,
    sections: plex.plex.sections,
    drive,
    isReady: () => live.dispatcher !== undefined,
    health: () => ({ ...ofInstance(), ...notify?.health(), ...watch?.health() }),
    rejections,
    guesses,
    metrics,
    console: consoleSources,
    backfill: backfill && backfillRoom?.backfillAdmin(backfill, backfillApps),
    arrConnections: arrWatch,
    log,
  }).catch(async (error: unknown) => {
    await queue.close();
    plex.close();
    others.close();
    anchorWatch.stop();
    notify?.stop();
    throw error;
  });
  // SERVER_CONFIRM_LANDED and SERVER_LANDED_RECHECK are read at each use, so a reload switches them at once. The checker
  // runs whether checking is on or off: looks already due when it is switched off still end.
  const landed = startLandedChecker({
    queue,
    targets: () => targets,
    settings: () => ({ recheckMs: current.SERVER_LANDED_RECHECK * 1000 }),
    clock,
    log: log.child({ component: "LANDED" }),
    ...(metrics ? { metrics } : {}),
    ...(notify ? { notify: notify.notifiers.emit } : {}),
  });
  const refresh = rcRefresherFromConfig(config, log);
  const running = createDispatcher({
    ...dispatcherOptionsFromConfig({ config, queue, targets, localForms: mapper.localForms, clock, log, env: options.env, metrics, ...(refresh ? { refreshMissing: refresh } : {}) }),
    anchors: { guard: anchorGuard, onReturn: anchorWatch.onReturn, check: anchorWatch.check },
    ...(notify ? { onTargetChange: notify.targetChanged } : {}),
    landed: (target, item) => landedStart(current.SERVER_CONFIRM_LANDED, target, item),
  });
  running.start();
  live.dispatcher = running;
  backfill?.start();
  arrWatch?.start();
  if (drive) void drive.start().catch((error) => log.error({ err: error }, `Google Drive monitoring stopped: ${describeError(error)}`));
  return {
    url: web.url,
    reload(next) {
      mapper.replace({ mappings: next.SERVER_PATH_MAPPINGS, existMappings: next.SERVER_FILE_EXIST_PATH_MAPPINGS, log: log.child({ component: "PATHS" }) });
      if (JSON.stringify(next.SERVER_PATH_MAPPINGS) !== JSON.stringify(current.SERVER_PATH_MAPPINGS)) offerRemappedRetry(queue, log);
      anchorWatch.reconfigure(next.SERVER_ANCHORS);
      // A plugin installed (or removed) since is seen at a reload: Jellyfin and Emby are asked again.
      void others.detectScanRoutes(false);
      queue.reconfigure(scanQueueOptionsFromConfig({ config: next, queueFile: settings.queueFile, clock, log, localForms: mapper.localForms }));
      running.reconfigure(dispatcherOptionsFromConfig({ config: next, queue, targets: [], localForms: mapper.localForms, clock, log, env: options.env }));
      if (next.SERVER_PASS !== current.SERVER_PASS) runtime.logs.scrubber.add(next.SERVER_PASS);
      if (next.SERVER_AUTH_PASSWORD !== "") runtime.logs.scrubber.add(next.SERVER_AUTH_PASSWORD);
      // The level first: the new app decides at its creation whether it writes the (DEBUG) access log.
      runtime.logs.setLevel(effectiveLogLevel(settings, next));
      web.reload(next);
      current = next;
    },
    async stop(budgetMs) {
      closing.abort();
      // First: nothing more is sent at a stop (unsent events are dropped, and said now, while the log still flushes).
      notify?.stop();
      arrWatch?.stop();
      await watch?.stop();
      const started = Date.now();
      await Promise.all([web.close(), drive?.stop(), backfill?.stop(), landed.stop()]);
      const result = await running.stop({ timeoutMs: Math.max(0, budgetMs - (Date.now() - started) - 500) });
      if (!result.drained) log.child({ component: "AUTOSCAN" }).warn({ abandoned: result.abandoned }, `${result.abandoned} scan(s) were still running; they stay queued for the next start`);
      await queue.close();
      plex.close();
      rejections.close();
      others.close();
      anchorWatch.stop();
    },
  };
}
