import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CONSOLE_PASS, CONSOLE_SECTIONS, startConsoleService, type ConsoleService } from "./support/console-service.ts";
import { startFakeArr, type FakeArr } from "./support/fake-arr.ts";
import { runCli } from "./support/run-cli.ts";

/**
 * Catching up from the *arr history (issue 16), through the real service (`autoscan server` as a child process, its
 * queue file, real HTTP) with fake Sonarr, Radarr and Lidarr history APIs and a fake Plex: imports made while
 * autoscan was down are scanned once after it starts; an import that also came as a webhook is not scanned twice; a
 * read cut by a SIGKILL is read again and loses nothing; an app that was down catches up when it is back.
 */
let svc: ConsoleService;
let sonarr: FakeArr;
let radarr: FakeArr;
let lidarr: FakeArr;

beforeAll(async () => {
  [sonarr, radarr, lidarr] = await Promise.all([
    startFakeArr({ type: "sonarr", pathRoot: "/tv" }),
    startFakeArr({ type: "radarr", pathRoot: "/movies" }),
    startFakeArr({ type: "lidarr", pathRoot: "/music" }),
  ]);
  svc = await startConsoleService({
    SERVER_SCAN_DELAY: 1,
    SERVER_PATH_MAPPINGS: { "/data/TV/": ["/tv/"], "/data/Movies/": ["/movies/"], "/data/Music/": ["/music/"] },
    ARR: {
      sonarr: { TYPE: "sonarr", URL: sonarr.url, API_KEY: sonarr.apiKey },
      radarr: { TYPE: "radarr", URL: radarr.url, API_KEY: radarr.apiKey },
      lidarr: { TYPE: "lidarr", URL: lidarr.url, API_KEY: lidarr.apiKey },
    },
  });
  svc.plex.setSections([...CONSOLE_SECTIONS, { key: "3", title: "Music", type: "artist", locations: ["/data/Music"] }]);
}, 60_000);

afterAll(async () => {
  await svc?.stop();
  await Promise.all([sonarr?.close(), radarr?.close(), lidarr?.close()]);
});

const cursorsFile = () => join(svc.dir, "data", "backfill.json");
async function cursors(): Promise<Record<string, { date: string; id: number }>> {
  return ((JSON.parse(await readFile(cursorsFile(), "utf8").catch(() => "{}")) as { apps?: Record<string, { date: string; id: number }> }).apps ?? {});
}

async function api(query: string): Promise<Record<string, unknown>> {
  return (await fetch(`${svc.url}/api/${CONSOLE_PASS}?${query}`)).json() as Promise<Record<string, unknown>>;
}

/** `cmd=backfill` (what `autoscan backfill` calls): the stream's last line. */
async function backfillNow(query = ""): Promise<{ success: boolean; apps: { app: string; ok: boolean; queued: number; covered: number; error?: string }[] }> {
  const text = await (await fetch(`${svc.url}/api/${CONSOLE_PASS}?cmd=backfill${query}`, { method: "POST" })).text();
  return JSON.parse(text.trim().split("\n").at(-1)!) as never;
}

const scansOf = (folder: string) => svc.plex.scans.filter((scan) => scan.path === folder && scan.inside).length;

async function drained(): Promise<void> {
  await expect.poll(async () => (await api("cmd=queue_count")).queue_count, { timeout: 60_000, interval: 250 }).toBe(0);
}

