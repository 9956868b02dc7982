import type { Clock } from "../../core/clock.ts";
import type { Logger } from "../../core/logger.ts";
import type { ScanContext } from "../../core/target.ts";
import type { Analyzer } from "./analyze.ts";
import type { TrashEmptier } from "./empty-trash.ts";
import type { LibraryGate } from "./library-gate.ts";
import type { SectionActivity } from "./sections.ts";

/**
 * What follows a delivered scan (analysis, emptying the trash), shared by the API and the scanner targets. Plex only
 * queues a partial scan, so this first waits — bounded — until Plex no longer reports the scanned sections busy
 * (`refreshing`, or a scan activity): a Plex that reports nothing is not waited for past the first look. Both steps
 * need Plex's database (`PLEX_DATABASE_PATH`); while it cannot be read (said once at start) nothing is waited for.
 * Nothing in here fails the scan: it was delivered, and repeating it would not help.
 */
export interface AfterScanOptions {
  readonly activity: SectionActivity;
  readonly analyzer: Analyzer;
  readonly trash: TrashEmptier;
  /** Whether Plex's database can be read now (both steps need it). */
  readonly gate: Pick<LibraryGate, "usable" | "state">;
  readonly clock: Clock;
  readonly log: Logger;
  /** Pause before the first busy check, so a queued scan has started (default 5 s). */
  readonly settleMs?: number;
  /** Busy polls while waiting for the scan to finish (default 10 s), and the bound on that wait (default 30 min). */
  readonly pollMs?: number;
  readonly maxWaitMs?: number;
}

export interface AfterScan {
  /** False when neither analysis nor emptying the trash is on: the target then skips the wait as well. */
  readonly enabled: boolean;
  /** Runs after the scans of `sectionIds` were requested; returns short notes for the outcome's detail. */
  run(sectionIds: readonly string[], context: ScanContext): Promise<string[]>;
}

export function createAfterScan(options: AfterScanOptions): AfterScan {
  const log = options.log.child({ component: "PLEX" });
  const { analyzer, trash, clock, activity } = options;
  const enabled = analyzer.enabled || trash.enabled;

  return {
    enabled,
    async run(sectionIds, context) {
      if (!enabled || sectionIds.length === 0) return [];
      if (!(await options.gate.usable())) {
        log.debug({ sections: sectionIds }, "Skipping analysis and trash: Plex's database cannot be read (said at start)");
        // The default setup (analysis on, no database mounted) is not a fault: no note on every History row.
        return options.gate.state().quiet ? [] : ["after-scan steps skipped: Plex's database cannot be read"];
      }
      const { signal } = context;
      await clock.sleep(options.settleMs ?? 5_000, signal);
      try {
        const waited = await activity.waitUntilIdle(sectionIds, {
          pollMs: options.pollMs ?? 10_000,
          maxMs: options.maxWaitMs ?? 30 * 60_000,
          signal,
          reason: "for the scan to finish",
        });
        if (waited === "aborted") return ["after-scan steps skipped: shutting down"];
      } catch (error) {
        log.warn({ err: error }, "Could not tell whether Plex finished the scan; skipping analysis and trash");
        return ["after-scan steps skipped: Plex did not answer"];
      }
      const notes: string[] = [];
      const analyzed = await analyzer.analyze(context.files, signal);
      if (analyzed) notes.push(analyzed);
      const upgrade = context.sources.some((source) => /upgrade/i.test(source.event));
      for (const sectionId of sectionIds) {
        const emptied = await trash.empty(sectionId, { upgrade, signal });
        if (emptied) notes.push(`section ${sectionId}: ${emptied}`);
      }
      return notes;
    },
  };
}
