import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ScanContext } from "../src/core/target.ts";
import { createLogger } from "../src/logging/create-logger.ts";
import type { RunScanner } from "../src/targets/plex/analyze.ts";
import { createPlex, type Plex, type PlexOptions } from "../src/targets/plex/create-plex.ts";
import { startFakePlex, type FakePlex } from "./support/fake-plex.ts";
import { createSteppingClock, type SteppingClock } from "./support/plex-clock.ts";
import { createLibraryFixture, type LibraryFixture } from "./support/plex-library-db.ts";

const EPISODE_1 = "/data/TV/Dark/Season 01/Dark - S01E01.mkv";
const EPISODE_2 = "/data/TV/Dark/Season 01/Dark - S01E02.mkv";
const HEAT = "/data/Movies/Heat (1995)/Heat.mkv";

let dir: string;
let plex: FakePlex;
let fixture: LibraryFixture;
let clock: SteppingClock;
let lines: string[];
let built: Plex | undefined;
let ids: { season: string; episodes: string[]; heat: string; pending: string; pendingMedia: string };

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), "plex-after-"));
  fixture = createLibraryFixture(join(dir, "com.plexapp.plugins.library.db"));
  const movies = fixture.addSection({ name: "Movies", type: "movie", roots: ["/data/Movies"] });
  const tv = fixture.addSection({ name: "TV", type: "show", roots: ["/data/TV"] });
  const heat = fixture.addMovie({ sectionId: movies, title: "Heat", file: HEAT, size: 10 });
  fixture.addMovie({ sectionId: movies, title: "Gone", file: "/data/Movies/Gone/Gone.mkv", size: 1, deleted: true });
  const pending = fixture.addMovie({ sectionId: movies, title: "Up", file: "/data/Movies/Up/old.avi", size: 1 });
  const episodes = [EPISODE_1, EPISODE_2].map((file, i) =>
    fixture.addEpisode({ sectionId: tv, show: "Dark", season: 1, episode: i + 1, file, size: 20 }),
  );
  fixture.seal();
  ids = {
    season: episodes[0]?.seasonId ?? "",
    episodes: episodes.map((e) => e.itemId),
    heat: heat.itemId,
    pending: pending.itemId,
    pendingMedia: pending.mediaItemId,
  };
  plex = await startFakePlex({
    sections: [
      { key: movies, title: "Movies", type: "movie", locations: ["/data/Movies"] },
      { key: tv, title: "TV", type: "show", locations: ["/data/TV"] },
    ],
  });
  clock = createSteppingClock();
  lines = [];
});

afterEach(async () => {
  built?.close();
  built = undefined;
  fixture.close();
  await plex.close();
  rmSync(dir, { recursive: true, force: true });
});

function target(overrides: Partial<PlexOptions> = {}) {
  const handle = createLogger({ level: "debug", format: "json", stream: { write: (line: string) => lines.push(line) } });
  built = createPlex({
    url: plex.url,
    token: plex.token,
    clock,
    log: handle.log,
    checkBeforeScan: false,
    waitForExternalScanners: false,
    analyze: { type: "off", directory: true },
    emptyTrash: { enabled: false, maxFiles: 100, controlFiles: [], zeroDeleted: false },
    databasePath: fixture.path,
    ...overrides,
  });
  return built.apiTarget;
}

function context(files: string[], event = "Download"): ScanContext {
  return {
    sources: [{ source: "Sonarr", event, path: files[0] ?? "" }],
    files,
    priority: 0,
    attempt: 1,
    signal: new AbortController().signal,
  };
}

const logged = (text: string): boolean => lines.some((line) => line.includes(text));
/** Messages at WARN and above, in order. */
const infos = (): string[] =>
  lines
    .map((line) => JSON.parse(line) as { level: string; msg: string })
    .filter((l) => l.level === "info")
    .map((l) => l.msg);
const warnings = (): string[] =>
  lines
    .map((line) => JSON.parse(line) as { level: string; msg: string })
    .filter((l) => ["warn", "error", "fatal"].includes(l.level))
    .map((l) => l.msg);

