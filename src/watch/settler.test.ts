// @module-tag process
import { appendFile, mkdir, rename, unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { captureLog, makeTempDir } from "../../test/support/capture-log.ts";
import { createManualClock, type ManualClock } from "../../test/support/manual-clock.ts";
import { createDiskProbe, type DiskProbe } from "../paths/disk-probe.ts";
import type { FileEntry } from "./listing.ts";
import { createSettler, type SettledChange, type Settler } from "./settler.ts";

/**
 * MIN_AGE_SECONDS on real files: the settler's second look at a folder goes to the disk through the real disk probe;
 * time moves only when the test says (manual clock), and each timer's disk work finishes before time moves on.
 */
const MIN_AGE_MS = 30_000;

let dir: string;
let cleanup: () => Promise<void>;
let clock: ManualClock;
let probe: DiskProbe;
let settler: Settler;
let reports: SettledChange[][];
let relists: string[];
let inFlight: number;
/** The next relists answer "the disk did not answer" (a hung mount), this many times. */
let unanswered: number;

beforeEach(async () => {
  ({ dir, cleanup } = await makeTempDir("autoscan-settler-"));
  clock = createManualClock();
  probe = createDiskProbe({ log: captureLog().log });
  reports = [];
  relists = [];
  inFlight = 0;
  unanswered = 0;
  settler = createSettler({
    minAgeMs: MIN_AGE_MS,
    clock,
    relist: async (folder) => {
      inFlight++;
      try {
        relists.push(folder);
        if (unanswered > 0) {
          unanswered--;
          return undefined;
        }
        const listing = await probe.list(folder);
        if (listing === "unanswered") return undefined;
        return typeof listing === "object" && "files" in listing ? listing.files : [];
      } finally {
        inFlight--;
      }
    },
    report: (changes) => reports.push([...changes]),
  });
});

afterEach(async () => {
  settler.stop();
  await cleanup();
});

/** Moves the clock, letting each pass's disk work finish before time moves on. */
const advance = (ms: number): Promise<void> =>
  clock.advance(ms, async () => {
    do await new Promise((resolve) => setImmediate(resolve));
    while (inFlight > 0);
  });

/** What the watcher would hand the settler for this file now (its size and mtime on disk). */
async function entry(folder: string, name: string): Promise<FileEntry> {
  const listing = await probe.list(folder);
  const found = typeof listing === "object" && "files" in listing ? listing.files.find((file) => file.name === name) : undefined;
  if (!found) throw new Error(`${name} is not in ${folder}`);
  return found;
}

describe("a file still growing", () => {
  it("is reported once its size and mtime have not changed for MIN_AGE, never while it grows", async () => {
    const path = join(dir, "Show - S01E01.mkv");
    await writeFile(path, "0123456789");
    settler.saw(dir, await entry(dir, "Show - S01E01.mkv"), true);
    // The copy goes on: a piece every 20 s, each told by the watcher (a change of that file).
    for (let piece = 0; piece < 4; piece++) {
      await advance(20_000);
      await appendFile(path, "more bytes ".repeat(piece + 1));
      settler.saw(dir, await entry(dir, "Show - S01E01.mkv"), false);
    }
    expect(reports).toEqual([]);
    // The last piece landed; MIN_AGE less a second later it still waits.
    await advance(MIN_AGE_MS - 1_000);
    expect(reports).toEqual([]);
    expect(settler.waiting()).toBe(1);
    await advance(1_000);
    // Created (it was new when first seen, however many changes followed), once.
    expect(reports).toEqual([[{ path, event: "Created" }]]);
    expect(settler.waiting()).toBe(0);
    await advance(5 * MIN_AGE_MS);
    expect(reports).toHaveLength(1);
  });

  it("a change the watcher did not hear of (a dropped event) is found at the second look: it waits again", async () => {
    const path = join(dir, "Movie (2020).mkv");
    await writeFile(path, "first part");
    settler.saw(dir, await entry(dir, "Movie (2020).mkv"), true);
    await advance(MIN_AGE_MS - 5_000);
    await appendFile(path, " and the second part");
    // At MIN_AGE the folder is listed again: the size differs, so it is not reported, and waits a full MIN_AGE anew.
    await advance(5_000);
    expect(relists).toEqual([dir]);
    expect(reports).toEqual([]);
    await advance(MIN_AGE_MS - 1_000);
    expect(reports).toEqual([]);
    await advance(1_000);
    expect(reports).toEqual([[{ path, event: "Created" }]]);
  });

  it("a known file that changed is reported Modified", async () => {
    const path = join(dir, "Show - S01E02.mkv");
    await writeFile(path, "transcoded");
    settler.saw(dir, await entry(dir, "Show - S01E02.mkv"), false);
    await advance(MIN_AGE_MS);
    expect(reports).toEqual([[{ path, event: "Modified" }]]);
  });
});

describe("a download client's temporary file", () => {
  it("renamed to its final name: only the final name is reported, and no deletion", async () => {
    await writeFile(join(dir, "Show - S01E03.mkv.part"), "partial");
    settler.saw(dir, await entry(dir, "Show - S01E03.mkv.part"), true);
    await advance(10_000);
    await appendFile(join(dir, "Show - S01E03.mkv.part"), " complete");
    await rename(join(dir, "Show - S01E03.mkv.part"), join(dir, "Show - S01E03.mkv"));
    settler.gone(dir, "Show - S01E03.mkv.part");
    settler.saw(dir, await entry(dir, "Show - S01E03.mkv"), true);
    await advance(MIN_AGE_MS);
    expect(reports).toEqual([[{ path: join(dir, "Show - S01E03.mkv"), event: "Created" }]]);
    await advance(5 * MIN_AGE_MS);
    expect(reports.flat().filter((change) => change.event === "Deleted")).toEqual([]);
  });

  it("gone before the watcher said so (found missing at the second look): nothing at all is reported", async () => {
    await writeFile(join(dir, "tmp.mkv.!qB"), "partial");
    settler.saw(dir, await entry(dir, "tmp.mkv.!qB"), true);
    await unlink(join(dir, "tmp.mkv.!qB"));
    await advance(MIN_AGE_MS);
    expect(relists).toEqual([dir]);
    expect(reports).toEqual([]);
    expect(settler.waiting()).toBe(0);
    await advance(5 * MIN_AGE_MS);
    expect(reports).toEqual([]);
  });
});

describe("a deletion", () => {
  it("a known file changed, then deleted before it settled: its deletion is reported (and kept pending until then)", async () => {
    const path = join(dir, "Known - S01E01.mkv");
    await writeFile(path, "a better version");
    settler.saw(dir, await entry(dir, "Known - S01E01.mkv"), false);
    await advance(5_000);
    await unlink(path);
    settler.gone(dir, "Known - S01E01.mkv");
    expect(settler.pending()).toEqual([{ dir, name: "Known - S01E01.mkv", event: "Deleted" }]);
    await advance(MIN_AGE_MS);
    expect(reports).toEqual([[{ path, event: "Deleted" }]]);
  });

  it("a known file changed, then found gone at the second look (its deletion unheard): Deleted", async () => {
    const path = join(dir, "Known - S01E02.mkv");
    await writeFile(path, "changed");
    settler.saw(dir, await entry(dir, "Known - S01E02.mkv"), false);
    await unlink(path);
    await advance(MIN_AGE_MS);
    await advance(MIN_AGE_MS);
    expect(reports).toEqual([[{ path, event: "Deleted" }]]);
  });

  it("is reported after MIN_AGE when the file is still gone", async () => {
    const path = join(dir, "Old - S01E01.mkv");
    await writeFile(path, "x");
    await unlink(path);
    settler.gone(dir, "Old - S01E01.mkv");
    await advance(MIN_AGE_MS - 1_000);
    expect(reports).toEqual([]);
    await advance(1_000);
    expect(reports).toEqual([[{ path, event: "Deleted" }]]);
    await advance(5 * MIN_AGE_MS);
    expect(reports).toHaveLength(1);
  });

  it("a file back under the same name before MIN_AGE (replaced): no deletion, a change once it settles", async () => {
    const path = join(dir, "Replaced.mkv");
    settler.gone(dir, "Replaced.mkv");
    await advance(10_000);
    await writeFile(path, "the new version");
    await advance(MIN_AGE_MS - 10_000);
    expect(reports).toEqual([]);
    await advance(MIN_AGE_MS);
    expect(reports).toEqual([[{ path, event: "Modified" }]]);
    expect(reports.flat().some((change) => change.event === "Deleted")).toBe(false);
  });

  it("while the disk does not answer nothing is reported; it is looked at again and reported once the disk answers", async () => {
    const path = join(dir, "Gone.mkv");
    unanswered = 1;
    settler.gone(dir, "Gone.mkv");
    await advance(MIN_AGE_MS);
    expect(relists).toEqual([dir]);
    expect(reports).toEqual([]);
    expect(settler.waiting()).toBe(1);
    await advance(10_000);
    expect(relists).toEqual([dir, dir]);
    expect(reports).toEqual([[{ path, event: "Deleted" }]]);
  });
});

describe("a rename", () => {
  it("within a folder: Deleted (old name) and Created (new name) in the same report", async () => {
    await writeFile(join(dir, "Show.S01E04.WEB.mkv"), "episode");
    await rename(join(dir, "Show.S01E04.WEB.mkv"), join(dir, "Show - S01E04.mkv"));
    settler.gone(dir, "Show.S01E04.WEB.mkv");
    settler.saw(dir, await entry(dir, "Show - S01E04.mkv"), true);
    await advance(MIN_AGE_MS);
    expect(reports).toHaveLength(1);
    expect(reports[0]).toEqual(
      expect.arrayContaining([
        { path: join(dir, "Show.S01E04.WEB.mkv"), event: "Deleted" },
        { path: join(dir, "Show - S01E04.mkv"), event: "Created" },
      ]),
    );
    expect(reports[0]).toHaveLength(2);
  });

  it("seen a few milliseconds apart (a busy machine): still one report", async () => {
    await writeFile(join(dir, "Show.S01E05.WEB.mkv"), "episode");
    await rename(join(dir, "Show.S01E05.WEB.mkv"), join(dir, "Show - S01E05.mkv"));
    settler.gone(dir, "Show.S01E05.WEB.mkv");
    await advance(3);
    settler.saw(dir, await entry(dir, "Show - S01E05.mkv"), true);
    await advance(MIN_AGE_MS - 3);
    await advance(5_000);
    expect(reports).toHaveLength(1);
    expect(reports[0]).toHaveLength(2);
  });

  it("to another folder: both folders' changes in the same report", async () => {
    const from = join(dir, "Season 01");
    const to = join(dir, "Season 02");
    await mkdir(from);
    await mkdir(to);
    await writeFile(join(from, "Show - S02E01.mkv"), "misfiled");
    await rename(join(from, "Show - S02E01.mkv"), join(to, "Show - S02E01.mkv"));
    settler.gone(from, "Show - S02E01.mkv");
    settler.saw(to, await entry(to, "Show - S02E01.mkv"), true);
    await advance(MIN_AGE_MS);
    expect(reports).toHaveLength(1);
    expect([...(reports[0] ?? [])].sort((a, b) => a.path.localeCompare(b.path))).toEqual([
      { path: join(from, "Show - S02E01.mkv"), event: "Deleted" },
      { path: join(to, "Show - S02E01.mkv"), event: "Created" },
    ]);
  });
});

describe("MIN_AGE_SECONDS 0 and stop", () => {
  it("MIN_AGE 0 reports at the next pass without a second look", async () => {
    const reportsNow: SettledChange[][] = [];
    const now = createSettler({ minAgeMs: 0, clock, relist: () => Promise.reject(new Error("not asked")), report: (c) => reportsNow.push([...c]) });
    now.saw(dir, { name: "a.mkv", size: 1, mtimeMs: 1 }, true);
    now.gone(dir, "b.mkv");
    await advance(0);
    expect(reportsNow).toEqual([[{ path: join(dir, "a.mkv"), event: "Created" }, { path: join(dir, "b.mkv"), event: "Deleted" }]]);
    now.stop();
  });

  it("after stop nothing is reported and no timer is left; what waited is still listed as pending (kept for the next start)", async () => {
    await writeFile(join(dir, "a.mkv"), "x");
    await writeFile(join(dir, "b.mkv"), "x");
    settler.saw(dir, await entry(dir, "a.mkv"), true);
    settler.saw(dir, await entry(dir, "b.mkv"), false);
    settler.gone(dir, "c.mkv");
    settler.stop();
    await advance(2 * MIN_AGE_MS);
    expect(reports).toEqual([]);
    expect(clock.pendingTimers()).toBe(0);
    expect(settler.pending()).toEqual([
      { dir, name: "a.mkv", event: "Created" },
      { dir, name: "b.mkv", event: "Modified" },
      { dir, name: "c.mkv", event: "Deleted" },
    ]);
  });

  it("pending: only what has not been reported yet", async () => {
    await writeFile(join(dir, "early.mkv"), "x");
    settler.saw(dir, await entry(dir, "early.mkv"), true);
    await advance(20_000);
    await writeFile(join(dir, "late.mkv"), "x");
    settler.saw(dir, await entry(dir, "late.mkv"), true);
    await advance(10_000);
    expect(reports).toEqual([[{ path: join(dir, "early.mkv"), event: "Created" }]]);
    expect(settler.pending()).toEqual([{ dir, name: "late.mkv", event: "Created" }]);
  });
});
