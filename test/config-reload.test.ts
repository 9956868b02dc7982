import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startFakePlex, type FakePlex } from "./support/fake-plex.ts";
import { freePort } from "./support/free-port.ts";
import { startCli, within, type RunningCli } from "./support/run-cli.ts";

/**
 * `kill -HUP` re-reads the config while webhooks keep arriving: the real server as a child process, real HTTP, a real
 * queue file, a fake Plex. A valid change applies to the next request; an invalid file is rejected and logged, and the
 * running config stays; nothing acknowledged is lost on the way.
 */
const SERVER_PASS = "0123456789abcdef0123456789abcdef";
const SHOWS = 120;

let dir: string;
let media: string;
let plex: FakePlex;
let port: number;
let child: RunningCli | undefined;

const season = (n: number): string => `Show ${n} (2020)/Season 01`;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "autoscan-reload-"));
  media = join(dir, "media");
  port = await freePort();
  for (let n = 0; n < SHOWS; n++) {
    await mkdir(join(media, "TV", season(n)), { recursive: true });
    await writeFile(join(media, "TV", season(n), "e1.mkv"), "x");
  }
  await mkdir(join(media, "Movies", "Film (2021)"), { recursive: true });
  await writeFile(join(media, "Movies", "Film (2021)", "film.mkv"), "x");
  plex = await startFakePlex({
    sections: [
      { key: "1", title: "Movies", type: "movie", locations: ["/data/Movies"] },
      { key: "2", title: "TV Shows", type: "show", locations: ["/data/TV"] },
    ],
  });
  await writeConfig({ SERVER_SCAN_DELAY: 3, SERVER_PATH_MAPPINGS: { "/data/TV/": ["/tv/"] } });
});

afterEach(async () => {
  child?.process.kill("SIGKILL");
  child = undefined;
  await plex.close();
  await rm(dir, { recursive: true, force: true });
});

function writeConfig(changes: Record<string, unknown>): Promise<void> {
  const config = {
    SERVER_PASS,
    SERVER_PORT: port,
    SERVER_IP: "127.0.0.1",
    PLEX_LOCAL_URL: plex.url,
    PLEX_TOKEN: plex.token,
    PLEX_ANALYZE_TYPE: "off",
    SERVER_MAX_FILE_CHECKS: 2,
    SERVER_FILE_CHECK_DELAY: 1,
    SERVER_FILE_EXIST_PATH_MAPPINGS: { [`${media}/TV/`]: ["/data/TV/"], [`${media}/Movies/`]: ["/data/Movies/"] },
    ...changes,
  };
  return writeFile(join(dir, "config.json"), JSON.stringify(config, null, 2));
}

async function until(check: () => boolean, what: string, ms = 30_000): Promise<void> {
  await within(
    (async () => {
      while (!check()) await new Promise((resolve) => setTimeout(resolve, 50));
    })(),
    ms,
    `${what} (log: ${child?.stdout() ?? ""}${child?.stderr() ?? ""})`,
  );
}

function sonarr(n: number): Promise<number> {
  const body = {
    eventType: "Download",
    series: { id: n, title: `Show ${n}`, path: `/tv/Show ${n} (2020)`, tvdbId: n },
    episodes: [{ id: n, episodeNumber: 1, seasonNumber: 1, title: "Pilot" }],
    episodeFile: { id: n, relativePath: "Season 01/e1.mkv", path: `/tv/${season(n)}/e1.mkv` },
  };
  return fetch(`http://127.0.0.1:${port}/${SERVER_PASS}/sonarr`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
  }).then(async (response) => (await response.text(), response.status));
}

describe("live config reload (SIGHUP)", () => {
  it("applies new mappings and delay under load, rejects an invalid file, and loses no request", async () => {
    child = startCli(["server", "--config", join(dir, "config.json"), "--logfile", "none"], { timeoutMs: 90_000 });
    const running = child;
    await until(() => running.stdout().includes("Started server"), "the server started");

    // Webhooks for 120 shows, 6 at a time; the config changes under them.
    const statuses: number[] = [];
    let next = 0;
    const load = Promise.all(
      Array.from({ length: 6 }, async () => {
        while (next < SHOWS) statuses.push(await sonarr(next++));
      }),
    );
    await until(() => statuses.length >= 30, "the first webhooks were answered");
    await writeConfig({
      SERVER_SCAN_DELAY: 0,
      SERVER_PATH_MAPPINGS: { "/data/TV/": ["/tv/"], "/data/Movies/": ["/movies/"] },
      SERVER_PORT: port + 1,
    });
    running.process.kill("SIGHUP");
    await until(() => running.stdout().includes("Config reloaded: now in force"), "the reload");
    await load;
    expect(statuses).toHaveLength(SHOWS);
    expect(statuses.every((status) => status === 200)).toBe(true);
    const out = (): string => running.stdout();
    expect(out()).toMatch(/Config reloaded: now in force: (SERVER_SCAN_DELAY, SERVER_PATH_MAPPINGS|SERVER_PATH_MAPPINGS, SERVER_SCAN_DELAY)\./);
    expect(out()).toMatch(/Config changed SERVER_PORT, which only take\(s\) effect after a restart/);
    // The new app does not repeat the start-up lines.
    expect(out().split("\n").filter((line) => line.includes("/triggers/manual is off"))).toHaveLength(1);

    // The new mapping applies to the next request: /movies/… reaches Plex in its /data/Movies/… form.
    const trigger = await fetch(`http://127.0.0.1:${port}/${SERVER_PASS}/triggers/manual?dir=${encodeURIComponent("/movies/Film (2021)")}`, {
      method: "POST",
    });
    expect(trigger.status).toBe(200);
    await until(() => plex.scans.some((scan) => scan.path === "/data/Movies/Film (2021)"), "the movie scan");
    expect(plex.scans.find((scan) => scan.path === "/data/Movies/Film (2021)")).toMatchObject({ sectionId: "1", inside: true });

    // An invalid file is rejected with its problems; the running config stays in force.
    await writeFile(join(dir, "config.json"), JSON.stringify({ SERVER_PASS, SERVER_SCAN_DELAY: "soon", SERVER_PATH_MAPING: {} }));
    running.process.kill("SIGHUP");
    await until(() => out().includes("Config reload rejected"), "the rejection");
    expect(out()).toMatch(/ERROR - AUTOSCAN \[\d+\]:   - SERVER_SCAN_DELAY: expected a whole number/);
    expect(out()).toMatch(/Unknown key "SERVER_PATH_MAPING".*SERVER_PATH_MAPPINGS/);
    expect(await sonarr(0)).toBe(200);

    // Every acknowledged webhook was scanned, each season folder once per request batch at least, in Plex's form.
    await until(() => new Set(plex.scans.map((scan) => scan.path)).size >= SHOWS + 1, "every folder scanned", 60_000);
    const scanned = new Set(plex.scans.map((scan) => scan.path));
    for (let n = 0; n < SHOWS; n++) expect(scanned.has(`/data/TV/${season(n)}`)).toBe(true);
    expect(running.stderr()).toBe("");
    running.process.kill("SIGTERM");
    expect((await within(running.exited, 10_000, "exit")).code).toBe(0);
  }, 120_000);
});
