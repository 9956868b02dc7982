import { describeError, TargetAuthError } from "../core/errors.ts";
import type { MediaRequest, MediaResponse } from "./media-http.ts";
import { parsePlugins, type InstalledPlugin } from "./media-wire-schemas.ts";

/**
 * Is the targeted-scans plugin (d3v1l1989/targeted-scans, "TargetedScan") installed and active on a Jellyfin or Emby
 * server? With it, `POST /Library/ScanPath` adds one folder in seconds; without it, `POST /Library/Media/Updated`
 * waits for Jellyfin's LibraryMonitorDelay (60 s, restarted by every new event) and then refreshes the nearest known
 * folder recursively, a whole library location for a new movie.
 *
 * Asked with `GET /Plugins` (Jellyfin: an administrator's key; API keys are) at start and at each reload. A plugin
 * counts only when both its name and its id match: the plugin's ids look like placeholders another plugin could reuse.
 * Jellyfin writes GUIDs without dashes, Emby with them: ids are compared without dashes or braces, case ignored.
 * Jellyfin says whether a plugin is `Active`; a disabled or malfunctioning one does not count. Emby does not say.
 */
export type ServerKind = "jellyfin" | "emby";

export type ScanPathPluginState =
  | { readonly state: "present"; readonly version?: string }
  /** Asked, and not there (or not active): `why` in words. */
  | { readonly state: "absent"; readonly why: string }
  /** Could not ask (server down, a key that may not list plugins): asked again at the next scan. */
  | { readonly state: "unknown"; readonly why: string };

export const TARGETED_SCAN_NAME = "TargetedScan";

/** The plugin's ids per server build (targeted-scans v1.9.0: jellyfin-plugin/Plugin.cs, emby-plugin/Plugin.cs). */
export const TARGETED_SCAN_IDS: Readonly<Record<ServerKind, string>> = {
  jellyfin: "a1b2c3d4-e5f6-7890-abcd-ef1234567890",
  emby: "b2c3d4e5-f6a7-8901-bcde-f12345678901",
};

/** How to install the plugin, for the start line, doctor and the console. */
export const INSTALL_HINT: Readonly<Record<ServerKind, string>> = {
  jellyfin:
    "install the TargetedScan plugin for scans in seconds: in Jellyfin's Dashboard → Plugins → Repositories add https://raw.githubusercontent.com/d3v1l1989/targeted-scans/main/manifest.json, install 'TargetedScan' from the Catalog, restart Jellyfin, then reload autoscan (SIGHUP) or restart it",
  emby:
    "install the TargetedScan plugin for scans in seconds: put the Emby build from https://github.com/d3v1l1989/targeted-scans/releases in Emby's plugins folder, restart Emby, then reload autoscan (SIGHUP) or restart it",
};

export interface ScanPathPluginOptions {
  readonly kind: ServerKind;
  readonly call: (method: "GET" | "POST", route: string, request?: MediaRequest) => Promise<MediaResponse>;
  /** `Jellyfin 'jellyfin'`, for messages. */
  readonly label: string;
}

export interface ScanPathPlugin {
  /** What the last look found (`unknown` before the first). */
  current(): ScanPathPluginState;
  /** Asks `GET /Plugins` now; never throws (a failure is `unknown`, with why). */
  detect(signal?: AbortSignal): Promise<ScanPathPluginState>;
  /** `POST /Library/ScanPath` is not there (a 404 that is not the plugin's answer): absent until the next look. */
  lost(why: string): void;
}

export function createScanPathPlugin(options: ScanPathPluginOptions): ScanPathPlugin {
  let state: ScanPathPluginState = { state: "unknown", why: "not asked yet" };
  return {
    current: () => state,
    async detect(signal) {
      try {
        const answer = await options.call("GET", "/Plugins", signal ? { signal } : {});
        state = judgePlugins(parsePlugins(answer.body, `${options.label}: GET /Plugins`), options.kind);
      } catch (error) {
        const why =
          error instanceof TargetAuthError
            ? "the key may not list plugins (an administrator's API key can)"
            : `GET /Plugins failed: ${describeError(error)}`;
        state = { state: "unknown", why };
      }
      return state;
    },
    lost(why) {
      state = { state: "absent", why };
    },
  };
}

/** The plugins a server lists → whether targeted-scans is there and active. */
export function judgePlugins(plugins: readonly InstalledPlugin[], kind: ServerKind): ScanPathPluginState {
  const id = comparableId(TARGETED_SCAN_IDS[kind]);
  const found = plugins.find((plugin) => plugin.name === TARGETED_SCAN_NAME && comparableId(plugin.id) === id);
  if (!found) {
    const sameName = plugins.some((plugin) => plugin.name === TARGETED_SCAN_NAME);
    return { state: "absent", why: sameName ? `a plugin named ${TARGETED_SCAN_NAME} is there, but not with targeted-scans' id` : "the TargetedScan plugin is not installed" };
  }
  if (found.status !== undefined && found.status !== "Active") {
    return { state: "absent", why: `the TargetedScan plugin is installed but ${found.status} (not Active)` };
  }
  return { state: "present", ...(found.version ? { version: found.version } : {}) };
}

function comparableId(id: string): string {
  return id.replace(/[{}-]/g, "").toLowerCase();
}

export interface ScanRouteWords {
  readonly route: "plugin" | "monitor";
  /** Which route and why, one sentence. */
  readonly words: string;
  /** How to install the plugin, when it is not there. */
  readonly install?: string;
}

/** The route in words: the start line, doctor and the console's Libraries page say the same. */
export function scanRouteWords(state: ScanPathPluginState, label: string, kind: ServerKind): ScanRouteWords {
  const monitor =
    kind === "jellyfin"
      ? "POST /Library/Media/Updated (Jellyfin acts after its LibraryMonitorDelay, 60 s by default, then rescans the nearest folder it knows)"
      : "POST /Library/Media/Updated (Emby acts after its library monitor delay)";
  switch (state.state) {
    case "present":
      return { route: "plugin", words: `${label} scans through the TargetedScan plugin${state.version ? ` ${state.version}` : ""} (POST /Library/ScanPath): new folders show in seconds` };
    case "absent":
      return { route: "monitor", words: `${label} scans through ${monitor}: ${state.why}`, install: INSTALL_HINT[kind] };
    case "unknown":
      return { route: "monitor", words: `${label} scans through ${monitor} until it says whether the TargetedScan plugin is there (${state.why})` };
  }
}
