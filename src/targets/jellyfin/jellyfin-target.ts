import { createLibraryServerTarget, type LibraryServerConfig, type LibraryServerTarget } from "../library-server-target.ts";
import { createMediaHttp } from "../media-http.ts";
import { parseJellyfinLibraries, parseJellyfinLibraryRoots } from "../media-wire-schemas.ts";
import { updateTypeOf } from "../update-type.ts";

/**
 * A Jellyfin server (integrations.md §4.1): `POST /Library/Media/Updated` with
 * `{"Updates":[{"Path":<folder>,"UpdateType":…}]}` (204 = taken; Jellyfin acts on it after its LibraryMonitorDelay,
 * 60 s by default), libraries from `GET /Library/VirtualFolders` (`Locations[]`, needs an admin API key), and
 * `GET /System/Info` as the availability probe; with the TargetedScan plugin, `POST /Library/ScanPath` instead
 * (scan-path.ts, seconds instead of the monitor delay). Whether files landed is asked by walking the library from its
 * `ItemId` with `GET /Items?ParentId=` (library-lookup.ts), first `landedSettleMs` after the scan.
 *
 * Auth is `Authorization: MediaBrowser Token="<key>"` only: Jellyfin 12 turns the legacy `X-Emby-Token` header and
 * `api_key` query off (and forces them off on upgraded servers), which Cloudbox/autoscan still sends.
 */
export type JellyfinTargetOptions = LibraryServerConfig;

export function createJellyfinTarget(options: JellyfinTargetOptions): LibraryServerTarget {
  const { name } = options;
  const label = `Jellyfin '${name}'`;
  const authKey = options.tokenKey ?? `TARGETS.${name}.TOKEN`;
  const log = options.log.child({ component: "TARGET" });
  const http = createMediaHttp({
    url: options.url,
    label,
    authKey,
    headers: { Authorization: `MediaBrowser Token="${options.token}"` },
    secrets: [options.token],
    // Every route we call exists on any Jellyfin since 10.0: a 404 means the URL points elsewhere.
    notFoundHint: `check ${options.urlKey ?? `TARGETS.${name}.URL`}`,
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
  });
  return createLibraryServerTarget({
    config: options,
    kind: "jellyfin",
    label,
    authKey,
    log,
    call: (method, route, request) => http.request(method, route, request),
    librariesRoute: "/Library/VirtualFolders",
    parseLibraries: parseJellyfinLibraries,
    parseRoots: parseJellyfinLibraryRoots,
    updateType: updateTypeOf,
  });
}
