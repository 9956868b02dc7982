import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { systemClock } from "../core/clock.ts";
import { TargetUnavailableError } from "../core/errors.ts";
import type { LibraryLookup, ScanContext, Target } from "../core/target.ts";
import { captureLog, makeTempDir } from "../../test/support/capture-log.ts";
import { startFakeEmby } from "../../test/support/fake-emby.ts";
import { startFakeJellyfin } from "../../test/support/fake-jellyfin.ts";
import type { FakeLibrary } from "../../test/support/fake-library.ts";
import type { FakeHttpServer } from "../../test/support/fake-media-server.ts";
import { createEmbyTarget } from "./emby/emby-target.ts";
import { createJellyfinTarget } from "./jellyfin/jellyfin-target.ts";
import { createMediaLibraryLookup, MAX_CALLS_PER_FILE, MAX_DEPTH } from "./library-lookup.ts";
import { createMediaHttp } from "./media-http.ts";
import { parseJellyfinLibraryRoots } from "./media-wire-schemas.ts";

/**
 * The "did it land" walk of Jellyfin and Emby over real HTTP, through the targets as they are built, against the fake
 * servers: their libraries are filled by the scans the targets send, reading a temp directory (server `/data/...` →
 * `<tmp>/...`), and `/Items?ParentId=` shows them as Series → Season → Episode, or Movie items.
 */
const LIBRARIES = [
  { name: "Shows", locations: ["/data/tv"], collectionType: "tvshows" },
  { name: "Movies", locations: ["/data/movies"], collectionType: "movies" },
  { name: "Home videos", locations: ["/data/home"], collectionType: "homevideos" },
];
const SHOW = "/data/tv/Show (2020)";
const SEASON = `${SHOW}/Season 01`;
const episode = (n: number): string => `${SEASON}/Show - S01E${String(n).padStart(2, "0")}.mkv`;
const MOVIE_FOLDER = "/data/movies/Heat (1995)";
const MOVIE = `${MOVIE_FOLDER}/Heat (1995).mkv`;

interface Server extends FakeHttpServer {
  readonly key: string;
  readonly library: FakeLibrary;
}

type Build = (toLocal: (path: string) => string | undefined) => Promise<{ fake: Server; target: Target }>;

const servers: [string, Build][] = [
  [
    "Jellyfin",
    async (toLocal) => {
      const fake = await startFakeJellyfin({ libraries: LIBRARIES, toLocal });
      const { log } = captureLog("warn");
      return { fake, target: createJellyfinTarget({ name: "jellyfin", url: fake.url, token: fake.key, clock: systemClock, log }) };
    },
  ],
  [
    "Emby",
    async (toLocal) => {
      const fake = await startFakeEmby({ libraries: LIBRARIES, toLocal });
      const { log } = captureLog("warn");
      return { fake, target: createEmbyTarget({ name: "emby", url: fake.url, token: fake.key, clock: systemClock, log }) };
    },
  ],
];

