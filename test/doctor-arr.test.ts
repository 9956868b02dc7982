import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadDoctorConfig, runDoctor } from "../src/ops/doctor/doctor.ts";
import { resolveSettings } from "../src/config/settings.ts";
import type { CheckResult, DoctorReport } from "../src/ops/doctor/check.ts";
import { captureLog } from "./support/capture-log.ts";
import { startFakeArr, type FakeArr } from "./support/fake-arr.ts";
import { startFakePlex, type FakePlex } from "./support/fake-plex.ts";
import { freePort } from "./support/free-port.ts";
import { runCli } from "./support/run-cli.ts";

/**
 * `autoscan doctor` on the *arr apps (ARR) against the fake *arr APIs (test/support/fake-arr.ts): reachable, key
 * accepted, which app and version, history readable, connected to autoscan (a Webhook to `/<SERVER_PASS>/<name>`,
 * enabled, the events ticked, not held back after failures); each broken case named with its fix. The first case runs the
 * real CLI as a process; the others run `runDoctor` in-process, the entry the command uses. No key ever shows.
 */
const SERVER_PASS = "doctor-arr-pass-0123456789abcdef";
const KEYS = {
  sonarr: "sonarrkey00112233445566778899aabbcc",
  sonarr3: "sonarr3key0112233445566778899aabbcc",
  radarr: "radarrkey00112233445566778899aabbcc",
  lidarr: "lidarrkey00112233445566778899aabbcc",
  readarr: "readarrkey0112233445566778899aabbcc",
};
const WRONG_KEY = "wrongkey00112233445566778899aabbccdd";

let root: string;
let plex: FakePlex;
let sonarr: FakeArr;
let sonarr3: FakeArr;
let radarr: FakeArr;
let lidarr: FakeArr;
let readarr: FakeArr;
let caseCount = 0;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "autoscan-doctor-arr-"));
  plex = await startFakePlex({ sections: [] });
  [sonarr, sonarr3, radarr, lidarr, readarr] = await Promise.all([
    startFakeArr({ type: "sonarr", apiKey: KEYS.sonarr }),
    startFakeArr({ type: "sonarr", sonarrVersion: "v3", apiKey: KEYS.sonarr3 }),
    startFakeArr({ type: "radarr", apiKey: KEYS.radarr }),
    startFakeArr({ type: "lidarr", apiKey: KEYS.lidarr }),
    startFakeArr({ type: "readarr", apiKey: KEYS.readarr }),
  ]);
  // Each app connected to autoscan, as 'autoscan arr connect' leaves it (the host is the app's side: not compared).
  const connected = (app: FakeArr, name: string, events: Record<string, boolean>) =>
    app.addNotification({ name: "autoscan", url: `http://autoscan:3467/${SERVER_PASS}/${name}`, events });
  const sonarrEvents = { onDownload: true, onUpgrade: true, onRename: true, onSeriesDelete: true, onEpisodeFileDelete: true, onEpisodeFileDeleteForUpgrade: true };
  connected(sonarr, "sonarr", sonarrEvents);
  connected(sonarr3, "sonarr-old", sonarrEvents);
  connected(radarr, "radarr", { onDownload: true, onUpgrade: true, onRename: true, onMovieDelete: true, onMovieFileDelete: true, onMovieFileDeleteForUpgrade: true });
  connected(lidarr, "lidarr", { onReleaseImport: true, onUpgrade: true, onRename: true, onArtistDelete: true, onAlbumDelete: true });
  connected(readarr, "readarr", {
    onReleaseImport: true,
    onUpgrade: true,
    onRename: true,
    onAuthorDelete: true,
    onBookDelete: true,
    onBookFileDelete: true,
    onBookFileDeleteForUpgrade: true,
  });
  sonarr.addImport({ path: "Show/Season 01/Show - S01E01.mkv" });
  sonarr.addImport({ path: "Show/Season 01/Show - S01E02.mkv" });
  sonarr3.addImport({ path: "Old Show/Season 01/Old Show - S01E01.mkv" });
  radarr.addImport({ path: "Film (2020)/Film (2020).mkv" });
});

