import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startFakePlex, type FakePlex } from "./support/fake-plex.ts";
import { freePort } from "./support/free-port.ts";
import { runCli, startCli, within, type RunningCli } from "./support/run-cli.ts";

/**
 * The whole service as users run it: the real CLI (`autoscan server`) as a child process, a real queue file, real
 * HTTP, and a fake Plex at the edge. A Sonarr webhook in, a partial scan of the right folder out.
 */
const SERVER_PASS = "0123456789abcdef0123456789abcdef";

let dir: string;
let plex: FakePlex;
let port: number;
const running: RunningCli[] = [];

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "autoscan-service-"));
  port = await freePort();
  const media = join(dir, "media");
  await mkdir(join(media, "TV", "Show (2020)", "Season 01"), { recursive: true });
  await writeFile(join(media, "TV", "Show (2020)", "Season 01", "Show - S01E01.mkv"), "x");
  plex = await startFakePlex({ sections: [{ key: "2", title: "TV Shows", type: "show", locations: ["/data/TV"] }] });
  const config = {
    SERVER_PASS,
    SERVER_PORT: port,
    SERVER_IP: "127.0.0.1",
    PLEX_LOCAL_URL: plex.url,
    PLEX_TOKEN: plex.token,
    PLEX_ANALYZE_TYPE: "off",
    SERVER_SCAN_DELAY: 0,
    SERVER_MAX_FILE_CHECKS: 2,
    SERVER_FILE_CHECK_DELAY: 1,
    // Sonarr sees /tv/, Plex sees /data/TV/, autoscan finds the files under the temp media dir.
    SERVER_PATH_MAPPINGS: { "/data/TV/": ["/tv/"] },
    SERVER_FILE_EXIST_PATH_MAPPINGS: { [`${media}/TV/`]: ["/data/TV/"] },
  };
  await writeFile(join(dir, "config.json"), JSON.stringify(config, null, 2));
});

afterEach(async () => {
  for (const child of running.splice(0)) child.process.kill("SIGKILL");
  await plex.close();
  await rm(dir, { recursive: true, force: true });
});

function startServer(): RunningCli {
  const child = startCli(["server", "--config", join(dir, "config.json"), "--logfile", "none"], { timeoutMs: 60_000 });
  running.push(child);
  return child;
}