describe("analysis after the scan", () => {
  it("waits until Plex has finished the scan, then analyzes the season (PLEX_ANALYZE_DIRECTORY)", async () => {
    plex.setScanBusyReads(6);
    const outcome = await target({ analyze: { type: "basic", directory: true } }).scan(
      "/data/TV/Dark/Season 01",
      context([EPISODE_1, EPISODE_2]),
    );
    expect(plex.analyzed).toEqual([ids.season]);
    const lastActivities = plex.requests.findLastIndex((r) => r.path === "/activities");
    const firstAnalyze = plex.requests.findIndex((r) => r.path.endsWith("/analyze"));
    expect(lastActivities).toBeLessThan(firstAnalyze);
    expect(clock.sleeps.filter((ms) => ms === 10_000).length).toBeGreaterThanOrEqual(2);
    expect(outcome).toEqual({ status: "scanned", detail: "section 2; analyzed 1 item(s)" });
  });

  it("analyzes the file's own item without PLEX_ANALYZE_DIRECTORY, and a movie as itself", async () => {
    await target({ analyze: { type: "basic", directory: false } }).scan("/data/TV/Dark/Season 01", context([EPISODE_2]));
    await target({ analyze: { type: "basic", directory: true } }).scan("/data/Movies/Heat (1995)", context([HEAT]));
    expect(plex.analyzed).toEqual([ids.episodes[1], ids.heat]);
  });

  it("runs deep analysis through the scanner executor, over the season's episodes", async () => {
    const runs: string[][] = [];
    const runScanner: RunScanner = async (argv) => {
      runs.push(argv);
      return { exitCode: 0, stdout: "", stderr: "" };
    };
    await target({ analyze: { type: "deep", directory: true }, runScanner }).scan(
      "/data/TV/Dark/Season 01",
      context([EPISODE_1]),
    );
    expect(runs).toEqual([["--analyze-deeply", "--item", ids.episodes.join(",")]]);
    expect(plex.analyzed).toEqual([]);
  });

  it("says deep analysis needs the scanner executor, and analyzes through the API instead", async () => {
    await target({ analyze: { type: "deep", directory: false } }).scan("/data/Movies/Heat (1995)", context([HEAT]));
    expect(logged("'deep' needs the Plex Media Scanner executor")).toBe(true);
    expect(plex.analyzed).toEqual([ids.heat]);
  });

  it("looks the item up again when Plex has not added the file yet", async () => {
    const file = "/data/Movies/Up/Up.mkv";
    let lookups = 0;
    clock.onSleep = (ms) => {
      if (ms === 10_000 && ++lookups === 2) fixture.addPart({ mediaItemId: ids.pendingMedia, file, size: 5 });
    };
    await target({ analyze: { type: "basic", directory: true } }).scan("/data/Movies/Up", context([file]));
    expect(plex.analyzed).toEqual([ids.pending]);
  });

  it("gives up, with a warning, on a file that never shows up", async () => {
    const outcome = await target({ analyze: { type: "basic", directory: true } }).scan(
      "/data/Movies/Nope",
      context(["/data/Movies/Nope/Nope.mkv"]),
    );
    expect(plex.analyzed).toEqual([]);
    expect(logged("Could not find 1 file(s) in the Plex library to analyze")).toBe(true);
    expect(outcome).toEqual({ status: "scanned", detail: "section 1; nothing to analyze" });
  });

  it("does not wait for anything when analysis and trash are off", async () => {
    await target().scan("/data/Movies/Heat (1995)", context([HEAT]));
    expect(clock.sleeps).toEqual([]);
    expect(plex.requests.some((r) => r.path === "/activities")).toBe(false);
  });
});

