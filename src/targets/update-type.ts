import type { ScanContext } from "../core/target.ts";

/**
 * The `UpdateType` of a `POST /Library/Media/Updated` item, from the requests merged into the folder:
 * `Deleted` when every request says its file is gone, `Created` when every one is a new import (an *arr `Download`,
 * which an upgrade is not: it replaces a file), else `Modified`. Jellyfin ignores the value today (it re-reads the
 * folder whatever it says: integrations.md §4.1); Emby documents it; both accept these three.
 */
export type UpdateType = "Created" | "Modified" | "Deleted";

export function updateTypeOf(sources: ScanContext["sources"]): UpdateType {
  if (sources.length === 0) return "Modified";
  if (sources.every((source) => source.deleted === true)) return "Deleted";
  if (sources.every((source) => source.deleted !== true && isImport(source.event))) return "Created";
  return "Modified";
}

/** Emby's form: Cloudbox/autoscan sends `Created` for everything; a folder whose files are all gone says so. */
export function embyUpdateTypeOf(sources: ScanContext["sources"]): UpdateType {
  return sources.length > 0 && sources.every((source) => source.deleted === true) ? "Deleted" : "Created";
}

function isImport(event: string): boolean {
  const name = event.toLowerCase();
  return name === "download" || name.includes("import");
}
