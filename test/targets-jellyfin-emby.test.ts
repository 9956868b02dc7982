import { afterEach, describe, expect, it } from "vitest";
import { systemClock } from "../src/core/clock.ts";
import { TargetAuthError, TargetConfigError, TargetUnavailableError } from "../src/core/errors.ts";
import type { ScanContext, Target } from "../src/core/target.ts";
import { createEmbyTarget } from "../src/targets/emby/emby-target.ts";
import { createJellyfinTarget } from "../src/targets/jellyfin/jellyfin-target.ts";
import { MediaHttpError } from "../src/targets/media-http.ts";
import { createAutoscanTarget } from "../src/targets/autoscan/autoscan-target.ts";
import { startWebServer, type WebServer } from "../src/web/server.ts";
import { captureLog } from "./support/capture-log.ts";
import { startFakeEmby, type FakeEmby } from "./support/fake-emby.ts";
import { startFakeJellyfin, type FakeJellyfin, type FakeJellyfinOptions } from "./support/fake-jellyfin.ts";
import { startFakeHttpServer, type FakeHttpServer } from "./support/fake-media-server.ts";
import { createManualClock } from "./support/manual-clock.ts";
import { buildWebApp } from "./support/web-builders.ts";

const LIBRARIES = [
  { name: "Shows", locations: ["/data/tv"] },
  { name: "Movies", locations: ["/data/movies", "/data/movies-extra"] },
];
const SEASON = "/data/tv/Show (2020)/Season 01";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function context(sources: ScanContext["sources"] = [{ source: "Sonarr", event: "Download", path: `${SEASON}/e1.mkv` }]): ScanContext {
  return { id: 1, sources, files: [], priority: 0, attempt: 1, signal: new AbortController().signal };
}

async function jellyfin(options: FakeJellyfinOptions = {}): Promise<FakeJellyfin> {
  const fake = await startFakeJellyfin({ libraries: LIBRARIES, ...options });
  cleanups.push(() => fake.close());
  return fake;
}

async function emby(options: Parameters<typeof startFakeEmby>[0] = {}): Promise<FakeEmby> {
  const fake = await startFakeEmby({ libraries: LIBRARIES, ...options });
  cleanups.push(() => fake.close());
  return fake;
}

/** The error a promise rejects with (fails the test when it resolves). */
async function rejection(promise: Promise<unknown>): Promise<Error> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof Error)) throw new Error(`expected a rejection, got ${String(error)}`);
  return error;
}

