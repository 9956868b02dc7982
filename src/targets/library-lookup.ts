import { TargetUnavailableError } from "../core/errors.ts";
import type { Logger } from "../core/logger.ts";
import type { LibraryLookup } from "../core/target.ts";
import { foldersHolding } from "../paths/containment.ts";
import { isWindowsPath, normalizePath } from "../paths/normalize.ts";
import type { MediaRequest, MediaResponse } from "./media-http.ts";
import { parseLibraryItems, type LibraryItem } from "./media-wire-schemas.ts";

/**
 * Did the requested files land in a Jellyfin or Emby library? Asked through the server's API, never the disks.
 *
 * Neither server can find an item by its path, so the look walks down the library one parent at a time with
 * `GET /Items?ParentId=<id>&Fields=Path` (both servers, an API key is enough): from the library's own item, into the
 * child whose `Path` is a folder holding the file (the show, then its season), until a child's `Path` is the file.
 * A child without a `Path` (the season Jellyfin makes up for episodes lying in the show's folder) is walked into only
 * when no child's folder holds the file, so a normal season costs nothing extra.
 *
 * The walk is bounded (depth, calls per file) because a library's shape is the server's business: a strange one must
 * cost a few calls and a "not there", never a long crawl. Within one `find`, every listing is kept, so the files of
 * one season share the calls that reach it. Listings are paged, so a movie library of thousands stays under the
 * response size cap.
 */
export interface MediaLibraryRoot {
  /** The library's own item id (Jellyfin `ItemId`, Emby's collection folder `Id`). */
  readonly id: string;
  /** One of the library's folders, in the server's path form. */
  readonly path: string;
}

export interface MediaLibraryLookupOptions {
  /** The target's call (its auth header, its error classification; Emby finds its own prefix). */
  readonly call: (method: "GET" | "POST", route: string, request?: MediaRequest) => Promise<MediaResponse>;
  /** The libraries to start from, fetched once per `find` (a library added since is seen). */
  readonly roots: (signal: AbortSignal) => Promise<readonly MediaLibraryRoot[]>;
  /** The server's own delay before it acts on a scan (see `LibraryLookup.settleMs`). */
  readonly settleMs: number;
  /** `Jellyfin 'jellyfin'`, for messages. */
  readonly label?: string;
  readonly log?: Logger;
  /** Items per `/Items` page (default 1000). */
  readonly pageSize?: number;
}

/** Levels below the library walked at most: show, season, episode need 3; a few more for folders in between. */
export const MAX_DEPTH = 6;
/** `/Items` calls one file may cost (cached listings are free). */
export const MAX_CALLS_PER_FILE = 20;
const DEFAULT_PAGE_SIZE = 1000;

/** The lookup, and the same walk answering each file's item id (refresh in place re-reads that item). */
export interface MediaLibraryLookup extends LibraryLookup {
  /** For each file, the id of the item whose `Path` is that file; `undefined` when the library does not hold it. */
  locate(files: readonly string[], signal: AbortSignal): Promise<ReadonlyMap<string, string | undefined>>;
}

export function createMediaLibraryLookup(options: MediaLibraryLookupOptions): MediaLibraryLookup {
  const label = options.label ?? "the server";
  const pageSize = options.pageSize ?? DEFAULT_PAGE_SIZE;

  async function locate(files: readonly string[], signal: AbortSignal): Promise<Map<string, string | undefined>> {
    const found = new Map<string, string | undefined>();
    const shutdown = (): Error => new TargetUnavailableError(`Shutting down before the files were looked up in ${label}`);
    if (files.length === 0) return found;
    if (signal.aborted) throw shutdown();
    try {
      const roots = await options.roots(signal);
      const listings = new Map<string, readonly LibraryItem[]>();
      for (const file of files) {
        if (signal.aborted) throw shutdown();
        const id = await findOne(file, roots, listings, signal);
        found.set(file, id);
        options.log?.debug({ path: file, found: id !== undefined }, `'${file}' is ${id !== undefined ? "" : "not "}in ${label}'s library`);
      }
    } catch (error) {
      // A call cut short by the shutdown rejects with the signal's reason: it means "ask again later", as the port says.
      if (signal.aborted && !(error instanceof TargetUnavailableError)) throw shutdown();
      throw error;
    }
    return found;
  }

  return {
    settleMs: options.settleMs,
    async find(files, signal) {
      const ids = await locate(files, signal);
      return new Map([...ids].map(([file, id]) => [file, id !== undefined]));
    },
    locate,
  };

  async function findOne(
    file: string,
    roots: readonly MediaLibraryRoot[],
    listings: Map<string, readonly LibraryItem[]>,
    signal: AbortSignal,
  ): Promise<string | undefined> {
    const starts = [...new Set(foldersHolding(roots, (root) => [root.path], file).map((root) => root.id))];
    let calls = 0;
    let spent = false;

    /** The children of `parentId`, from this find's cache or the server; `undefined` once the budget is spent. */
    async function children(parentId: string): Promise<readonly LibraryItem[] | undefined> {
      const known = listings.get(parentId);
      if (known) return known;
      const items: LibraryItem[] = [];
      for (;;) {
        if (calls >= MAX_CALLS_PER_FILE) {
          spent = true;
          return undefined;
        }
        calls += 1;
        const query = {
          ParentId: parentId,
          Fields: "Path",
          EnableImages: "false",
          EnableUserData: "false",
          StartIndex: String(items.length),
          Limit: String(pageSize),
        };
        const answer = await options.call("GET", "/Items", { query, signal });
        const page = parseLibraryItems(answer.body, `${label}: GET /Items`);
        items.push(...page.items);
        // A server that ignores Limit answers everything at once; one that does not say a total gets one page.
        if (page.items.length === 0 || page.total === undefined || items.length >= page.total) break;
      }
      listings.set(parentId, items);
      return items;
    }

    async function descend(parentId: string, depth: number): Promise<string | undefined> {
      if (depth > MAX_DEPTH) return undefined;
      const items = await children(parentId);
      if (!items) return undefined;
      const own = items.find((item) => item.path !== undefined && samePath(item.path, file));
      if (own) return own.id;
      const holding = items.filter((item) => item.path !== undefined && holds(item.path, file));
      const next = holding.length > 0 ? holding : items.filter((item) => item.path === undefined && item.isFolder !== false);
      for (const item of next) {
        const id = await descend(item.id, depth + 1);
        if (id !== undefined) return id;
      }
      return undefined;
    }

    for (const start of starts) {
      const id = await descend(start, 1);
      if (id !== undefined) return id;
    }
    if (spent) {
      options.log?.warn(
        { path: file, calls },
        `Gave up looking for '${file}' in ${label}'s library after ${calls} calls; counted as not there`,
      );
    }
    return undefined;
  }
}

/** The comparison form: separators and Unicode tidied, Windows paths case-folded as the server compares them. */
export function comparable(path: string): string {
  const normal = normalizePath(path);
  const trimmed = normal.length > 1 && normal.endsWith("/") ? normal.slice(0, -1) : normal;
  return isWindowsPath(trimmed) ? trimmed.toLowerCase() : trimmed;
}

export function samePath(a: string, b: string): boolean {
  return comparable(a) === comparable(b);
}

/** `folder` holds `file` on whole segments (`/data/tv/Show` holds `/data/tv/Show/Season 01/x.mkv`, `/data/tv/Sh` does not). */
export function holds(folder: string, file: string): boolean {
  return !samePath(folder, file) && foldersHolding([folder], (f) => [f], file).length > 0;
}
