import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakePlex, type FakePlex } from "./support/fake-plex.ts";
import { freePort } from "./support/free-port.ts";
import { runCli, startCli, within, type RunningCli } from "./support/run-cli.ts";

/**
 * The repair loop of an unmapped path, as a user walks it: a Sonarr webhook for `/tv/…` that no SERVER_PATH_MAPPINGS
 * form reaches is refused (History: failed, "Not queued: …"); the user adds the form to config.json, sends SIGHUP,
 * and retries from the console; the fake Plex is then asked to scan the MAPPED folder after the scan delay, with no
 * file check spent on the unmapped path. The real server as a child process, one for the whole file.
 */
const SERVER_PASS = "r3pa1rr3pa1rr3pa1rr3pa1rr3pa1r00";
const SCAN_DELAY_S = 1;
const MOVIES = { "/data/Movies/": ["/movies/"] };

let dir: string;
let media: string;
let plex: FakePlex;
let port: number;
let child: RunningCli;
let base: string;

const log = (): string => `${child.stdout()}${child.stderr()}`;

async function until(check: () => boolean | Promise<boolean>, what: string, ms = 20_000): Promise<void> {
  await within(
    (async () => {
      while (!(await check())) await new Promise((resolve) => setTimeout(resolve, 50));
    })(),
    ms,
    `${what} (log: ${log()})`,
  );
}

function writeConfig(mappings: Record<string, string[]>): Promise<void> {
  const config = {
    SERVER_PASS,
    SERVER_PORT: port,
    SERVER_IP: "127.0.0.1",
    PLEX_LOCAL_URL: plex.url,
    PLEX_TOKEN: plex.token,
    PLEX_ANALYZE_TYPE: "off",
    SERVER_SCAN_DELAY: SCAN_DELAY_S,
    SERVER_MAX_FILE_CHECKS: 3,
    SERVER_FILE_CHECK_DELAY: 1,
    SERVER_PATH_MAPPINGS: mappings,
    SERVER_FILE_EXIST_PATH_MAPPINGS: { [`${media}/TV/`]: ["/data/TV/"], [`${media}/Anime/`]: ["/data/Anime/"] },
  };
  return writeFile(join(dir, "config.json"), JSON.stringify(config, null, 2));
}

/** Edits config.json and sends SIGHUP, as the README says; resolves once the reload put the mappings in force. */
async function reloadWith(mappings: Record<string, string[]>): Promise<void> {
  const before = (log().match(/now in force: [^\n]*SERVER_PATH_MAPPINGS/g) ?? []).length;
  await writeConfig(mappings);
  child.process.kill("SIGHUP");
  await until(() => (log().match(/now in force: [^\n]*SERVER_PATH_MAPPINGS/g) ?? []).length > before, "the reload");
}

function sonarrDownload(show: string, root: string, season: string, file: string): Promise<Response> {
  const body = {
    eventType: "Download",
    series: { id: 7, title: show, path: `${root}/${show}`, tvdbId: 7 },
    episodes: [{ id: 70, episodeNumber: 1, seasonNumber: 2, title: "One" }],
    episodeFile: { id: 700, relativePath: `${season}/${file}`, path: `${root}/${show}/${season}/${file}` },
  };
  return fetch(`${base}/sonarr`, { method: "POST", headers: { "content-type": "application/json", "user-agent": "Sonarr/4.0.9.2244" }, body: JSON.stringify(body) });
}

interface HistoryRow {
  readonly id: number;
  readonly folder: string;
  readonly state: string;
  readonly lastError?: string | null;
}

async function history(): Promise<HistoryRow[]> {
  const answer = (await (await fetch(`http://127.0.0.1:${String(port)}/api/${SERVER_PASS}?cmd=history&limit=100`)).json()) as { history: HistoryRow[] };
  return answer.history;
}

/** The console page as a browser gets it, and its form token. */
async function consolePage(page: string): Promise<{ html: string; token: string }> {
  const html = await (await fetch(`${base}/${page}`)).text();
  const token = /name="token" value="([^"]+)"/.exec(html)?.[1];
  if (!token) throw new Error(`No form token on the ${page} page: ${html.slice(0, 500)}`);
  return { html, token };
}

/** Posts a console form the way its page script does (JSON answer). */
async function post(action: string, token: string): Promise<{ ok: boolean; title: string; message: string }> {
  const response = await fetch(`${base}/${action}`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", accept: "application/json", "sec-fetch-site": "same-origin" },
    body: new URLSearchParams({ token, back: `/${SERVER_PASS}/history` }).toString(),
  });
  expect(response.status).toBe(200);
  return (await response.json()) as { ok: boolean; title: string; message: string };
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "autoscan-repair-"));
  media = join(dir, "media");
  await mkdir(join(media, "TV"), { recursive: true });
  await mkdir(join(media, "Anime"), { recursive: true });
  plex = await startFakePlex({
    sections: [
      { key: "2", title: "TV Shows", type: "show", locations: ["/data/TV"] },
      { key: "3", title: "Anime", type: "show", locations: ["/data/Anime"] },
    ],
  });
  port = await freePort();
  base = `http://127.0.0.1:${String(port)}/${SERVER_PASS}`;
  // Movies mapped, TV not: the first-day slip.
  await writeConfig(MOVIES);
  child = startCli(["server", "--config", join(dir, "config.json"), "--logfile", "none"], { timeoutMs: 120_000 });
  await until(() => child.stdout().includes("Started server"), "the server started");
});