describe.each(servers)("the %s library lookup", (_name, build) => {
  let root: Awaited<ReturnType<typeof makeTempDir>>;
  let fake: Server;
  let target: Target;
  let lookup: LibraryLookup;

  const local = (serverPath: string): string => join(root.dir, serverPath.slice("/data/".length));
  const put = (serverPath: string): void => {
    mkdirSync(dirname(local(serverPath)), { recursive: true });
    writeFileSync(local(serverPath), "");
  };
  const signal = (): AbortSignal => new AbortController().signal;
  const context = (): ScanContext => ({
    sources: [{ source: "Sonarr", event: "Download", path: SEASON }],
    files: [],
    priority: 0,
    attempt: 1,
    signal: signal(),
  });
  const scan = async (folder: string): Promise<void> => {
    await expect(target.scan(folder, context())).resolves.toMatchObject({ status: "scanned" });
  };
  const itemsCalls = (): number => fake.requests.filter((r) => r.path.toLowerCase().endsWith("/items")).length;

  beforeEach(async () => {
    root = await makeTempDir("autoscan-media-lookup-");
    ({ fake, target } = await build((serverPath) => (serverPath.startsWith("/data/") ? local(serverPath) : undefined)));
    if (!target.lookup) throw new Error("the target has no lookup");
    lookup = target.lookup;
  });
  afterEach(async () => {
    await fake.close();
    await root.cleanup();
  });

  it("finds a file the server imported after its folder was scanned, and waits 90 s by default before looking", async () => {
    put(episode(1));
    await scan(SEASON);
    expect(await lookup.find([episode(1)], signal())).toEqual(new Map([[episode(1), true]]));
    expect(lookup.settleMs).toBe(90_000);
    // Library root → show → season: three listings, asked for the paths.
    expect(itemsCalls()).toBe(3);
    const first = fake.requests.find((r) => r.path.toLowerCase().endsWith("/items"));
    expect(first?.query.get("Fields")).toBe("Path");
    expect(first?.query.get("EnableImages")).toBe("false");
    expect(first?.query.get("EnableUserData")).toBe("false");
  });

  it("answers false for a file on disk the server never imported", async () => {
    put(episode(1));
    fake.library.setNever(true);
    await scan(SEASON);
    expect(await lookup.find([episode(1)], signal())).toEqual(new Map([[episode(1), false]]));
  });

  it("does not count a sibling episode for a missing one", async () => {
    put(episode(1));
    await scan(SEASON);
    expect(await lookup.find([episode(1), episode(2)], signal())).toEqual(
      new Map([
        [episode(1), true],
        [episode(2), false],
      ]),
    );
  });

  it("answers false for a file removed from disk once its folder was scanned again", async () => {
    put(episode(1));
    put(episode(2));
    await scan(SEASON);
    expect((await lookup.find([episode(2)], signal())).get(episode(2))).toBe(true);
    rmSync(local(episode(2)));
    await scan(SEASON);
    expect(await lookup.find([episode(1), episode(2)], signal())).toEqual(
      new Map([
        [episode(1), true],
        [episode(2), false],
      ]),
    );
  });

  it("finds an episode lying in the show's folder, through the season with no Path", async () => {
    const loose = `${SHOW}/Show - S01E09.mkv`;
    put(loose);
    await scan(SHOW);
    expect(await lookup.find([loose], signal())).toEqual(new Map([[loose, true]]));
  });

  it("finds a movie: its item's Path is the file, straight under the library", async () => {
    put(MOVIE);
    await scan(MOVIE_FOLDER);
    const other = "/data/movies/Ronin (1998)/Ronin (1998).mkv";
    expect(await lookup.find([MOVIE, other], signal())).toEqual(
      new Map([
        [MOVIE, true],
        [other, false],
      ]),
    );
  });

  it("answers false without a call for a file in no library, or in a folder that only starts like one", async () => {
    put(episode(1));
    await scan(SEASON);
    const before = itemsCalls();
    const files = ["/data/music/Album/01.flac", "/data/tv-4k/Show (2020)/Season 01/x.mkv"];
    expect(await lookup.find(files, signal())).toEqual(new Map(files.map((f) => [f, false])));
    expect(itemsCalls()).toBe(before);
  });

  it("does not take a folder that only starts like the file's for one that holds it", async () => {
    put(`/data/tv/Show (2020) Extra/Season 01/x.mkv`);
    await scan("/data/tv/Show (2020) Extra/Season 01");
    const missing = `${SEASON}/x.mkv`;
    expect(await lookup.find([missing], signal())).toEqual(new Map([[missing, false]]));
    // Only the library root was listed: no child's folder holds the file, and every child has a Path.
    expect(itemsCalls()).toBe(1);
  });

  it("throws TargetUnavailableError when the server is down", async () => {
    put(episode(1));
    await scan(SEASON);
    await fake.setDown("refused");
    await expect(lookup.find([episode(1)], signal())).rejects.toBeInstanceOf(TargetUnavailableError);
    await fake.setDown(503);
    await expect(lookup.find([episode(1)], signal())).rejects.toBeInstanceOf(TargetUnavailableError);
  });

  it("lists each parent once for five files of one season (cached within one find)", async () => {
    const files = [1, 2, 3, 4, 5].map(episode);
    files.forEach(put);
    put(`/data/tv/Other Show/Season 02/Other - S02E01.mkv`);
    await scan(SEASON);
    await scan("/data/tv/Other Show/Season 02");
    const before = itemsCalls();
    const found = await lookup.find(files, signal());
    expect([...found.values()]).toEqual([true, true, true, true, true]);
    expect(itemsCalls() - before).toBe(3);
  });

  it("walks plain folders, and stops at its depth bound on a deeper file", async () => {
    const near = "/data/home/2024/Summer/beach.mp4";
    const deep = "/data/home/1/2/3/4/5/6/7/8/deep.mp4";
    put(near);
    put(deep);
    await scan("/data/home");
    const before = itemsCalls();
    expect(await lookup.find([near, deep], signal())).toEqual(
      new Map([
        [near, true],
        [deep, false],
      ]),
    );
    // near: root, 2024, Summer (3); deep: root is cached, then 1…5 (5): the sixth level is the last one listed.
    expect(itemsCalls() - before).toBe(3 + MAX_DEPTH - 1);
    expect(itemsCalls() - before).toBeLessThanOrEqual(2 * MAX_CALLS_PER_FILE);
  });

  it("throws TargetUnavailableError when shutting down", async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(lookup.find([episode(1)], controller.signal)).rejects.toBeInstanceOf(TargetUnavailableError);
  });
});

describe("the library lookup's paging", () => {
  it("reads a listing longer than a page in pages of Limit items, and still finds the file on the last one", async () => {
    const root = await makeTempDir("autoscan-media-lookup-");
    const local = (serverPath: string): string => join(root.dir, serverPath.slice("/data/".length));
    const fake = await startFakeJellyfin({ libraries: LIBRARIES, toLocal: local });
    try {
      const shows = ["A", "B", "C", "D", "E"].map((name) => `/data/tv/${name}/Season 01/${name} - S01E01.mkv`);
      for (const file of shows) {
        mkdirSync(dirname(local(file)), { recursive: true });
        writeFileSync(local(file), "");
      }
      const headers = { Authorization: `MediaBrowser Token="${fake.key}"` };
      const http = createMediaHttp({ url: fake.url, label: "Jellyfin", authKey: "TOKEN", headers, secrets: [fake.key] });
      await http.request("POST", "/Library/Media/Updated", { json: { Updates: [{ Path: "/data/tv", UpdateType: "Created" }] } });
      const lookup = createMediaLibraryLookup({
        call: (method, route, request) => http.request(method, route, request),
        roots: async (signal) => parseJellyfinLibraryRoots((await http.request("GET", "/Library/VirtualFolders", { signal })).body, "roots"),
        settleMs: 0,
        pageSize: 2,
      });
      const last = shows[4] as string;
      expect(await lookup.find([last], new AbortController().signal)).toEqual(new Map([[last, true]]));
      const pages = fake.requests.filter((r) => r.path === "/Items").map((r) => `${r.query.get("StartIndex")}+${r.query.get("Limit")}`);
      // Five shows in pages of two (0, 2, 4), then the show and its season.
      expect(pages).toEqual(["0+2", "2+2", "4+2", "0+2", "0+2"]);
    } finally {
      await fake.close();
      await root.cleanup();
    }
  });
});