afterAll(async () => {
  await Promise.all([plex.close(), sonarr.close(), sonarr3.close(), radarr.close(), lidarr.close(), readarr.close()]);
  await rm(root, { recursive: true, force: true });
});

function arr(): Record<string, Record<string, unknown>> {
  return {
    sonarr: { TYPE: "sonarr", URL: sonarr.url, API_KEY: KEYS.sonarr },
    "sonarr-old": { TYPE: "sonarr", URL: sonarr3.url, API_KEY: KEYS.sonarr3 },
    radarr: { TYPE: "radarr", URL: radarr.url, API_KEY: KEYS.radarr },
    lidarr: { TYPE: "lidarr", URL: lidarr.url, API_KEY: KEYS.lidarr },
    readarr: { TYPE: "readarr", URL: readarr.url, API_KEY: KEYS.readarr },
  };
}

async function healthyConfig(): Promise<Record<string, unknown>> {
  return { SERVER_PASS, SERVER_IP: "127.0.0.1", SERVER_PORT: await freePort(), PLEX_LOCAL_URL: plex.url, PLEX_TOKEN: plex.token, ARR: arr() };
}

function withApp(config: Record<string, unknown>, name: string, change: Record<string, unknown>): Record<string, unknown> {
  const all = config.ARR as Record<string, Record<string, unknown>>;
  return { ...config, ARR: { ...all, [name]: { ...all[name], ...change } } };
}

async function writeCase(config: Record<string, unknown>): Promise<string> {
  const dir = join(root, `case-${++caseCount}`);
  await mkdir(dir, { recursive: true });
  const path = join(dir, "config.json");
  await writeFile(path, JSON.stringify(config, null, 2));
  return path;
}

function expectNoKey(text: string): void {
  for (const key of [...Object.values(KEYS), WRONG_KEY, SERVER_PASS]) expect(text).not.toContain(key);
}

interface DoctorRun {
  readonly report: DoctorReport;
  check(id: string): CheckResult;
}

async function doctor(config: Record<string, unknown>, options: { inContainer?: boolean } = {}): Promise<DoctorRun> {
  const path = await writeCase(config);
  const settings = resolveSettings({ config: path }, {}, root);
  const loaded = await loadDoctorConfig(settings, {});
  expect(loaded.config).toBeDefined();
  const capture = captureLog();
  const report = await runDoctor({ settings, env: {}, loaded, log: capture.log, inContainer: options.inContainer ?? false });
  expectNoKey(JSON.stringify(report));
  expectNoKey(JSON.stringify(capture.records));
  return {
    report,
    check(id) {
      const found = report.checks.find((check) => check.id === id);
      if (!found) throw new Error(`no check ${id} in ${report.checks.map((c) => c.id).join(", ")}`);
      return found;
    },
  };
}

const statusOf = (run: DoctorRun, name: string) =>
  Object.fromEntries(run.report.checks.filter((check) => check.id === `arr:${name}` || check.id.startsWith(`arr:${name}.`)).map((c) => [c.id, c.status]));

const ALL_OK = (name: string) => ({
  [`arr:${name}`]: "ok",
  [`arr:${name}.key`]: "ok",
  [`arr:${name}.version`]: "ok",
  [`arr:${name}.history`]: "ok",
  [`arr:${name}.connection`]: "ok",
});
const REST_SKIPPED = (name: string) => ({
  [`arr:${name}.key`]: "skip",
  [`arr:${name}.version`]: "skip",
  [`arr:${name}.history`]: "skip",
  [`arr:${name}.connection`]: "skip",
});

