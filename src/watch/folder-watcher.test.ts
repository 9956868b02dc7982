// @module-tag process
import { mkdirSync, renameSync, writeFileSync } from "node:fs";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { mkdir, readFile, rm, unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { captureLog, makeTempDir } from "../../test/support/capture-log.ts";
import { systemClock } from "../core/clock.ts";
import { within } from "../../test/support/run-cli.ts";
import { createDiskProbe } from "../paths/disk-probe.ts";
import { createFolderWatcher, type FolderWatcher } from "./folder-watcher.ts";
import { watchFoldersWithKernel, type WatchFolders } from "./kernel-events.ts";
import type { SettledChange } from "./settler.ts";

/**
 * One watcher on real folders: the real disk probe, the kernel's notifications (`fs.watch`), the state file on disk,
 * real time. What the watcher reports is what the service turns into scan requests.
 */
let root: string;
let tv: string;
let cleanup: () => Promise<void>;
const watchers: FolderWatcher[] = [];

beforeEach(async () => {
  ({ dir: root, cleanup } = await makeTempDir("autoscan-folder-watcher-"));
  tv = join(root, "TV");
  await mkdir(tv);
});
afterEach(async () => {
  await Promise.all(watchers.splice(0).map((watcher) => watcher.stop()));
  await cleanup();
});

function watcher(options: { minAgeMs: number; watchFolders?: WatchFolders }): { watcher: FolderWatcher; reported: SettledChange[] } {
  const reported: SettledChange[] = [];
  const created = createFolderWatcher({
    name: "tv",
    settings: { paths: [tv], mode: "events", pollMs: 300_000, minAgeMs: options.minAgeMs, wanted: () => true },
    stateFile: join(root, "watch", "tv.state"),
    probe: createDiskProbe({ log: captureLog().log }),
    clock: systemClock,
    log: captureLog().log,
    report: (changes) => {
      reported.push(...changes);
      return Promise.resolve();
    },
    watchFolders: options.watchFolders ?? watchFoldersWithKernel,
  });
  created.start();
  watchers.push(created);
  return { watcher: created, reported };
}

async function until(check: () => boolean, what: () => string, ms = 10_000): Promise<void> {
  try {
    await within(
      (async () => {
        while (!check()) await new Promise((resolve) => setTimeout(resolve, 20));
      })(),
      ms,
      "waiting",
    );
  } catch {
    throw new Error(`${what()}: nothing after ${String(ms / 1000)} s`);
  }
}

const watching = (w: FolderWatcher): Promise<void> => until(() => w.status().state === "watching", () => "the first walk");

describe("a folder that appears while watching", () => {
  it("a file written into it between its listing and the start of its notifications is still reported", async () => {
    const late = join(tv, "Show", "Season 01", "late.mkv");
    let raced = false;
    // The real notifications, and a file that lands at the worst moment: the new folder was listed, not yet watched.
    const racing: WatchFolders = (changed, failed) => {
      const real = watchFoldersWithKernel(changed, failed);
      return {
        ...real,
        add(dir) {
          if (dir === join(tv, "Show", "Season 01") && !raced) {
            raced = true;
            writeFileSync(late, "landed between the listing and the watch");
          }
          real.add(dir);
        },
      };
    };
    const { watcher: w, reported } = watcher({ minAgeMs: 0, watchFolders: racing });
    await watching(w);
    await mkdir(join(tv, "Show", "Season 01"), { recursive: true });
    await writeFile(join(tv, "Show", "Season 01", "first.mkv"), "x");
    await until(() => reported.some((change) => change.path.endsWith("first.mkv")), () => `first.mkv reported (${JSON.stringify(reported)})`);
    expect(raced).toBe(true);
    await until(() => reported.some((change) => change.path === late), () => `late.mkv reported (${JSON.stringify(reported)})`);
    expect(reported.filter((change) => change.path === late)).toEqual([{ path: late, event: "Created" }]);
  });
});

describe("a stop", () => {
  it("resolves once what the watcher knows is on disk", async () => {
    const { watcher: w, reported } = watcher({ minAgeMs: 0 });
    await watching(w);
    await writeFile(join(tv, "kept.mkv"), "x");
    await until(() => reported.length > 0, () => "kept.mkv reported");
    await w.stop();
    const state = await readFile(join(root, "watch", "tv.state"), "utf8");
    expect(state).toContain("kept.mkv");
    // And the next start knows it: nothing to report.
    const next = watcher({ minAgeMs: 0 });
    await watching(next.watcher);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(next.reported).toEqual([]);
  });
});

describe("changes still settling at a stop", () => {
  it("are reported by the next start: a new file, a changed file, a deleted file and a deleted folder's files", async () => {
    await mkdir(join(tv, "Show", "Season 01"), { recursive: true });
    await mkdir(join(tv, "Show", "Season 02"), { recursive: true });
    await writeFile(join(tv, "Show", "Season 01", "changed.mkv"), "x");
    await writeFile(join(tv, "Show", "Season 01", "deleted.mkv"), "x");
    await writeFile(join(tv, "Show", "Season 02", "in a deleted folder.mkv"), "x");
    const first = watcher({ minAgeMs: 60_000 });
    await watching(first.watcher);
    await writeFile(join(tv, "Show", "Season 01", "new.mkv"), "x");
    await writeFile(join(tv, "Show", "Season 01", "changed.mkv"), "a new version");
    await unlink(join(tv, "Show", "Season 01", "deleted.mkv"));
    await rm(join(tv, "Show", "Season 02"), { recursive: true });
    // All four wait to settle (60 s): the watcher stops before any is reported.
    await until(() => first.watcher.status().settling === 4, () => `four changes settling (${JSON.stringify(first.watcher.status())})`);
    await first.watcher.stop();
    expect(first.reported).toEqual([]);

    const second = watcher({ minAgeMs: 500 });
    await watching(second.watcher);
    await until(() => second.reported.length >= 4, () => `the four changes reported (${JSON.stringify(second.reported)})`);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect([...second.reported].sort((a, b) => a.path.localeCompare(b.path))).toEqual([
      { path: join(tv, "Show", "Season 01", "changed.mkv"), event: "Modified" },
      { path: join(tv, "Show", "Season 01", "deleted.mkv"), event: "Deleted" },
      { path: join(tv, "Show", "Season 01", "new.mkv"), event: "Created" },
      { path: join(tv, "Show", "Season 02", "in a deleted folder.mkv"), event: "Deleted" },
    ]);
    await second.watcher.stop();

    // Reported once: the start after that has nothing left to say.
    const third = watcher({ minAgeMs: 0 });
    await watching(third.watcher);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(third.reported).toEqual([]);
  });
});

describe("50,000 files appearing at once in one folder", () => {
  it("are all reported, and the event loop is never held long (not for seconds: webhooks and /health go on)", async () => {
    const { watcher: w, reported } = watcher({ minAgeMs: 1_000 });
    await watching(w);
    const staged = join(root, "staging", "Season 01");
    mkdirSync(staged, { recursive: true });
    for (let file = 0; file < 50_000; file++) writeFileSync(join(staged, `Big - E${String(file).padStart(5, "0")}.mkv`), "x");
    const delay = monitorEventLoopDelay({ resolution: 10 });
    delay.enable();
    renameSync(staged, join(tv, "Season 01"));
    await until(() => reported.length === 50_000, () => `50,000 reported (${String(reported.length)} so far)`, 60_000);
    delay.disable();
    // A generous bound: the whole burst in one synchronous stretch took seconds.
    expect(delay.max / 1e6).toBeLessThan(1_000);
  }, 90_000);
});

describe("a folder of 10,000 files moved in", () => {
  it("is encoded and compared a slice at a time, with turns of the event loop between, and all of it waits to settle", async () => {
    const season = join(tv, "Season 01");
    const probe = createDiskProbe({ log: captureLog().log });
    /** Turns of the event loop, counted by a callback that runs once per turn. */
    let turns = 0;
    const at: { listed?: number; recorded?: number; compared?: number } = {};
    const w = createFolderWatcher({
      name: "tv",
      settings: { paths: [tv], mode: "events", pollMs: 300_000, minAgeMs: 600_000, wanted: () => true },
      stateFile: join(root, "watch", "tv.state"),
      probe: {
        mountOf: (path) => probe.mountOf(path),
        list: async (path, options) => {
          const answer = await probe.list(path, options);
          if (path === season) at.listed ??= turns;
          return answer;
        },
      },
      clock: systemClock,
      log: captureLog().log,
      report: () => Promise.resolve(),
      watchFolders: watchFoldersWithKernel,
    });
    w.start();
    watchers.push(w);
    await watching(w);
    let counting = true;
    const count = (): void => {
      turns += 1;
      if (at.listed !== undefined && w.status().files === 10_000) at.recorded ??= turns;
      if (w.status().settling > 0) at.compared ??= turns;
      if (counting) setImmediate(count);
    };
    setImmediate(count);
    const staged = join(root, "staging", "Season 01");
    mkdirSync(staged, { recursive: true });
    for (let file = 0; file < 10_000; file++) writeFileSync(join(staged, `Big - E${String(file).padStart(5, "0")}.mkv`), "x");
    renameSync(staged, season);
    try {
      await until(() => w.status().settling === 10_000, () => `10,000 settling (${String(w.status().settling)} so far)`, 30_000);
    } finally {
      // Stopped whatever the outcome: a counter left running keeps the test's process busy for ever.
      counting = false;
    }
    // All at once, the listing was kept in the turn it arrived and compared in the turn it was kept (0 turns each).
    expect((at.recorded ?? 0) - (at.listed ?? 0)).toBeGreaterThanOrEqual(5);
    expect((at.compared ?? 0) - (at.recorded ?? 0)).toBeGreaterThanOrEqual(5);
    expect(w.status().files).toBe(10_000);
  }, 60_000);
});
