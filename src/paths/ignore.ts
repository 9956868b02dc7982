/**
 * `SERVER_IGNORE_LIST`, with plex_autoscan's semantics: an entry matches when it is a case-insensitive substring of
 * the (mapped) path. plex_autoscan applies it to manual requests only; so do we.
 * Returns the entry that matched, for the answer "Ignoring scan request because X was matched …".
 */
export function findIgnoreMatch(path: string, ignoreList: readonly string[]): string | undefined {
  const lower = path.toLowerCase();
  return ignoreList.find((entry) => entry.length > 0 && lower.includes(entry.toLowerCase()));
}
