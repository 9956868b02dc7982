import { TargetAuthError } from "../../core/errors.ts";
import type { Clock } from "../../core/clock.ts";
import { createListCache } from "../../core/list-cache.ts";
import type { Logger } from "../../core/logger.ts";
import { foldersHolding } from "../../paths/containment.ts";
import type { AudiobookshelfClient } from "./client.ts";
import { isAdminType, type AbsLibrary } from "./wire-schemas.ts";

/**
 * Which Audiobookshelf library holds a folder, and whether that library's file watcher takes `POST /api/watcher/update`.
 * The watcher takes it only when neither the library (`settings.disableWatcher`) nor the whole server
 * (`scannerDisableWatcher`) turned it off; otherwise the endpoint still answers 200 and nothing is scanned
 * (refresh-fastpath-targets.md §5), so the library scan is the only call that works.
 *
 * The list is read with the key's user (`POST /api/authorize`): a key of a user who is not an admin is refused here,
 * with the fix, before any scan is sent (Audiobookshelf answers 403 to its scans).
 */
export interface AbsLibraryFolder {
  /** The library's name, for logs. */
  readonly library: string;
  readonly libraryId: string;
  /** One of its folders, in the server's path form. */
  readonly path: string;
  /** Whether `POST /api/watcher/update` reaches a watcher for this library. */
  readonly watcher: boolean;
}

export interface AbsLibraryCacheOptions {
  readonly client: AudiobookshelfClient;
  readonly clock: Clock;
  readonly log: Logger;
  readonly fields: Readonly<Record<string, unknown>>;
  /** `Audiobookshelf 'abs'`. */
  readonly label: string;
  /** `TARGETS.abs.API_KEY`. */
  readonly keySetting: string;
  readonly refreshMs?: number;
  readonly missRefreshMs?: number;
}

export interface AbsLibraryCache {
  /** The library folders holding `folder`, most specific first; `[]` if none. */
  resolve(folder: string, signal?: AbortSignal): Promise<AbsLibraryFolder[]>;
}

const DEFAULT_REFRESH_MS = 5 * 60_000;
const DEFAULT_MISS_REFRESH_MS = 10_000;

export function createAbsLibraryCache(options: AbsLibraryCacheOptions): AbsLibraryCache {
  const { client } = options;
  let said: string | undefined;
  const cache = createListCache<AbsLibraryFolder>({
    clock: options.clock,
    log: options.log,
    fields: options.fields,
    what: "the library folders",
    summary: (entry) => `${entry.library}: ${entry.path} (watcher ${entry.watcher ? "on" : "off"})`,
    refreshMs: options.refreshMs ?? DEFAULT_REFRESH_MS,
    missRefreshMs: options.missRefreshMs ?? DEFAULT_MISS_REFRESH_MS,
    load: async (signal) => {
      const [libraries, who] = await Promise.all([client.libraries(signal), client.authorize(signal)]);
      if (!isAdminType(who.userType)) throw notAdminError(options.label, options.keySetting, who.username, who.userType);
      const folders = libraryFolders(libraries, who.watcherDisabled);
      // Which call each library gets: said at the first listing and when it changes (a watcher switched in ABS).
      const routes = describeRoutes(folders, who.watcherDisabled);
      if (routes !== said && routes !== "") options.log.info({ ...options.fields, routes }, `${options.label}: ${routes}`);
      said = routes;
      return folders;
    },
  });
  return {
    resolve: (folder, signal) => cache.find((entries) => foldersHolding(entries, (entry) => [entry.path], folder), signal, folder),
  };
}

/** Every folder of every library, with whether its watcher takes updates. */
export function libraryFolders(libraries: readonly AbsLibrary[], serverWatcherDisabled: boolean): AbsLibraryFolder[] {
  return libraries.flatMap((library) =>
    library.folders.map((path) => ({ library: library.name, libraryId: library.id, path, watcher: !serverWatcherDisabled && !library.watcherDisabled })),
  );
}

/** `new files of Audiobooks go to its watcher; Podcasts gets library scans (watcher off)`; "" with no library. */
export function describeRoutes(folders: readonly AbsLibraryFolder[], serverWatcherDisabled: boolean): string {
  const names = (watcher: boolean): string[] => [...new Set(folders.filter((f) => f.watcher === watcher).map((f) => f.library))];
  const watched = names(true);
  const scanned = names(false);
  return [
    ...(watched.length ? [`new files of ${watched.join(", ")} go to its watcher`] : []),
    ...(scanned.length
      ? [`${scanned.join(", ")} get${scanned.length === 1 ? "s" : ""} library scans (${serverWatcherDisabled ? "the watcher is off server-wide" : "watcher off"})`]
      : []),
  ].join("; ");
}

/** The fix for a key of a plain user: Audiobookshelf lets only admin and root users scan. */
export function notAdminFix(keySetting: string): string {
  return `Create an API key that acts as an admin (or the root) user (Audiobookshelf: Settings → API Keys → Add API Key, pick that user) and put it in ${keySetting}.`;
}

export function notAdminError(label: string, keySetting: string, username: string, userType: string): TargetAuthError {
  return new TargetAuthError(
    `${label}: the key in ${keySetting} acts as '${username}' (account type '${userType}'), and only admin and root users may scan. ${notAdminFix(keySetting)}`,
  );
}