describe("Jellyfin target", () => {
  it("sends one update per folder with the MediaBrowser scheme and the UpdateType of its requests", async () => {
    const fake = await jellyfin();
    const { log, records } = captureLog();
    const target = createJellyfinTarget({ name: "jellyfin", url: `${fake.url}/`, token: fake.key, clock: systemClock, log });

    await expect(target.scan(SEASON, context())).resolves.toEqual({ status: "scanned", detail: "library 'Shows'; Created" });
    const deleted = context([{ source: "Sonarr", event: "EpisodeFileDelete", path: `${SEASON}/e2.mkv`, deleted: true }]);
    await target.scan(SEASON, deleted);
    const mixed = context([
      { source: "Sonarr", event: "Download", path: `${SEASON}/e1.mkv` },
      { source: "Sonarr", event: "Rename", path: `${SEASON}/e3.mkv` },
    ]);
    await target.scan("/data/movies-extra/Heat (1995)", mixed);

    expect(fake.updates).toEqual([
      { path: SEASON, updateType: "Created", auth: "MediaBrowser" },
      { path: SEASON, updateType: "Deleted", auth: "MediaBrowser" },
      { path: "/data/movies-extra/Heat (1995)", updateType: "Modified", auth: "MediaBrowser" },
    ]);
    const post = fake.requests.find((r) => r.method === "POST");
    expect(post?.headers.authorization).toBe(`MediaBrowser Token="${fake.key}"`);
    expect(post?.headers["x-emby-token"]).toBeUndefined();
    expect(post?.headers["content-type"]).toBe("application/json");
    expect(JSON.parse(post?.body ?? "")).toEqual({ Updates: [{ Path: SEASON, UpdateType: "Created" }] });
    // The library list was read once for the three scans (cached).
    expect(fake.requests.filter((r) => r.path === "/Library/VirtualFolders")).toHaveLength(1);
    const line = records.find((r) => r.msg.startsWith("Scan requested"));
    expect(line).toMatchObject({ component: "TARGET", target: "jellyfin", path: SEASON });
    expect(JSON.stringify(records)).not.toContain(fake.key);
  });

  it("skips a folder in no library with one warning, and sends nothing", async () => {
    const fake = await jellyfin();
    const { log, records } = captureLog();
    const target = createJellyfinTarget({ name: "jellyfin", url: fake.url, token: fake.key, clock: systemClock, log });

    // /data/tv-4k is not inside /data/tv: whole segments only.
    await expect(target.scan("/data/tv-4k/Show/Season 01", context())).resolves.toEqual({
      status: "skipped",
      reason: "the folder is in no jellyfin library",
    });
    expect(fake.updates).toEqual([]);
    const warnings = records.filter((r) => r.level === 40);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ component: "TARGET", target: "jellyfin", path: "/data/tv-4k/Show/Season 01" });
    expect(warnings[0]?.msg).toBe("Unable to map '/data/tv-4k/Show/Season 01' to a Jellyfin 'jellyfin' library.");
  });

  it("finds a library added later on a miss, at most every 10 s", async () => {
    const fake = await jellyfin({ libraries: [] });
    const clock = createManualClock();
    const target = createJellyfinTarget({ name: "jf", url: fake.url, token: fake.key, clock, log: captureLog().log });
    const listings = (): number => fake.requests.filter((r) => r.path === "/Library/VirtualFolders").length;

    expect((await target.scan(SEASON, context())).status).toBe("skipped");
    fake.setLibraries(LIBRARIES);
    expect((await target.scan(SEASON, context())).status).toBe("skipped");
    expect(listings()).toBe(1);
    await clock.advance(10_001);
    expect((await target.scan(SEASON, context())).status).toBe("scanned");
    expect(listings()).toBe(2);
  });

  it("Jellyfin 12: the MediaBrowser scheme works, where X-Emby-Token and api_key are refused", async () => {
    const fake = await jellyfin({ version: "12" });
    const target = createJellyfinTarget({ name: "jellyfin", url: fake.url, token: fake.key, clock: systemClock, log: captureLog().log });

    await expect(target.scan(SEASON, context())).resolves.toMatchObject({ status: "scanned" });
    await expect(target.isAvailable()).resolves.toBe(true);
    expect(fake.updates).toEqual([{ path: SEASON, updateType: "Created", auth: "MediaBrowser" }]);

    // What Cloudbox/autoscan sends would have been refused by this server, and is accepted by a 10.11 one.
    const legacy = { method: "POST", headers: { "X-Emby-Token": fake.key, "Content-Type": "application/json" }, body: '{"Updates":[{"Path":"/data/tv/x"}]}' };
    expect((await fetch(`${fake.url}/Library/Media/Updated`, legacy)).status).toBe(401);
    expect((await fetch(`${fake.url}/System/Info?api_key=${fake.key}`)).status).toBe(401);
    expect((await fetch(`${fake.url}/System/Info?ApiKey=${fake.key}`)).status).toBe(200);
    const old = await jellyfin({ version: "10.11" });
    expect((await fetch(`${old.url}/Library/Media/Updated`, { ...legacy, headers: { ...legacy.headers, "X-Emby-Token": old.key } })).status).toBe(204);
    // A null Path is Jellyfin's ArgumentException → 400.
    const nullPath = { method: "POST", headers: { Authorization: `MediaBrowser Token="${old.key}"`, "Content-Type": "application/json" }, body: '{"updates":[{"path":null}]}' };
    expect((await fetch(`${old.url}/Library/Media/Updated`, nullPath)).status).toBe(400);
  });

  it("a refused key is a TargetAuthError naming the setting, never the key", async () => {
    const fake = await jellyfin();
    const { log, records } = captureLog();
    const wrong = "a-wrong-key-00000000000000000000";
    const target = createJellyfinTarget({ name: "jellyfin", url: fake.url, token: wrong, clock: systemClock, log });

    const error = await rejection(target.scan(SEASON, context()));
    expect(error).toBeInstanceOf(TargetAuthError);
    expect(error.message).toContain("check TARGETS.jellyfin.TOKEN");
    expect(error.message).not.toContain(wrong);

    await expect(target.isAvailable()).resolves.toBe(false);
    await expect(target.isAvailable()).resolves.toBe(false);
    const said = records.filter((r) => r.msg.includes("rejected the key"));
    expect(said).toHaveLength(1);
    expect(said[0]).toMatchObject({ level: 50, target: "jellyfin", msg: "Jellyfin 'jellyfin' rejected the key: check TARGETS.jellyfin.TOKEN" });
    expect(JSON.stringify(records)).not.toContain(wrong);

    // A pasted line break: fetch would quote the header, key and all; the setting is named instead.
    const broken = createJellyfinTarget({ name: "jellyfin", url: fake.url, token: `${wrong}\nmore`, clock: systemClock, log });
    const config = await rejection(broken.scan(SEASON, context()));
    expect(config).toBeInstanceOf(TargetConfigError);
    expect(config.message).toBe("TARGETS.jellyfin.TOKEN has a character an HTTP header cannot carry (a line break?)");
  });

  it("down, reset, 5xx and slow are TargetUnavailableError; other statuses are plain errors", async () => {
    const fake = await jellyfin();
    const { log, records } = captureLog();
    const target = createJellyfinTarget({ name: "jellyfin", url: fake.url, token: fake.key, timeoutMs: 300, clock: systemClock, log });
    await target.scan(SEASON, context()); // the library list is cached from here on

    await fake.setDown("refused");
    // The first call may still meet the kept-alive socket the server just closed; the next one is refused.
    expect(await rejection(target.scan(SEASON, context()))).toBeInstanceOf(TargetUnavailableError);
    const refused = await rejection(target.scan(SEASON, context()));
    expect(refused).toBeInstanceOf(TargetUnavailableError);
    expect(refused.message).toContain("ECONNREFUSED");
    await expect(target.isAvailable()).resolves.toBe(false);
    await fake.setDown("reset");
    expect(await rejection(target.scan(SEASON, context()))).toBeInstanceOf(TargetUnavailableError);
    await fake.setDown(503);
    expect(await rejection(target.scan(SEASON, context()))).toBeInstanceOf(TargetUnavailableError);
    await fake.setDown(false);
    fake.setDelay(2_000);
    const slow = await rejection(target.scan(SEASON, context()));
    expect(slow).toBeInstanceOf(TargetUnavailableError);
    expect(slow.message).toContain("did not answer POST /Library/Media/Updated within 0.3 s");
    fake.setDelay(0);

    fake.failNext(/^POST \/Library\/Media\/Updated$/, 409, 1);
    const conflict = await rejection(target.scan(SEASON, context()));
    expect(conflict).toBeInstanceOf(MediaHttpError);
    expect(conflict).not.toBeInstanceOf(TargetUnavailableError);
    expect(conflict.message).toContain("answered 409 to POST /Library/Media/Updated");
    await expect(target.scan(SEASON, context())).resolves.toMatchObject({ status: "scanned" });
    await expect(target.isAvailable()).resolves.toBe(true);
    expect(records.filter((r) => r.msg.includes("is not available"))).toHaveLength(1);
    expect(records.filter((r) => r.msg.includes("is available again"))).toHaveLength(1);
  });

  it("a URL that is not Jellyfin's (404) is a TargetConfigError naming TARGETS.<name>.URL", async () => {
    const fake = await jellyfin();
    const target = createJellyfinTarget({ name: "jf", url: `${fake.url}/nothing-here`, token: fake.key, clock: systemClock, log: captureLog().log });
    const error = await rejection(target.scan(SEASON, context()));
    expect(error).toBeInstanceOf(TargetConfigError);
    expect(error.message).toContain("check TARGETS.jf.URL");
  });
});

