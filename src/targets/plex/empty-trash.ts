import { access } from "node:fs/promises";
import type { Clock } from "../../core/clock.ts";
import { describeError, TargetAuthError } from "../../core/errors.ts";
import type { Logger } from "../../core/logger.ts";
import type { PlexClient } from "./client.ts";
import type { LibraryIndex } from "./library-db.ts";
import type { LibraryGate } from "./library-gate.ts";

/**
 * `PLEX_EMPTY_TRASH*` after a scan, per scanned section, with plex_autoscan's guards (plex_autoscan.md §3 step 9):
 * every control file must exist (a dropped mount makes the whole library look deleted, and emptying the trash
 * then would remove it from Plex), the section's deleted count must not exceed `PLEX_EMPTY_TRASH_MAX_FILES`, and a
 * count of 0 empties only with `PLEX_EMPTY_TRASH_ZERO_DELETED` or for an upgrade. `PUT …/emptyTrash` is retried.
 */
export interface TrashEmptierOptions {
  readonly enabled: boolean;
  /** `PLEX_EMPTY_TRASH_MAX_FILES`; 0 turns emptying off, as in plex_autoscan. */
  readonly maxFiles: number;
  /** `PLEX_EMPTY_TRASH_CONTROL_FILES`, as autoscan sees them on its own disk. */
  readonly controlFiles: readonly string[];
  readonly zeroDeleted: boolean;
  /**
   * Whether a control file is there. The service passes its disk probe (bounded in time and threads: control files
   * sit on the very mounts that may hang); an answer that does not come counts as missing, which keeps the trash.
   */
  readonly exists?: (path: string) => Promise<boolean>;
  /**
   * `SERVER_ANCHORS`: the missing anchor guarding a folder (server form), from memory. A section with a folder under
   * a missing anchor keeps its trash: its files there look deleted only because the mount is down.
   */
  readonly guard?: (serverFolder: string) => { readonly anchor: string } | undefined;
  /** The section's folders (server form), for `guard`; `undefined` when the section is not known. */
  readonly sectionLocations?: (sectionId: string, signal?: AbortSignal) => Promise<readonly string[] | undefined>;
  readonly client: Pick<PlexClient, "emptyTrash">;
  /** Counts the deleted items (`PLEX_DATABASE_PATH`); without it the count cannot be checked, so nothing is emptied. */
  readonly library?: LibraryIndex;
  /** Whether `library` can be read now; it says once why not (the start-up check), so the trash is kept quietly. */
  readonly gate: Pick<LibraryGate, "usable" | "failed">;
  readonly clock: Clock;
  readonly log: Logger;
  /** `PUT emptyTrash` attempts (default 5) and the pause between them (10 s). */
  readonly tries?: number;
  readonly retryDelayMs?: number;
}

export interface TrashEmptier {
  readonly enabled: boolean;
  /** Empties the section's trash if every guard allows it; logs and never throws. Returns a short note. */
  empty(sectionId: string, context: { upgrade: boolean; signal?: AbortSignal }): Promise<string | undefined>;
}

const KEPT = "trash kept: Plex's database cannot be read";

