import type { Clock } from "../core/clock.ts";
import type { Logger } from "../core/logger.ts";
import type { TargetCallMetrics } from "../core/metrics.ts";
import type { Target } from "../core/target.ts";
import { createAfterScan, type AfterScan } from "./after-scan.ts";
import { createAnalyzer, type AnalyzeType, type RunScanner } from "./analyze.ts";
import { createPlexApiTarget } from "./api-target.ts";
import { createPlexClient, type PlexClient } from "./client.ts";
import { createTrashEmptier } from "./empty-trash.ts";
import { timedPlexClient } from "./timed-client.ts";
import { createLibraryDb, type IsInLibrary, type LibraryDb } from "./library-db.ts";
import { createSectionActivity, type SectionActivity } from "./section-activity.ts";
import { createSectionResolver, type SectionResolver } from "./sections.ts";

/**
 * Everything Plex, built from one options object (the composition root maps Config onto it: src/cli/wiring/plex.ts).
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
  readonly emptyTrash: {
    readonly enabled: boolean;
    readonly maxFiles: number;
    readonly controlFiles: readonly string[];
    readonly zeroDeleted: boolean;
    /** Whether a control file is there (the service's disk probe); default a plain `access`. */
    readonly exists?: (path: string) => Promise<boolean>;
  };
  /** `PLEX_DATABASE_PATH`; empty = no library database (no "already in Plex?" answers, analysis or trash counts). */
  readonly databasePath: string;
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
};

export interface Plex {
  readonly client: PlexClient;
  readonly sections: SectionResolver;
  readonly activity: SectionActivity;
  readonly afterScan: AfterScan;
  /** The `api` target. */
  readonly apiTarget: Target;
  readonly library?: LibraryDb;
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
  const analyzer = createAnalyzer({
    ...options.analyze,
    client,
    library,
    runScanner: options.runScanner,
    clock,
    log,
    lookupTries: t.lookupTries,
    lookupDelayMs: t.lookupDelayMs,
  });
  const trash = createTrashEmptier({
    ...options.emptyTrash,
    client,
    library,
    clock,
    log,
    tries: t.trashTries,
    retryDelayMs: t.trashDelayMs,
  });
  const afterScan = createAfterScan({
    activity,
    analyzer,
    trash,
    clock,
    log,
    settleMs: t.settleMs,
    pollMs: t.finishPollMs,
    maxWaitMs: t.finishMaxMs,
  });
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
  });
  return {
    client,
    sections,
    activity,
    afterScan,
    apiTarget,
    library,
    isInLibrary: library ? library.isInLibrary : async () => false,
    close: () => library?.close(),
  };
}
