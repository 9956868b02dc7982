import type { Clock } from "../../core/clock.ts";
import type { Logger } from "../../core/logger.ts";
import type { TargetCallMetrics } from "../../core/metrics.ts";
import type { ItemRefresher, LibraryLookup, Target } from "../../core/target.ts";
import { createDiskProbe, type DiskEntry } from "../../paths/disk-probe.ts";
import { createAfterScan, type AfterScan } from "./after-scan.ts";
import { createAnalyzer, type AnalyzeType, type RunScanner } from "./analyze.ts";
import { createPlexApiTarget } from "./api-target.ts";
import { createPlexClient, type PlexClient } from "./client.ts";
import { createTrashEmptier, type TrashEmptierOptions } from "./empty-trash.ts";
import { timedPlexClient } from "./timed-client.ts";
import { createLibraryDb, type IsInLibrary, type LibraryDb } from "./library-db.ts";
import { createLibraryGate, type LibraryGate } from "./library-gate.ts";
import { createPlexLibraryLookup } from "./library-lookup.ts";
import { createPlexItemRefresher } from "./item-refresh.ts";
import { createSectionActivity, createSectionResolver, type SectionActivity, type SectionResolver } from "./sections.ts";

/**
 * Everything Plex, built from one options object (the composition root maps Config onto it: src/targets/plex/from-config.ts).
 * The scanner target (`PLEX_SCAN_METHOD: "scanner"`) reuses `sections`, `activity` and `afterScan` from here.
 */
export interface PlexOptions {
  /** `PLEX_LOCAL_URL`, `PLEX_TOKEN`, `PLEX_TIMEOUT` (ms here). */
  readonly url: string;
  readonly token: string;
  readonly timeoutMs?: number;
  readonly clock: Clock;
  readonly log: Logger;
  readonly checkBeforeScan: boolean;
  readonly waitForExternalScanners: boolean;
  readonly analyze: { readonly type: AnalyzeType; readonly directory: boolean };
  /** `PLEX_EMPTY_TRASH*` and its guards (the control files' probe, `SERVER_ANCHORS`). */
  readonly emptyTrash: Pick<TrashEmptierOptions, "enabled" | "maxFiles" | "controlFiles" | "zeroDeleted" | "exists" | "guard">;
  /** `PLEX_DATABASE_PATH`; empty = no library database (no "already in Plex?" answers, analysis or trash counts). */
  readonly databasePath: string;
  /**
   * A bounded look at the database file before SQLite opens it (the service's disk probe: the file may sit on a
   * mount that hangs); default a probe of its own.
   */
  readonly statDatabase?: (path: string) => Promise<DiskEntry>;
  /** `CLOUD.DISABLE_DISK_FILE_SIZE_CHECK`. */
  readonly disableSizeCheck?: boolean;
  /** The scanner executor, when configured (deep analysis). */
  readonly runScanner?: RunScanner;
  readonly timing?: Partial<PlexTiming>;
  /** `SERVER_METRICS`: every Plex API call is timed. */
  readonly metrics?: TargetCallMetrics;
}

/** Every wait, bounded; the defaults suit a real server. */
export interface PlexTiming {
  readonly sectionsRefreshMs: number;
  readonly busyPollMs: number;
  readonly busyMaxMs: number;
  readonly availablePollMs: number;
  readonly availableMaxMs: number;
  readonly settleMs: number;
  readonly finishPollMs: number;
  readonly finishMaxMs: number;
  readonly lookupTries: number;
  readonly lookupDelayMs: number;
  readonly trashTries: number;
  readonly trashDelayMs: number;
  /** While Plex's database cannot be read, it is looked for again at most this often. */
  readonly databaseRecheckMs: number;
}

const DEFAULT_TIMING: PlexTiming = {
  sectionsRefreshMs: 5 * 60_000,
  busyPollMs: 10_000,
  busyMaxMs: 10 * 60_000,
  availablePollMs: 15_000,
  availableMaxMs: 2 * 60_000,
  settleMs: 5_000,
  finishPollMs: 10_000,
  finishMaxMs: 30 * 60_000,
  lookupTries: 5,
  lookupDelayMs: 10_000,
  trashTries: 5,
  trashDelayMs: 10_000,
  databaseRecheckMs: 60_000,
};