describe("autoscan doctor: the *arr apps", () => {
  it("healthy: each app answers, takes its key, says its version, shows its history and is connected (real process)", async () => {
    const path = await writeCase(await healthyConfig());
    const result = await runCli(["doctor", "--config", path]);
    expectNoKey(result.stdout + result.stderr);
    const lines = result.stdout.split("\n").filter((line) => /^. (sonarr|radarr|lidarr|readarr)/.test(line));
    expect(lines).toHaveLength(25);
    for (const line of lines) expect(line).toMatch(/^✓ /);
    expect(result.stdout).toMatch(/✓ sonarr key +Sonarr accepted ARR\.sonarr\.API_KEY\./);
    expect(result.stdout).toMatch(/✓ sonarr version +Sonarr 4\.0\.14\.2939\./);
    expect(result.stdout).toMatch(/✓ sonarr history +Readable; it holds 2 records\./);
    expect(result.stdout).toMatch(/✓ sonarr-old version +Sonarr 3\.0\.10\.1567\./);
    expect(result.stdout).toMatch(/✓ lidarr history +Readable; it holds no record yet\./);
    expect(result.stdout).toContain(`Answers at ${readarr.url}.`);
    expect(result.stdout).toMatch(
      /✓ sonarr connection +'autoscan' \(id 1\) sends Sonarr's imports, upgrades, renames and deletes to http:\/\/autoscan:3467\/<SERVER_PASS>\/sonarr\./,
    );
  });

  it("in-process: every line ✓; BACKFILL false is one skipped line", async () => {
    const run = await doctor(withApp(await healthyConfig(), "lidarr", { BACKFILL: false }));
    for (const name of ["sonarr", "sonarr-old", "radarr", "readarr"]) expect(statusOf(run, name)).toEqual(ALL_OK(name));
    expect(statusOf(run, "lidarr")).toEqual({ "arr:lidarr": "skip" });
    expect(run.check("arr:lidarr").detail).toBe("ARR.lidarr.BACKFILL is false: not checked, and its history is not read.");
    expect(run.check("arr:radarr.history").detail).toBe("Readable; it holds 1 record.");
  });

  it("a wrong key: ✗ naming ARR.<name>.API_KEY and where the app shows it, never the key; the rest skipped", async () => {
    const run = await doctor(withApp(withApp(await healthyConfig(), "sonarr", { API_KEY: WRONG_KEY }), "sonarr-old", { API_KEY: WRONG_KEY }));
    expect(run.check("arr:sonarr.key")).toMatchObject({ status: "error", detail: `Sonarr rejected ARR.sonarr.API_KEY (401 at ${sonarr.url}).` });
    expect(run.check("arr:sonarr.key").fix).toBe("Set ARR.sonarr.API_KEY to Sonarr's API key: in Sonarr, Settings → General → Security → API Key.");
    expect(run.check("arr:sonarr-old.key")).toMatchObject({ status: "error", detail: expect.stringContaining("Sonarr rejected ARR.sonarr-old.API_KEY (401") });
    expect(statusOf(run, "sonarr")).toEqual({
      "arr:sonarr": "ok",
      "arr:sonarr.key": "error",
      "arr:sonarr.version": "skip",
      "arr:sonarr.history": "skip",
      "arr:sonarr.connection": "skip",
    });
    expect(statusOf(run, "radarr")).toEqual(ALL_OK("radarr"));
    // The wrong key was sent, and it is nowhere in the report (expectNoKey in doctor()).
    expect(sonarr.requests.some((request) => request.headers["x-api-key"] === WRONG_KEY)).toBe(true);
  });

  it("an app down: ✗ with the cause (connection refused, localhost in a container, a hung app, an unknown name)", async () => {
    await radarr.setDown(true);
    try {
      const run = await doctor(await healthyConfig());
      const [, port] = /:(\d+)$/.exec(radarr.url) ?? [];
      expect(run.check("arr:radarr")).toMatchObject({ status: "error", detail: `connection refused: nothing listens at http://127.0.0.1:${port} (is Radarr running? is the port right?).` });
      expect(run.check("arr:radarr").fix).toBe("Start Radarr, or correct the address and port in ARR.radarr.URL (Radarr listens on 7878).");
      expect(statusOf(run, "radarr")).toEqual({ "arr:radarr": "error", ...REST_SKIPPED("radarr") });
      expect(statusOf(run, "sonarr")).toEqual(ALL_OK("sonarr"));
    } finally {
      await radarr.setDown(false);
    }

    const port = await freePort();
    const inside = await doctor(withApp(await healthyConfig(), "lidarr", { URL: `http://localhost:${port}` }), { inContainer: true });
    expect(inside.check("arr:lidarr")).toMatchObject({ status: "error", detail: expect.stringContaining("autoscan runs in a container") });
    expect(inside.check("arr:lidarr").fix).toContain("e.g. http://lidarr:8686");

    readarr.setHang(true);
    try {
      const hung = await doctor(withApp(await healthyConfig(), "readarr", { TIMEOUT: 1 }));
      expect(hung.check("arr:readarr")).toMatchObject({ status: "error", detail: expect.stringMatching(/^no answer within 1 s from http:\/\/127\.0\.0\.1:\d+: it took the connection but never answered \(Readarr hangs/) });
    } finally {
      readarr.setHang(false);
    }

    const unknown = await doctor(withApp(await healthyConfig(), "sonarr", { URL: "http://sonarr.autoscan-doctor.invalid:8989" }));
    expect(unknown.check("arr:sonarr").detail).toMatch(/^sonarr\.autoscan-doctor\.invalid does not resolve \((ENOTFOUND|EAI_AGAIN)[):].*ARR\.sonarr\.URL/);
  });

  it("another app at the URL: ! naming the app that answered and the TYPE to set", async () => {
    const run = await doctor(withApp(await healthyConfig(), "sonarr", { URL: radarr.url, API_KEY: KEYS.radarr }));
    expect(run.check("arr:sonarr.key")).toMatchObject({ status: "ok", detail: "Radarr accepted ARR.sonarr.API_KEY." });
    expect(run.check("arr:sonarr.version")).toMatchObject({
      status: "warn",
      detail: `ARR.sonarr.TYPE is "sonarr", but the app at ${radarr.url} is Radarr 6.0.4.10291: its history would be read with Sonarr's event names.`,
      fix: `Set ARR.sonarr.TYPE to "radarr", or ARR.sonarr.URL to Sonarr's address.`,
    });
    expect(run.check("arr:sonarr.history").status).toBe("ok");
    // That app sends to autoscan under its own label: not what ARR.sonarr's connection should be.
    expect(run.check("arr:sonarr.connection")).toMatchObject({
      status: "error",
      detail: "'autoscan' (id 1) sends to http://autoscan:3467/<SERVER_PASS>/radarr, not to …/<SERVER_PASS>/sonarr.",
    });
  });

  it("an app starting up (503): ✗ that says it is starting, the rest skipped; ✓ again once started", async () => {
    sonarr.setStarting(true);
    try {
      const run = await doctor(await healthyConfig());
      expect(run.check("arr:sonarr")).toMatchObject({
        status: "error",
        detail: `Sonarr at ${sonarr.url} is starting up (503: "Sonarr is starting up, please try again later").`,
      });
      expect(run.check("arr:sonarr").fix).toContain("Wait until it has started");
      expect(statusOf(run, "sonarr")).toEqual({ "arr:sonarr": "error", ...REST_SKIPPED("sonarr") });
    } finally {
      sonarr.setStarting(false);
    }
    expect(statusOf(await doctor(await healthyConfig()), "sonarr")).toEqual(ALL_OK("sonarr"));
  });

  it("a history that fails after the key is accepted: ✗ on the history line only", async () => {
    radarr.answerNext(/GET \/api\/v3\/history$/, { status: 500, body: '{"message":"database is locked"}', contentType: "application/json" });
    const run = await doctor(await healthyConfig());
    expect(statusOf(run, "radarr")).toEqual({ ...ALL_OK("radarr"), "arr:radarr.history": "error" });
    expect(run.check("arr:radarr.history").detail).toContain("Reading one page of the history failed: radarr answered 500");
  });

  describe("the connection to autoscan", () => {
    const wanted = { onDownload: true, onUpgrade: true, onRename: true, onSeriesDelete: true, onEpisodeFileDelete: true, onEpisodeFileDeleteForUpgrade: true };
    const url = `http://192.168.1.10:3467/${SERVER_PASS}/sonarr`;

    /** doctor with ARR.sonarr pointing at a fresh fake Sonarr that `seed` prepared. */
    async function connectionCheck(seed: (app: FakeArr) => void): Promise<CheckResult> {
      const app = await startFakeArr({ type: "sonarr", apiKey: KEYS.sonarr });
      try {
        seed(app);
        const run = await doctor(withApp(await healthyConfig(), "sonarr", { URL: app.url }));
        expect(statusOf(run, "sonarr")).toMatchObject({ "arr:sonarr": "ok", "arr:sonarr.key": "ok", "arr:sonarr.history": "ok" });
        return run.check("arr:sonarr.connection");
      } finally {
        await app.close();
      }
    }

    it("a disabled connection (no event ticked): ✗ saying Sonarr sends nothing, with 'autoscan arr connect' to fix it", async () => {
      const check = await connectionCheck((app) => app.addNotification({ name: "autoscan", url }));
      expect(check).toEqual({
        id: "arr:sonarr.connection",
        status: "error",
        title: "sonarr connection",
        detail: "'autoscan' (id 1) has no event ticked: Sonarr shows it as Disabled and sends autoscan nothing.",
        fix: "Run 'autoscan arr connect --app sonarr' to fix it, or edit it in Sonarr, Settings → Connect.",
      });
    });

    it("a connection on Sonarr's health list as unavailable due to failures: ✗ (the warning naming it, and the error for all)", async () => {
      const named = await connectionCheck((app) => {
        app.addNotification({ name: "Discord", url: "http://discord.invalid/api/webhooks/1", events: { onGrab: true } });
        app.setNotificationFailing(app.addNotification({ name: "autoscan", url, events: wanted }), true);
      });
      expect(named).toMatchObject({
        status: "error",
        detail: expect.stringContaining("Sonarr's health list says 'autoscan' (id 2) is unavailable due to failures: Sonarr stopped sending to it"),
        fix: expect.stringContaining("then run 'autoscan arr connect --app sonarr': a passed test lets Sonarr send again"),
      });
      const all = await connectionCheck((app) => app.setNotificationFailing(app.addNotification({ name: "autoscan", url, events: wanted }), true));
      expect(all).toMatchObject({ status: "error", detail: expect.stringContaining("is unavailable due to failures") });
      // Another connection held back is not autoscan's problem.
      const other = await connectionCheck((app) => {
        app.addNotification({ name: "autoscan", url, events: wanted });
        app.setNotificationFailing(app.addNotification({ name: "Discord", url: "http://discord.invalid/api/webhooks/1", events: { onGrab: true } }), true);
      });
      expect(other.status).toBe("ok");
    });

    it("no connection: ✗ naming the URL path and both ways to add it; missing events: ! naming them", async () => {
      const missing = await connectionCheck((app) => app.addNotification({ name: "Notifiarr", url: "http://notifiarr:5454/api/v1/notification/sonarr", events: { onGrab: true } }));
      expect(missing).toMatchObject({
        status: "error",
        detail: "Sonarr has no Webhook connection to autoscan (/<SERVER_PASS>/sonarr): it sends autoscan nothing. Imports reach autoscan only through the backfill.",
        fix: expect.stringContaining("Run 'autoscan arr connect --app sonarr': it creates the connection and has Sonarr test it"),
      });
      const events = await connectionCheck((app) => app.addNotification({ name: "autoscan", url, events: { onDownload: true, onUpgrade: true } }));
      expect(events).toMatchObject({
        status: "warn",
        detail:
          "'autoscan' (id 1) does not tick On Rename, On Series Delete, On Episode File Delete, On Episode File Delete For Upgrade: those are not " +
          "scanned until a backfill finds them.",
      });
    });
  });
});
