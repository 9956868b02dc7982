/**
 * PostgreSQL advisory lock keys (two 32-bit halves). Every autoscan lock uses the first half `AUTOSCAN_LOCKS`
 * ("ausc"), so it never meets another application's locks in a shared database; the second half names the lock.
 * Folder locks (one per folder, held for a transaction while requests merge) have their own first half.
 */
export const AUTOSCAN_LOCKS = 1635087203;
export const FOLDER_LOCKS = 1635087204;

export const LOCKS = {
  migrations: 1,
  drive: 2,
  backfill: 3,
} as const;

export type RoleName = "drive" | "backfill";
