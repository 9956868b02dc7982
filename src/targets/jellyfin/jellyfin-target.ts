import type { Clock } from "../../core/clock.ts";
import type { Logger } from "../../core/logger.ts";
import type { Target } from "../../core/target.ts";
import { createAvailabilityCheck } from "../availability.ts";
import { createLibraryFolderCache } from "../library-folders.ts";
import { createLibraryServerTarget } from "../library-server-target.ts";
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
export interface JellyfinTargetOptions {
  /** The target's name in logs and the queue: `jellyfin`. */
  readonly name: string;
  /** `TARGETS.<name>.URL`, e.g. `http://jellyfin:8096` (a base path behind a proxy is fine). */
  readonly url: string;
  /** `TARGETS.<name>.TOKEN`: an API key (Dashboard → API Keys). Sent only in the Authorization header. */
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
}

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