describe("emptying the trash after the scan", () => {
  const trash = (over: Partial<PlexOptions["emptyTrash"]> = {}): PlexOptions["emptyTrash"] => ({
    enabled: true,
    maxFiles: 100,
    controlFiles: [],
    zeroDeleted: false,
    ...over,
  });

  it("empties a section's trash when the control files exist and the count is within the limit", async () => {
    const control = join(dir, "mounted.bin");
    writeFileSync(control, "");
    await target({ emptyTrash: trash({ controlFiles: [control] }) }).scan("/data/Movies/Gone", context([]));
    expect(plex.emptied).toEqual(["1"]);
    expect(logged("Emptying trash to clear 2 deleted items...")).toBe(true);
  });

  it("keeps the trash when a control file is missing (a dropped mount)", async () => {
    const missing = join(dir, "not-mounted.bin");
    await target({ emptyTrash: trash({ controlFiles: [missing] }) }).scan("/data/Movies/Gone", context([]));
    expect(plex.emptied).toEqual([]);
    expect(logged(`Skipping emptying trash as control file is not present: '${missing}'`)).toBe(true);
  });

  it("keeps the trash when more items are deleted than PLEX_EMPTY_TRASH_MAX_FILES", async () => {
    await target({ emptyTrash: trash({ maxFiles: 1 }) }).scan("/data/Movies/Gone", context([]));
    expect(plex.emptied).toEqual([]);
    expect(logged("Skipping emptying trash as there were 2 deleted items")).toBe(true);
  });

  it("empties an empty trash only with PLEX_EMPTY_TRASH_ZERO_DELETED or for an upgrade", async () => {
    await target({ emptyTrash: trash() }).scan("/data/TV/Dark", context([]));
    expect(plex.emptied).toEqual([]);
    await target({ emptyTrash: trash() }).scan("/data/TV/Dark", context([], "Upgrade"));
    await target({ emptyTrash: trash({ zeroDeleted: true }) }).scan("/data/TV/Dark", context([]));
    expect(plex.emptied).toEqual(["2", "2"]);
  });

  it("retries a failed emptyTrash", async () => {
    plex.failNext(/^PUT \/library\/sections\/1\/emptyTrash$/, 503, 2);
    await target({ emptyTrash: trash() }).scan("/data/Movies/Gone", context([]));
    expect(plex.emptied).toEqual(["1"]);
    expect(plex.requests.filter((r) => r.path.endsWith("/emptyTrash"))).toHaveLength(3);
  });

  it("does not empty anything without a library database to count with", async () => {
    const outcome = await target({ emptyTrash: trash(), databasePath: "" }).scan("/data/Movies/Gone", context([]));
    expect(plex.emptied).toEqual([]);
    expect(warnings()).toEqual([
      "Cannot read Plex's database (PLEX_DATABASE_PATH is empty): emptying the trash (PLEX_EMPTY_TRASH) after a scan " +
        "will be skipped. Set PLEX_DATABASE_PATH to Plex's database mounted read-only, or set PLEX_EMPTY_TRASH to false.",
    ]);
    expect(outcome).toEqual({ status: "scanned", detail: "section 1; after-scan steps skipped: Plex's database cannot be read" });
  });
});

