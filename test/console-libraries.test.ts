import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { consolePreviewFromConfig, describeLibraries } from "../src/web/console/libraries-from-config.ts";
import { systemClock } from "../src/core/clock.ts";
import { createDiskProbe } from "../src/paths/disk-probe.ts";
import { createPathMapper, type PathMappings } from "../src/paths/mapping.ts";
import { createPlexClient } from "../src/targets/plex/client.ts";
import { createSectionResolver, type PlexSection } from "../src/targets/plex/sections.ts";
import { startFakePlex, type FakePlex, type FakeSection } from "./support/fake-plex.ts";
import { TEST_PASS, buildWebApp, itemView } from "./support/web-builders.ts";
import { arrRootFolders, type ArrAppAddress } from "../src/arr/root-folders.ts";
import { startFakeArr } from "./support/fake-arr.ts";

/**
 * The Libraries page and the preview wired as the service wires them (`web/console/libraries-from-config.ts`): Plex's
 * sections from a fake Plex through the real client and section resolver, the real path mapper and disk probe.
 */
const log = pino({ level: "silent" });
const root = mkdtempSync(join(tmpdir(), "autoscan-console-libraries-"));
mkdirSync(join(root, "Movies", "Heat (1995)"), { recursive: true });
const probe = createDiskProbe({ log, mountInfoFile: join(root, "no-mountinfo") });

const FAKE_SECTIONS: FakeSection[] = [
  { key: "1", title: "Movies", type: "movie", locations: ["/data/Movies"] },
  { key: "2", title: "TV <Shows> & \"more\"", type: "show", locations: ["/data/TV", "/media/Anime"] },
  { key: "3", title: "Music", type: "artist", locations: ["/data/Music"] },
];
const MAPPINGS: PathMappings = {
  "/data/Movies/": [`${root}/Movies/`, "My Drive/Media/Movies/"],
  "/data/TV/Show A/": ["/tv/Show A/"],
  "/data/": ["/mnt/everything/"],
  "/data/Old/": ["/old/"],
};

let plex: FakePlex;
beforeAll(async () => {
  plex = await startFakePlex({ sections: FAKE_SECTIONS });
});
afterAll(async () => {
  await plex?.close();
  rmSync(root, { recursive: true, force: true });
});

function wire(mappings: PathMappings = MAPPINGS, token = plex.token, apps: Readonly<Record<string, ArrAppAddress>> = {}) {
  const client = createPlexClient({ url: plex.url, token, timeoutMs: 2_000 });
  const sections = createSectionResolver({ client, clock: systemClock, log });
  const sources = consolePreviewFromConfig({
    config: { SERVER_PATH_MAPPINGS: mappings, PLEX_TOKEN: token },
    mapper: createPathMapper({ mappings }),
    sections,
    stat: probe.stat,
    appRoots: arrRootFolders(apps, log),
  });
  return { sources, ...buildWebApp({ mapper: createPathMapper({ mappings }), console: sources }) };
}

describe("describeLibraries", () => {
  const section = (id: string, ...locations: string[]): PlexSection => ({ id, title: id, type: "movie", locations, refreshing: false });

  it("reaches a folder from a key that is it, holds it or lies inside it; flags the rest", () => {
    const report = describeLibraries(
      [section("a", "/data/Movies", "/data/Movies4K"), section("b", "/srv/TV"), section("c", "C:\\Media\\Music")],
      { "/data/Movies/": [], "/srv/": ["/x/"], "/srv/TV/Show/": [], "c:/media/music/Album/": [], "/nowhere/": ["/y/"] },
    );
    expect(report.sections?.map((s) => s.locations)).toEqual([
      [
        { path: "/data/Movies", reached: true },
        { path: "/data/Movies4K", reached: false },
      ],
      [{ path: "/srv/TV", reached: true }],
      [{ path: "C:\\Media\\Music", reached: true }],
    ]);
    expect(report.mappings.map((m) => [m.serverForm, m.sections])).toEqual([
      ["/data/Movies/", ["a"]],
      ["/srv/", ["b"]],
      ["/srv/TV/Show/", ["b"]],
      ["c:/media/music/Album/", ["c"]],
      ["/nowhere/", []],
    ]);
  });
});

describe("describeLibraries: a folder the apps reach with Plex's own paths", () => {
  const section = (id: string, ...locations: string[]): PlexSection => ({ id, title: id, type: "movie", locations, refreshing: false });

  it("is reached as sent when a recent request lies in it, though no mapping reaches it", () => {
    const report = describeLibraries([section("a", "/data/Movies", "/data/Movies4K", "/data/Docs")], { "/data/Movies/": ["/movies/"] }, [
      "/data/Movies4K/Heat (1995)",
      "/data/Documentaries/x",
    ]);
    expect(report.sections?.[0]?.locations).toEqual([
      { path: "/data/Movies", reached: true },
      { path: "/data/Movies4K", reached: false, sentAsIs: true },
      { path: "/data/Docs", reached: false },
    ]);
  });
});