async function waitForHealth(child: RunningCli): Promise<void> {
  await within(
    (async () => {
      for (;;) {
        const ok = await fetch(`http://127.0.0.1:${port}/health`).then((r) => r.ok, () => false);
        if (ok) return;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    })(),
    20_000,
    `server health (stderr: ${child.stderr()})`,
  );
}

async function waitFor(check: () => boolean, what: string): Promise<void> {
  await within(
    (async () => {
      while (!check()) await new Promise((resolve) => setTimeout(resolve, 50));
    })(),
    60_000,
    what,
  );
}

const sonarrDownload = {
  eventType: "Download",
  series: { id: 1, title: "Show", path: "/tv/Show (2020)", tvdbId: 1 },
  episodes: [{ id: 1, episodeNumber: 1, seasonNumber: 1, title: "Pilot" }],
  episodeFile: { id: 1, relativePath: "Season 01/Show - S01E01.mkv", path: "/tv/Show (2020)/Season 01/Show - S01E01.mkv" },
  isUpgrade: false,
};

function postWebhook(body: unknown): Promise<Response> {
  return fetch(`http://127.0.0.1:${port}/${SERVER_PASS}`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
}

/** A Download for a folder no mapping and no library knows. */
const lost = {
  ...sonarrDownload,
  series: { ...sonarrDownload.series, path: "/TV/Severance" },
  episodeFile: { id: 2, relativePath: "Season 02/Severance - S02E01.mkv" },
};

/** History's failed folders, once there are some, within `ms`. */
async function failedWithin(ms: number): Promise<{ folder: string; state: string; lastError: string }[]> {
  const deadline = Date.now() + ms;
  for (;;) {
    const { history } = (await (await fetch(`http://127.0.0.1:${port}/api/${SERVER_PASS}?cmd=history&state=failed`)).json()) as {
      history: { folder: string; state: string; lastError: string }[];
    };
    if (history.length > 0 || Date.now() > deadline) return history;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe("autoscan server, end to end", () => {
  it("turns a Sonarr webhook into one partial scan of the season folder, in Plex's path form", async () => {
    const child = startServer();
    await waitForHealth(child);
    const response = await postWebhook(sonarrDownload);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe("OK");
    await waitFor(() => plex.scans.length > 0, `a scan reached Plex (log: ${child.stdout()})`);
    expect(plex.scans).toEqual([expect.objectContaining({ sectionId: "2", path: "/data/TV/Show (2020)/Season 01" })]);
    await waitFor(() => child.stdout().includes("Finished scan of"), "the scan finished");
    child.process.kill("SIGTERM");
    const exit = await within(child.exited, 10_000, "exit after SIGTERM");
    expect(exit.code).toBe(0);
    // One scan followed by its id, from the intake line to Plex's answer.
    const out = child.stdout();
    const id = /- INFO - QUEUE \[(\d+)\]: Queued Sonarr 'Download' from client '[^']+': '\/data\/TV\/Show \(2020\)\/Season 01\/Show - S01E01\.mkv'; scan in \d+ s\./.exec(out)?.[1];
    expect(id, out).toBeDefined();
    expect(out).toContain(`- INFO - PLEX [${id}]: Scan requested for '/data/TV/Show (2020)/Season 01' in section 'TV Shows'`);
    expect(out).toMatch(new RegExp(`- INFO - DISPATCH \\[${id}\\]: Finished scan of '/data/TV/Show \\(2020\\)/Season 01' by 'plex'`));
    expect(child.stdout()).not.toContain(SERVER_PASS);
    expect(child.stdout()).not.toContain(plex.token);
  });

  it("takes Sportarr's events as the app sends them: a delete of two files scans their folder once, a SeriesDelete without a path is answered 200 and logged", async () => {
    const child = startServer();
    await waitForHealth(child);
    const sportarr = { instanceName: "Sportarr", applicationUrl: "" };
    const gone = await postWebhook({
      ...sportarr,
      eventType: "EpisodeFileDelete",
      series: { id: 1, title: "Show", path: "/tv/Show (2020)", league: "Show League", sport: "Soccer" },
      deletedFiles: [
        { relativePath: "Season 01/Show - S01E02.mkv", path: "/tv/Show (2020)/Season 01/Show - S01E02.mkv", size: 1 },
        { relativePath: "Season 01/Show - S01E03.mkv", path: "/tv/Show (2020)/Season 01/Show - S01E03.mkv", size: 1 },
      ],
    });
    expect(gone.status).toBe(200);
    const removed = await postWebhook({ ...sportarr, eventType: "SeriesDelete", series: { id: 2, title: "Other", league: "Other League", sport: "Soccer" } });
    expect(removed.status).toBe(200);
    expect(await removed.text()).toBe("OK, nothing to scan: Sportarr SeriesDelete payload: missing 'series.path'");
    await waitFor(() => child.stdout().includes("Finished scan of"), `the scan finished (log: ${child.stdout()})`);
    expect(plex.scans).toEqual([expect.objectContaining({ sectionId: "2", path: "/data/TV/Show (2020)/Season 01" })]);
    const out = child.stdout();
    expect(out).toMatch(/- INFO - QUEUE \[\d+\]: Queued Sportarr 'EpisodeFileDelete' from client/);
    expect(out).toMatch(/- WARNING - WEB \[\d+\]: Client '127\.0\.0\.1' sent a 'SeriesDelete' event autoscan cannot use; nothing to scan: Sportarr SeriesDelete payload: missing 'series\.path'/);
  });

  it("starts quietly in the default setup without Plex's database: one INFO line on analysis, no warning, no note in History", async () => {
    const config = JSON.parse(await readFile(join(dir, "config.json"), "utf8")) as Record<string, unknown>;
    delete config.PLEX_ANALYZE_TYPE;
    const database = join(dir, "not-mounted", "com.plexapp.plugins.library.db");
    await writeFile(join(dir, "config.json"), JSON.stringify({ ...config, PLEX_DATABASE_PATH: database }));
    const child = startServer();
    await waitForHealth(child);
    expect((await postWebhook(sonarrDownload)).status).toBe(200);
    await waitFor(() => child.stdout().includes("Finished scan of"), `the scan finished (log: ${child.stdout()})`);
    const history = (await (await fetch(`http://127.0.0.1:${port}/api/${SERVER_PASS}?cmd=history`)).json()) as { history: unknown[] };
    expect(JSON.stringify(history.history)).not.toContain("skipped");
    const out = child.stdout();
    expect(out).not.toMatch(/ - (WARNING|ERROR) - /);
    expect(out.match(/- INFO - PLEX \[\d+\]: Analysis after a scan is off: Plex's database is not at PLEX_DATABASE_PATH/g)).toHaveLength(1);
  });

  it("answers a path no mapping and no library knows: 200, failed in History within 2 s with the nearest form, one WARNING, shown on the Queue page until dismissed", async () => {
    const child = startServer();
    await waitForHealth(child);
    const answer = await postWebhook(lost);
    expect(answer.status).toBe(200);
    // Into History within 2 s, no file checks, with the key and the form that almost matched.
    const history = { history: await failedWithin(2_000) };
    expect(history.history).toEqual([
      expect.objectContaining({
        folder: "/TV/Severance/Season 02",
        state: "failed",
        lastError: "Not queued: '/TV/Severance/Season 02/Severance - S02E01.mkv' matches no SERVER_PATH_MAPPINGS form and lies in no library (nearest form: '/tv/').",
      }),
    ]);
    expect(((await (await fetch(`http://127.0.0.1:${port}/api/${SERVER_PASS}?cmd=queue_count`)).json()) as { queue_count: number }).queue_count).toBe(0);
    const out = child.stdout();
    expect(out.match(/- WARNING - QUEUE \[\d+\]: Not queued: '\/TV\/Severance\/Season 02\/Severance - S02E01\.mkv' matches no SERVER_PATH_MAPPINGS form/g)).toHaveLength(1);
    expect(out).toContain("Fix: Correct the path or the form '/tv/' in SERVER_PATH_MAPPINGS (they differ at 'TV')");
    expect(out).not.toContain("File check");
    // The Queue page shows it on top until dismissed.
    const queuePage = await (await fetch(`http://127.0.0.1:${port}/${SERVER_PASS}/queue`)).text();
    expect(queuePage).toContain("1 path not queued: no server can scan it");
    const token = /name="token" value="([^"]+)"/.exec(queuePage)?.[1] ?? "";
    const dismissed = await fetch(`http://127.0.0.1:${port}/${SERVER_PASS}/refused/dismiss`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ token, back: `/${SERVER_PASS}/queue` }).toString(),
      redirect: "manual",
    });
    expect(dismissed.status).toBe(303);
    expect(await (await fetch(`http://127.0.0.1:${port}/${SERVER_PASS}/queue`)).text()).not.toContain("not queued: no server can scan");
    // doctor, beside the running server, lists it (from History).
    const doctor = await runCli(["doctor", "--json", "--config", join(dir, "config.json")], { timeoutMs: 30_000 });
    const checks = (JSON.parse(doctor.stdout) as { checks: { id: string; status: string; detail: string }[] }).checks;
    expect(checks.find((check) => check.id === "intake.refused")).toMatchObject({
      status: "warn",
      detail: expect.stringContaining("'/TV/Severance/Season 02/Severance - S02E01.mkv' matches no SERVER_PATH_MAPPINGS form"),
    });
    // A mapped path still goes the usual way.
    expect((await postWebhook(sonarrDownload)).status).toBe(200);
    await waitFor(() => plex.scans.length > 0, `a scan reached Plex (log: ${child.stdout()})`);
  });

  it("answers such a path while Plex hangs, and moves it to History as failed within 2 s from the list it knows", async () => {
    const child = startServer();
    await waitForHealth(child);
    // The section list is known: a mapped request reached Plex.
    expect((await postWebhook(sonarrDownload)).status).toBe(200);
    await waitFor(() => plex.scans.length > 0, `a scan reached Plex (log: ${child.stdout()})`);
    // Plex hangs now: every answer waits a minute, past the webhook's own timeout.
    plex.setDelay(60_000);
    expect((await postWebhook(lost)).status).toBe(200);
    expect(await failedWithin(2_000)).toEqual([expect.objectContaining({ folder: "/TV/Severance/Season 02", lastError: expect.stringContaining("Not queued:") })]);
    expect(child.stdout()).toMatch(/- WARNING - QUEUE \[\d+\]: Not queued: '\/TV\/Severance\/Season 02\/Severance - S02E01\.mkv'/);
  });

  it("answers such a path while Plex hangs with no list known, keeps it, and moves it to History once Plex answers", async () => {
    // File checks 10 s apart: the folder still waits when Plex answers.
    const config = JSON.parse(await readFile(join(dir, "config.json"), "utf8")) as Record<string, unknown>;
    await writeFile(join(dir, "config.json"), JSON.stringify({ ...config, SERVER_FILE_CHECK_DELAY: 10 }));
    const child = startServer();
    await waitForHealth(child);
    // Every answer of Plex waits 3 s: the list is known only then.
    plex.setDelay(3_000);
    expect((await postWebhook(lost)).status).toBe(200);
    expect(((await (await fetch(`http://127.0.0.1:${port}/api/${SERVER_PASS}?cmd=queue_count`)).json()) as { queue_count: number }).queue_count).toBe(1);
    expect(await failedWithin(3_000 + 2_000)).toEqual([expect.objectContaining({ folder: "/TV/Severance/Season 02", lastError: expect.stringContaining("Not queued:") })]);
  });

  it("queues such a path as before while Plex's libraries cannot be read (Plex down)", async () => {
    plex.setDown("reset");
    const child = startServer();
    await waitForHealth(child);
    const lost = { ...sonarrDownload, series: { ...sonarrDownload.series, path: "/TV/Severance" }, episodeFile: { id: 2, relativePath: "Season 02/S02E01.mkv" } };
    expect((await postWebhook(lost)).status).toBe(200);
    expect(((await (await fetch(`http://127.0.0.1:${port}/api/${SERVER_PASS}?cmd=queue_count`)).json()) as { queue_count: number }).queue_count).toBe(1);
    expect(child.stdout()).not.toContain("Not queued:");
  });

  it("keeps an accepted request across a crash while Plex is down, and delivers it after restart", async () => {
    plex.setDown(503);
    const first = startServer();
    await waitForHealth(first);
    expect((await postWebhook(sonarrDownload)).status).toBe(200);
    first.process.kill("SIGKILL");
    await within(first.exited, 10_000, "killed");
    expect(plex.scans).toEqual([]);

    plex.setDown(false);
    const second = startServer();
    await waitForHealth(second);
    await waitFor(() => plex.scans.length > 0, `the restored request reached Plex (log: ${second.stdout()})`);
    expect(plex.scans[0]).toMatchObject({ sectionId: "2", path: "/data/TV/Show (2020)/Season 01" });
    expect(second.stdout()).toMatch(/Restored 1 scan request\(s\)/);
    second.process.kill("SIGTERM");
    expect((await within(second.exited, 10_000, "exit")).code).toBe(0);
    expect(await readFile(join(dir, "queue.db")).then((b) => b.length > 0)).toBe(true);
  }, 90_000);
});
