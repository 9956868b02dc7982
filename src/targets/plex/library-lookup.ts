import { TargetUnavailableError } from "../../core/errors.ts";
import type { Logger } from "../../core/logger.ts";
import type { LibraryLookup } from "../../core/target.ts";
import type { PlexClient } from "./client.ts";
import type { PlexSection, SectionActivity, SectionResolver } from "./sections.ts";

/**
 * Did the requested files land in Plex? Asked through Plex's API, never its database or the disks: the sections
 * holding each file are asked for the items at that file (`/library/sections/{id}/all?type=&file=`).
 *
 * Plex scans a section in the background after `refresh` answered, so the look first waits (bounded) until those
 * sections are idle; `settleMs` is only the few seconds Plex takes to list a scan it was just asked for (its activity
 * appears about a second after the request, integrations.md §3.1). Plex's `file=` filter is not an exact match (on a show section it
 * answers the whole season), so a file counts only when a returned `Part.file` equals it exactly.
 */
export interface PlexLibraryLookupOptions {
  readonly client: Pick<PlexClient, "filesInSection">;
  readonly sections: Pick<SectionResolver, "resolve">;
  readonly activity: Pick<SectionActivity, "waitUntilIdle">;
  readonly log: Logger;
  /** The wait for Plex's scan to end: poll every `idlePollMs` (default 5 s), at most `idleMaxMs` (default 5 min). */
  readonly idleMaxMs?: number;
  readonly idlePollMs?: number;
  /** Before the first look (default 5 s). */
  readonly settleMs?: number;
}

/**
 * Plex's item type number for the files a section holds. Photo sections are not asked: their items are not looked
 * up by file like this, and a photo library is not what autoscan scans for.
 */
const ITEM_TYPES: Readonly<Record<string, number>> = { movie: 1, show: 4, artist: 10 };

export function plexItemType(sectionType: string): number | undefined {
  return ITEM_TYPES[sectionType];
}

const DEFAULT_IDLE_POLL_MS = 5_000;
const DEFAULT_IDLE_MAX_MS = 5 * 60_000;
const DEFAULT_SETTLE_MS = 5_000;

export function createPlexLibraryLookup(options: PlexLibraryLookupOptions): LibraryLookup {
  const { client, sections, activity } = options;
  const log = options.log.child({ component: "PLEX" });

  /** The sections that can be asked about `file`, most specific first. */
  async function askable(file: string, signal: AbortSignal): Promise<{ section: PlexSection; type: number }[]> {
    const holding = await sections.resolve(file, signal);
    return holding.flatMap((section) => {
      const type = plexItemType(section.type);
      return type === undefined ? [] : [{ section, type }];
    });
  }

  return {
    settleMs: options.settleMs ?? DEFAULT_SETTLE_MS,
    async find(files, signal) {
      const asked = new Map<string, { section: PlexSection; type: number }[]>();
      for (const file of files) asked.set(file, await askable(file, signal));
      const ids = [...new Set([...asked.values()].flatMap((each) => each.map(({ section }) => section.id)))];
      if (ids.length > 0) {
        // A timeout is logged by the wait and the look goes on: a "no" now is looked at again later by the caller.
        await activity.waitUntilIdle(ids, {
          pollMs: options.idlePollMs ?? DEFAULT_IDLE_POLL_MS,
          maxMs: options.idleMaxMs ?? DEFAULT_IDLE_MAX_MS,
          signal,
          reason: "before looking the files up",
        });
      }
      if (signal.aborted) throw new TargetUnavailableError("Shutting down before the files were looked up in Plex");

      const found = new Map<string, boolean>();
      // Every file Plex listed during this look, per section. Its answer for one file is that file's neighbourhood
      // (a whole season on a show section), so one answer confirms the other episodes of a season pack exactly,
      // without asking again for each: one call per folder instead of one per file (a 250-file folder made 250
      // calls of 250 items each). A file not listed yet is always asked for itself.
      const listed = new Map<string, Set<string>>();
      for (const [file, holders] of asked) {
        let there = false;
        for (const { section, type } of holders) {
          let seen = listed.get(section.id);
          if (!seen) listed.set(section.id, (seen = new Set()));
          if (!seen.has(file)) for (const part of await client.filesInSection(section.id, type, file, signal)) seen.add(part);
          if (seen.has(file)) {
            there = true;
            break;
          }
        }
        if (holders.length === 0) log.debug({ path: file }, `'${file}' is in no Plex section that can be looked up`);
        else log.debug({ path: file, found: there }, `'${file}' is ${there ? "" : "not "}in Plex's library`);
        found.set(file, there);
      }
      return found;
    },
  };
}
