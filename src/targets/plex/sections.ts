import type { Clock } from "../../core/clock.ts";
import { TargetAuthError } from "../../core/errors.ts";
import { createListCache } from "../../core/list-cache.ts";
import { foldersHolding } from "../../paths/containment.ts";
import type { Logger } from "../../core/logger.ts";
import type { PlexClient } from "./client.ts";
import type { PlexSection } from "./wire-schemas.ts";

/**
 * Plex's library sections: which hold a folder, and which Plex is scanning now. The list is cached, refreshed every
 * `refreshMs` and on a miss (a library added after start-up must not need a restart: Cloudbox/autoscan#147, #198
 * fetched sections only at start).
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

/**
 * Is Plex busy scanning a section? Two signals (integrations.md §3.1): `Directory[].refreshing` on
 * `/library/sections`, and a `library.update.section` entry in `/activities`. The activity's `Context` (with
 * `librarySectionID`, a string or a number) only appears about a second after the scan starts, so an activity
 * without it counts as busy for every section.
 */
export interface SectionActivityOptions {
  readonly client: Pick<PlexClient, "listSections" | "activities">;
  readonly clock: Clock;
  readonly log: Logger;
}

export interface WaitOptions {
  readonly pollMs: number;
  /** Give up waiting after this long (the caller decides what that means). */
  readonly maxMs: number;
  readonly signal?: AbortSignal;
  /** For the log: why we wait ("before scanning", "for the scan to finish"). */
  readonly reason: string;
}

export type WaitResult = "idle" | "timeout" | "aborted";

export interface SectionActivity {
  /** The ids among `sectionIds` that Plex is scanning now. */
  busy(sectionIds: readonly string[], signal?: AbortSignal): Promise<string[]>;
  /** Polls until none of `sectionIds` is busy, or the bound is reached. */
  waitUntilIdle(sectionIds: readonly string[], options: WaitOptions): Promise<WaitResult>;
}

const SCAN_ACTIVITY = "library.update.section";

export function createSectionActivity(options: SectionActivityOptions): SectionActivity {
  const { client, clock } = options;
  const log = options.log.child({ component: "PLEX" });

  async function busy(sectionIds: readonly string[], signal?: AbortSignal): Promise<string[]> {
    const sections = await client.listSections(signal);
    const found = new Set(sections.filter((s) => s.refreshing && sectionIds.includes(s.id)).map((s) => s.id));
    for (const id of await scanningSections(signal)) {
      if (id === "*") sectionIds.forEach((each) => found.add(each));
      else if (sectionIds.includes(id)) found.add(id);
    }
    return sectionIds.filter((id) => found.has(id));
  }

  /** Section ids with a scan activity ("*" for one without context yet); [] when /activities cannot be read. */
  async function scanningSections(signal?: AbortSignal): Promise<string[]> {
    try {
      const activities = await client.activities(signal);
      return activities.filter((a) => a.type === SCAN_ACTIVITY).map((a) => a.sectionId ?? "*");
    } catch (error) {
      // An auth problem is everyone's problem; anything else here (an older PMS without /activities) is not.
      if (error instanceof TargetAuthError) throw error;
      log.debug({ err: error }, "Could not read Plex activities; relying on 'refreshing' alone");
      return [];
    }
  }

  return {
    busy,
    async waitUntilIdle(sectionIds, wait) {
      const started = clock.now();
      let announced = false;
      for (;;) {
        if (wait.signal?.aborted) return "aborted";
        const now = await busy(sectionIds, wait.signal);
        if (now.length === 0) {
          if (announced) log.info({ sections: sectionIds }, `Plex finished scanning; done waiting ${wait.reason}`);
          return "idle";
        }
        const waited = clock.now() - started;
        if (waited >= wait.maxMs) {
          log.warn(
            { sections: now, waitedMs: waited },
            `Plex is still scanning section(s) ${now.join(", ")} after ${Math.round(waited / 1000)} s; going on ${wait.reason}`,
          );
          return "timeout";
        }
        const line = `Plex is scanning section(s) ${now.join(", ")}. Checking again in ${Math.round(wait.pollMs / 1000)} seconds...`;
        if (announced) log.debug({ sections: now }, line);
        else log.info({ sections: now }, `Waiting ${wait.reason}: ${line}`);
        announced = true;
        await clock.sleep(Math.min(wait.pollMs, wait.maxMs - waited), wait.signal);
      }
    },
  };
}
