import type { PlexScanner, ScannerRunOptions } from "./plex-scanner.ts";

/**
 * Plex's sections without the HTTP API (no PLEX_TOKEN): their roots from the library database through
 * `Plex Media Scanner`'s sibling `Plex SQLite`, or, where that cannot run, ids and names from `--list`
 * (`  1: Movies`), which carry no paths.
 */
export interface ScannerSectionInfo {
  readonly id: string;
  readonly title: string;
  /** Unknown here (neither source says); "" */
  readonly type: string;
  /** Section roots; empty when the list came from `--list`. */
  readonly locations: readonly string[];
  readonly refreshing: boolean;
}

export interface ScannerSectionList {
  readonly sections: ScannerSectionInfo[];
  readonly source: "database" | "list";
}

export async function listScannerSections(scanner: PlexScanner, run?: ScannerRunOptions): Promise<ScannerSectionList> {
  const rows = await scanner.sectionLocations(run);
  if (rows !== undefined) {
    const byId = new Map<string, { title: string; locations: string[] }>();
    for (const row of rows) {
      const entry = byId.get(row.id) ?? { title: row.name, locations: [] };
      entry.locations.push(row.path);
      byId.set(row.id, entry);
    }
    const sections = [...byId].map(([id, entry]) => section(id, entry.title, entry.locations));
    if (sections.length > 0) return { sections, source: "database" };
  }
  const listed = await scanner.listSections(run);
  return { sections: listed.map((entry) => section(entry.id, entry.name, [])), source: "list" };
}

/**
 * With names only, a section whose name is one of the folder's path segments (`/data/Movies/Heat (1995)` → "Movies"),
 * compared case-insensitively. Only an unambiguous single match is returned: a guess between two is no answer.
 */
export function matchSectionsByName<S extends { readonly title: string }>(sections: readonly S[], folder: string): S[] {
  const segments = new Set(
    folder
      .split(/[\\/]+/)
      .filter((segment) => segment !== "")
      .map((segment) => segment.toLowerCase()),
  );
  const found = sections.filter((entry) => segments.has(entry.title.trim().toLowerCase()));
  return found.length === 1 ? found : [];
}

function section(id: string, title: string, locations: string[]): ScannerSectionInfo {
  return { id, title, type: "", locations, refreshing: false };
}
