import type { FakeLibrary } from "./fake-library.ts";

/**
 * Jellyfin's library monitor behind `POST /Library/Media/Updated`, as ../shared/reference/refresh-fastpath-targets.md
 * §2 reads LibraryMonitor.cs and FileRefresher.cs: each path joins a pending refresher (the same path or one under it:
 * its timer restarts; a parent of it: the refresher moves up to it; a sibling: it moves to the common parent) or
 * starts one; a refresher fires `delayMs` after its last event (LibraryMonitorDelay, 60 s by default), then the
 * nearest item the library knows at or above its path (a library location at worst) is refreshed recursively: the
 * whole folder is read again from disk. `validated` records those folders.
 */
export const JELLYFIN_LIBRARY_MONITOR_DELAY_MS = 60_000;

export interface FakeLibraryMonitor {
  report(path: string): void;
  /** The folders (or files) refreshed when a refresher fired, in order. */
  readonly validated: string[];
  /** Refreshers still waiting. */
  pending(): number;
  close(): void;
}

export function createFakeLibraryMonitor(input: {
  readonly library: FakeLibrary;
  readonly delayMs: number;
  readonly locations: () => readonly string[];
}): FakeLibraryMonitor {
  const refreshers: { path: string; timer: NodeJS.Timeout }[] = [];
  const validated: string[] = [];
  const { library } = input;

  const under = (path: string, folder: string): boolean => path.startsWith(`${folder}/`);
  const parentOf = (path: string): string => path.slice(0, Math.max(1, path.lastIndexOf("/")));
  /** An item the library has: a library location, or a file or folder inside one that the library lists. */
  const known = (path: string): boolean =>
    input.locations().some((location) => trim(location) === path) ||
    (input.locations().some((location) => under(path, trim(location))) && (library.has(path) || library.files().some((file) => under(file, path))));

  function restart(refresher: { path: string; timer: NodeJS.Timeout }): void {
    clearTimeout(refresher.timer);
    refresher.timer = setTimeout(() => fire(refresher), input.delayMs);
  }

  function fire(refresher: { path: string; timer: NodeJS.Timeout }): void {
    refreshers.splice(refreshers.indexOf(refresher), 1);
    let item = refresher.path;
    while (item.length > 1 && !known(item)) item = parentOf(item);
    if (!known(item)) return;
    validated.push(item);
    library.scanned(library.has(item) ? parentOf(item) : item);
  }

  return {
    validated,
    pending: () => refreshers.length,
    report(raw) {
      const path = trim(raw);
      const same = refreshers.find((r) => r.path === path || under(path, r.path));
      if (same) return restart(same);
      const child = refreshers.find((r) => under(r.path, path));
      if (child) {
        child.path = path;
        return restart(child);
      }
      const sibling = refreshers.find((r) => parentOf(r.path) === parentOf(path));
      if (sibling) {
        sibling.path = parentOf(path);
        return restart(sibling);
      }
      const refresher = { path, timer: setTimeout(() => undefined, 0) };
      refreshers.push(refresher);
      restart(refresher);
    },
    close() {
      for (const refresher of refreshers) clearTimeout(refresher.timer);
      refreshers.length = 0;
    },
  };
}

function trim(path: string): string {
  return path.length > 1 && path.endsWith("/") ? path.slice(0, -1) : path;
}
