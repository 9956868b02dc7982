import type { Clock } from "../core/clock.ts";
import type { Logger } from "../core/logger.ts";
import { isWindowsPath, normalizePath, withTrailingSlash } from "../paths/normalize.ts";

/**
 * Which libraries of a Jellyfin or Emby server hold a folder. The servers find the library themselves from the path
 * we send; we ask only so that a folder in no library is a logged skip (as Plex's "Unable to map") instead of a call
 * the server silently ignores. The list is cached, fetched again every `refreshMs` and on a miss (a library added
 * after start-up must not need a restart), but not more often than every `missRefreshMs`.
 */
export interface LibraryFolder {
  /** The library's name, for logs. */
  readonly library: string;
  /** One of its folders, in the server's path form. */
  readonly path: string;
}

export interface LibraryFolderCacheOptions {
  /** Fetches every library folder of the server. */
  readonly load: (signal?: AbortSignal) => Promise<LibraryFolder[]>;
  readonly clock: Clock;
  readonly log: Logger;
  /** Fields on every line (`{ target: "jellyfin" }`). */
  readonly fields: Readonly<Record<string, unknown>>;
  /** Age after which the cached list is fetched again before use (default 5 min). */
  readonly refreshMs?: number;
  /** A miss fetches the list again unless it is younger than this (default 10 s). */
  readonly missRefreshMs?: number;
}

export interface LibraryFolderCache {
  /** Every library folder that holds `folder`, most specific first; `[]` if none. */
  resolve(folder: string, signal?: AbortSignal): Promise<LibraryFolder[]>;
  /** The folders, from the cache when it is fresh. */
  list(signal?: AbortSignal): Promise<LibraryFolder[]>;
}

const DEFAULT_REFRESH_MS = 5 * 60_000;
const DEFAULT_MISS_REFRESH_MS = 10_000;

export function createLibraryFolderCache(options: LibraryFolderCacheOptions): LibraryFolderCache {
  const { clock, log, fields } = options;
  const refreshMs = options.refreshMs ?? DEFAULT_REFRESH_MS;
  const missRefreshMs = options.missRefreshMs ?? DEFAULT_MISS_REFRESH_MS;
  let cache: { folders: LibraryFolder[]; fetchedAt: number } | undefined;
  let inFlight: Promise<LibraryFolder[]> | undefined;

  function refresh(signal?: AbortSignal): Promise<LibraryFolder[]> {
    // Concurrent callers share one request.
    inFlight ??= options
      .load(signal)
      .then((folders) => {
        const changed = !cache || describe(cache.folders) !== describe(folders);
        cache = { folders, fetchedAt: clock.now() };
        if (changed) log.debug({ ...fields, libraries: folders.map(summary) }, "Loaded the library folders");
        return folders;
      })
      .finally(() => {
        inFlight = undefined;
      });
    return inFlight;
  }

  async function list(signal?: AbortSignal): Promise<LibraryFolder[]> {
    if (cache && clock.now() - cache.fetchedAt < refreshMs) return cache.folders;
    try {
      return await refresh(signal);
    } catch (error) {
      // A stale list beats no list while the server is briefly away; the scan itself then tells whether it is up.
      if (!cache) throw error;
      log.warn({ ...fields, err: error }, "Could not refresh the library folders; using the list from before");
      return cache.folders;
    }
  }

  return {
    list,
    async resolve(folder, signal) {
      const found = matchLibraryFolders(await list(signal), folder);
      if (found.length > 0 || !cache || clock.now() - cache.fetchedAt < missRefreshMs) return found;
      log.debug({ ...fields, path: folder }, "No library holds this folder; fetching the library folders again");
      return matchLibraryFolders(await refresh(signal), folder);
    },
  };
}

/**
 * The library folders holding `folder`, matched on whole path segments (`/data/Movies` never holds
 * `/data/Movies4K/x`), every match kept, the longest (most specific) first; Windows paths compare case-insensitively.
 * The same rule as Plex's sections (src/plex/sections.ts `matchSections`).
 */
export function matchLibraryFolders(folders: readonly LibraryFolder[], folder: string): LibraryFolder[] {
  const path = normalizePath(folder);
  const scored: { entry: LibraryFolder; depth: number; order: number }[] = [];
  folders.forEach((entry, order) => {
    const depth = containment(entry.path, path);
    if (depth >= 0) scored.push({ entry, depth, order });
  });
  return scored.sort((a, b) => b.depth - a.depth || a.order - b.order).map((scoredEntry) => scoredEntry.entry);
}

/** Length of `location` when it holds `path` (or is it), else -1. */
function containment(rawLocation: string, path: string): number {
  if (rawLocation.length === 0) return -1;
  const location = withTrailingSlash(normalizePath(rawLocation));
  const fold = isWindowsPath(location);
  const a = fold ? path.toLowerCase() : path;
  const b = fold ? location.toLowerCase() : location;
  if (withTrailingSlash(a) === b || a.startsWith(b)) return location.length;
  return -1;
}

/** The names of the libraries behind some matches, each once, for a log line or a scan detail. */
export function libraryNames(matches: readonly LibraryFolder[]): string[] {
  return [...new Set(matches.map((match) => match.library))];
}

function summary(entry: LibraryFolder): string {
  return `${entry.library}: ${entry.path}`;
}

function describe(folders: readonly LibraryFolder[]): string {
  return folders.map(summary).join("\n");
}
