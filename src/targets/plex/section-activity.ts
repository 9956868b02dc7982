import type { Clock } from "../../core/clock.ts";
import { TargetAuthError } from "../../core/errors.ts";
import type { Logger } from "../../core/logger.ts";
import type { PlexClient } from "./client.ts";

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
