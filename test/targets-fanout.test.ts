import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startConsoleService, type ConsoleService } from "./support/console-service.ts";
import { startFakeEmby, type FakeEmby } from "./support/fake-emby.ts";
import { startFakeJellyfin, type FakeJellyfin } from "./support/fake-jellyfin.ts";
import { startFakePlex, type FakePlex } from "./support/fake-plex.ts";

/**
 * One request, several servers (issue 14), through the real service (`autoscan server` as a child process, its real
 * queue file) with fake Plex, 4K Plex, Jellyfin and Emby at the edge, each seeing the media under its own paths:
 * each server gets exactly one call per folder in its own form, only for the folders it holds; a server that is down
 * holds only its own deliveries; a retry re-sends only to the server that failed.
 */
let svc: ConsoleService;
let plex4k: FakePlex;
let jellyfin: FakeJellyfin;
let emby: FakeEmby;

beforeAll(async () => {
  plex4k = await startFakePlex({ sections: [{ key: "7", title: "Movies 4K", type: "movie", locations: ["/data/Movies4K"] }] });
  jellyfin = await startFakeJellyfin({
    version: "12",
    libraries: [
      { name: "Shows", locations: ["/media/tv"], collectionType: "tvshows" },
      { name: "Movies", locations: ["/media/movies"], collectionType: "movies" },
    ],
  });
  emby = await startFakeEmby({ prefix: "emby-only", libraries: [{ name: "TV", locations: ["/mnt/tv"] }] });
  svc = await startConsoleService({
    SERVER_SCAN_DELAY: 1,
    SERVER_RETRY_MAX_HOURS: 0.002,
    SERVER_PATH_MAPPINGS: { "/data/TV/": ["/tv/"], "/data/Movies/": ["/movies/"], "/data/Movies4K/": ["/movies4k/"] },
    TARGETS: {
      "plex-4k": { TYPE: "plex", URL: plex4k.url, TOKEN: plex4k.token },
      jellyfin: {
        TYPE: "jellyfin",
        URL: jellyfin.url,
        TOKEN: jellyfin.key,
        PATH_MAPPINGS: { "/media/tv/": ["/data/TV/"], "/media/movies/": ["/data/Movies/"] },
      },
      emby: { TYPE: "emby", URL: emby.url, TOKEN: emby.key, PATH_MAPPINGS: { "/mnt/tv/": ["/data/TV/"] }, TIMEOUT: 5 },
    },
  });
}, 60_000);

afterAll(async () => {
  await svc?.stop();
  await Promise.all([plex4k?.close(), jellyfin?.close(), emby?.close()]);
});

const episode = (show: string, n: number) => ({
  eventType: "Download",
  series: { id: 1, title: show, path: `/tv/${show}` },
  episodes: [{ id: n, episodeNumber: n, seasonNumber: 1 }],
  episodeFile: { id: n, relativePath: `Season 01/${show} - S01E${String(n).padStart(2, "0")}.mkv`, path: `/tv/${show}/Season 01/${show} - S01E${String(n).padStart(2, "0")}.mkv` },
});

async function api(query: string): Promise<Record<string, unknown>> {
  return (await fetch(`${svc.url}/api/${svc.base.split("/").at(-1)}?${query}`)).json() as Promise<Record<string, unknown>>;
}

type Item = { id: number; folder: string; state: string; targets: { target: string; status: string }[] };

async function historyItem(folder: string): Promise<Item | undefined> {
  const answer = await api(`cmd=history&q=${encodeURIComponent(folder)}`);
  return (answer.history as Item[]).find((item) => item.folder === folder);
}

const scansOf = (plex: FakePlex, folder: string) => plex.scans.filter((scan) => scan.path === folder && scan.inside);
const updatesOf = (server: FakeJellyfin | FakeEmby, path: string) => server.updates.filter((u) => u.path === path);

