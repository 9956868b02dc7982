import type { Clock } from "../core/clock.ts";
import { TargetUnavailableError } from "../core/errors.ts";
import type { Logger } from "../core/logger.ts";
import type { ScanContext, ScanOutcome, Target } from "../core/target.ts";
import { createAvailabilityCheck } from "./availability.ts";
import { createLibraryFolderCache, libraryNames, type LibraryFolder } from "./library-folders.ts";
import { createMediaLibraryLookup } from "./library-lookup.ts";
import { createMediaItemRefresher } from "./media-item-refresh.ts";
import type { MediaRequest, MediaResponse } from "./media-http.ts";
import type { LibraryRoot } from "./media-wire-schemas.ts";
import { scanThroughPlugin } from "./scan-path.ts";
import { createScanPathPlugin, scanRouteWords, type ScanPathPluginState, type ServerKind } from "./scan-path-plugin.ts";
import type { UpdateType } from "./update-type.ts";

/**
 * The policy shared by Jellyfin and Emby: a folder in no library of the server is a logged skip (the server would
 * take the call and do nothing: the words are Plex's "Unable to map"); otherwise, when the TargetedScan plugin is
 * there, `POST /Library/ScanPath` for what the server does not hold yet (scan-path.ts), else (or when that is not for
 * the plugin) one `POST /Library/Media/Updated`
 * for the folder, whatever number of libraries hold it (the server finds them itself from the path); the library list
 * is cached, and `GET /System/Info` is the availability probe. Whether the files landed is asked by walking the
 * library through `GET /Items` (library-lookup.ts). Each server adds its header, its library route and how its
 * answer reads.
 */

/** What configures a Jellyfin or Emby target (`TARGETS.<name>`); each adds what its own API needs. */
export interface LibraryServerConfig {
  /** The target's name in logs and the queue (`jellyfin`, `emby`). */
  readonly name: string;
  /** `TARGETS.<name>.URL`, e.g. `http://jellyfin:8096`. */
  readonly url: string;
  /** `TARGETS.<name>.TOKEN`: an API key, sent only in the header the server reads. */
  readonly token: string;
  /** `TARGETS.<name>.TIMEOUT` in ms (default 30 s). */
  readonly timeoutMs?: number;
  readonly clock: Clock;
  readonly log: Logger;
  /** The setting named when the key is refused (default `TARGETS.<name>.TOKEN`). */
  readonly tokenKey?: string;
  /** The setting named when the server does not know a route (default `TARGETS.<name>.URL`). */
  readonly urlKey?: string;
  /** Library list refresh (default 5 min) and refresh on a miss (at most every 10 s). */
  readonly libraryRefreshMs?: number;
  readonly libraryMissRefreshMs?: number;
  /**
   * How long after a scan was sent the "did it land" look first waits (default 90 s): Jellyfin acts on a scan only
   * after its LibraryMonitorDelay (60 s by default) and then needs its scan's time. A server with a longer delay
   * needs more. Meant to come from `SERVER_LANDED_SETTLE` (not wired yet).
   */
  readonly landedSettleMs?: number;
}

/** Jellyfin's default LibraryMonitorDelay (60 s) plus time for its scan. */
export const DEFAULT_LANDED_SETTLE_MS = 90_000;
/** After a scan through the TargetedScan plugin: it creates the item before it answers; a new folder's files follow. */
export const PLUGIN_LANDED_SETTLE_MS = 10_000;
/** While the plugin could not be asked (the server was down), a scan asks again, at most this often. */
const PLUGIN_ASK_AGAIN_MS = 60_000;

export interface LibraryServerTargetOptions {
  readonly config: LibraryServerConfig;
  /** Which server: the TargetedScan plugin's id differs between its Jellyfin and Emby builds. */
  readonly kind: ServerKind;
  /** `Jellyfin 'jellyfin'`, for messages. */
  readonly label: string;
  /** The setting named when the key is refused. */
  readonly authKey: string;
  /** The `TARGET` component's logger. */
  readonly log: Logger;
  /** One call to the server's API, by the route as Jellyfin spells it (Emby finds its own prefix). */
  readonly call: (method: "GET" | "POST", route: string, request?: MediaRequest) => Promise<MediaResponse>;
  /** Where the server lists its libraries, and how its answer reads. */
  readonly librariesRoute: string;
  readonly parseLibraries: (body: string, what: string) => LibraryFolder[];
  /** The same answer with each library's own item id, where the "did it land" walk starts. */
  readonly parseRoots: (body: string, what: string) => LibraryRoot[];
  readonly updateType: (sources: ScanContext["sources"]) => UpdateType;
}

/**
 * How a Jellyfin or Emby target sends its scans: through the TargetedScan plugin (`POST /Library/ScanPath`, seconds)
 * or the server's own monitor (`POST /Library/Media/Updated`, after its LibraryMonitorDelay). Asked at start and at
 * each reload (`detect`), shown at start, by doctor and on the console's Libraries page.
 */
export interface ScanRoute {
  /** Asks the server now; logs one INFO line saying the route, always (`announce`) or when it changed. */
  detect(announce: boolean, signal?: AbortSignal): Promise<ScanRouteView>;
  current(): ScanRouteView;
}