describe("the backfill through the service", () => {
  it("starts from now on the first start, then scans each import made while autoscan was down exactly once", async () => {
    await expect.poll(async () => Object.keys(await cursors()).sort(), { timeout: 20_000 }).toEqual(["lidarr", "radarr", "sonarr"]);
    expect(svc.plex.scans).toHaveLength(0);
    await svc.kill();
    const folders: string[] = [];
    for (let i = 0; i < 8; i++) {
      const file = `Show ${i}/Season 01/Show ${i} - S01E01.mkv`;
      await svc.addFile(`TV/${file}`);
      sonarr.addImport({ path: `/tv/${file}` });
      folders.push(`/data/TV/Show ${i}/Season 01`);
    }
    for (let i = 0; i < 7; i++) {
      const file = `Film ${i} (2020)/Film ${i} (2020).mkv`;
      await svc.addFile(`Movies/${file}`);
      radarr.addImport({ path: `/movies/${file}` });
      folders.push(`/data/Movies/Film ${i} (2020)`);
    }
    for (let i = 0; i < 5; i++) {
      const file = `Artist ${i}/Album (2020)/01 - Song.flac`;
      await svc.addFile(`Music/${file}`);
      lidarr.addImport({ path: `/music/${file}` });
      folders.push(`/data/Music/Artist ${i}/Album (2020)`);
    }
    await svc.restart();
    await expect.poll(() => folders.filter((folder) => scansOf(folder) > 0).length, { timeout: 60_000, interval: 250 }).toBe(20);
    await drained();
    for (const folder of folders) expect(scansOf(folder), folder).toBe(1);
  }, 120_000);

  it("does not scan twice an import that also came as a webhook", async () => {
    const file = "Webhook Show/Season 02/Webhook Show - S02E01.mkv";
    await svc.addFile(`TV/${file}`);
    sonarr.addImport({ path: `/tv/${file}` });
    const res = await svc.webhook("sonarr", {
      eventType: "Download",
      series: { id: 9, title: "Webhook Show", path: "/tv/Webhook Show" },
      episodeFile: { id: 9, relativePath: "Season 02/Webhook Show - S02E01.mkv", path: `/tv/${file}` },
    });
    expect(res.status).toBe(200);
    const folder = "/data/TV/Webhook Show/Season 02";
    await expect.poll(() => scansOf(folder), { timeout: 30_000, interval: 250 }).toBe(1);
    const result = await backfillNow();
    expect(result.success).toBe(true);
    expect(result.apps.find((a) => a.app === "sonarr")).toMatchObject({ ok: true, queued: 0 });
    await drained();
    expect(scansOf(folder)).toBe(1);
  }, 60_000);

  it("reads again a read cut by a SIGKILL in the middle, and loses nothing", async () => {
    // 600 deletes over 60 season folders (deletes need no file on disk): pages of 250, cut while page 2 is asked for.
    const before = await cursors();
    sonarr.addMany(600, (i) => ({ kind: "delete", path: `/tv/Cut ${i % 60}/Season 01/Cut ${i % 60} - S01E${String(Math.floor(i / 60) + 1).padStart(2, "0")}.mkv` }));
    sonarr.hangFromPage(2);
    const cut = fetch(`${svc.url}/api/${CONSOLE_PASS}?cmd=backfill&app=sonarr`, { method: "POST" }).then((r) => r.text()).catch(() => "");
    await expect.poll(() => sonarr.requests.some((r) => /\/history$/.test(r.path) && r.query.get("page") === "2"), { timeout: 20_000 }).toBe(true);
    await svc.kill();
    await cut;
    expect((await cursors()).sonarr).toEqual(before.sonarr);
    sonarr.hangFromPage(undefined);
    await svc.restart();
    const folders = Array.from({ length: 60 }, (_, i) => `/data/TV/Cut ${i}/Season 01`);
    await expect.poll(() => folders.filter((folder) => scansOf(folder) > 0).length, { timeout: 60_000, interval: 250 }).toBe(60);
    await drained();
    const total = folders.reduce((sum, folder) => sum + scansOf(folder), 0);
    // Each folder once; a scan that was in flight when the process died may go out once more (one per target slot).
    expect(total).toBeLessThanOrEqual(61);
    expect((await cursors()).sonarr?.id).toBeGreaterThan(before.sonarr?.id ?? 0);
  }, 120_000);

  it("an app that is down keeps its cursor, the others go on, and it catches up when it is back", async () => {
    await radarr.setDown(true);
    const before = (await cursors()).radarr;
    const files = [0, 1, 2].map((i) => `Late ${i} (2021)/Late ${i} (2021).mkv`);
    for (const file of files) {
      await svc.addFile(`Movies/${file}`);
      radarr.addImport({ path: `/movies/${file}` });
    }
    const down = await backfillNow();
    expect(down.success).toBe(false);
    expect(down.apps.find((a) => a.app === "radarr")).toMatchObject({ ok: false });
    expect(down.apps.find((a) => a.app === "sonarr")).toMatchObject({ ok: true });
    expect((await cursors()).radarr).toEqual(before);
    // The CLI's dry run lists what it would queue, and queues nothing.
    await radarr.setDown(false);
    const dry = await runCli(["backfill", "--app", "radarr", "--dry-run", "--config", join(svc.dir, "config.json")], { timeoutMs: 30_000 });
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout.split("\n").filter((line) => line.startsWith("would queue"))).toHaveLength(3);
    expect(dry.stderr).toMatch(/radarr: \d+ record\(s\) read; 3 would be queued/);
    expect((await api("cmd=queue_count")).queue_count).toBe(0);
    const back = await backfillNow("&app=radarr");
    expect(back.apps[0]).toMatchObject({ app: "radarr", ok: true, queued: 3 });
    for (const file of files) {
      const folder = `/data/Movies/${file.split("/")[0]}`;
      await expect.poll(() => scansOf(folder), { timeout: 30_000, interval: 250 }).toBe(1);
    }
  }, 90_000);
});