describe("fan-out to every server that holds the folder", () => {
  it("a burst of 24 episodes → exactly one call on Plex, Jellyfin and Emby, each in its own form; none on the 4K Plex", async () => {
    for (let n = 1; n <= 24; n++) await svc.addFile(`TV/Burst/Season 01/Burst - S01E${String(n).padStart(2, "0")}.mkv`);
    const answers = await Promise.all(Array.from({ length: 24 }, (_, i) => svc.webhook("sonarr", episode("Burst", i + 1))));
    expect(answers.map((r) => r.status)).toEqual(Array(24).fill(200));
    const folder = "/data/TV/Burst/Season 01";
    await expect.poll(async () => (await historyItem(folder))?.state, { timeout: 30_000, interval: 250 }).toBe("done");
    expect(scansOf(svc.plex, folder)).toHaveLength(1);
    expect(updatesOf(jellyfin, "/media/tv/Burst/Season 01")).toHaveLength(1);
    expect(updatesOf(emby, "/mnt/tv/Burst/Season 01")).toHaveLength(1);
    expect(plex4k.scans).toHaveLength(0);
    // Jellyfin 12 refuses the legacy header: the update came with the MediaBrowser scheme.
    expect(jellyfin.updates.at(-1)).toMatchObject({ auth: "MediaBrowser" });
    const item = await historyItem(folder);
    expect(Object.fromEntries(item!.targets.map((t) => [t.target, t.status]))).toEqual({
      plex: "scanned",
      "plex-4k": "skipped",
      jellyfin: "scanned",
      emby: "scanned",
    });
    console.log(
      `24-episode burst: Plex ${scansOf(svc.plex, folder).length}, 4K Plex ${plex4k.scans.length}, ` +
        `Jellyfin ${updatesOf(jellyfin, "/media/tv/Burst/Season 01").length}, Emby ${updatesOf(emby, "/mnt/tv/Burst/Season 01").length} call(s)`,
    );
  });

  it("a 4K movie reaches only the 4K Plex", async () => {
    await svc.addFile("Movies4K/Heat (1995)/Heat (1995).mkv");
    const res = await svc.webhook("radarr", {
      eventType: "Download",
      movie: { id: 1, title: "Heat", folderPath: "/movies4k/Heat (1995)" },
      movieFile: { id: 1, relativePath: "Heat (1995).mkv", path: "/movies4k/Heat (1995)/Heat (1995).mkv" },
    });
    expect(res.status).toBe(200);
    const folder = "/data/Movies4K/Heat (1995)";
    await expect.poll(async () => (await historyItem(folder))?.state, { timeout: 30_000, interval: 250 }).toBe("done");
    expect(scansOf(plex4k, folder)).toHaveLength(1);
    expect(scansOf(svc.plex, folder)).toHaveLength(0);
    expect(jellyfin.updates.filter((u) => u.path.includes("Heat"))).toHaveLength(0);
  });
});

describe("per-target delivery", () => {
  it("a server that is down holds only its own delivery, and catches up once back, exactly once", async () => {
    await emby.setDown("refused");
    await svc.addFile("TV/Down/Season 01/Down - S01E01.mkv");
    expect((await svc.webhook("sonarr", episode("Down", 1))).status).toBe(200);
    const folder = "/data/TV/Down/Season 01";
    await expect.poll(() => scansOf(svc.plex, folder).length, { timeout: 30_000, interval: 250 }).toBe(1);
    await expect.poll(() => updatesOf(jellyfin, "/media/tv/Down/Season 01").length, { timeout: 30_000, interval: 250 }).toBe(1);
    const pending = (await api("cmd=queue")).queue as Item[];
    expect(pending.find((item) => item.folder === folder)?.targets.map((t) => t.target).sort()).toEqual(["jellyfin", "plex", "plex-4k"]);
    await emby.setDown(false);
    await expect.poll(async () => (await historyItem(folder))?.state, { timeout: 40_000, interval: 500 }).toBe("done");
    expect(updatesOf(emby, "/mnt/tv/Down/Season 01")).toHaveLength(1);
    expect(scansOf(svc.plex, folder)).toHaveLength(1);
    expect(updatesOf(jellyfin, "/media/tv/Down/Season 01")).toHaveLength(1);
  }, 90_000);

  it("a retry after a failure re-sends to the server that failed only", async () => {
    // Jellyfin answers its probe but fails this folder: tries at 0 s, ~5 s (backoff 5–6 s) and ~16 s (10–12 s more);
    // SERVER_RETRY_MAX_HOURS is 7.2 s here, so the third failure gives the folder up.
    jellyfin.failNext(/Media\/Updated/i, 500, 3);
    await svc.addFile("TV/Retry/Season 01/Retry - S01E01.mkv");
    expect((await svc.webhook("sonarr", episode("Retry", 1))).status).toBe(200);
    const folder = "/data/TV/Retry/Season 01";
    await expect.poll(async () => (await historyItem(folder))?.state, { timeout: 40_000, interval: 500 }).toBe("failed");
    expect(scansOf(svc.plex, folder)).toHaveLength(1);
    expect(updatesOf(emby, "/mnt/tv/Retry/Season 01")).toHaveLength(1);
    const item = await historyItem(folder);
    expect(await api(`cmd=retry&id=${item!.id}`)).toEqual({ success: true });
    await expect.poll(async () => (await historyItem(folder))?.state, { timeout: 30_000, interval: 250 }).toBe("done");
    expect(updatesOf(jellyfin, "/media/tv/Retry/Season 01")).toHaveLength(1);
    expect(scansOf(svc.plex, folder)).toHaveLength(1);
    expect(updatesOf(emby, "/mnt/tv/Retry/Season 01")).toHaveLength(1);
  }, 90_000);
});
