import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakePlex, type FakePlex } from "./support/fake-plex.ts";
import { freePort } from "./support/free-port.ts";
import { startCli, within, type RunningCli } from "./support/run-cli.ts";

/**
 * Names keep their bytes, end to end: the real service (`autoscan server` as a child process, real queue file, real
 * HTTP), real files on disk, and a fake Plex that records the `path=` it is asked to scan.
 *
 * - a name written in NFD on disk (macOS, SMB from a Mac) is found whether the *arr sends it in NFC or in NFD, and
 *   Plex is asked for the bytes that are on disk;
 * - a deletion (no disk check) goes to Plex in the bytes the *arr sent;
 * - a manual path of unknown kind whose name looks like a file (`The.Matrix.1999.1080p`) is looked up on disk and
 *   scanned as the folder it is, never as its parent `/data/Movies`.
 */
const SERVER_PASS = "0123456789abcdef0123456789abcdef";
const e = "\u00e9"; // é, composed (NFC)
const eNfd = "e\u0301"; // é, decomposed (NFD)

let dir: string;
let media: string;
let plex: FakePlex;
let port: number;
let child: RunningCli;

async function put(local: string): Promise<void> {
  await mkdir(dirname(local), { recursive: true });
  await writeFile(local, "x");
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "autoscan-nfd-"));
  media = join(dir, "media");
  port = await freePort();
  // On disk, as a Mac wrote them: NFD.
  await put(join(media, "TV", `Pok${eNfd}mon (1997)`, "Season 01", `Pok${eNfd}mon - S01E01.mkv`));
  await put(join(media, "Movies", `Am${eNfd}lie (2001)`, `Am${eNfd}lie (2001).mkv`));
  // Folders whose names look like files.
  await put(join(media, "Movies", "The.Matrix.1999.1080p", "The.Matrix.1999.1080p.mkv"));
  await put(join(media, "Movies", "Heat.1995.1080p", "Heat.1995.1080p.mkv"));
  await mkdir(join(media, "TV", "Some.Show.S01"), { recursive: true });
  plex = await startFakePlex({
    sections: [
      { key: "1", title: "Movies", type: "movie", locations: ["/data/Movies"] },
      { key: "2", title: "TV Shows", type: "show", locations: ["/data/TV"] },
    ],
  });
  const config = {
    SERVER_PASS,
    SERVER_PORT: port,
    SERVER_IP: "127.0.0.1",
    PLEX_LOCAL_URL: plex.url,
    PLEX_TOKEN: plex.token,
    PLEX_ANALYZE_TYPE: "off",
    SERVER_SCAN_DELAY: 0,
    SERVER_MAX_FILE_CHECKS: 3,
    SERVER_FILE_CHECK_DELAY: 1,
    // The *arrs see /tv/ and /movies/, Plex sees /data/…, autoscan finds the files under the temp media folder.
    SERVER_PATH_MAPPINGS: { "/data/TV/": ["/tv/"], "/data/Movies/": ["/movies/"] },
    SERVER_FILE_EXIST_PATH_MAPPINGS: { [`${media}/TV/`]: ["/data/TV/"], [`${media}/Movies/`]: ["/data/Movies/"] },
  };
  await writeFile(join(dir, "config.json"), JSON.stringify(config, null, 2));
  child = startCli(["server", "--config", join(dir, "config.json"), "--logfile", "none"], { timeoutMs: 120_000 });
  await within(
    (async () => {
      while (!(await fetch(`http://127.0.0.1:${port}/health`).then((r) => r.ok, () => false))) {
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    })(),
    20_000,
    `server health (stderr: ${child.stderr()})`,
  );
}, 30_000);

afterAll(async () => {
  child?.process.kill("SIGKILL");
  await child?.exited;
  await plex?.close();
  await rm(dir, { recursive: true, force: true });
});

function post(path: string, body: string, type: string): Promise<Response> {
  return fetch(`http://127.0.0.1:${port}${path}`, {
    method: "POST",
    headers: { "Content-Type": type },
    body,
    signal: AbortSignal.timeout(10_000),
  });
}
const webhook = (body: unknown): Promise<Response> => post(`/${SERVER_PASS}`, JSON.stringify(body), "application/json");

async function scanOf(path: string): Promise<void> {
  await within(
    (async () => {
      while (!plex.scans.some((scan) => scan.path === path)) await new Promise((resolve) => setTimeout(resolve, 50));
    })(),
    30_000,
    `a scan of ${JSON.stringify(path)} (scans: ${JSON.stringify(plex.scans.map((s) => s.path))}; log: ${child.stdout()})`,
  );
}

