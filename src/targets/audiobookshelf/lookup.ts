import { TargetUnavailableError } from "../../core/errors.ts";
import type { LibraryLookup } from "../../core/target.ts";
import { normalizePath } from "../../paths/normalize.ts";
import type { AudiobookshelfClient } from "./client.ts";
import { startItemWalk } from "./item-walk.ts";

/**
 * Did the requested files land in an Audiobookshelf library? Asked through its items API, never the disks: the item
 * that holds the file (item-walk.ts), and then whether it does hold it — an item that *is* the file, or one whose own
 * file list (`GET /api/items/{id}`) names it (a chapter added to a known book is in the folder before the scan saw
 * it). An item whose files are gone is kept by Audiobookshelf, marked `isMissing`: it holds nothing (a deleted book
 * counts as gone).
 */
export interface AbsLookupOptions {
  readonly client: AudiobookshelfClient;
  /** How long after a scan the first look waits. */
  readonly settleMs: number;
  /** `Audiobookshelf 'abs'`, for messages. */
  readonly label: string;
  readonly pageSize?: number;
  readonly maxPages?: number;
}

/**
 * Watcher updates are batched for 10 s after each file's size settles (polled every 3 s), then scanned: half a minute
 * covers a book; a library scan of a large library needs longer, and the look is simply made again.
 */
export const ABS_LANDED_SETTLE_MS = 30_000;

export function createAbsLookup(options: AbsLookupOptions): LibraryLookup {
  const { client, label } = options;
  return {
    settleMs: options.settleMs,
    async find(files, signal) {
      const found = new Map<string, boolean>();
      if (files.length === 0) return found;
      if (signal.aborted) throw new TargetUnavailableError(`Shutting down before the files were looked up in ${label}`);
      const walk = startItemWalk({
        client,
        libraries: await client.libraries(signal),
        signal,
        label,
        ...(options.pageSize === undefined ? {} : { pageSize: options.pageSize }),
        ...(options.maxPages === undefined ? {} : { maxPages: options.maxPages }),
      });
      for (const file of files) {
        const item = await walk.owner(file);
        if (item === undefined || item.isMissing) {
          found.set(file, false);
          continue;
        }
        const key = normalizePath(file);
        found.set(file, normalizePath(item.path) === key || (!item.isFile && (await walk.files(item)).has(key)));
      }
      return found;
    },
  };
}
