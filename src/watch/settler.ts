import type { Clock } from "../core/clock.ts";
import type { FileEntry } from "./listing.ts";

/**
 * `MIN_AGE_SECONDS`: a file is reported once its size and mtime have stayed the same for that long, so a copy in
 * progress is not scanned half-written. Each file seen new or changed waits here; when its time is up, its folder is
 * listed again (`relist`, which also brings the watcher's picture of the folder up to date) and the file is reported
 * only if it has not changed since — else it waits again. A new file that goes away while it waits was never reported
 * (a download client's temporary file renamed to its final name): its deletion is not reported either. A known file
 * (changed, then deleted while it waited) was in the library: its deletion always goes out. A deletion
 * waits as long, and is reported if the file is still gone, with whatever settled meanwhile: a rename (the old name
 * gone, the new one there) goes out as one batch, one scan of the folder.
 */
export interface SettledChange {
  /** The file, as autoscan sees it (a local path). */
  readonly path: string;
  readonly event: "Created" | "Modified" | "Deleted";
}

export interface SettlerOptions {
  readonly minAgeMs: number;
  readonly clock: Clock;
  /** Lists a folder again and answers its files now (`undefined`: the disk did not answer; looked at later). */
  readonly relist: (dir: string) => Promise<readonly FileEntry[] | undefined>;
  readonly report: (changes: readonly SettledChange[]) => void;
}

export interface Settler {
  /** A file is new (`created`) or changed, with its size and mtime now. */
  saw(dir: string, file: FileEntry, created: boolean): void;
  /** A file is gone. */
  gone(dir: string, name: string): void;
  /** Files waiting to settle. */
  waiting(): number;
  /** The changes still waiting to settle (a save keeps them as not seen yet, so the next start reports them). */
  pending(): { readonly dir: string; readonly name: string; readonly event: SettledChange["event"] }[];
  stop(): void;
}

const PASS_MS = 1_000;
/** Changes settled between two turns of the event loop, and reported at once (a burst of 50,000 goes out in 1,000s). */
const CHUNK = 1_000;

interface Waiting {
  readonly dir: string;
  readonly name: string;
  size: number;
  mtimeMs: number;
  since: number;
  created: boolean;
  /** Waiting to report a deletion (the file must still be gone). */
  deleted: boolean;
}

export function createSettler(options: SettlerOptions): Settler {
  const { clock, minAgeMs } = options;
  const waiting = new Map<string, Waiting>();
  const stop = new AbortController();
  let timer: Promise<void> | undefined;

  function schedule(): void {
    if (timer || stop.signal.aborted || waiting.size === 0) return;
    let next = Number.POSITIVE_INFINITY;
    for (const w of waiting.values()) next = Math.min(next, w.since + minAgeMs);
    // One pass a second at most: a burst of files that arrived over a few seconds settles in a few passes.
    const wait = minAgeMs === 0 ? 0 : Math.max(PASS_MS, next - clock.now());
    timer = clock.sleep(wait, stop.signal).then(async () => {
      timer = undefined;
      if (!stop.signal.aborted) await settle();
      schedule();
    });
  }

  async function settle(): Promise<void> {
    const now = clock.now();
    // A folder that has a change due settles with it those seen up to a pass later (the two names of a rename, seen a
    // few milliseconds apart on a busy machine, go out together); the second look still checks each has not changed.
    const dirsDue = new Set<string>();
    for (const w of waiting.values()) if (now - w.since >= minAgeMs) dirsDue.add(w.dir);
    const due = [...waiting.entries()].filter(([, w]) => now - w.since >= minAgeMs || (dirsDue.has(w.dir) && now - w.since >= minAgeMs - PASS_MS));
    const byDir = new Map<string, [string, Waiting][]>();
    for (const entry of due) {
      const entries = byDir.get(entry[1].dir);
      if (entries) entries.push(entry);
      else byDir.set(entry[1].dir, [entry]);
    }
    const settled: SettledChange[] = [];
    for (const [dir, entries] of byDir) {
      const files = minAgeMs === 0 ? undefined : await options.relist(dir);
      if (minAgeMs !== 0 && files === undefined) {
        // The disk did not answer: these wait for the next look.
        for (const [, w] of entries) w.since = clock.now() - minAgeMs + 5_000;
        continue;
      }
      const current = new Map((files ?? []).map((file) => [file.name, file]));
      for (const [path, w] of entries) {
        if (settled.length >= CHUNK) {
          options.report(settled.splice(0));
          await new Promise((resolve) => setImmediate(resolve));
        }
        if (waiting.get(path) !== w) continue;
        const now = current.get(w.name);
        if (w.deleted && (minAgeMs === 0 || now === undefined)) {
          waiting.delete(path);
          settled.push({ path, event: "Deleted" });
        } else if (w.deleted && now) {
          // Back under the same name (a file replaced): a change of that file, which waits to settle.
          Object.assign(w, { deleted: false, created: false, size: now.size, mtimeMs: now.mtimeMs, since: clock.now() });
        } else if (minAgeMs !== 0 && now === undefined) {
          waiting.delete(path);
          if (!w.created) settled.push({ path, event: "Deleted" });
        } else if (minAgeMs === 0 || (now && now.size === w.size && now.mtimeMs === w.mtimeMs)) {
          waiting.delete(path);
          settled.push({ path, event: w.created ? "Created" : "Modified" });
        } else if (now) {
          w.size = now.size;
          w.mtimeMs = now.mtimeMs;
          w.since = clock.now();
        }
      }
    }
    if (settled.length > 0) options.report(settled);
  }

  return {
    saw(dir, file, created) {
      const path = `${dir}/${file.name}`;
      const was = waiting.get(path);
      if (was && was.size === file.size && was.mtimeMs === file.mtimeMs) return;
      waiting.set(path, {
        dir,
        name: file.name,
        size: file.size,
        mtimeMs: file.mtimeMs,
        since: clock.now(),
        created: was ? was.created : created,
        deleted: false,
      });
      schedule();
    },
    gone(dir, name) {
      const path = `${dir}/${name}`;
      const was = waiting.get(path);
      if (was?.deleted) return;
      // A new file never reported (it did not settle): its going needs no scan.
      if (was?.created) return void waiting.delete(path);
      waiting.set(path, { dir, name, size: 0, mtimeMs: 0, since: clock.now(), created: false, deleted: true });
      schedule();
    },
    waiting: () => waiting.size,
    pending: () => [...waiting.values()].map((w) => ({ dir: w.dir, name: w.name, event: w.deleted ? "Deleted" : w.created ? "Created" : "Modified" })),
    stop() {
      // What still waits stays listed (`pending`): the watcher keeps it as not seen yet for the next start.
      stop.abort();
    },
  };
}