/** The `path=` value exactly as it crossed the wire. */
const rawPath = (path: string): string | undefined =>
  plex.scans.find((scan) => scan.path === path)?.rawQuery.split("&").find((part) => part.startsWith("path="));

describe("names keep their bytes, from webhook to Plex", () => {
  it("finds an NFD folder that Sonarr names in NFC, and asks Plex for the NFD bytes on disk", async () => {
    const response = await webhook({
      eventType: "Download",
      series: { id: 1, title: `Pok${e}mon`, path: `/tv/Pok${e}mon (1997)`, tvdbId: 1 },
      episodes: [{ id: 1, episodeNumber: 1, seasonNumber: 1, title: "Pilot" }],
      episodeFile: { id: 1, relativePath: `Season 01/Pok${e}mon - S01E01.mkv` },
      isUpgrade: false,
    });
    expect(response.status).toBe(200);
    const onDisk = `/data/TV/Pok${eNfd}mon (1997)/Season 01`;
    await scanOf(onDisk);
    expect(Buffer.from(plex.scans.find((s) => s.path === onDisk)?.path ?? "")).toEqual(Buffer.from(onDisk, "utf8"));
    expect(rawPath(onDisk)).toContain("Poke%CC%81mon");
    expect(plex.scans.some((s) => s.path === `/data/TV/Pok${e}mon (1997)/Season 01`)).toBe(false);
    // Found at the first check under its NFD spelling: no missing-file warning.
    expect(child.stdout()).not.toContain("not found after");
  });

  it("finds an NFD file that Radarr names in NFD (a Mac's SMB share), and sends those bytes", async () => {
    const folder = `/movies/Am${eNfd}lie (2001)`;
    const response = await webhook({
      eventType: "Download",
      movie: { id: 2, title: `Am${e}lie`, year: 2001, folderPath: folder },
      movieFile: { id: 2, relativePath: `Am${eNfd}lie (2001).mkv`, path: `${folder}/Am${eNfd}lie (2001).mkv` },
      isUpgrade: false,
    });
    expect(response.status).toBe(200);
    await scanOf(`/data/Movies/Am${eNfd}lie (2001)`);
    expect(rawPath(`/data/Movies/Am${eNfd}lie (2001)`)).toContain("Ame%CC%81lie");
  });

  it("sends a deletion's folder in the bytes Radarr sent, since there is nothing on disk to look at", async () => {
    const folder = `/movies/L${eNfd}on (1994)`;
    const response = await webhook({
      eventType: "MovieFileDelete",
      movie: { id: 3, title: `L${e}on`, year: 1994, folderPath: folder },
      movieFile: { id: 3, relativePath: `L${eNfd}on (1994).mkv`, path: `${folder}/L${eNfd}on (1994).mkv` },
      deleteReason: "manual",
    });
    expect(response.status).toBe(200);
    await scanOf(`/data/Movies/L${eNfd}on (1994)`);
    expect(plex.scans.some((s) => s.path === `/data/Movies/L${e}on (1994)`)).toBe(false);
  });
});

describe("a path of unknown kind is looked up on disk, never widened by its name", () => {
  it("scans two ?path= folders named like files as themselves, not their parent /data/Movies", async () => {
    // One call, so both reach the queue together: guessed to be files, they used to merge into /data/Movies.
    const query = ["/movies/The.Matrix.1999.1080p", "/movies/Heat.1995.1080p"]
      .map((path) => `path=${encodeURIComponent(path)}`)
      .join("&");
    const response = await post(`/${SERVER_PASS}/triggers/manual?${query}`, "", "text/plain");
    expect(response.status).toBe(200);
    await scanOf("/data/Movies/The.Matrix.1999.1080p");
    await scanOf("/data/Movies/Heat.1995.1080p");
    expect(plex.scans.map((s) => s.path)).not.toContain("/data/Movies");
  });

  it("scans a manual filepath folder named like a file (Some.Show.S01) as that folder", async () => {
    const body = new URLSearchParams({ eventType: "Manual", filepath: "/tv/Some.Show.S01" }).toString();
    const response = await post(`/${SERVER_PASS}`, body, "application/x-www-form-urlencoded");
    expect(response.status).toBe(200);
    await scanOf("/data/TV/Some.Show.S01");
    expect(plex.scans.map((s) => s.path)).not.toContain("/data/TV");
  });
});
