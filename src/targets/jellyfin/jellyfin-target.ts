import type { Target } from "../../core/target.ts";
import { createAvailabilityCheck } from "../availability.ts";
import { createLibraryFolderCache } from "../library-folders.ts";
import { createLibraryServerTarget, type LibraryServerConfig } from "../library-server-target.ts";
import { createMediaHttp } from "../media-http.ts";
import { parseJellyfinLibraries } from "../media-wire-schemas.ts";
import { updateTypeOf } from "../update-type.ts";

/**
 * A Jellyfin server (integrations.md §4.1): `POST /Library/Media/Updated` with
 * `{"Updates":[{"Path":<folder>,"UpdateType":…}]}` (204 = taken; Jellyfin acts on it after its LibraryMonitorDelay,
 * 60 s by default), libraries from `GET /Library/VirtualFolders` (`Locations[]`, needs an admin API key), and
 * `GET /System/Info` as the availability probe.
 *
 * Auth is `Authorization: MediaBrowser Token="<key>"` only: Jellyfin 12 turns the legacy `X-Emby-Token` header and
 * `api_key` query off (and forces them off on upgraded servers), which Cloudbox/autoscan still sends.
 */
export type JellyfinTargetOptions = LibraryServerConfig;

export function createJellyfinTarget(options: JellyfinTargetOptions): Target {
  const { name } = options;
  const label = `Jellyfin '${name}'`;
  const authKey = options.tokenKey ?? `TARGETS.${name}.TOKEN`;
  const log = options.log.child({ component: "TARGET" });
  const fields = { target: name };
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
  const libraries = createLibraryFolderCache({
    clock: options.clock,
    log,
    fields,
    ...(options.libraryRefreshMs === undefined ? {} : { refreshMs: options.libraryRefreshMs }),
    ...(options.libraryMissRefreshMs === undefined ? {} : { missRefreshMs: options.libraryMissRefreshMs }),
    load: async (signal) => {
      const answer = await http.request("GET", "/Library/VirtualFolders", signal ? { signal } : {});
      return parseJellyfinLibraries(answer.body, `${label}: GET /Library/VirtualFolders`);
    },
  });
  return createLibraryServerTarget({
    name,
    label,
    libraries,
    log,
    updateType: updateTypeOf,
    async send(folder, updateType, signal) {
      await http.request("POST", "/Library/Media/Updated", { json: { Updates: [{ Path: folder, UpdateType: updateType }] }, signal });
    },
    isAvailable: createAvailabilityCheck({
      label,
      authKey,
      log,
      fields,
      probe: async () => void (await http.request("GET", "/System/Info")),
    }),
  });
}
