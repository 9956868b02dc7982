import type { DriveFile, SharedDrive } from "./drive-api.ts";

/**
 * The id → (name, parent) cache that turns a change's `parents` into a path such as `My Drive/Media/Movies/X.mkv`
 * or `<Shared drive name>/TV/…` (docs: ../shared/reference/integrations.md §1.3). Paths are never stored: they are
 * walked from the entries each time, so a folder rename or move updates every path below it with one entry.
 *
 * Changes are staged per page: `commit()` returns what to persist once the page's requests are safely queued;
 * `rollback()` forgets them when the queue refused the page, so a retry sees the page as new again.
 */
export interface CacheEntry {
  readonly name: string;
  /** Absent for a root (My Drive, a shared drive, or an item whose parent we cannot see). */
  readonly parent?: string;
  readonly folder: boolean;
  /** Files only: tells a content change from a metadata-only change. */
  readonly md5?: string;
}

export interface CacheDiff {
  readonly upserts: ReadonlyMap<string, CacheEntry>;
  readonly removals: ReadonlySet<string>;
}

export interface PathLookup {
  getFile(fileId: string): Promise<DriveFile | undefined>;
  getDrive(driveId: string): Promise<SharedDrive | undefined>;
}

export interface PathCache {
  get(id: string): CacheEntry | undefined;
  put(id: string, entry: CacheEntry): void;
  /** True when the id was cached. */
  remove(id: string): boolean;
  /**
   * The full path of an item called `name` under `parentId`, fetching unknown ancestors (and caching them).
   * `undefined` when an ancestor is not visible (404).
   */
  resolvePath(parentId: string | undefined, name: string): Promise<string | undefined>;
  commit(): CacheDiff;
  rollback(): void;
  /** Forgets everything (the `clear_drive_cache` command); the caller seeds the roots again. */
  clear(): void;
  readonly size: number;
}

export interface PathCacheOptions {
  readonly entries?: Iterable<readonly [string, CacheEntry]>;
  readonly lookup: PathLookup;
  /** The real id of My Drive's root (`files.get('root')`), named `My Drive` whatever Google's locale says. */
  readonly myDriveRootId?: string;
}

export const MY_DRIVE_NAME = "My Drive";
const MAX_DEPTH = 256;

export function createPathCache(options: PathCacheOptions): PathCache {
  const base = new Map<string, CacheEntry>(options.entries ?? []);
  const staged = new Map<string, CacheEntry | null>();
  const get = (id: string): CacheEntry | undefined => {
    const entry = staged.get(id);
    return entry === null ? undefined : (entry ?? base.get(id));
  };

  async function fetchEntry(id: string): Promise<CacheEntry | undefined> {
    const file = await options.lookup.getFile(id);
    if (!file) return undefined;
    const parent = file.parents?.[0];
    let name = file.name;
    if (!parent && id === options.myDriveRootId) name = MY_DRIVE_NAME;
    // files.get(<sharedDriveId>) answers name "Drive" for every shared drive; drives.get has the real one.
    else if (!parent && file.driveId === id) name = (await options.lookup.getDrive(id))?.name ?? file.name;
    const entry: CacheEntry = { name, parent, folder: true };
    staged.set(id, entry);
    return entry;
  }

  return {
    get,
    put(id, entry) {
      staged.set(id, entry);
    },
    remove(id) {
      const known = get(id) !== undefined;
      if (known || base.has(id)) staged.set(id, null);
      return known;
    },
    async resolvePath(parentId, name) {
      const segments = [name];
      const seen = new Set<string>();
      let id = parentId;
      while (id !== undefined) {
        if (seen.has(id) || seen.size >= MAX_DEPTH) return undefined; // a cycle cannot happen on Drive; stay safe.
        seen.add(id);
        const entry = get(id) ?? (await fetchEntry(id));
        if (!entry) return undefined;
        segments.unshift(entry.name);
        id = entry.parent;
      }
      return segments.join("/");
    },
    commit() {
      const upserts = new Map<string, CacheEntry>();
      const removals = new Set<string>();
      for (const [id, entry] of staged) {
        if (entry === null) {
          base.delete(id);
          removals.add(id);
        } else {
          base.set(id, entry);
          upserts.set(id, entry);
        }
      }
      staged.clear();
      return { upserts, removals };
    },
    rollback() {
      staged.clear();
    },
    clear() {
      base.clear();
      staged.clear();
    },
    get size() {
      return base.size;
    },
  };
}