export interface Plex {
  readonly client: PlexClient;
  readonly sections: SectionResolver;
  readonly activity: SectionActivity;
  readonly afterScan: AfterScan;
  /** Plex's library asked through its API whether files landed: on `apiTarget`, and for the scanner target. */
  readonly lookup: LibraryLookup;
  /** Refresh in place of one item (its API, so it needs PLEX_TOKEN): on `apiTarget`, and for the scanner target. */
  readonly refresher: ItemRefresher;
  /** The `api` target. */
  readonly apiTarget: Target;
  readonly library?: LibraryDb;
  /**
   * Whether the database can be read for analysis and the trash. Looked at once when made (without waiting: the
   * result, and one warning if it cannot be read, come when the look answers), then when scans ask.
   */
  readonly database: LibraryGate;
  /** For the drive monitor; always answers "no" without a library database. */
  readonly isInLibrary: IsInLibrary;
  close(): void;
}

export function createPlex(options: PlexOptions): Plex {
  const { clock, log } = options;
  const t: PlexTiming = { ...DEFAULT_TIMING, ...options.timing };
  const client = timedPlexClient(createPlexClient({ url: options.url, token: options.token, timeoutMs: options.timeoutMs }), options.metrics);
  const sections = createSectionResolver({ client, clock, log, refreshMs: t.sectionsRefreshMs });
  const activity = createSectionActivity({ client, clock, log });
  const library = options.databasePath
    ? createLibraryDb({ path: options.databasePath, log, disableSizeCheck: options.disableSizeCheck })
    : undefined;
  const database = createLibraryGate({
    path: options.databasePath,
    ...(library ? { library } : {}),
    stat: options.statDatabase ?? createDiskProbe({ log }).stat,
    analyzeType: options.analyze.type,
    emptyTrash: options.emptyTrash.enabled && options.emptyTrash.maxFiles > 0,
    clock,
    log,
    recheckMs: t.databaseRecheckMs,
  });
  const analyzer = createAnalyzer({
    ...options.analyze,
    client,
    library,
    gate: database,
    runScanner: options.runScanner,
    clock,
    log,
    lookupTries: t.lookupTries,
    lookupDelayMs: t.lookupDelayMs,
  });
  const trash = createTrashEmptier({
    ...options.emptyTrash,
    sectionLocations: async (id, signal) => (await sections.list(signal)).find((section) => section.id === id)?.locations,
    client,
    library,
    gate: database,
    clock,
    log,
    tries: t.trashTries,
    retryDelayMs: t.trashDelayMs,
  });
  const afterScan = createAfterScan({
    activity,
    analyzer,
    trash,
    gate: database,
    clock,
    log,
    settleMs: t.settleMs,
    pollMs: t.finishPollMs,
    maxWaitMs: t.finishMaxMs,
  });
  // The after-scan steps have waited for the scan already; a look waits at most 90 s more (a look cut off is retried).
  const lookup = createPlexLibraryLookup({ client, sections, activity, log, idleMaxMs: 90_000 });
  const refresher = createPlexItemRefresher({ client, sections, log });
  const apiTarget = createPlexApiTarget({
    client,
    sections,
    activity,
    afterScan,
    clock,
    log,
    checkBeforeScan: options.checkBeforeScan,
    waitForExternalScanners: options.waitForExternalScanners,
    busyPollMs: t.busyPollMs,
    busyMaxMs: t.busyMaxMs,
    availablePollMs: t.availablePollMs,
    availableMaxMs: t.availableMaxMs,
    lookup,
    refresher,
  });
  // Said once at start, without holding the start up: the look is bounded, and nobody waits for it.
  if (afterScan.enabled) database.usable().catch(() => undefined);
  return {
    client,
    sections,
    activity,
    afterScan,
    lookup,
    refresher,
    apiTarget,
    library,
    database,
    isInLibrary: library ? library.isInLibrary : async () => false,
    close: () => library?.close(),
  };
}
