import type { ItemRow } from "./rows.ts";

/**
 * The waiting (`pending`) item of each folder, as last written: every request looks its folder up, and reading the
 * row back through sql.js costs more than the rest of a merge. An entry is exactly the stored row, because every
 * item write goes through `RowAccess.apply`, which tells this cache; an absent entry only means "ask the database".
 * A rolled-back transaction may have written rows that are gone again, so a rollback forgets everything.
 */
export interface PendingCache {
  get(folder: string): ItemRow | undefined;
  /** An item row was written (any state): a pending row is remembered, any other state forgets its id. */
  written(row: ItemRow): void;
  /** The item was deleted. */
  deleted(id: number): void;
  clear(): void;
}

export function createPendingCache(): PendingCache {
  const byFolder = new Map<string, ItemRow>();
  const folderOf = new Map<number, string>();
  const forget = (id: number): void => {
    const folder = folderOf.get(id);
    if (folder === undefined) return;
    folderOf.delete(id);
    if (byFolder.get(folder)?.id === id) byFolder.delete(folder);
  };
  return {
    get: (folder) => byFolder.get(folder),
    written(row) {
      forget(row.id);
      if (row.state !== "pending") return;
      // A pending row replaces any other pending row of its folder (the unique index lets only one stay).
      const previous = byFolder.get(row.folder);
      if (previous) folderOf.delete(previous.id);
      byFolder.set(row.folder, row);
      folderOf.set(row.id, row.folder);
    },
    deleted: forget,
    clear() {
      byFolder.clear();
      folderOf.clear();
    },
  };
}
