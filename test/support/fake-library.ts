import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";

/**
 * What a fake media server's library holds, as a real server builds it: a scan of a folder reads that folder on disk
 * (through `toLocal`, the server path → the test's directory) and, `importDelayMs` later, the library holds exactly
 * the files found there (new ones appear, removed ones are gone). `never` plays a server that takes scans and never
 * imports (a file its scanner refuses). Files can also be put in or taken out directly (`add`, `remove`).
 */
export interface FakeLibrary {
  /** Every file the library holds now (server form). */
  files(): string[];
  has(file: string): boolean;
  add(file: string): void;
  remove(file: string): void;
  /** A scan of `folder` (server form): its files on disk replace the library's files in it after the delay. */
  scanned(folder: string): void;
  /** Delay between a scan and its files becoming visible (default 0). */
  setImportDelay(ms: number): void;
  /** `true`: scans are taken and nothing is ever imported. */
  setNever(never: boolean): void;
  /** Scans whose import is still to come. */
  pending(): number;
  close(): void;
}

export function createFakeLibrary(toLocal: (serverPath: string) => string | undefined): FakeLibrary {
  const held = new Set<string>();
  const timers = new Set<NodeJS.Timeout>();
  let delayMs = 0;
  let never = false;

  const importFolder = (folder: string): void => {
    const local = toLocal(folder);
    const prefix = folder.endsWith("/") ? folder : `${folder}/`;
    for (const file of [...held]) if (file.startsWith(prefix)) held.delete(file);
    if (local === undefined) return;
    for (const file of walk(local)) held.add(prefix + file);
  };

  return {
    files: () => [...held].sort(),
    has: (file) => held.has(file),
    add: (file) => void held.add(file),
    remove: (file) => void held.delete(file),
    scanned(folder) {
      if (never) return;
      if (delayMs <= 0) return importFolder(folder);
      const timer = setTimeout(() => {
        timers.delete(timer);
        importFolder(folder);
      }, delayMs);
      timers.add(timer);
    },
    setImportDelay: (ms) => void (delayMs = ms),
    setNever: (value) => void (never = value),
    pending: () => timers.size,
    close() {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
    },
  };
}

/** Files under `dir`, relative, `/`-separated; nothing when it is missing. Links are followed, each folder once (a
 *  link into a loop is not walked forever). */
function walk(dir: string, prefix = "", visited = new Set<string>()): string[] {
  let names: string[];
  try {
    const info = statSync(dir);
    if (visited.has(`${String(info.dev)}:${String(info.ino)}`)) return [];
    visited.add(`${String(info.dev)}:${String(info.ino)}`);
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names.flatMap((name) => {
    const full = join(dir, name);
    try {
      return statSync(full).isDirectory() ? walk(full, `${prefix}${name}/`, visited) : [`${prefix}${name}`];
    } catch {
      return [];
    }
  });
}