describe("Plex's database not mounted (the default Docker setup)", () => {
  const missing = (): string => join(dir, "not-mounted", "com.plexapp.plugins.library.db");

  it("says once at start, as information, that analysis is off and how to turn it on; no warning, no note per scan", async () => {
    const api = target({ analyze: { type: "basic", directory: true }, databasePath: missing() });
    expect(await built?.database.usable()).toBe(false);
    expect(warnings()).toEqual([]);
    expect(infos()).toContain(
      `Analysis after a scan is off: Plex's database is not at PLEX_DATABASE_PATH '${missing()}'. To turn it on, mount ` +
        "Plex's database there read-only (in Docker, a volume of Plex's 'Databases' folder); it is used as soon as it appears.",
    );
    for (let i = 0; i < 5; i++) {
      const outcome = await api.scan("/data/TV/Dark/Season 01", context([EPISODE_1]));
      expect(outcome).toEqual({ status: "scanned", detail: "section 2" });
    }
    expect(plex.scans).toHaveLength(5);
    expect(warnings()).toEqual([]);
    expect(infos().filter((msg) => msg.startsWith("Analysis after a scan is off"))).toHaveLength(1);
    expect(plex.analyzed).toEqual([]);
    // Nothing to do after the scan, so nothing is waited for.
    expect(clock.sleeps).toEqual([]);
    expect(plex.requests.some((r) => r.path === "/activities")).toBe(false);
  });

  it("names PLEX_EMPTY_TRASH too when it is on, and keeps the trash", async () => {
    const api = target({
      analyze: { type: "deep", directory: true },
      emptyTrash: { enabled: true, maxFiles: 100, controlFiles: [], zeroDeleted: true },
      runScanner: async () => ({ exitCode: 0, stdout: "", stderr: "" }),
      databasePath: missing(),
    });
    for (let i = 0; i < 5; i++) await api.scan("/data/Movies/Gone", context([]));
    expect(warnings()).toEqual([
      `Cannot read Plex's database at PLEX_DATABASE_PATH '${missing()}' (no such file): analysis ` +
        `(PLEX_ANALYZE_TYPE "deep") and emptying the trash (PLEX_EMPTY_TRASH) after a scan will be skipped. Mount ` +
        `Plex's database read-only at that path (it is used as soon as it appears), or set PLEX_ANALYZE_TYPE to "off" ` +
        `and PLEX_EMPTY_TRASH to false.`,
    ]);
    expect(plex.emptied).toEqual([]);
    expect(plex.scans).toHaveLength(5);
  });

  it("uses the database once it appears (a late mount), looking again at most once a minute", async () => {
    const path = missing();
    let looks = 0;
    const api = target({
      analyze: { type: "basic", directory: false },
      databasePath: path,
      statDatabase: async (file) => {
        looks += 1;
        return stat(file).then(
          (info) => (info.isDirectory() ? "directory" : "file"),
          () => "missing",
        );
      },
    });
    await api.scan("/data/Movies/Heat (1995)", context([HEAT]));
    expect(looks).toBe(1);

    mkdirSync(dirname(path));
    fixture.close(); // the last connection checkpoints the -wal into the main file
    copyFileSync(join(dir, "com.plexapp.plugins.library.db"), path);
    fixture = createLibraryFixture(join(dir, "unused.db"));

    clock.advance(30_000);
    await api.scan("/data/Movies/Heat (1995)", context([HEAT]));
    expect(looks).toBe(1);
    expect(plex.analyzed).toEqual([]);

    clock.advance(30_000);
    const outcome = await api.scan("/data/Movies/Heat (1995)", context([HEAT]));
    expect(looks).toBe(2);
    expect(plex.analyzed).toEqual([ids.heat]);
    expect(outcome).toEqual({ status: "scanned", detail: "section 1; analyzed 1 item(s)" });
    expect(logged("Plex's database can be read now (PLEX_DATABASE_PATH)")).toBe(true);
    // Missing at start with only analysis wanting it: information, not a warning.
    expect(warnings()).toEqual([]);
  });

  it("says once when the database goes away after it was read, and skips quietly after that", async () => {
    const path = join(dir, "mounted", "com.plexapp.plugins.library.db");
    mkdirSync(dirname(path));
    fixture.close();
    copyFileSync(join(dir, "com.plexapp.plugins.library.db"), path);
    fixture = createLibraryFixture(join(dir, "unused.db"));
    const api = target({ analyze: { type: "basic", directory: false }, databasePath: path });
    await api.scan("/data/Movies/Heat (1995)", context([HEAT]));
    expect(plex.analyzed).toEqual([ids.heat]);
    expect(warnings()).toEqual([]);

    rmSync(dirname(path), { recursive: true });
    built?.library?.close(); // the open handle would still read the unlinked file; a dropped mount has none
    for (let i = 0; i < 3; i++) await api.scan("/data/Movies/Heat (1995)", context([HEAT]));
    expect(warnings()).toEqual([
      `Can no longer read Plex's database at PLEX_DATABASE_PATH '${path}' (no such file): analysis ` +
        `(PLEX_ANALYZE_TYPE "basic") after a scan will be skipped. Mount Plex's database read-only at that path ` +
        `(it is used as soon as it appears), or set PLEX_ANALYZE_TYPE to "off".`,
    ]);
    expect(plex.analyzed).toEqual([ids.heat]);
  });
});

describe("waiting for Plex to finish the scan", () => {
  it("does not wait past the first look when Plex never reports the section busy", async () => {
    const outcome = await target({ analyze: { type: "basic", directory: false } }).scan(
      "/data/Movies/Heat (1995)",
      context([HEAT]),
    );
    expect(plex.analyzed).toEqual([ids.heat]);
    expect(clock.sleeps).toEqual([5_000]);
    expect(plex.requests.filter((r) => r.path === "/activities")).toHaveLength(1);
    expect(outcome).toEqual({ status: "scanned", detail: "section 1; analyzed 1 item(s)" });
  });

  it("waits on the scanned sections only, and stops at the bound", async () => {
    plex.setBusy("1", 1_000); // another section stays busy: not ours
    plex.setScanBusyReads(4);
    await target({ analyze: { type: "basic", directory: false } }).scan("/data/TV/Dark/Season 01", context([EPISODE_1]));
    expect(plex.analyzed).toEqual([ids.episodes[0]]);
    expect(clock.sleeps.reduce((sum, ms) => sum + ms, 0)).toBeLessThan(60_000);

    plex.setScanBusyReads(1_000); // ours never finishes
    const outcome = await target({ analyze: { type: "basic", directory: false } }).scan(
      "/data/TV/Dark/Season 01",
      context([EPISODE_2]),
    );
    expect(logged("Plex is still scanning section(s) 2 after 1800 s; going on for the scan to finish")).toBe(true);
    expect(outcome).toEqual({ status: "scanned", detail: "section 2; analyzed 1 item(s)" });
  });
});
