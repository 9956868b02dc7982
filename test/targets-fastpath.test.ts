import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { systemClock } from "../src/core/clock.ts";
import type { ScanContext } from "../src/core/target.ts";
import { parseConfigText } from "../src/config/load.ts";
import { createEmbyTarget } from "../src/targets/emby/emby-target.ts";
import { createTargetsFromConfig } from "../src/targets/from-config.ts";
import { createJellyfinTarget } from "../src/targets/jellyfin/jellyfin-target.ts";
import { PLUGIN_LANDED_SETTLE_MS } from "../src/targets/library-server-target.ts";
import { withPathMappings } from "../src/targets/mapped-target.ts";
import { captureLog, makeTempDir } from "./support/capture-log.ts";
import { createManualClock } from "./support/manual-clock.ts";
import { startFakeEmby, type FakeEmby } from "./support/fake-emby.ts";
import { startFakeJellyfin, type FakeJellyfin, type FakeJellyfinOptions } from "./support/fake-jellyfin.ts";

/**
 * The fast path on Jellyfin and Emby: the TargetedScan plugin found by `GET /Plugins` (name and id), scans through its
 * `POST /Library/ScanPath` read by `Status`, and `POST /Library/Media/Updated` (behind Jellyfin's monitor delay) when
 * it is absent, gone, or the path is not for it. Real HTTP to the fakes of test/support, real folders on disk.
 */
const LIBRARIES = [
  { name: "Shows", locations: ["/data/tv"] },
  { name: "Movies", locations: ["/data/movies"], collectionType: "movies" },
];
const SHOW = "/data/tv/Show (2020)";
const SEASON = `${SHOW}/Season 01`;
const E1 = `${SEASON}/Show - S01E01.mkv`;
const E2 = `${SEASON}/Show - S01E02.mkv`;

