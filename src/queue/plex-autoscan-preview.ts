import type { PlexAutoscanQueue, UnreadableIds } from "./plex-autoscan-file.ts";

/** What an import of plex_autoscan's queue would bring, read without storing anything (`autoscan import --dry-run`). */
export interface PlexAutoscanPreview {
  /** Rows that would become scan requests. */
  readonly requests: number;
  /** Distinct paths among them (by275's file may hold a path more than once). */
  readonly distinct: number;
  /** Rows whose path is not a full path: not imported. */
  readonly skipped: number;
  /** The first `limit` distinct paths, in the file's order. */
  readonly paths: readonly string[];
  /** Ids of a damaged file that could not be read. */
  readonly unreadable: readonly UnreadableIds[];
}

/**
 * Reads every row (the counts need them all) and keeps the first `limit` distinct paths (all of them: `Infinity`).
 * Every distinct path is remembered to count them, as the import's merge would; the file is never written.
 */
export function previewPlexAutoscanQueue(source: PlexAutoscanQueue, limit: number): PlexAutoscanPreview {
  let requests = 0;
  let skipped = 0;
  const seen = new Set<string>();
  const paths: string[] = [];
  const unreadable: UnreadableIds[] = [];
  for (const row of source.rows(0)) {
    if ("unreadable" in row) unreadable.push(row.unreadable);
    else if (!row.request) skipped += 1;
    else {
      requests += 1;
      const path = row.request.path;
      if (seen.has(path)) continue;
      seen.add(path);
      if (paths.length < limit) paths.push(path);
    }
  }
  return { requests, distinct: seen.size, skipped, paths, unreadable };
}