describe("Emby target", () => {
  it("sends Created (Deleted for deletes) with X-Emby-Token, and takes a 200 as well as a 204", async () => {
    const fake = await emby({ updateStatus: 200 });
    const target = createEmbyTarget({ name: "emby", url: fake.url, token: fake.key, clock: systemClock, log: captureLog().log });

    await expect(target.scan("/data/movies/Heat (1995)", context())).resolves.toEqual({ status: "scanned", detail: "library 'Movies'; Created" });
    const renamed = context([{ source: "Radarr", event: "Rename", path: "/data/movies/Heat (1995)/Heat.mkv" }]);
    await target.scan("/data/movies/Heat (1995)", renamed);
    await target.scan(SEASON, context([{ source: "Sonarr", event: "SeriesDelete", path: SEASON, deleted: true }]));
    expect(fake.updates.map((u) => [u.path, u.updateType])).toEqual([
      ["/data/movies/Heat (1995)", "Created"],
      ["/data/movies/Heat (1995)", "Created"],
      [SEASON, "Deleted"],
    ]);
    const post = fake.requests.find((r) => r.method === "POST");
    expect(post?.headers["x-emby-token"]).toBe(fake.key);
    expect(post?.headers.authorization).toBeUndefined();
    await expect(target.isAvailable()).resolves.toBe(true);
  });

  it("finds the /emby prefix on a server that serves only that form, and remembers it", async () => {
    const fake = await emby({ prefix: "emby-only" });
    const { log, records } = captureLog();
    const target = createEmbyTarget({ name: "emby", url: fake.url, token: fake.key, clock: systemClock, log });

    await expect(target.scan(SEASON, context())).resolves.toMatchObject({ status: "scanned" });
    await target.scan(SEASON, context());
    await expect(target.isAvailable()).resolves.toBe(true);
    expect(fake.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
      "GET /Library/SelectableMediaFolders",
      "GET /emby/Library/SelectableMediaFolders",
      // Not asked at a start (service.ts asks): the first scan asks whether the TargetedScan plugin is there.
      "GET /emby/Plugins",
      "POST /emby/Library/Media/Updated",
      "POST /emby/Library/Media/Updated",
      "GET /emby/System/Info",
    ]);
    expect(fake.updates.map((u) => u.route)).toEqual(["/emby/Library/Media/Updated", "/emby/Library/Media/Updated"]);
    expect(records.filter((r) => r.msg.includes("under /emby"))).toHaveLength(1);
  });

  it("never uses /emby on a server that serves routes only without it", async () => {
    const fake = await emby({ prefix: "none-only" });
    const target = createEmbyTarget({ name: "emby", url: fake.url, token: fake.key, clock: systemClock, log: captureLog().log });
    await target.scan(SEASON, context());
    await target.isAvailable();
    expect(fake.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
      "GET /Library/SelectableMediaFolders",
      "GET /Plugins",
      "POST /Library/Media/Updated",
      "GET /System/Info",
    ]);
    // A URL where neither form exists is a setting to fix.
    const lost = createEmbyTarget({ name: "emby2", url: `${fake.url}/x`, token: fake.key, clock: systemClock, log: captureLog().log });
    const error = await rejection(lost.scan(SEASON, context()));
    expect(error).toBeInstanceOf(TargetConfigError);
    expect(error.message).toContain("check TARGETS.emby2.URL");
  });

  it("skips a folder in no library; a refused key is a TargetAuthError; down is TargetUnavailableError", async () => {
    const fake = await emby();
    const { log, records } = captureLog();
    const target = createEmbyTarget({ name: "emby", url: fake.url, token: fake.key, clock: systemClock, log });
    await expect(target.scan("/data/music/Album", context())).resolves.toEqual({ status: "skipped", reason: "the folder is in no emby library" });
    expect(records.filter((r) => r.level === 40 && r.msg.startsWith("Unable to map"))).toHaveLength(1);

    const wrong = "not-the-emby-key-0000000000000000";
    const refused = createEmbyTarget({ name: "emby", url: fake.url, token: wrong, clock: systemClock, log });
    const error = await rejection(refused.scan(SEASON, context()));
    expect(error).toBeInstanceOf(TargetAuthError);
    expect(error.message).toContain("check TARGETS.emby.TOKEN");
    expect(error.message).not.toContain(wrong);

    await fake.setDown("refused");
    expect(await rejection(target.scan(SEASON, context()))).toBeInstanceOf(TargetUnavailableError);
    await expect(target.isAvailable()).resolves.toBe(false);
    await fake.setDown(false);
    await expect(target.isAvailable()).resolves.toBe(true);
    expect(fake.updates).toEqual([]);
  });
});

