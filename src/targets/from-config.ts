import type { Config, TargetConfig } from "../config/schema.ts";
import type { Clock } from "../core/clock.ts";
import type { Logger } from "../core/logger.ts";
import type { TargetCallMetrics } from "../core/metrics.ts";
import type { Target } from "../core/target.ts";
import { createPlex, type Plex } from "./plex/create-plex.ts";
import { createEmbyTarget } from "./emby/emby-target.ts";
import { createJellyfinTarget } from "./jellyfin/jellyfin-target.ts";
import { withPathMappings } from "./mapped-target.ts";
import type { ScanRoute, ScanRouteView } from "./library-server-target.ts";
import { createAutoscanTarget } from "./autoscan/autoscan-target.ts";
import { createAudiobookshelfTarget } from "./audiobookshelf/audiobookshelf-target.ts";

/**
 * `TARGETS` → the further scan targets, each in its own path form (`PATH_MAPPINGS`), beside the primary Plex (the
 * `PLEX_*` keys, built in plex.ts). A disabled target is left out: folders do not wait for it.
 */
export interface TargetsInput {
  readonly config: Config;
  readonly clock: Clock;
  readonly log: Logger;
  readonly metrics?: TargetCallMetrics;
}

export interface OtherTargets {
  readonly targets: readonly Target[];
  /** Releases what the targets hold (another Plex's library database handle). */
  close(): void;
  /**
   * Asks each Jellyfin and Emby target how it scans (the TargetedScan plugin or the server's monitor): at start with
   * one INFO line per target (`announce`), at a reload with a line only where it changed. Never throws.
   */
  detectScanRoutes(announce: boolean): Promise<readonly ScanRouteView[]>;
  /** What the last look found, per Jellyfin and Emby target. */
  scanRoutes(): readonly ScanRouteView[];
}

export function createTargetsFromConfig(input: TargetsInput): OtherTargets {
  const plexes: Plex[] = [];
  const targets: Target[] = [];
  const routes: ScanRoute[] = [];
  for (const [name, target] of Object.entries(input.config.TARGETS)) {
    if (!target.ENABLED) continue;
    const built = buildTarget(name, target, input, plexes);
    if (built.scanRoute) routes.push(built.scanRoute);
    targets.push(withPathMappings(built, target.PATH_MAPPINGS));
  }
  if (targets.length > 0) {
    const names = ["plex", ...targets.map((t) => t.name)].join(", ");
    input.log.child({ component: "TARGET" }).info({ targets: names }, `Scan targets: ${names}`);
  }
  return {
    targets,
    close: () => plexes.forEach((plex) => plex.close()),
    detectScanRoutes: (announce) => Promise.all(routes.map((route) => route.detect(announce))),
    scanRoutes: () => routes.map((route) => route.current()),
  };
}

function buildTarget(name: string, target: TargetConfig, input: TargetsInput, plexes: Plex[]): Target & { readonly scanRoute?: ScanRoute } {
  const { config, clock, log } = input;
  const timeoutMs = target.TIMEOUT * 1000;
  const landedSettleMs = config.SERVER_LANDED_SETTLE * 1000;
  switch (target.TYPE) {
    case "jellyfin":
      return createJellyfinTarget({ name, url: target.URL, token: target.TOKEN, timeoutMs, landedSettleMs, clock, log });
    case "emby":
      return createEmbyTarget({ name, url: target.URL, token: target.TOKEN, timeoutMs, landedSettleMs, clock, log });
    case "audiobookshelf":
      return createAudiobookshelfTarget({ name, url: target.URL, apiKey: target.API_KEY, timeoutMs, clock, log });
    case "autoscan":
      return createAutoscanTarget({ name, url: target.URL, username: target.USERNAME, password: target.PASSWORD, timeoutMs, log });
    case "plex": {
      // Another Plex through its API: sections, partial scans, the wait for its own scanners. Analysis and emptying
      // the trash need that server's library database (Plex's API cannot find an item by its file, and the trash is
      // emptied only after counting what would go), which is not on this machine: they are off for it.
      const plex = createPlex({
        url: target.URL,
        token: target.TOKEN,
        timeoutMs,
        clock,
        log,
        checkBeforeScan: config.PLEX_CHECK_BEFORE_SCAN,
        waitForExternalScanners: config.PLEX_WAIT_FOR_EXTERNAL_SCANNERS,
        analyze: { type: "off", directory: false },
        emptyTrash: { enabled: false, maxFiles: 0, controlFiles: [], zeroDeleted: false },
        databasePath: "",
        ...(input.metrics ? { metrics: input.metrics } : {}),
      });
      plexes.push(plex);
      return { ...plex.apiTarget, name };
    }
  }
}
