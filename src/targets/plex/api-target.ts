import type { Clock } from "../../core/clock.ts";
import { TargetAuthError, TargetUnavailableError } from "../../core/errors.ts";
import type { Logger } from "../../core/logger.ts";
import type { ItemRefresher, LibraryLookup, ScanContext, ScanOutcome, Target } from "../../core/target.ts";
import type { AfterScan } from "./after-scan.ts";
import type { PlexClient } from "./client.ts";
import type { SectionActivity, SectionResolver } from "./sections.ts";
import { waitForPlex } from "./wait-for-plex.ts";

/**
 * The default target (`PLEX_SCAN_METHOD: "api"`): a partial scan of the folder in every Plex section that holds it,
 * most specific first, through `GET /library/sections/{id}/refresh?path=<folder>`. A folder in no section is a
 * logged skip with plex_autoscan's words; Plex itself would answer 200 and scan nothing (integrations.md §3.1).
 */
export interface PlexApiTargetOptions {
  readonly client: Pick<PlexClient, "serverInfo" | "refreshSection">;
  readonly sections: SectionResolver;
  readonly activity: SectionActivity;
  /** Analysis and emptying the trash once the scan is done; absent = neither. */
  readonly afterScan?: AfterScan;
  readonly clock: Clock;
  readonly log: Logger;
  /** `PLEX_CHECK_BEFORE_SCAN`: wait (bounded) until Plex answers before scanning. */
  readonly checkBeforeScan: boolean;
  /** `PLEX_WAIT_FOR_EXTERNAL_SCANNERS`: wait (bounded) while Plex is scanning the section already. */
  readonly waitForExternalScanners: boolean;
  /** Polling of those two waits (defaults: busy 10 s up to 10 min; availability 15 s up to 2 min). */
  readonly busyPollMs?: number;
  readonly busyMaxMs?: number;
  readonly availablePollMs?: number;
  readonly availableMaxMs?: number;
  /** Asks Plex's library whether requested files landed (the landed check); absent = the target cannot be asked. */
  readonly lookup?: LibraryLookup;
  /** Refresh in place of one item (refresh-asking requests, after the landed look saw it); absent = cannot. */
  readonly refresher?: ItemRefresher;
}

export function createPlexApiTarget(options: PlexApiTargetOptions): Target {
  const { client, sections, activity, clock } = options;
  const log = options.log.child({ component: "PLEX" });
  let lastAvailability: "up" | "down" | "auth" | undefined;

  async function scanSection(id: string, title: string, folder: string, context: ScanContext, log: Logger): Promise<void> {
    log.debug({ section: id, path: folder }, `Using Section ID '${id}' for '${folder}'`);
    if (options.waitForExternalScanners) {
      await activity.waitUntilIdle([id], {
        pollMs: options.busyPollMs ?? 10_000,
        maxMs: options.busyMaxMs ?? 10 * 60_000,
        signal: context.signal,
        reason: "before scanning",
      });
    }
    if (context.signal.aborted) throw new TargetUnavailableError("Shutting down before the scan was sent to Plex");
    await client.refreshSection(id, folder, context.signal);
    log.info({ section: id, path: folder }, `Scan requested for '${folder}' in section '${title}'`);
  }

  return {
    name: "plex",
    ...(options.lookup ? { lookup: options.lookup } : {}),
    ...(options.refresher ? { refresher: options.refresher } : {}),
    async scan(folder, context): Promise<ScanOutcome> {
      const matched = await sections.resolve(folder, context.signal);
      if (matched.length === 0) {
        log.warn({ path: folder }, `Unable to map '${folder}' to a Section ID.`);
        return { status: "skipped", reason: "the folder is in no Plex library section" };
      }
      if (options.checkBeforeScan) {
        await waitForPlex({
          client,
          clock,
          log,
          pollMs: options.availablePollMs ?? 15_000,
          maxMs: options.availableMaxMs ?? 2 * 60_000,
          signal: context.signal,
        });
      }
      for (const section of matched) await scanSection(section.id, section.title, folder, context, log);
      const ids = matched.map((section) => section.id);
      const notes = options.afterScan ? await options.afterScan.run(ids, context) : [];
      const detail = [`section${ids.length > 1 ? "s" : ""} ${ids.join(", ")}`, ...notes].join("; ");
      return { status: "scanned", detail };
    },
    async isAvailable() {
      let state: "up" | "down" | "auth";
      try {
        await client.serverInfo();
        state = "up";
      } catch (error) {
        if (!(error instanceof TargetUnavailableError || error instanceof TargetAuthError)) throw error;
        state = error instanceof TargetAuthError ? "auth" : "down";
        if (state !== lastAvailability) {
          if (state === "auth") log.error({ err: error }, "Plex rejected the token: check PLEX_TOKEN");
          else log.warn({ err: error }, "Plex is not available; scans wait in the queue");
        }
      }
      if (state === "up" && lastAvailability && lastAvailability !== "up") log.info("Plex is available again");
      lastAvailability = state;
      return state === "up";
    },
  };
}