export function createTrashEmptier(options: TrashEmptierOptions): TrashEmptier {
  const log = options.log.child({ component: "PLEX" });
  const enabled = options.enabled && options.maxFiles > 0;
  const tries = Math.max(1, options.tries ?? 5);
  const delayMs = options.retryDelayMs ?? 10_000;
  // The same failure at every scan is told once, then again only when it changes.
  let lastFailure: string | undefined;

  const exists =
    options.exists ??
    ((path: string) =>
      access(path).then(
        () => true,
        () => false,
      ));

  async function missingControlFile(): Promise<string | undefined> {
    for (const file of options.controlFiles) {
      const present = await exists(file);
      if (!present) return file;
    }
    return undefined;
  }

  /** Why the section's trash must wait for an anchor, if it must (logged here, once per refusal). */
  async function heldByAnchor(sectionId: string, signal?: AbortSignal): Promise<string | undefined> {
    const { guard } = options;
    if (!guard) return undefined;
    let locations: readonly string[] | undefined;
    try {
      locations = await options.sectionLocations?.(sectionId, signal);
    } catch (error) {
      log.warn({ err: error, section: sectionId }, `Skipping emptying trash: could not list the folders of section '${sectionId}' to check SERVER_ANCHORS (${describeError(error)})`);
      return "trash kept: the section's folders could not be checked against the anchors";
    }
    if (locations === undefined) {
      log.warn({ section: sectionId }, `Skipping emptying trash: section '${sectionId}' is not in Plex's list, so its folders cannot be checked against SERVER_ANCHORS`);
      return "trash kept: the section's folders could not be checked against the anchors";
    }
    for (const location of locations) {
      const held = guard(location);
      if (!held) continue;
      log.warn(
        { section: sectionId, anchor: held.anchor, location },
        `Skipping emptying trash as anchor '${held.anchor}' is missing (section folder '${location}'): is the mount down?`,
      );
      return `trash kept: anchor '${held.anchor}' is missing`;
    }
    return undefined;
  }

  async function put(sectionId: string, signal?: AbortSignal): Promise<boolean> {
    for (let attempt = 1; attempt <= tries; attempt++) {
      try {
        await options.client.emptyTrash(sectionId, signal);
        return true;
      } catch (error) {
        const last = attempt === tries || error instanceof TargetAuthError || signal?.aborted;
        log.warn({ err: error, section: sectionId, attempt }, `Emptying the trash failed (attempt ${attempt} of ${tries})`);
        if (last) return false;
        await options.clock.sleep(delayMs, signal);
      }
    }
    return false;
  }

  async function empty(sectionId: string, context: { upgrade: boolean; signal?: AbortSignal }) {
    const missing = await missingControlFile();
    if (missing !== undefined) {
      log.warn({ section: sectionId, controlFile: missing }, `Skipping emptying trash as control file is not present: '${missing}'`);
      return "trash kept: a control file is missing";
    }
    const anchorNote = await heldByAnchor(sectionId, context.signal);
    if (anchorNote !== undefined) return anchorNote;
    if (!options.library || !(await options.gate.usable())) {
      log.debug({ section: sectionId }, "Keeping the trash: Plex's database cannot be read to count deleted items (said at start)");
      return KEPT;
    }
    let deleted: number;
    try {
      deleted = await options.library.countDeleted(sectionId);
    } catch (error) {
      // The mount may have gone: the gate looks again and says so once; then this is no news.
      if (!(await options.gate.failed(error))) return KEPT;
      throw error;
    }
    if (deleted > options.maxFiles) {
      log.warn(
        { section: sectionId, deleted, max: options.maxFiles },
        `Skipping emptying trash as there were ${deleted} deleted items (PLEX_EMPTY_TRASH_MAX_FILES is ${options.maxFiles})`,
      );
      return `trash kept: ${deleted} deleted items`;
    }
    if (deleted === 0 && !options.zeroDeleted && !context.upgrade) {
      log.debug({ section: sectionId }, "Skipping emptying trash as there were no deleted items");
      return undefined;
    }
    log.info({ section: sectionId, deleted }, `Emptying trash to clear ${deleted} deleted items...`);
    const done = await put(sectionId, context.signal);
    if (done) log.info({ section: sectionId }, `Emptied trash for section '${sectionId}'`);
    return done ? `trash emptied (${deleted})` : "emptying trash failed";
  }

  return {
    enabled,
    async empty(sectionId, context) {
      if (!enabled) return undefined;
      try {
        const note = await empty(sectionId, context);
        lastFailure = undefined;
        return note;
      } catch (error) {
        const why = describeError(error);
        if (why !== lastFailure) {
          log.error({ err: error, section: sectionId }, `Emptying the trash failed: ${why} (Said once until the cause changes.)`);
        } else {
          log.debug({ err: error, section: sectionId }, "Emptying the trash failed again (same cause)");
        }
        lastFailure = why;
        return `emptying trash failed: ${why}`;
      }
    },
  };
}