describe("autoscan relay target", () => {
  const credentials = { username: "relay", password: "p4ss:w0rd-é" };

  async function relayApp(): Promise<{ server: WebServer; built: ReturnType<typeof buildWebApp> }> {
    const built = buildWebApp({ auth: credentials });
    const server = await startWebServer({ app: built.app, hostname: "127.0.0.1", port: 0 });
    cleanups.push(() => server.close());
    return { server, built };
  }

  it("delivers through the real autoscan's /triggers/manual with Basic auth and an encoded dir", async () => {
    const { server, built } = await relayApp();
    const { log, records } = captureLog();
    const target: Target = createAutoscanTarget({ name: "nas", url: server.url, ...credentials, log });
    const folder = "/data/Movies/Fast & Furious #1 + 2 (2001) ?é";

    await expect(target.scan(folder, context())).resolves.toEqual({ status: "scanned", detail: "queued on nas" });
    expect(built.recorder.all().map((r) => r.path)).toEqual([folder]);
    await expect(target.isAvailable()).resolves.toBe(true);
    expect(JSON.stringify(records)).not.toContain(credentials.password);

    const wrong = createAutoscanTarget({ name: "nas", url: server.url, username: "relay", password: "wrong-password", log });
    const error = await rejection(wrong.scan(folder, context()));
    expect(error).toBeInstanceOf(TargetAuthError);
    expect(error.message).toContain("check TARGETS.nas.USERNAME and TARGETS.nas.PASSWORD");
    expect(error.message).not.toContain("wrong-password");
    expect(built.recorder.all()).toHaveLength(1);
  });

  it("reports a folder the other autoscan ignores as a skip", async () => {
    const { server } = await relayApp();
    const target = createAutoscanTarget({ name: "nas", url: server.url, ...credentials, log: captureLog().log });
    await expect(target.scan("/data/Movies/.grab/x", context())).resolves.toMatchObject({ status: "skipped" });
  });

  it("sends the dir percent-encoded, counts 404 on /health as up (Cloudbox/autoscan), and down as unavailable", async () => {
    const cloudbox: FakeHttpServer = await startFakeHttpServer((req) => (req.path === "/triggers/manual" ? { status: 200 } : { status: 404 }));
    cleanups.push(() => cloudbox.close());
    const target = createAutoscanTarget({ name: "cb", url: cloudbox.url, ...credentials, log: captureLog().log });

    await expect(target.scan("/data/TV/A B+C&D", context())).resolves.toMatchObject({ status: "scanned" });
    const sent = cloudbox.requests[0];
    expect(sent?.method).toBe("POST");
    expect(sent?.rawQuery).toBe("dir=%2Fdata%2FTV%2FA%20B%2BC%26D");
    const basic = Buffer.from(`${credentials.username}:${credentials.password}`, "utf8").toString("base64");
    expect(sent?.headers.authorization).toBe(`Basic ${basic}`);
    await expect(target.isAvailable()).resolves.toBe(true);

    await cloudbox.setDown("refused");
    expect(await rejection(target.scan("/data/TV/x", context()))).toBeInstanceOf(TargetUnavailableError);
    await expect(target.isAvailable()).resolves.toBe(false);
  });
});
