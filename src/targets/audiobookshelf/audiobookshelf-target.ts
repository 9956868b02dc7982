import type { Clock } from "../../core/clock.ts";
import { TargetUnavailableError } from "../../core/errors.ts";
import type { Logger } from "../../core/logger.ts";
import type { ScanContext, ScanOutcome, Target } from "../../core/target.ts";
import { containment } from "../../paths/containment.ts";
import { normalizePath, withoutTrailingSlash } from "../../paths/normalize.ts";
import { createAvailabilityCheck } from "../availability.ts";
import { createAudiobookshelfClient, type WatcherChange } from "./client.ts";
import { createAbsLibraryCache, type AbsLibraryFolder } from "./libraries.ts";
import { createAbsItemRefresher } from "./item-refresh.ts";
import { ABS_LANDED_SETTLE_MS, createAbsLookup } from "./lookup.ts";

/**
 * An Audiobookshelf server (`TARGETS.<name>.TYPE: "audiobookshelf"`, refresh-fastpath-targets.md §5). Its own file
 * watcher misses files on NFS/SMB/rclone mounts, so autoscan tells it:
 * - the library's watcher is on: each requested file goes to `POST /api/watcher/update` (`add`, or `unlink` for a
 *   delete), the same queue the watcher feeds: Audiobookshelf scans only the book folders those files are in;
 * - the watcher is off (the library's or the whole server's switch), or the request names a folder and no file: the
 *   library scan, `POST /api/libraries/{id}/scan`. Audiobookshelf drops that request silently while a scan of the
 *   library runs, so the running scans are asked first (`GET /api/tasks`): a scan running there fails this delivery
 *   with `AbsScanRunningError`, and the queue sends it again after its backoff (a scan that already runs may have
 *   listed the folder before the new files came).
 * A folder in no library is a logged skip. Whether the files landed is asked through the items API (lookup.ts); a
 * refresh in place rescans the book's folder alone (item-refresh.ts).
 */
export interface AudiobookshelfTargetOptions {
  /** The target's name in logs and the queue. */
  readonly name: string;
  readonly url: string;
  readonly apiKey: string;
  readonly timeoutMs?: number;
  readonly clock: Clock;
  readonly log: Logger;
  /** The library list's refresh and its refresh on a miss (defaults 5 min and 10 s). */
  readonly libraryRefreshMs?: number;
  readonly libraryMissRefreshMs?: number;
  /** How long after a scan the "did it land" look first waits (default 30 s). */
  readonly landedSettleMs?: number;
}

/** A scan of the library runs now: Audiobookshelf would drop ours without a word. Sent again after the backoff. */
export class AbsScanRunningError extends Error {
  override name = "AbsScanRunningError";
}

export function createAudiobookshelfTarget(options: AudiobookshelfTargetOptions): Target {
  const { name } = options;
  const label = `Audiobookshelf '${name}'`;
  const keySetting = `TARGETS.${name}.API_KEY`;
  const log = options.log.child({ component: "TARGET" });
  const fields = { target: name };
  const client = createAudiobookshelfClient({
    url: options.url,
    apiKey: options.apiKey,
    label,
    keySetting,
    urlSetting: `TARGETS.${name}.URL`,
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
  });
  const libraries = createAbsLibraryCache({
    client,
    clock: options.clock,
    log,
    fields,
    label,
    keySetting,
    ...(options.libraryRefreshMs === undefined ? {} : { refreshMs: options.libraryRefreshMs }),
    ...(options.libraryMissRefreshMs === undefined ? {} : { missRefreshMs: options.libraryMissRefreshMs }),
  });

  /** The requested files inside the folder, each with the change the watcher is told; none for a folder request. */
  function changesIn(folder: string, context: ScanContext): { path: string; type: WatcherChange }[] {
    // Compared in one spelling, sent as received (a name's bytes are the server's to match).
    const deleted = new Set(context.sources.filter((source) => source.deleted).map((source) => normalizePath(source.path)));
    const self = withoutTrailingSlash(normalizePath(folder));
    const byPath = new Map<string, string>();
    for (const file of context.files) {
      const key = normalizePath(file);
      if (key !== self && containment(folder, key) >= 0 && !byPath.has(key)) byPath.set(key, file);
    }
    return [...byPath].map(([key, path]) => ({ path, type: deleted.has(key) ? "unlink" : "add" }));
  }

  async function libraryScan(library: AbsLibraryFolder, why: string, signal: AbortSignal): Promise<string> {
    const running = await client.runningScans(signal);
    if (running?.has(library.libraryId)) {
      throw new AbsScanRunningError(
        `${label} is already scanning library '${library.library}', and drops a scan request unseen while it does`,
      );
    }
    await client.scanLibrary(library.libraryId, signal);
    log.info({ ...fields, library: library.library, why }, `Library scan of '${library.library}' requested in ${label} (${why})`);
    return `library '${library.library}': library scan (${why})`;
  }

  return {
    name,
    async scan(folder, context): Promise<ScanOutcome> {
      const matched = await libraries.resolve(folder, context.signal);
      if (matched.length === 0) {
        log.warn({ ...fields, path: folder }, `Unable to map '${folder}' to a ${label} library.`);
        return { status: "skipped", reason: `the folder is in no ${name} library` };
      }
      if (context.signal.aborted) throw new TargetUnavailableError(`Shutting down before the scan was sent to ${label}`);
      // The same folder in two libraries is rare but possible: each library gets the call, each once.
      const byLibrary = [...new Map(matched.map((entry) => [entry.libraryId, entry])).values()];
      const changes = changesIn(folder, context);
      const details: string[] = [];
      for (const library of byLibrary) {
        if (!library.watcher) {
          details.push(await libraryScan(library, "its file watcher is off", context.signal));
          continue;
        }
        if (changes.length === 0) {
          details.push(await libraryScan(library, "a folder with no file named", context.signal));
          continue;
        }
        for (const change of changes) await client.watcherUpdate(library.libraryId, change.path, change.type, context.signal);
        const count = `${changes.length} file${changes.length === 1 ? "" : "s"}`;
        log.info({ ...fields, path: folder, library: library.library, files: changes.length }, `Sent ${count} in '${folder}' to the watcher of ${label}, library '${library.library}'`);
        details.push(`library '${library.library}': watcher update (${count})`);
      }
      return { status: "scanned", detail: details.join("; ") };
    },
    isAvailable: createAvailabilityCheck({
      label,
      authKey: keySetting,
      log,
      fields,
      probe: async () => void (await client.libraries()),
    }),
    lookup: createAbsLookup({ client, label, settleMs: options.landedSettleMs ?? ABS_LANDED_SETTLE_MS }),
    refresher: createAbsItemRefresher({ client, label }),
  };
}
