import type { Logger } from "../core/logger.ts";
import type { ScanRequest } from "../core/scan.ts";
import type { PathMapper } from "../paths/mapping.ts";
import { FOLDER_MIME, SHORTCUT_MIME, type DriveChange, type DriveFile } from "./drive-api.ts";
import type { DriveFilter } from "./filters.ts";
import type { CacheEntry, PathCache } from "./path-cache.ts";

/**
 * One page of the change feed → scan requests, with plex_autoscan's rules (docs:
 * ../shared/reference/plex_autoscan.md §4): removed and trashed items leave the cache and are never scanned; folders
 * only update the cache; a file is wanted when it is new, or its content, name or place changed; it must pass the
 * ALLOWED filters, map to a server path, and not be in Plex already.
 */
export type IsInLibrary = (serverPath: string, sizeBytes?: number) => Promise<boolean>;

export interface ChangeProcessorOptions {
  readonly cache: PathCache;
  readonly filter: DriveFilter;
  readonly mapper: PathMapper;
  readonly isInLibrary: IsInLibrary;
  readonly log: Logger;
  readonly showCacheLogs: boolean;
}

export interface PageStats {
  added: number;
  removed: number;
  unwanted: number;
  ignored: number;
  renamed: number;
  moved: number;
  rejected: number;
  unmapped: number;
}

export interface PageOutcome {
  readonly requests: ScanRequest[];
  readonly stats: PageStats;
}

interface Candidate {
  readonly drivePath: string;
  readonly size?: number;
}

export const SOURCE = "Google Drive";

export function createChangeProcessor(options: ChangeProcessorOptions) {
  const { cache, log } = options;
  const warnedFolders = new Set<string>();

  /** Removals, trash and folders first, so files later in the page resolve against this page's folders. */
  function applyStructure(change: DriveChange, stats: PageStats): DriveFile | undefined {
    const file = change.file;
    const id = change.fileId ?? file?.id;
    if (change.changeType === "drive") {
      if (change.drive?.id && change.drive.name && cache.get(change.drive.id)) {
        cache.put(change.drive.id, { name: change.drive.name, folder: true });
      }
      return undefined;
    }
    if (!id) return undefined;
    if (change.removed || !file || file.trashed) {
      const name = cache.get(id)?.name;
      if (cache.remove(id) && options.showCacheLogs) log.info({ fileId: id }, `Removed '${id}' from cache: ${name}`);
      stats.removed++;
      return undefined;
    }
    if (file.mimeType === FOLDER_MIME) {
      const before = cache.get(id);
      const entry: CacheEntry = { name: file.name, parent: file.parents?.[0], folder: true };
      countMove(before, entry, stats);
      cache.put(id, before && !entry.parent ? { ...entry, parent: before.parent } : entry);
      if (!before && options.showCacheLogs) log.info({ fileId: id }, `Added '${id}' to cache: ${file.name}/`);
      return undefined;
    }
    if (file.mimeType === SHORTCUT_MIME) {
      stats.unwanted++;
      return undefined;
    }
    return file;
  }

  async function considerFile(file: DriveFile, stats: PageStats): Promise<Candidate | undefined> {
    const before = cache.get(file.id);
    const entry: CacheEntry = { name: file.name, parent: file.parents?.[0], folder: false, md5: file.md5Checksum };
    const drivePath = await cache.resolvePath(entry.parent, entry.name);
    if (drivePath === undefined) {
      log.debug({ fileId: file.id, name: file.name }, "Cannot see a parent of this file; skipped");
      stats.unwanted++;
      return undefined;
    }
    cache.put(file.id, entry);
    if (before && !before.folder && before.md5 === entry.md5 && !countMove(before, entry, stats)) {
      stats.ignored++;
      return undefined;
    }
    if (!before) {
      stats.added++;
      if (options.showCacheLogs) log.info({ fileId: file.id }, `Added '${file.id}' to cache: ${drivePath}`);
    }
    const verdict = options.filter(drivePath, file.mimeType);
    if (!verdict.pass) {
      log.debug({ path: drivePath, reason: verdict.reason }, "Ignoring Google Drive file");
      stats.unwanted++;
      return undefined;
    }
    return { drivePath, size: file.size };
  }

  async function toRequests(candidates: readonly Candidate[], stats: PageStats): Promise<ScanRequest[]> {
    const requests: ScanRequest[] = [];
    const seen = new Set<string>();
    for (const { drivePath, size } of candidates) {
      const mapped = options.mapper.toServer(drivePath);
      if (!mapped.known) {
        warnUnmapped(drivePath);
        stats.unmapped++;
        continue;
      }
      if (seen.has(mapped.path)) continue;
      seen.add(mapped.path);
      if (await inLibrary(mapped.path, size)) {
        stats.rejected++;
        continue;
      }
      requests.push({ path: mapped.path, kind: "file", source: SOURCE, event: "Download", receivedPath: drivePath });
    }
    return requests;
  }

  async function inLibrary(serverPath: string, size: number | undefined): Promise<boolean> {
    try {
      return await options.isInLibrary(serverPath, size);
    } catch (error) {
      log.warn({ path: serverPath, err: error }, "Could not ask Plex whether the file is already known; scanning it anyway");
      return false;
    }
  }

  function warnUnmapped(drivePath: string): void {
    const folder = drivePath.slice(0, drivePath.lastIndexOf("/") + 1);
    if (warnedFolders.has(folder)) return;
    warnedFolders.add(folder);
    log.warn(
      { path: drivePath },
      `Google Drive path '${drivePath}' is under no SERVER_PATH_MAPPINGS form; add the drive folder (e.g. "${folder}") to the values of the matching server path in SERVER_PATH_MAPPINGS`,
    );
  }

  return {
    async process(changes: readonly DriveChange[]): Promise<PageOutcome> {
      const stats: PageStats = { added: 0, removed: 0, unwanted: 0, ignored: 0, renamed: 0, moved: 0, rejected: 0, unmapped: 0 };
      const files = changes.map((change) => applyStructure(change, stats)).filter((file) => file !== undefined);
      const candidates: Candidate[] = [];
      for (const file of files) {
        const candidate = await considerFile(file, stats);
        if (candidate) candidates.push(candidate);
      }
      return { requests: await toRequests(candidates, stats), stats };
    },
  };
}

/** Counts a rename or a move of a known item; true when either happened. */
function countMove(before: CacheEntry | undefined, after: CacheEntry, stats: PageStats): boolean {
  if (!before) return false;
  const renamed = before.name !== after.name;
  const moved = after.parent !== undefined && before.parent !== after.parent;
  if (renamed) stats.renamed++;
  if (moved) stats.moved++;
  return renamed || moved;
}