describe("the Libraries page", () => {
  it("does not flag a library folder the apps already send Plex's own paths for (no mapping needed)", async () => {
    const { app, queue } = wire({ "/data/Movies/": [`${root}/Movies/`], "/data/TV/": ["/tv/"] });
    queue.items.push(
      itemView({
        id: 7,
        folder: "/media/Anime/Frieren (2023)/Season 01",
        requests: [{ source: "Sonarr (anime)", event: "Download", path: "/media/Anime/Frieren (2023)/Season 01/Frieren - S01E01.mkv", kind: "file", deleted: false, at: Date.now() }],
      }),
    );
    const page = await (await app.request(`/${TEST_PASS}/libraries`)).text();
    const folder = (path: string) => page.slice(page.indexOf(`<span class="path" dir="ltr">${path}</span>`), page.indexOf("</li>", page.indexOf(`<span class="path" dir="ltr">${path}</span>`)));
    expect(folder("/media/Anime")).toContain("reached as sent");
    expect(folder("/media/Anime")).not.toContain("no mapping reaches it");
    expect(folder("/data/Music")).toContain("no mapping reaches it");
    expect(page).toContain("1 library folder no mapping reaches, nor an *arr app's root folder or a recent request (flagged below).");
  });

  it("says how each Jellyfin and Emby target scans, with how to install the TargetedScan plugin where it is not there", async () => {
    const client = createPlexClient({ url: plex.url, token: plex.token, timeoutMs: 2_000 });
    const mappings = { "/data/TV/": ["/tv/"] };
    const sources = consolePreviewFromConfig({
      config: { SERVER_PATH_MAPPINGS: mappings, PLEX_TOKEN: plex.token },
      mapper: createPathMapper({ mappings }),
      sections: createSectionResolver({ client, clock: systemClock, log }),
      stat: probe.stat,
      appRoots: arrRootFolders({}, log),
    });
    const scanRoutes = () => [
      { target: "jellyfin", route: "plugin" as const, words: "Jellyfin 'jellyfin' scans through the TargetedScan plugin 1.9.0.0 (POST /Library/ScanPath): new folders show in seconds" },
      { target: "emby", route: "monitor" as const, words: "Emby 'emby' scans through POST /Library/Media/Updated: the TargetedScan plugin is not installed; install <it>" },
    ];
    const { app } = buildWebApp({ mapper: createPathMapper({ mappings }), console: { ...sources, scanRoutes } });
    const page = await (await app.request(`/${TEST_PASS}/libraries`)).text();
    const panel = page.slice(page.indexOf('id="scan-routes"'));
    expect(panel).toContain("How Jellyfin and Emby scan");
    expect(panel).toContain('jellyfin <span class="badge ok">TargetedScan: seconds</span>');
    expect(panel).toContain("emby <span class=\"badge warn\">Media/Updated: after the server's delay</span>");
    expect(panel).toContain("install &lt;it&gt;.");
    // Without Jellyfin or Emby targets, no panel.
    expect(await (await wire().app.request(`/${TEST_PASS}/libraries`)).text()).not.toContain('id="scan-routes"');
  });

  it("does not flag a library folder an *arr app's root folder lies in (the app sends Plex's own paths), before any request came", async () => {
    const radarr = await startFakeArr({ type: "radarr", rootFolders: ["/data/Music/"] });
    const lidarr = await startFakeArr({ type: "lidarr", rootFolders: ["/media/Anime/Music Videos/"] });
    const down = await startFakeArr({ type: "sonarr" });
    await down.close();
    try {
      const apps = {
        radarr: { TYPE: "radarr", URL: radarr.url, API_KEY: radarr.apiKey, TIMEOUT: 5 },
        lidarr: { TYPE: "lidarr", URL: lidarr.url, API_KEY: lidarr.apiKey, TIMEOUT: 5 },
        sonarr: { TYPE: "sonarr", URL: down.url, API_KEY: down.apiKey, TIMEOUT: 5 },
      } as const;
      const { app } = wire({ "/data/Movies/": [`${root}/Movies/`], "/data/TV/": ["/tv/"] }, plex.token, apps);
      const page = await (await app.request(`/${TEST_PASS}/libraries`)).text();
      const folder = (path: string) => page.slice(page.indexOf(`<span class="path" dir="ltr">${path}</span>`), page.indexOf("</li>", page.indexOf(`<span class="path" dir="ltr">${path}</span>`)));
      expect(folder("/data/Music")).toContain("reached as sent");
      expect(folder("/media/Anime")).toContain("reached as sent");
      expect(page).not.toContain("no mapping reaches it");
      expect(page).toContain("Every library folder is reached: by a mapping, or by the paths the apps send as they are.");
      expect(radarr.requests.map((request) => `${request.method} ${request.path}`)).toEqual(["GET /api/v3/rootfolder"]);
    } finally {
      await Promise.all([radarr.close(), lidarr.close()]);
    }
  });

  it("shows Plex's sections beside the mappings, flagging what does not meet", async () => {
    const { app } = wire({ "/data/Movies/": [`${root}/Movies/`], "/data/TV/Show A/": ["/tv/Show A/"], "/data/Old/": ["/old/"] });
    const res = await app.request(`/${TEST_PASS}/libraries`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-security-policy")).toContain("script-src 'self'");
    const page = await res.text();
    expect(page).toContain('<a href="/' + TEST_PASS + '/libraries" aria-current="page">Libraries</a>');
    expect(page).toContain("TV &lt;Shows&gt; &amp; &quot;more&quot;");
    expect(page).not.toContain("<Shows>");
    const folder = (path: string) => {
      const start = page.indexOf(`<span class="path" dir="ltr">${path}</span>`);
      expect(start, path).toBeGreaterThan(0);
      return page.slice(start, page.indexOf("</li>", start));
    };
    expect(folder("/data/Movies")).toContain('<span class="badge ok">mapped</span>');
    expect(folder("/data/TV")).toContain('<span class="badge ok">mapped</span>'); // a key inside it reaches part of it
    expect(folder("/media/Anime")).toContain("no mapping reaches it");
    expect(folder("/data/Music")).toContain("<code>SERVER_PATH_MAPPINGS</code>");
    expect(page).toContain("2 library folders no mapping reaches, nor an *arr app's root folder or a recent request");
    const mappings = page.slice(page.indexOf('id="mappings"'));
    const row = (key: string) => mappings.slice(mappings.indexOf(`${key}</span>`), mappings.indexOf("</tr>", mappings.indexOf(`${key}</span>`)));
    expect(row("/data/Movies/")).toContain('Movies <span class="muted small">(id 1)</span>');
    expect(row("/data/Old/")).toContain("in no library");
    expect(row("/data/Old/")).toContain("<code>autoscan sections</code>");
  });

  it("flags nothing as unreached while SERVER_PATH_MAPPINGS is empty, and says why", async () => {
    const { app } = wire({});
    const page = await (await app.request(`/${TEST_PASS}/libraries`)).text();
    expect(page).toContain("SERVER_PATH_MAPPINGS is empty");
    expect(page).not.toContain("no mapping reaches it");
    expect(page).not.toContain('<span class="badge ok">mapped</span>');
  });

  it("still shows the mappings when Plex is down, and says why the sections are missing", async () => {
    plex.setDown("reset");
    try {
      const { app } = wire();
      const res = await app.request(`/${TEST_PASS}/libraries`);
      expect(res.status).toBe(200);
      const page = await res.text();
      expect(page).toContain("Plex's libraries could not be listed");
      expect(page).toContain("Plex is unreachable at");
      expect(page).toContain(`<span class="path" dir="ltr">/data/Old/</span>`);
      expect(page).not.toContain("in no library");
    } finally {
      plex.setDown(false);
    }
    const noToken = await (await wire(MAPPINGS, "").app.request(`/${TEST_PASS}/libraries`)).text();
    expect(noToken).toContain("PLEX_TOKEN is empty");
  });

  it("previews any path (?path=) without queueing it, with Plex's answer", async () => {
    const { app, recorder } = wire();
    const path = encodeURIComponent("My Drive/Media/Movies/Heat (1995)");
    const page = await (await app.request(`/${TEST_PASS}/libraries?path=${path}`)).text();
    const preview = page.slice(page.indexOf('id="preview"'), page.indexOf("</section>", page.indexOf('id="preview"')));
    expect(preview).toContain("Would be scanned");
    expect(preview).toContain('<span class="path" dir="ltr">/data/Movies/Heat (1995)</span>');
    expect(preview).toContain('Movies <span class="muted small">(id 1)</span>');
    expect(preview).toContain('<span class="badge ok">folder</span>');
    expect(page).toContain('value="My Drive/Media/Movies/Heat (1995)"');

    const lost = await (await app.request(`/${TEST_PASS}/libraries?path=${encodeURIComponent("/nowhere/<b>x</b>.mkv")}`)).text();
    expect(lost).toContain("1 problem");
    expect(lost).toContain("&lt;b&gt;x&lt;/b&gt;");
    expect(lost).not.toContain("<b>x</b>");
    expect(recorder.batches).toEqual([]);
  });

  it("answers cmd=preview from Plex's sections, and says when Plex cannot be asked", async () => {
    const { app } = wire();
    const ask = async (path: string) =>
      (await (await app.request(`/api/${TEST_PASS}?cmd=preview&path=${encodeURIComponent(path)}`)).json()) as Record<string, unknown>;
    expect(await ask("/tv/Show A/Season 01/x.mkv")).toMatchObject({
      success: true,
      matched_form: "/tv/Show A/",
      server_path: "/data/TV/Show A/Season 01/x.mkv",
      sections: [{ id: "2", title: "TV <Shows> & \"more\"" }],
      on_disk: "missing",
      problems: [],
    });
    const noToken = wire(MAPPINGS, "");
    const answer = (await (await noToken.app.request(`/api/${TEST_PASS}?cmd=preview&path=/nowhere/x`)).json()) as Record<string, unknown>;
    expect(answer).toMatchObject({ sections: null, sections_error: expect.stringContaining("PLEX_TOKEN is empty") });
    expect(answer.problems).toHaveLength(1);
  });
});
