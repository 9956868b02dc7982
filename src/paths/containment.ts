import { isWindowsPath, normalizePath, withTrailingSlash } from "./normalize.ts";

/**
 * The library folders (Plex section locations, Jellyfin/Emby folders) that hold a path, matched on whole path segments
 * (`/data/Movies` never holds `/data/Movies4K/x`), every match kept, the longest (most specific) first, then in list
 * order; Windows folders compare case-insensitively.
 */
export function foldersHolding<T>(entries: readonly T[], locationsOf: (entry: T) => readonly string[], path: string): T[] {
  const target = normalizePath(path);
  const scored: { entry: T; depth: number; order: number }[] = [];
  entries.forEach((entry, order) => {
    const depth = Math.max(-1, ...locationsOf(entry).map((location) => containment(location, target)));
    if (depth >= 0) scored.push({ entry, depth, order });
  });
  return scored.sort((a, b) => b.depth - a.depth || a.order - b.order).map((item) => item.entry);
}

/** Length of `location` when it holds `path` (or is it), else -1. `path` is normalized (normalize.ts). */
export function containment(rawLocation: string, path: string): number {
  if (rawLocation.length === 0) return -1;
  const location = withTrailingSlash(normalizePath(rawLocation));
  const fold = isWindowsPath(location);
  const a = fold ? path.toLowerCase() : path;
  const b = fold ? location.toLowerCase() : location;
  if (withTrailingSlash(a) === b || a.startsWith(b)) return location.length;
  return -1;
}