afterAll(async () => {
  child.process.kill("SIGKILL");
  await plex.close();
  await rm(dir, { recursive: true, force: true });
});

describe("retry after adding the missing mapping", () => {
  it("an unmapped webhook, the form added, SIGHUP, the console's 'Retry the unmapped requests': Plex scans the mapped folder", async () => {
    const unmapped = "/tv/Unmapped Show/Season 02";
    const mapped = "/data/TV/Unmapped Show/Season 02";
    expect((await sonarrDownload("Unmapped Show", "/tv", "Season 02", "Unmapped Show - S02E01.mkv")).status).toBe(200);
    // Refused at once, with the fix: History shows it failed.
    await until(async () => (await history()).some((row) => row.folder === unmapped && row.state === "failed"), "the refusal");
    expect((await consolePage("queue")).html).toContain("1 path not queued: no server can scan it");
    const [refused] = (await history()).filter((row) => row.folder === unmapped);
    expect(refused?.lastError).toMatch(/^Not queued: '\/tv\/Unmapped Show\/Season 02\/Unmapped Show - S02E01\.mkv' matches no SERVER_PATH_MAPPINGS form/);
    expect(log()).toMatch(/add the form this path starts with to SERVER_PATH_MAPPINGS/i);

    // Done as the fix says: the form added, SIGHUP, the file on disk.
    await reloadWith({ ...MOVIES, "/data/TV/": ["/tv/"] });
    await until(() => /SERVER_PATH_MAPPINGS now reach 1 request refused for lack of a mapping/.test(log()), "the reload's offer to retry");
    await mkdir(join(media, "TV", "Unmapped Show", "Season 02"), { recursive: true });
    await writeFile(join(media, "TV", "Unmapped Show", "Season 02", "Unmapped Show - S02E01.mkv"), "x");

    // doctor says the fix is in and names the retry.
    const doctor = await runCli(["doctor", "--json", "--config", join(dir, "config.json")], { timeoutMs: 30_000 });
    const checks = (JSON.parse(doctor.stdout) as { checks: { id: string; status: string; detail: string; fix?: string }[] }).checks;
    expect(checks.find((check) => check.id === "intake.refused")).toMatchObject({
      status: "warn",
      detail: expect.stringContaining("SERVER_PATH_MAPPINGS in config.json reaches 1 of them now"),
      fix: expect.stringContaining('"Retry the unmapped requests"'),
    });

    // The Queue page no longer lists the path as refused: it offers the retry instead.
    const queuePage = (await consolePage("queue")).html;
    expect(queuePage).toContain("Retry the unmapped request");
    expect(queuePage).not.toContain("not queued: no server can scan");

    // The console offers the retry, on the History page, with one button.
    const { html, token } = await consolePage("history");
    expect(html).toContain("Retry the unmapped request");
    expect(html).toContain(`action="/${SERVER_PASS}/history/retry-unmapped"`);
    const answer = await post("history/retry-unmapped", token);
    expect(answer).toMatchObject({ ok: true, title: "Queued again" });

    // Plex is asked for the mapped folder, once the scan delay is over; nothing was looked for under /tv.
    await until(() => plex.scans.some((scan) => scan.path === mapped), "Plex asked to scan the mapped folder", 15_000);
    expect(plex.scans.filter((scan) => scan.path.startsWith("/tv/"))).toEqual([]);
    await until(async () => (await history()).some((row) => row.folder === mapped && row.state === "done"), "the mapped folder done");
    expect((await history()).some((row) => row.folder === unmapped)).toBe(false);
    expect(log()).not.toMatch(/Not found after \d+ file check/);
    // The offer is gone once nothing is left to retry.
    expect((await consolePage("history")).html).not.toContain("Retry the unmapped request");
  });

  it("an item's own Retry maps again too", async () => {
    const unmapped = "/anime/Other Show/Season 01";
    const mapped = "/data/Anime/Other Show/Season 01";
    expect((await sonarrDownload("Other Show", "/anime", "Season 01", "Other Show - S01E01.mkv")).status).toBe(200);
    await until(async () => (await history()).some((row) => row.folder === unmapped && row.state === "failed"), "the refusal");
    const id = (await history()).find((row) => row.folder === unmapped)?.id ?? -1;

    await reloadWith({ ...MOVIES, "/data/TV/": ["/tv/"], "/data/Anime/": ["/anime/"] });
    await mkdir(join(media, "Anime", "Other Show", "Season 01"), { recursive: true });
    await writeFile(join(media, "Anime", "Other Show", "Season 01", "Other Show - S01E01.mkv"), "x");

    const { token } = await consolePage("history");
    expect(await post(`items/${String(id)}/retry`, token)).toMatchObject({ ok: true, title: "Queued under the mapped folder" });

    await until(() => plex.scans.some((scan) => scan.path === mapped), "Plex asked to scan the mapped folder", 15_000);
    expect(plex.scans.filter((scan) => scan.path.startsWith("/anime/"))).toEqual([]);
    expect(log()).toMatch(/Retry of '\/anime\/Other Show\/Season 01': today's SERVER_PATH_MAPPINGS map its requests to '\/data\/Anime\/Other Show\/Season 01'/);
  });
});
