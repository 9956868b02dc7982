import type { Clock } from "../core/clock.ts";
import type { Logger } from "../core/logger.ts";
import { isWindowsPath, normalizePath, withTrailingSlash } from "../paths/normalize.ts";
import type { PlexSection } from "./wire-schemas.ts";

/**
 * Which Plex sections hold a folder. The list is cached, refreshed every `refreshMs` and on a miss (a library added
 * after start-up must not need a restart: Cloudbox/autoscan#147, #198 fetched sections only at start).
 */
export type { PlexSection } from "./wire-schemas.ts";

/** Anything that can list sections: the Plex client. */
export interface SectionSource {
  listSections(signal?: AbortSignal): Promise<PlexSection[]>;
}

export interface SectionResolverOptions {
  readonly client: SectionSource;
  readonly clock: Clock;
  readonly log: Logger;
  /** Age after which the cached list is fetched again before use (default 5 min). */
  readonly refreshMs?: number;
  /** A miss fetches the list again unless it is younger than this (default 10 s), so a stream of unmapped paths
   * does not turn into a stream of section listings. */
  readonly missRefreshMs?: number;
}

export interface SectionResolver {
  /** Every section with a location that holds `folder` (server form), most specific location first; `[]` if none. */
  resolve(folder: string, signal?: AbortSignal): Promise<PlexSection[]>;
  /** The sections, from the cache when it is fresh. */
  list(signal?: AbortSignal): Promise<PlexSection[]>;
  /** Fetches the list now. */
  refresh(signal?: AbortSignal): Promise<PlexSection[]>;
}

const DEFAULT_REFRESH_MS = 5 * 60_000;
const DEFAULT_MISS_REFRESH_MS = 10_000;

export function createSectionResolver(options: SectionResolverOptions): SectionResolver {
  const { client, clock } = options;
  const log = options.log.child({ component: "PLEX" });
  const refreshMs = options.refreshMs ?? DEFAULT_REFRESH_MS;
  const missRefreshMs = options.missRefreshMs ?? DEFAULT_MISS_REFRESH_MS;
  let cache: { sections: PlexSection[]; fetchedAt: number } | undefined;
  let inFlight: Promise<PlexSection[]> | undefined;

  function refresh(signal?: AbortSignal): Promise<PlexSection[]> {
    // Concurrent callers share one request.
    inFlight ??= client
      .listSections(signal)
      .then((sections) => {
        const changed = !cache || describe(cache.sections) !== describe(sections);
        cache = { sections, fetchedAt: clock.now() };
        if (changed) log.debug({ sections: sections.map(summary) }, "Loaded Plex sections");
        return sections;
      })
      .finally(() => {
        inFlight = undefined;
      });
    return inFlight;
  }

  async function list(signal?: AbortSignal): Promise<PlexSection[]> {
    if (cache && clock.now() - cache.fetchedAt < refreshMs) return cache.sections;
    try {
      return await refresh(signal);
    } catch (error) {
      // A stale list beats no list while Plex is briefly away; the scan itself will then tell whether Plex is up.
      if (!cache) throw error;
      log.warn({ err: error }, "Could not refresh the Plex sections; using the list from before");
      return cache.sections;
    }
  }

  return {
    list,
    refresh,
    async resolve(folder, signal) {
      const sections = await list(signal);
      const found = matchSections(sections, folder);
      if (found.length > 0 || !cache || clock.now() - cache.fetchedAt < missRefreshMs) return found;
      log.debug({ folder }, "No section holds this folder; fetching the section list again");
      return matchSections(await refresh(signal), folder);
    },
  };
}

/**
 * The sections holding `folder`, matched on whole path segments (`/data/Movies` never holds `/data/Movies4K/x`,
 * Cloudbox/autoscan#101), every match kept (a folder shared by several libraries goes to all: #123), ordered by the
 * length of the matching location, longest (most specific) first. Windows locations compare case-insensitively.
 */
export function matchSections(sections: readonly PlexSection[], folder: string): PlexSection[] {
  const path = normalizePath(folder);
  const scored: { section: PlexSection; depth: number; order: number }[] = [];
  sections.forEach((section, order) => {
    const depth = Math.max(-1, ...section.locations.map((location) => containment(location, path)));
    if (depth >= 0) scored.push({ section, depth, order });
  });
  return scored.sort((a, b) => b.depth - a.depth || a.order - b.order).map((entry) => entry.section);
}

/** Length of `location` when it holds `path` (or is it), else -1. */
function containment(rawLocation: string, path: string): number {
  const location = withTrailingSlash(normalizePath(rawLocation));
  const fold = isWindowsPath(location);
  const a = fold ? path.toLowerCase() : path;
  const b = fold ? location.toLowerCase() : location;
  if (withTrailingSlash(a) === b || a.startsWith(b)) return location.length;
  return -1;
}

function summary(section: PlexSection): string {
  return `${section.id}: ${section.title} [${section.locations.join(", ")}]`;
}

function describe(sections: readonly PlexSection[]): string {
  return sections.map(summary).join("\n");
}
