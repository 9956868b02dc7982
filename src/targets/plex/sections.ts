import type { Clock } from "../../core/clock.ts";
import { createListCache } from "../../core/list-cache.ts";
import { foldersHolding } from "../../paths/containment.ts";
import type { Logger } from "../../core/logger.ts";
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
  const cache = createListCache({
    load: (signal) => options.client.listSections(signal),
    clock: options.clock,
    log: options.log.child({ component: "PLEX" }),
    what: "the Plex sections",
    summary,
    refreshMs: options.refreshMs ?? DEFAULT_REFRESH_MS,
    missRefreshMs: options.missRefreshMs ?? DEFAULT_MISS_REFRESH_MS,
  });
  return {
    list: (signal) => cache.list(signal),
    refresh: (signal) => cache.refresh(signal),
    resolve: (folder, signal) => cache.find((sections) => matchSections(sections, folder), signal, folder),
  };
}

/**
 * The sections holding `folder`, matched on whole path segments (`/data/Movies` never holds `/data/Movies4K/x`,
 * Cloudbox/autoscan#101), every match kept (a folder shared by several libraries goes to all: #123), ordered by the
 * length of the matching location, longest (most specific) first. Windows locations compare case-insensitively.
 */
export function matchSections(sections: readonly PlexSection[], folder: string): PlexSection[] {
  return foldersHolding(sections, (section) => section.locations, folder);
}

function summary(section: PlexSection): string {
  return `${section.id}: ${section.title} [${section.locations.join(", ")}]`;
}
