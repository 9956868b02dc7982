/** Audiobookshelf took API keys (`Authorization: Bearer`) first in 2.26.0 (refresh-fastpath-targets.md §5). */
export const API_KEYS_SINCE = "2.26.0";

/** Whether a server of this version (`2.36.0`, `v2.26.1`) takes API keys; `undefined` when the text is no version. */
export function takesApiKeys(version: string): boolean | undefined {
  const have = parts(version);
  if (!have) return undefined;
  const need = parts(API_KEYS_SINCE) ?? [];
  for (let i = 0; i < need.length; i += 1) {
    const a = have[i] ?? 0;
    const b = need[i] ?? 0;
    if (a !== b) return a > b;
  }
  return true;
}

function parts(version: string): number[] | undefined {
  const match = /^v?(\d+)\.(\d+)(?:\.(\d+))?/.exec(version.trim());
  return match ? [Number(match[1]), Number(match[2]), Number(match[3] ?? 0)] : undefined;
}
