import type { RefreshWish } from "../../core/scan.ts";

/**
 * Refresh in place, as the queue stores it (both stores, once). A folder's wish is a level on its item (`items.refresh`):
 * 0 none, 1 `metadata`, 2 `file` (metadata and streams). Requests that merge into a folder raise it, never lower it:
 * a folder refreshes if any of its requests asked, as much as the most asking one did. What each target did about it
 * is stored with its delivery row (`item_targets.refresh`, `refresh_detail`), written with the landed look that found
 * the item (`rules/landed.ts`), so History shows it per target and a restart does not send it twice.
 */
export type RefreshLevel = 0 | 1 | 2;

const LEVELS: Readonly<Record<RefreshWish, RefreshLevel>> = { metadata: 1, file: 2 };

export function refreshLevel(wish: RefreshWish | undefined): RefreshLevel {
  return wish === undefined ? 0 : LEVELS[wish];
}

/** The stored level back as a wish; `undefined`: no refresh asked (also for a value this version does not know). */
export function refreshWish(level: number | null | undefined): RefreshWish | undefined {
  if (level === 2) return "file";
  if (level === 1) return "metadata";
  return undefined;
}

/** A folder refreshes if any request asked, as much as the most asking one did. */
export function mergeRefresh(stored: number | null | undefined, wish: RefreshWish | undefined): RefreshLevel {
  return Math.max(refreshLevel(refreshWish(stored)), refreshLevel(wish)) as RefreshLevel;
}

/** A target's refresh of a folder's items: `refreshed`, or `not_refreshed` with the reason. */
export type RefreshState = "refreshed" | "not_refreshed";

export interface RefreshRecord {
  readonly state: RefreshState;
  /** What was sent (`refreshed`) or why not (`not_refreshed`), as History shows it. */
  readonly detail: string;
}
