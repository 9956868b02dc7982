import type { Config } from "../../config/schema.ts";
import type { Clock } from "../../core/clock.ts";
import type { Logger } from "../../core/logger.ts";
import type { TargetCallMetrics } from "../../core/metrics.ts";
import type { Target } from "../../core/target.ts";
import type { PlexScanner } from "../../docker/plex-scanner.ts";
import type { RunScanner } from "./analyze.ts";
import { createPlex, type Plex } from "./create-plex.ts";
import type { IsInLibrary } from "./library-db.ts";
import { sharedDiskProbe } from "../../paths/shared-disk-probe.ts";

/**
 * Config → everything Plex: the client, sections, the library database, the after-scan steps, and the target the
 * dispatcher is given (`PLEX_SCAN_METHOD`: `api`, the default, or `scanner`). The scanner (Docker exec into the Plex
 * container, or this host) is made once, only when something needs it: the scanner target or deep analysis; its
 * modules are loaded only then.
 */
export interface PlexInput {
  readonly config: Config;
  /** Settings.dockerHost (DOCKER_HOST). */
  readonly dockerHost: string | undefined;
  readonly clock: Clock;
  readonly log: Logger;
  /** `SERVER_METRICS`: Plex API calls are timed. */
  readonly metrics?: TargetCallMetrics;
  /** `SERVER_ANCHORS`: the missing anchor guarding a folder (server form); the trash of such a section is kept. */
  readonly guard?: (serverFolder: string) => { readonly anchor: string } | undefined;
}

export interface PrimaryPlex {
  readonly plex: Plex;
  /** The one Plex target for the dispatcher. */
  readonly target: Target;
  /** For the drive monitor: "is this file already in Plex?" (PLEX_DATABASE_PATH; "no" without it). */
  readonly isInLibrary: IsInLibrary;
  close(): void;
}

export async function createPlexFromConfig(input: PlexInput): Promise<PrimaryPlex> {
  const { config, clock } = input;
  const log = input.log.child({ component: "PLEX" });
  const scannerMethod = config.PLEX_SCAN_METHOD === "scanner";
  const hasToken = config.PLEX_TOKEN !== "";
  if (!hasToken && !scannerMethod) {
    log.warn("PLEX_TOKEN is empty: Plex will reject every scan. Set it (docs/configuration.md, PLEX_TOKEN: how to find it).");
  }
  // Deep analysis runs the scanner CLI; only where the user set a scanner up (Docker, or the scanner method).
  const wantsScanner = scannerMethod || (config.PLEX_ANALYZE_TYPE === "deep" && config.USE_DOCKER);
  // Docker's client and the scanner's modules are loaded only for such a setup.
  const docker = wantsScanner ? await import("./scanner-from-config.ts") : undefined;
  const scanner: PlexScanner | undefined = docker?.createScannerFromConfig(input).scanner;
  const runScanner: RunScanner | undefined = scanner
    ? (argv) => scanner.run(argv, { timeoutMs: config.PLEX_SCANNER_TIMEOUT * 1000 })
    : undefined;

  const plex = createPlex({
    url: config.PLEX_LOCAL_URL,
    token: config.PLEX_TOKEN,
    timeoutMs: config.PLEX_TIMEOUT * 1000,
    clock,
    log: input.log,
    checkBeforeScan: config.PLEX_CHECK_BEFORE_SCAN,
    waitForExternalScanners: config.PLEX_WAIT_FOR_EXTERNAL_SCANNERS,
    // Analysis and trash need the API (item ids, activity); without a token they are off.
    analyze: { type: hasToken ? config.PLEX_ANALYZE_TYPE : "off", directory: config.PLEX_ANALYZE_DIRECTORY },
    emptyTrash: {
      enabled: hasToken && config.PLEX_EMPTY_TRASH,
      maxFiles: config.PLEX_EMPTY_TRASH_MAX_FILES,
      controlFiles: config.PLEX_EMPTY_TRASH_CONTROL_FILES,
      zeroDeleted: config.PLEX_EMPTY_TRASH_ZERO_DELETED,
      ...(input.guard ? { guard: input.guard } : {}),
      // Control files sit on the mounts that may hang: looked at through the process's one disk probe.
      exists: async (path) => {
        const entry = await sharedDiskProbe(input.log).stat(path);
        return entry === "file" || entry === "directory";
      },
    },
    databasePath: config.PLEX_DATABASE_PATH.trim(),
    // The database may sit on a mount that hangs (the default Docker setup does not mount it at all): looked at
    // through the same bounded probe; the start-up look never holds the start up.
    statDatabase: (path) => sharedDiskProbe(input.log).stat(path),
    disableSizeCheck: config.CLOUD.DISABLE_DISK_FILE_SIZE_CHECK,
    runScanner,
    ...(input.metrics ? { metrics: input.metrics } : {}),
  });

  const target =
    scannerMethod && scanner && docker
      ? (await import("./scanner-target.ts")).createScannerTarget({
          scanner,
          sections: hasToken ? plex.sections : docker.createFolderSections(input, scanner),
          timeoutMs: config.PLEX_SCANNER_TIMEOUT * 1000,
          waitForExternalScanners: config.PLEX_WAIT_FOR_EXTERNAL_SCANNERS,
          ...(hasToken ? { afterScan: plex.afterScan, lookup: plex.lookup, refresher: plex.refresher } : {}),
          clock,
          log: input.log,
        })
      : plex.apiTarget;
  log.info(
    { method: config.PLEX_SCAN_METHOD, url: config.PLEX_LOCAL_URL },
    `Plex target: ${scannerMethod ? `Plex Media Scanner (${scanner?.where ?? "?"})` : `HTTP API at ${plex.client.url}`}`,
  );
  return { plex, target, isInLibrary: plex.isInLibrary, close: () => plex.close() };
}

/** Whether a server-form folder lies in a Plex library, for WATCH's check at start; `undefined` when it cannot be told
 *  (no token, other targets whose libraries may hold it, Plex not answering within 5 s). */
export function inPlexLibrary(config: Config, plex: PrimaryPlex, otherTargets: boolean): ((serverPath: string) => Promise<boolean | undefined>) | undefined {
  if (config.PLEX_TOKEN === "" || otherTargets) return undefined;
  return async (serverPath) => {
    const held = await plex.plex.sections.resolve(serverPath, AbortSignal.timeout(5_000)).catch(() => undefined);
    return held === undefined ? undefined : held.length > 0;
  };
}
