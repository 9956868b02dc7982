import type { Clock } from "../core/clock.ts";
import type { Logger } from "../core/logger.ts";
import { createListCache } from "../core/list-cache.ts";
import { foldersHolding } from "../paths/containment.ts";

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
  const cache = createListCache({
    load: options.load,
    clock: options.clock,
    log: options.log,
    fields: options.fields,
    what: "the library folders",
    summary,
    refreshMs: options.refreshMs ?? DEFAULT_REFRESH_MS,
    missRefreshMs: options.missRefreshMs ?? DEFAULT_MISS_REFRESH_MS,
  });
  return {
    list: (signal) => cache.list(signal),
    resolve: (folder, signal) => cache.find((folders) => matchLibraryFolders(folders, folder), signal, folder),
  };
}

/**
 * The library folders holding `folder`: the rule of Plex's sections (src/paths/containment.ts), which every server
 * applies to the path it is sent.
 */
export function matchLibraryFolders(folders: readonly LibraryFolder[], folder: string): LibraryFolder[] {
  return foldersHolding(folders, (entry) => [entry.path], folder);
}

/** The names of the libraries behind some matches, each once, for a log line or a scan detail. */
export function libraryNames(matches: readonly LibraryFolder[]): string[] {
  return [...new Set(matches.map((match) => match.library))];
}

function summary(entry: LibraryFolder): string {
  return `${entry.library}: ${entry.path}`;
}
