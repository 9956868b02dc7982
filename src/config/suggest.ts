/** The known key nearest to a misspelt one (`SERVER_PATH_MAPPING` → `SERVER_PATH_MAPPINGS`), if any is close. */
export function suggestKey(unknown: string, known: readonly string[]): string | undefined {
  const target = unknown.toUpperCase();
  let best: { key: string; distance: number } | undefined;
  for (const key of known) {
    const distance = editDistance(target, key.toUpperCase());
    if (!best || distance < best.distance) best = { key, distance };
  }
  if (!best) return undefined;
  const limit = Math.max(2, Math.floor(Math.max(unknown.length, best.key.length) / 3));
  return best.distance <= limit ? best.key : undefined;
}

/** Levenshtein distance, two rows. */
export function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      current[j] = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + cost);
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}