let root = "";
const cleanups: (() => Promise<void>)[] = [];
beforeEach(async () => {
  const temp = await makeTempDir();
  root = temp.dir;
  cleanups.push(() => temp.cleanup());
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Server path → the test's folder (`/data/tv/x` → `<root>/tv/x`). */
const toLocal = (path: string): string | undefined => (path.startsWith("/data/") ? join(root, path.slice("/data/".length)) : undefined);

function putFile(serverPath: string): void {
  const local = toLocal(serverPath) ?? "";
  mkdirSync(join(local, ".."), { recursive: true });
  writeFileSync(local, "x");
}

function context(files: readonly string[], deleted: readonly string[] = []): ScanContext {
  const sources = [
    ...files.map((path) => ({ source: "Sonarr", event: "Download", path })),
    ...deleted.map((path) => ({ source: "Sonarr", event: "EpisodeFileDelete", path, deleted: true })),
  ];
  return { id: 1, sources, files: [...files, ...deleted], priority: 0, attempt: 1, signal: new AbortController().signal };
}

async function jellyfin(options: FakeJellyfinOptions = {}): Promise<FakeJellyfin> {
  const fake = await startFakeJellyfin({ version: "12", libraries: LIBRARIES, toLocal, ...options });
  cleanups.push(() => fake.close());
  return fake;
}

async function emby(installed: boolean): Promise<FakeEmby> {
  const fake = await startFakeEmby({ libraries: LIBRARIES, toLocal, targetedScan: { installed } });
  cleanups.push(() => fake.close());
  return fake;
}

function jellyfinTarget(fake: FakeJellyfin) {
  const captured = captureLog();
  const target = createJellyfinTarget({ name: "jellyfin", url: fake.url, token: fake.key, clock: systemClock, log: captured.log });
  return { target, ...captured };
}

async function until(condition: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 500; i += 1) {
    if (condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const info = (records: readonly { level: number; msg: string }[]) => records.filter((r) => r.level === 30).map((r) => r.msg);

describe("Jellyfin with the TargetedScan plugin", () => {
  it("is detected by name and id; a new season folder is one ScanPath, visible at once, with the MediaBrowser header only", async () => {
    const fake = await jellyfin({ targetedScan: { installed: true } });
    const { target, records } = jellyfinTarget(fake);
    putFile(E1);

    const view = await target.scanRoute.detect(true);
    expect(view).toMatchObject({ target: "jellyfin", route: "plugin" });
    expect(info(records)).toEqual(["Jellyfin 'jellyfin' scans through the TargetedScan plugin 1.9.0.0 (POST /Library/ScanPath): new folders show in seconds"]);

    await expect(target.scan(SEASON, context([E1]))).resolves.toEqual({ status: "scanned", detail: `TargetedScan: Created '${SEASON}'` });
    expect(fake.targetedScan.calls).toEqual([{ path: SEASON, status: "Created", http: 200 }]);
    expect(fake.updates).toEqual([]);
    const post = fake.requests.find((r) => r.path === "/Library/ScanPath");
    expect(JSON.parse(post?.body ?? "")).toEqual({ Path: SEASON });
    expect(post?.headers.authorization).toBe(`MediaBrowser Token="${fake.key}"`);
    expect(post?.headers["x-emby-token"]).toBeUndefined();
    expect(fake.requests.find((r) => r.path === "/Plugins")?.headers.authorization).toBe(`MediaBrowser Token="${fake.key}"`);
    // The landed check can look soon: the item is there already.
    expect(target.lookup?.settleMs).toBe(PLUGIN_LANDED_SETTLE_MS);
    await expect(target.lookup?.find([E1], new AbortController().signal)).resolves.toEqual(new Map([[E1, true]]));
  });

  it("never sends a folder the server holds (its metadata would be replaced): only the new file; nothing new → Media/Updated", async () => {
    const fake = await jellyfin({ targetedScan: { installed: true } });
    const { target } = jellyfinTarget(fake);
    putFile(E1);
    putFile(E2);
    fake.library.add(E1);
    await target.scanRoute.detect(false);

    await expect(target.scan(SEASON, context([E2]))).resolves.toEqual({ status: "scanned", detail: `TargetedScan: Created '${E2}'` });
    expect(fake.targetedScan.calls.map((c) => c.path)).toEqual([E2]);
    expect(fake.library.has(E2)).toBe(true);

    // An upgrade that kept the name: the server holds folder and file. Not ScanPath (a full metadata replace): the monitor.
    await expect(target.scan(SEASON, context([E1]))).resolves.toEqual({
      status: "scanned",
      detail: "library 'Shows'; Created; not through TargetedScan: Jellyfin 'jellyfin' holds the folder already and no new file is named in it",
    });
    expect(fake.targetedScan.calls).toHaveLength(1);
    expect(fake.updates.map((u) => u.path)).toEqual([SEASON]);
    expect(fake.targetedScan.replacedMetadata).toEqual([]);
    expect(target.lookup?.settleMs).toBe(90_000);
  });

  it("several new files into a held season are one POST /Library/ScanPaths; an upgrade under a new name also drops the old item", async () => {
    const fake = await jellyfin({ targetedScan: { installed: true } });
    const { target } = jellyfinTarget(fake);
    const episodes = [E2, `${SEASON}/Show - S01E03.mkv`, `${SEASON}/Show - S01E04.mkv`];
    for (const file of [E1, ...episodes]) putFile(file);
    fake.library.add(E1);
    await target.scanRoute.detect(false);

    await expect(target.scan(SEASON, context(episodes))).resolves.toEqual({
      status: "scanned",
      detail: `TargetedScan: ${episodes.map((e) => `Created '${e}'`).join(", ")}`,
    });
    expect(fake.requests.filter((r) => r.path.startsWith("/Library/ScanPath"))).toHaveLength(1);
    expect(JSON.parse(fake.requests.find((r) => r.path === "/Library/ScanPaths")?.body ?? "")).toEqual({ Paths: episodes });
    expect(episodes.every((e) => fake.library.has(e))).toBe(true);

    // Radarr/Sonarr upgrade to a new name: the new file and the deleted old one, in one request; the batch says Removed.
    const upgraded = `${SEASON}/Show - S01E01 [2160p].mkv`;
    putFile(upgraded);
    rmSync(toLocal(E1) ?? "");
    await expect(target.scan(SEASON, context([upgraded], [E1]))).resolves.toEqual({
      status: "scanned",
      detail: `TargetedScan: Created '${upgraded}', Removed '${E1}'`,
    });
    expect(fake.targetedScan.calls.filter((c) => c.batch === 1).map((c) => [c.path, c.status])).toEqual([
      [upgraded, "Created"],
      [E1, "Removed"],
    ]);
    expect(fake.library.has(E1)).toBe(false);
    expect(fake.updates).toEqual([]);
    expect(fake.targetedScan.replacedMetadata).toEqual([]);
  });

  it("never sends a library folder itself: that would refresh everything in it", async () => {
    const fake = await jellyfin({ targetedScan: { installed: true } });
    const { target } = jellyfinTarget(fake);
    putFile(E1);
    await target.scanRoute.detect(false);

    await expect(target.scan("/data/tv", context([E1]))).resolves.toEqual({
      status: "scanned",
      detail: "library 'Shows'; Created; not through TargetedScan: the folder is a library folder itself",
    });
    expect(fake.targetedScan.calls).toEqual([]);
    expect(fake.updates.map((u) => u.path)).toEqual(["/data/tv"]);
  });

  it("404 PathNotFound means the server cannot see the path, not that the plugin is missing: an error naming the mapping", async () => {
    const fake = await jellyfin({ targetedScan: { installed: true } });
    const { target } = jellyfinTarget(fake);
    await target.scanRoute.detect(false);

    const error = await target.scan(SEASON, context([E1])).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(error?.message).toBe(
      `Jellyfin 'jellyfin' cannot see '${SEASON}' (TargetedScan: PathNotFound): the file is not there yet as Jellyfin 'jellyfin' sees it, or TARGETS.jellyfin.PATH_MAPPINGS does not put it in Jellyfin 'jellyfin''s form`,
    );
    expect(fake.targetedScan.calls).toEqual([{ path: SEASON, status: "PathNotFound", http: 404 }]);
    expect(target.scanRoute.current().route).toBe("plugin");
    expect(fake.updates).toEqual([]);
  });

  it("a deleted file the server still lists is sent alone; Jellyfin's 500 'Failed' for the removed stale item is read as removed", async () => {
    const fake = await jellyfin({ targetedScan: { installed: true } });
    const { target } = jellyfinTarget(fake);
    putFile(E2);
    fake.library.add(E1);
    fake.library.add(E2);
    await target.scanRoute.detect(false);

    await expect(target.scan(SEASON, context([], [E1]))).resolves.toEqual({ status: "scanned", detail: `TargetedScan: Removed '${E1}'` });
    expect(fake.targetedScan.calls).toEqual([{ path: E1, status: "Failed", http: 500 }]);
    expect(fake.library.has(E1)).toBe(false);
    expect(fake.updates).toEqual([]);
  });

  it("a 500 that removed nothing is not taken as success: Media/Updated is sent", async () => {
    const fake = await jellyfin({ targetedScan: { installed: true } });
    const { target } = jellyfinTarget(fake);
    putFile(E2);
    fake.library.add(E1);
    fake.library.add(E2);
    await target.scanRoute.detect(false);
    fake.failNext(/^POST \/Library\/ScanPath$/, 500, 1);

    await expect(target.scan(SEASON, context([], [E1]))).resolves.toMatchObject({ status: "scanned" });
    expect(fake.updates.map((u) => u.path)).toEqual([SEASON]);
  });

  it("the route gone (a 404 that is not the plugin's answer): Media/Updated, absent until the next look, which says it is back", async () => {
    const fake = await jellyfin({ targetedScan: { installed: true } });
    const { target, records } = jellyfinTarget(fake);
    putFile(E1);
    await target.scanRoute.detect(false);
    records.length = 0;
    fake.targetedScan.set({ installed: false });

    await target.scan(SEASON, context([E1]));
    expect(fake.updates.map((u) => u.path)).toEqual([SEASON]);
    expect(target.scanRoute.current().route).toBe("monitor");
    expect(records.filter((r) => r.level === 40).map((r) => r.msg)).toEqual([
      "Jellyfin 'jellyfin': POST /Library/ScanPath is not there (404 without the plugin's answer): was the plugin removed? Scans go through POST /Library/Media/Updated until the next reload or restart.",
    ]);

    // A reload asks again: the plugin is back, and one line says so.
    fake.targetedScan.set({ installed: true });
    records.length = 0;
    await expect(target.scanRoute.detect(false)).resolves.toMatchObject({ route: "plugin" });
    expect(info(records)).toHaveLength(1);
    await target.scanRoute.detect(false);
    expect(info(records)).toHaveLength(1);
  });

  it("a plugin named TargetedScan with another id, or one Jellyfin reports Disabled, does not count", async () => {
    const other = await jellyfin({ targetedScan: { installed: true, id: "0123456789abcdef0123456789abcdef" } });
    const a = jellyfinTarget(other);
    await expect(a.target.scanRoute.detect(false)).resolves.toMatchObject({ route: "monitor" });
    expect(a.target.scanRoute.current().words).toContain("a plugin named TargetedScan is there, but not with targeted-scans' id");

    const disabled = await jellyfin({ targetedScan: { installed: true, status: "Disabled" } });
    const b = jellyfinTarget(disabled);
    await expect(b.target.scanRoute.detect(false)).resolves.toMatchObject({ route: "monitor" });
    expect(b.target.scanRoute.current().words).toContain("installed but Disabled (not Active)");
    putFile(E1);
    await b.target.scan(SEASON, context([E1]));
    expect(disabled.requests.some((r) => r.path === "/Library/ScanPath")).toBe(false);
  });

  it("ParentNotFound (no folder above the path the plugin knows): Media/Updated instead", async () => {
    const fake = await jellyfin({ targetedScan: { installed: true } });
    const { target } = jellyfinTarget(fake);
    putFile(E1);
    await target.scanRoute.detect(false);
    // Our library list is cached (read by a first scan); the server's Shows library moved away since.
    putFile("/data/movies/Heat (1995)/Heat (1995).mkv");
    await target.scan("/data/movies/Heat (1995)", context(["/data/movies/Heat (1995)/Heat (1995).mkv"]));
    fake.setLibraries([{ name: "Shows", locations: ["/srv/tv"] }, LIBRARIES[1]!]);

    await expect(target.scan(SEASON, context([E1]))).resolves.toEqual({
      status: "scanned",
      detail: `library 'Shows'; Created; not through TargetedScan: TargetedScan found no known folder above '${SEASON}'`,
    });
    expect(fake.targetedScan.calls.map((c) => c.status)).toEqual(["Created", "ParentNotFound"]);
    expect(fake.updates.map((u) => u.path)).toEqual([SEASON]);
  });

  it("goes through the target's PATH_MAPPINGS, and its settle delay follows the last scan", async () => {
    const fake = await jellyfin({ targetedScan: { installed: true } });
    const { target: bare } = jellyfinTarget(fake);
    const target = withPathMappings(bare, { "/data/tv/": ["/mnt/media/tv/"] });
    putFile(E1);
    await bare.scanRoute.detect(false);

    await target.scan("/mnt/media/tv/Show (2020)/Season 01", context(["/mnt/media/tv/Show (2020)/Season 01/Show - S01E01.mkv"]));
    expect(fake.targetedScan.calls.map((c) => c.path)).toEqual([SEASON]);
    expect(target.lookup?.settleMs).toBe(PLUGIN_LANDED_SETTLE_MS);
  });
});

describe("Jellyfin without the plugin", () => {
  it("says so at start with how to install it, and Media/Updated waits for the monitor delay, then reads the whole library location", async () => {
    const fake = await jellyfin({ libraryMonitorDelayMs: 100 });
    const { target, records } = jellyfinTarget(fake);
    putFile(E1);

    await expect(target.scanRoute.detect(true)).resolves.toMatchObject({ route: "monitor" });
    const [line] = info(records);
    expect(line).toContain("Jellyfin 'jellyfin' scans through POST /Library/Media/Updated (Jellyfin acts after its LibraryMonitorDelay, 60 s by default");
    expect(line).toContain("the TargetedScan plugin is not installed");
    expect(line).toContain("https://raw.githubusercontent.com/d3v1l1989/targeted-scans/main/manifest.json");

    await expect(target.scan(SEASON, context([E1]))).resolves.toMatchObject({ status: "scanned" });
    expect(fake.requests.some((r) => r.path === "/Library/ScanPath")).toBe(false);
    expect(fake.library.has(E1)).toBe(false);
    expect(fake.monitor?.pending()).toBe(1);
    await until(() => fake.library.has(E1), "the monitor to fire");
    // A new show folder: the nearest item Jellyfin knows is the library location, read again as a whole.
    expect(fake.monitor?.validated).toEqual(["/data/tv"]);
    expect(target.lookup?.settleMs).toBe(90_000);
  });

  it("a key that may not list plugins: Media/Updated, with the reason; asked again by a scan a minute later", async () => {
    const fake = await jellyfin({ targetedScan: { installed: true } });
    fake.failNext(/^GET \/Plugins$/, 403, 1);
    const clock = createManualClock();
    const target = createJellyfinTarget({ name: "jellyfin", url: fake.url, token: fake.key, clock, log: captureLog().log });
    putFile(E1);
    await expect(target.scanRoute.detect(false)).resolves.toMatchObject({ route: "monitor" });
    expect(target.scanRoute.current().words).toContain("the key may not list plugins (an administrator's API key can)");

    await target.scan(SEASON, context([E1]));
    expect(fake.updates.map((u) => u.path)).toEqual([SEASON]);
    expect(fake.requests.filter((r) => r.path === "/Plugins")).toHaveLength(1);
    await clock.advance(60_000);
    putFile(`${SHOW}/Season 02/Show - S02E01.mkv`);
    await target.scan(`${SHOW}/Season 02`, context([`${SHOW}/Season 02/Show - S02E01.mkv`]));
    expect(fake.requests.filter((r) => r.path === "/Plugins")).toHaveLength(2);
    expect(fake.targetedScan.calls).toHaveLength(1);
  });
});

describe("Emby with the TargetedScan plugin", () => {
  it("reads the outcome from Status (always 200): Created through ScanPath with X-Emby-Token; Removed as Removed", async () => {
    const fake = await emby(true);
    const captured = captureLog();
    const target = createEmbyTarget({ name: "emby", url: fake.url, token: fake.key, clock: systemClock, log: captured.log });
    putFile(E1);

    await expect(target.scanRoute.detect(true)).resolves.toMatchObject({ route: "plugin" });
    await expect(target.scan(SEASON, context([E1]))).resolves.toEqual({ status: "scanned", detail: `TargetedScan: Created '${SEASON}'` });
    const post = fake.requests.find((r) => r.path.endsWith("/Library/ScanPath"));
    expect(post?.headers["x-emby-token"]).toBe(fake.key);

    fake.library.add(E2);
    await expect(target.scan(SEASON, context([], [E2]))).resolves.toEqual({ status: "scanned", detail: `TargetedScan: Removed '${E2}'` });
    expect(fake.targetedScan.calls).toEqual([
      { path: SEASON, status: "Created", http: 200 },
      { path: E2, status: "Removed", http: 200 },
    ]);
    expect(fake.updates).toEqual([]);
  });

  it("without it: Media/Updated, and the start line says how to install the Emby build", async () => {
    const fake = await emby(false);
    const captured = captureLog();
    const target = createEmbyTarget({ name: "emby", url: fake.url, token: fake.key, clock: systemClock, log: captured.log });
    putFile(E1);

    await target.scanRoute.detect(true);
    expect(info(captured.records)[0]).toContain("https://github.com/d3v1l1989/targeted-scans/releases");
    await target.scan(SEASON, context([E1]));
    expect(fake.updates.map((u) => u.path)).toEqual([SEASON]);
    expect(fake.requests.some((r) => r.path.endsWith("/Library/ScanPath"))).toBe(false);
  });
});

describe("the targets from the config", () => {
  it("at start one INFO line per Jellyfin and Emby target; at a reload a line only where the route changed", async () => {
    const withPlugin = await jellyfin({ targetedScan: { installed: true } });
    const without = await emby(false);
    const { config } = parseConfigText(
      JSON.stringify({
        SERVER_PASS: "0123456789abcdef0123456789abcdef",
        TARGETS: {
          jellyfin: { TYPE: "jellyfin", URL: withPlugin.url, TOKEN: withPlugin.key },
          emby: { TYPE: "emby", URL: without.url, TOKEN: without.key },
        },
      }),
      "/c/config.json",
      {},
    );
    const { log, records } = captureLog("info");
    const others = createTargetsFromConfig({ config, clock: systemClock, log });
    records.length = 0;

    await others.detectScanRoutes(true);
    expect(info(records).sort()).toEqual([
      expect.stringMatching(/^Emby 'emby' scans through POST \/Library\/Media\/Updated .*: the TargetedScan plugin is not installed; install the TargetedScan plugin/),
      "Jellyfin 'jellyfin' scans through the TargetedScan plugin 1.9.0.0 (POST /Library/ScanPath): new folders show in seconds",
    ]);
    expect(others.scanRoutes().map((r) => [r.target, r.route])).toEqual([
      ["jellyfin", "plugin"],
      ["emby", "monitor"],
    ]);

    // A reload: nothing changed on Jellyfin, the plugin was installed on Emby.
    records.length = 0;
    without.targetedScan.set({ installed: true });
    await others.detectScanRoutes(false);
    expect(info(records)).toEqual(["Emby 'emby' scans through the TargetedScan plugin 1.9.0.0 (POST /Library/ScanPath): new folders show in seconds"]);
    others.close();
  });
});
