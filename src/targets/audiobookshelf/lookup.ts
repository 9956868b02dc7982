import { TargetUnavailableError } from "../../core/errors.ts";
import type { LibraryLookup } from "../../core/target.ts";
import { containment, foldersHolding } from "../../paths/containment.ts";
import { normalizePath } from "../../paths/normalize.ts";
import type { AudiobookshelfClient } from "./client.ts";
import type { AbsItem } from "./wire-schemas.ts";

/**
 * Did the requested files land in an Audiobookshelf library? Asked through its items API, never the disks.
 *
 * Audiobookshelf cannot find an item by path, so the library's items are read page by page, newest first
 * (`GET /api/libraries/{id}/items?sort=addedAt&desc=1&minified=1`: what a scan just added is on the first page). An
 * item is a book's or a podcast's folder (or one file, for a book lying loose in the library folder): a file is there
 * when an item *is* it, or when an item's folder holds it and the item's own file list (`GET /api/items/{id}`) names
 * it (a chapter added to a known book is in the folder before the scan saw it). An item whose files are gone is kept,
 * marked `isMissing`: it holds nothing (a deleted book counts as gone). The walk is bounded: a library larger
 * than `maxPages` pages answers "not there" for older items, never a long crawl. Within one `find`, pages and file lists
 * are kept, so the files of one book share their calls.
 */
export interface AbsLookupOptions {
  readonly client: AudiobookshelfClient;
  /** How long after a scan the first look waits. */
  readonly settleMs: number;
  /** `Audiobookshelf 'abs'`, for messages. */
  readonly label: string;
  /** Items per page (default 200) and pages per library (default 25: the 5000 newest items). */
  readonly pageSize?: number;
  readonly maxPages?: number;
}

const DEFAULT_PAGE_SIZE = 200;
const DEFAULT_MAX_PAGES = 25;

/**
 * Watcher updates are batched for 10 s after each file's size settles (polled every 3 s), then scanned: half a minute
 * covers a book; a library scan of a large library needs longer, and the look is simply made again.
 */
export const ABS_LANDED_SETTLE_MS = 30_000;

export function createAbsLookup(options: AbsLookupOptions): LibraryLookup {
  const { client, label } = options;
  const pageSize = options.pageSize ?? DEFAULT_PAGE_SIZE;
  const maxPages = options.maxPages ?? DEFAULT_MAX_PAGES;

  return {
    settleMs: options.settleMs,
    async find(files, signal) {
      const found = new Map<string, boolean>();
      if (files.length === 0) return found;
      const shutdown = (): Error => new TargetUnavailableError(`Shutting down before the files were looked up in ${label}`);
      if (signal.aborted) throw shutdown();
      const libraries = await client.libraries(signal);
      const folders = libraries.flatMap((library) => library.folders.map((path) => ({ id: library.id, path })));
      const pages = new Map<string, { items: AbsItem[]; next: number; done: boolean }>();
      const fileLists = new Map<string, Set<string>>();

      /** The next page of a library's items, or `false` when there is none (or the bound is reached). */
      async function morePages(libraryId: string): Promise<boolean> {
        const state = pages.get(libraryId) ?? { items: [], next: 0, done: false };
        pages.set(libraryId, state);
        if (state.done || state.next >= maxPages) return false;
        if (signal.aborted) throw shutdown();
        const page = await client.itemsPage(libraryId, state.next, pageSize, signal);
        state.items.push(...page.items);
        state.next += 1;
        state.done = page.items.length < pageSize || (page.total !== undefined && state.next * pageSize >= page.total);
        return true;
      }

      async function holds(item: AbsItem, file: string): Promise<boolean> {
        if (item.isMissing) return false;
        if (normalizePath(item.path) === file) return true;
        if (item.isFile) return false;
        let list = fileLists.get(item.id);
        if (!list) {
          list = new Set((await client.itemFiles(item.id, signal)).map(normalizePath));
          fileLists.set(item.id, list);
        }
        return list.has(file);
      }

      for (const raw of files) {
        const file = normalizePath(raw);
        const library = foldersHolding(folders, (folder) => [folder.path], file)[0];
        let there = false;
        if (library) {
          let seen = 0;
          for (;;) {
            const items = pages.get(library.id)?.items ?? [];
            const owner = items.slice(seen).find((item) => normalizePath(item.path) === file || (!item.isFile && containment(item.path, file) >= 0));
            if (owner) {
              there = await holds(owner, file);
              break;
            }
            seen = items.length;
            if (!(await morePages(library.id))) break;
          }
        }
        found.set(raw, there);
      }
      return found;
    },
  };
}
