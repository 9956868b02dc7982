import { TargetUnavailableError } from "../../core/errors.ts";
import { containment, foldersHolding } from "../../paths/containment.ts";
import { normalizePath } from "../../paths/normalize.ts";
import type { AudiobookshelfClient } from "./client.ts";
import type { AbsItem, AbsLibrary } from "./wire-schemas.ts";

/**
 * Which Audiobookshelf item holds a file, asked through its items API (it cannot find an item by path). A library's
 * items are read page by page, newest first (`GET /api/libraries/{id}/items?sort=addedAt&desc=1&minified=1`: what a
 * scan just added is on the first page), until an item *is* the file (a book lying loose in the library folder) or its
 * folder holds it (a book's or a podcast's folder). The walk is bounded: in a library larger than `maxPages` pages,
 * older items are "not found", never a long crawl. Pages and file lists are kept for the walk's life (one look), so
 * the files of one book share their calls. Paths are compared in one spelling (normalize.ts).
 */
export interface AbsItemWalkOptions {
  readonly client: AudiobookshelfClient;
  /** The server's libraries, read once for this walk. */
  readonly libraries: readonly AbsLibrary[];
  readonly signal: AbortSignal;
  /** For the shutdown message: `Audiobookshelf 'abs'`. */
  readonly label: string;
  /** Items per page (default 200) and pages per library (default 25: the 5000 newest items). */
  readonly pageSize?: number;
  readonly maxPages?: number;
}

export interface AbsItemWalk {
  /** The item that is the file or whose folder holds it; `undefined` when none is (within the bound). */
  owner(file: string): Promise<AbsItem | undefined>;
  /** The item's files (`GET /api/items/{id}`), normalized. */
  files(item: AbsItem): Promise<ReadonlySet<string>>;
}

const DEFAULT_PAGE_SIZE = 200;
const DEFAULT_MAX_PAGES = 25;

export function startItemWalk(options: AbsItemWalkOptions): AbsItemWalk {
  const { client, signal } = options;
  const pageSize = options.pageSize ?? DEFAULT_PAGE_SIZE;
  const maxPages = options.maxPages ?? DEFAULT_MAX_PAGES;
  const folders = options.libraries.flatMap((library) => library.folders.map((path) => ({ id: library.id, path })));
  const pages = new Map<string, { items: AbsItem[]; next: number; done: boolean }>();
  const fileLists = new Map<string, ReadonlySet<string>>();
  const checkSignal = (): void => {
    if (signal.aborted) throw new TargetUnavailableError(`Shutting down before the files were looked up in ${options.label}`);
  };

  /** The next page of a library's items; `false` when there is none (or the bound is reached). */
  async function morePages(libraryId: string): Promise<boolean> {
    const state = pages.get(libraryId) ?? { items: [], next: 0, done: false };
    pages.set(libraryId, state);
    if (state.done || state.next >= maxPages) return false;
    checkSignal();
    const page = await client.itemsPage(libraryId, state.next, pageSize, signal);
    state.items.push(...page.items);
    state.next += 1;
    state.done = page.items.length < pageSize || (page.total !== undefined && state.next * pageSize >= page.total);
    return true;
  }

  return {
    async owner(raw) {
      const file = normalizePath(raw);
      const library = foldersHolding(folders, (folder) => [folder.path], file)[0];
      if (!library) return undefined;
      const holds = (item: AbsItem): boolean => normalizePath(item.path) === file || (!item.isFile && containment(item.path, file) >= 0);
      let seen = 0;
      for (;;) {
        const items = pages.get(library.id)?.items ?? [];
        const owner = items.slice(seen).find(holds);
        if (owner) return owner;
        seen = items.length;
        if (!(await morePages(library.id))) return undefined;
      }
    },
    async files(item) {
      let list = fileLists.get(item.id);
      if (!list) {
        checkSignal();
        list = new Set((await client.itemFiles(item.id, signal)).map(normalizePath));
        fileLists.set(item.id, list);
      }
      return list;
    },
  };
}
