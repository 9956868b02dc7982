/**
 * `SERVER_SCAN_PRIORITIES` (`{"0": ["/Movies/"], "1": ["/TV/"]}`), with plex_autoscan's semantics: the first entry
 * whose path is a case-insensitive substring of the folder gives its priority; unmatched folders get 0. Lower numbers
 * are scanned first.
 */
export type ScanPriorities = Readonly<Record<string, readonly string[]>>;

export function resolvePriority(folder: string, priorities: ScanPriorities): number {
  const lower = folder.toLowerCase();
  for (const [priority, paths] of Object.entries(priorities)) {
    if (paths.some((entry) => entry.length > 0 && lower.includes(entry.toLowerCase()))) return Number(priority);
  }
  return 0;
}
