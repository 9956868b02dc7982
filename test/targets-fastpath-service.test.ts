import { mkdir, mkdtemp, rename, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeJellyfin, type FakeJellyfin } from "./support/fake-jellyfin.ts";
import { startFakePlex, type FakePlex } from "./support/fake-plex.ts";
import { freePort } from "./support/free-port.ts";
import { startCli, within, type RunningCli } from "./support/run-cli.ts";

/**
 * The TargetedScan plugin seen by the real service (a child process): one start line saying how Jellyfin scans, the
 * plugin installed later and found at `kill -HUP`, and a Sonarr webhook then going through `POST /Library/ScanPath`;
 * a Sonarr rename then refreshed in place on both servers.
 * One server for the file; a fake Plex and a fake Jellyfin (12) on the same media.
 */
const SERVER_PASS = "0123456789abcdef0123456789abcdef";
const SEASON = "Show (2020)/Season 01";

let dir: string;
let plex: FakePlex;
let jellyfin: FakeJellyfin;
let child: RunningCli | undefined;
let port = 0;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "autoscan-fastpath-service-"));
  const media = join(dir, "media");
  await mkdir(join(media, SEASON), { recursive: true });
  await writeFile(join(media, SEASON, "e1.mkv"), "x");
  const toLocal = (path: string): string | undefined => (path === "/data/TV" || path.startsWith("/data/TV/") ? join(media, path.slice("/data/TV".length)) : undefined);
  plex = await startFakePlex({ sections: [{ key: "2", title: "TV", type: "show", locations: ["/data/TV"] }], toLocal });
  jellyfin = await startFakeJellyfin({ version: "12", libraries: [{ name: "Shows", locations: ["/data/TV"] }], toLocal });
  port = await freePort();
  const config = {
    SERVER_PASS,
    SERVER_PORT: port,
    SERVER_IP: "127.0.0.1",
    PLEX_LOCAL_URL: plex.url,
    PLEX_TOKEN: plex.token,
    PLEX_ANALYZE_TYPE: "off",
    SERVER_SCAN_DELAY: 0,
    SERVER_FILE_CHECK_DELAY: 1,
    SERVER_PATH_MAPPINGS: { "/data/TV/": ["/tv/"] },
    SERVER_FILE_EXIST_PATH_MAPPINGS: { [`${media}/`]: ["/data/TV/"] },
    TARGETS: { jellyfin: { TYPE: "jellyfin", URL: jellyfin.url, TOKEN: jellyfin.key } },
  };
  await writeFile(join(dir, "config.json"), JSON.stringify(config, null, 2));
  child = startCli(["server", "--config", join(dir, "config.json"), "--logfile", "none"], { timeoutMs: 60_000 });
  const running = child;
  await until(() => running.stdout().includes("Started server"), "the server started");
});

afterAll(async () => {
  child?.process.kill("SIGKILL");
  await jellyfin?.close();
  await plex?.close();
  await rm(dir, { recursive: true, force: true });
});

async function until(check: () => boolean, what: string, ms = 20_000): Promise<void> {
  await within(
    (async () => {
      while (!check()) await new Promise((resolve) => setTimeout(resolve, 50));
    })(),
    ms,
    `${what} (log: ${child?.stdout() ?? ""}${child?.stderr() ?? ""})`,
  );
}

const routeLines = (): string[] => (child?.stdout() ?? "").split("\n").filter((line) => line.includes("Jellyfin 'jellyfin' scans through"));

describe("the TargetedScan plugin in the running service", () => {
  it("says at start how Jellyfin scans, finds the plugin at a reload, and sends the next webhook's folder through ScanPath", async () => {
    const running = child!;
    await until(() => routeLines().length === 1, "the start line");
    expect(routeLines()[0]).toContain("scans through POST /Library/Media/Updated");
    expect(routeLines()[0]).toContain("the TargetedScan plugin is not installed; install the TargetedScan plugin for scans in seconds");

    jellyfin.targetedScan.set({ installed: true });
    running.process.kill("SIGHUP");
    await until(() => routeLines().length === 2, "the line at the reload");
    expect(routeLines()[1]).toContain("Jellyfin 'jellyfin' scans through the TargetedScan plugin 1.9.0.0 (POST /Library/ScanPath)");

    const answer = await fetch(`http://127.0.0.1:${port}/${SERVER_PASS}/sonarr`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({
        eventType: "Download",
        series: { id: 1, title: "Show", path: "/tv/Show (2020)", tvdbId: 1 },
        episodes: [{ id: 1, episodeNumber: 1, seasonNumber: 1, title: "Pilot" }],
        episodeFile: { id: 1, relativePath: "Season 01/e1.mkv", path: `/tv/${SEASON}/e1.mkv` },
      }),
    });
    expect(answer.status).toBe(200);
    await until(() => jellyfin.targetedScan.calls.length > 0, "the ScanPath call");
    expect(jellyfin.targetedScan.calls).toEqual([{ path: `/data/TV/${SEASON}`, status: "Created", http: 200 }]);
    expect(jellyfin.updates).toEqual([]);
    expect(jellyfin.library.has(`/data/TV/${SEASON}/e1.mkv`)).toBe(true);
  });

  it("a Sonarr rename: TargetedScan adds the new name and drops the old item in one ScanPaths; each server then refreshes the renamed item", async () => {
    const [before, after] = [`/data/TV/${SEASON}/e1.mkv`, `/data/TV/${SEASON}/Show (2020) - S01E01 - Pilot.mkv`];
    await until(() => plex.library.has(before), "Plex holding the episode");
    const calls = jellyfin.targetedScan.calls.length;
    const plexScans = plex.scans.length;
    await rename(join(dir, "media", SEASON, "e1.mkv"), join(dir, "media", SEASON, "Show (2020) - S01E01 - Pilot.mkv"));
    const answer = await fetch(`http://127.0.0.1:${port}/${SERVER_PASS}/sonarr`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({
        eventType: "Rename",
        series: { id: 1, title: "Show", path: "/tv/Show (2020)", tvdbId: 1 },
        renamedEpisodeFiles: [
          { id: 1, relativePath: "Season 01/Show (2020) - S01E01 - Pilot.mkv", previousRelativePath: "Season 01/e1.mkv", previousPath: `/tv/${SEASON}/e1.mkv` },
        ],
      }),
    });
    expect(answer.status).toBe(200);
    await until(() => jellyfin.itemRefreshes.length > 0 && plex.refreshed.length > 0, "both refreshes", 45_000);
    expect(jellyfin.targetedScan.calls.slice(calls).map((c) => [c.path, c.status])).toEqual([
      [after, "Created"],
      [before, "Removed"],
    ]);
    expect(jellyfin.updates).toEqual([]);
    expect([jellyfin.library.has(after), jellyfin.library.has(before)]).toEqual([true, false]);
    expect(jellyfin.itemRefreshes.map((r) => r.path)).toEqual([after]);
    expect(plex.scans.slice(plexScans).map((scan) => scan.path)).toEqual([`/data/TV/${SEASON}`]);
    expect(plex.refreshed.map((r) => r.file)).toEqual([after]);
    expect(plex.analyzed).toEqual([]);
  }, 60_000);
});