export interface ScanRouteView {
  readonly target: string;
  readonly route: "plugin" | "monitor";
  /** One sentence: which route and why; with how to install the plugin when it is not there. */
  readonly words: string;
}

export interface LibraryServerTarget extends Target {
  readonly scanRoute: ScanRoute;
}

export function createLibraryServerTarget(options: LibraryServerTargetOptions): LibraryServerTarget {
  const { config, label, log, call } = options;
  const { name } = config;
  const fields = { target: name };
  const plugin = createScanPathPlugin({ kind: options.kind, call, label });
  let askedAt: number | undefined;
  /** Whether the last scan went through the plugin: the landed check's first look is read right after it. */
  let lastThroughPlugin = false;
  const configuredSettleMs = config.landedSettleMs ?? DEFAULT_LANDED_SETTLE_MS;
  const view = (state: ScanPathPluginState): ScanRouteView => {
    const said = scanRouteWords(state, label, options.kind);
    return { target: name, route: said.route, words: said.install ? `${said.words}; ${said.install}` : said.words };
  };
  const scanRoute: ScanRoute = {
    current: () => view(plugin.current()),
    async detect(announce, signal) {
      const before = plugin.current().state;
      askedAt = config.clock.now();
      const state = await plugin.detect(signal);
      const shown = view(state);
      if (announce || state.state !== before) log.info({ ...fields, scanRoute: shown.route }, shown.words);
      return shown;
    },
  };
  const libraries = createLibraryFolderCache({
    clock: config.clock,
    log,
    fields,
    ...(config.libraryRefreshMs === undefined ? {} : { refreshMs: config.libraryRefreshMs }),
    ...(config.libraryMissRefreshMs === undefined ? {} : { missRefreshMs: config.libraryMissRefreshMs }),
    load: async (signal) => {
      const answer = await call("GET", options.librariesRoute, signal ? { signal } : {});
      return options.parseLibraries(answer.body, `${label}: GET ${options.librariesRoute}`);
    },
  });
  const lookup = createMediaLibraryLookup({
    call,
    label,
    log,
    settleMs: configuredSettleMs,
    // Read afresh for each look (one call), not from the scan's cache: that one may be minutes old.
    roots: async (signal) => {
      const answer = await call("GET", options.librariesRoute, { signal });
      return options.parseRoots(answer.body, `${label}: GET ${options.librariesRoute}`);
    },
  });
  return {
    name,
    scanRoute,
    async scan(folder, context): Promise<ScanOutcome> {
      const fields = { target: name, path: folder };
      const matched = await libraries.resolve(folder, context.signal);
      if (matched.length === 0) {
        log.warn(fields, `Unable to map '${folder}' to a ${label} library.`);
        return { status: "skipped", reason: `the folder is in no ${name} library` };
      }
      if (context.signal.aborted) throw new TargetUnavailableError(`Shutting down before the scan was sent to ${label}`);
      if (plugin.current().state === "unknown" && (askedAt === undefined || config.clock.now() - askedAt >= PLUGIN_ASK_AGAIN_MS)) {
        await scanRoute.detect(false, context.signal);
      }
      lastThroughPlugin = false;
      let notThrough: string | undefined;
      if (plugin.current().state === "present") {
        const through = await scanThroughPlugin({
          folder,
          context,
          libraryFolders: matched.map((match) => match.path),
          call,
          lookup,
          plugin,
          label,
          mappingsKey: `TARGETS.${name}.PATH_MAPPINGS`,
          log,
        });
        if (through.sent) {
          lastThroughPlugin = true;
          log.info({ ...fields, scanRoute: "plugin" }, `Scan requested for '${folder}' in ${label} through TargetedScan: ${through.detail}`);
          return { status: "scanned", detail: `TargetedScan: ${through.detail}` };
        }
        notThrough = through.why;
      }
      const updateType = options.updateType(context.sources);
      await call("POST", "/Library/Media/Updated", { json: { Updates: [{ Path: folder, UpdateType: updateType }] }, signal: context.signal });
      const names = libraryNames(matched);
      const where = `librar${names.length > 1 ? "ies" : "y"} ${names.map((n) => `'${n}'`).join(", ")}`;
      // With the plugin there, why this folder went to the monitor instead is said with the scan.
      const instead = notThrough === undefined ? "" : `; not through TargetedScan: ${notThrough}`;
      log.info({ ...fields, libraries: names, updateType }, `Scan requested for '${folder}' in ${label}, ${where} (${updateType})${instead}`);
      return { status: "scanned", detail: `${where}; ${updateType}${instead}` };
    },
    isAvailable: createAvailabilityCheck({
      label,
      authKey: options.authKey,
      log,
      fields,
      probe: async () => void (await call("GET", "/System/Info")),
    }),
    lookup: {
      // A scan through the plugin shows in seconds; Media/Updated waits for the server's monitor delay first.
      get settleMs() {
        return lastThroughPlugin ? Math.min(configuredSettleMs, PLUGIN_LANDED_SETTLE_MS) : configuredSettleMs;
      },
      find: (files, signal) => lookup.find(files, signal),
    },
    // Refresh in place: the item the look found, `POST /Items/{id}/Refresh` (media-item-refresh.ts).
    refresher: createMediaItemRefresher({ call, lookup, label, log, recursiveParam: options.kind === "emby" }),
  };
}
