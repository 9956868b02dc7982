import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resolveSettings } from "../src/config/settings.ts";
import { loadDoctorConfig, runDoctor, runStartupChecks } from "../src/ops/doctor/doctor.ts";
import type { CheckResult, DoctorReport } from "../src/ops/doctor/check.ts";
import { captureLog } from "./support/capture-log.ts";
import { startFakeGoogle } from "./support/fake-google.ts";
import { startFakePlex, type FakePlex } from "./support/fake-plex.ts";
import { startFakeRcloneRc } from "./support/fake-rclone-rc.ts";
import { createTokenStore } from "../src/drive/token-store.ts";
import { freePort, occupyPort } from "./support/free-port.ts";
import { cleanupMounts, mountTmpfs, probeMounts, remount } from "./support/faults/mounts.ts";
import { installHostFakeScanner } from "./support/docker/host-fake-scanner.ts";
import { runCli, startCli, within } from "./support/run-cli.ts";

/**
 * `autoscan doctor` against the fake Plex and real folders: each broken setup is named with its fix, a healthy one
 * passes with exit 0. Most cases run through the same entry the command uses (`runDoctor`), in-process; the healthy
 * case and the JSON shape run the real CLI as a process. Scanner-mode cases against a real Docker engine are in
 * doctor-docker.test.ts.
 */
const SERVER_PASS = "doctor-test-pass-0123456789abcdef";
let root: string;
let media: { movies: string; tv: string };
let plex: FakePlex;
let caseCount = 0;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "autoscan-doctor-"));
  media = { movies: join(root, "media", "Movies"), tv: join(root, "media", "TV") };
  await mkdir(media.movies, { recursive: true });
  await mkdir(media.tv, { recursive: true });
  plex = await startFakePlex({
    sections: [
      { key: "1", title: "Movies", type: "movie", locations: [media.movies] },
      { key: "2", title: "TV", type: "show", locations: [media.tv] },
    ],
  });
});

afterAll(async () => {
  await plex.close();
  cleanupMounts();
  await rm(root, { recursive: true, force: true });
});

/** A config that passes every check: Plex answers, both libraries are mapped and on disk, the port is free. */
async function healthyConfig(): Promise<Record<string, unknown>> {
  return {
    SERVER_PASS,
    SERVER_IP: "127.0.0.1",
    SERVER_PORT: await freePort(),
    PLEX_LOCAL_URL: plex.url,
    PLEX_TOKEN: plex.token,
    SERVER_PATH_MAPPINGS: { [`${media.movies}/`]: ["/downloads/Movies/"], [`${media.tv}/`]: ["/downloads/TV/"] },
  };
}

async function writeCase(config: Record<string, unknown>): Promise<string> {
  const dir = join(root, `case-${++caseCount}`);
  await mkdir(dir, { recursive: true });
  const path = join(dir, "config.json");
  await writeFile(path, JSON.stringify(config, null, 2));
  return path;
}

interface DoctorRun {
  readonly report: DoctorReport;
  check(id: string): CheckResult;
}

async function doctor(
  config: Record<string, unknown>,
  options: { inContainer?: boolean; env?: Record<string, string>; dataDir?: string; diskTimeoutMs?: number } = {},
): Promise<DoctorRun> {
  const path = await writeCase(config);
  const env = options.env ?? {};
  const flags = { config: path, ...(options.dataDir ? { "data-dir": options.dataDir } : {}) };
  const settings = resolveSettings(flags, env, root);
  const loaded = await loadDoctorConfig(settings, env, options.inContainer ?? false);
  const report = await runDoctor({
    settings,
    env,
    loaded,
    log: captureLog().log,
    inContainer: options.inContainer ?? false,
    ...(options.diskTimeoutMs ? { diskTimeoutMs: options.diskTimeoutMs } : {}),
  });
  // Whatever went wrong, no secret is ever shown.
  const text = JSON.stringify(report);
  expect(text).not.toContain(SERVER_PASS);
  if (typeof config.PLEX_TOKEN === "string" && config.PLEX_TOKEN !== "") expect(text).not.toContain(config.PLEX_TOKEN);
  return {
    report,
    check(id) {
      const found = report.checks.find((check) => check.id === id);
      if (!found) throw new Error(`no check ${id} in ${report.checks.map((c) => c.id).join(", ")}`);
      return found;
    },
  };
}

const statuses = (report: DoctorReport) => Object.fromEntries(report.checks.map((check) => [check.id, check.status]));

describe("autoscan doctor: a healthy setup", () => {
  it("passes every check, prints aligned lines and a summary, and exits 0 (real process)", async () => {
    const path = await writeCase(await healthyConfig());
    const result = await runCli(["doctor", "--config", path]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const lines = result.stdout.trimEnd().split("\n");
    expect(lines.at(-1)).toMatch(/^0 errors, 0 warnings \(\d+ ok\)$/);
    const checks = lines.slice(0, -2);
    for (const line of checks) expect(line).toMatch(/^✓ /);
    // The findings start in one column.
    const column = new Set(checks.map((line) => line.slice(2).search(/ {2}\S/)));
    expect(column.size).toBe(1);
    expect(result.stdout).toContain("Plex accepted PLEX_TOKEN.");
    expect(result.stdout).toContain("Plex Media Server 1.41.3.9314-a0bfb8370 ('fake-plex').");
    expect(result.stdout).not.toContain(plex.token);
    expect(result.stdout).not.toContain(SERVER_PASS);
  });

  it("prints {ok, checks:[{id, status, title, detail, fix}]} with --json (real process)", async () => {
    const config = await healthyConfig();
    const path = await writeCase({ ...config, PLEX_TOKEN: "wrong-token-0123456789" });
    const result = await runCli(["doctor", "--json", "--config", path]);
    expect(result.code).toBe(1);
    const json = JSON.parse(result.stdout) as { ok: boolean; checks: Record<string, unknown>[] };
    expect(json.ok).toBe(false);
    for (const check of json.checks) {
      expect(Object.keys(check).sort()).toEqual(["detail", "fix", "id", "status", "title"]);
      expect(["ok", "warn", "error", "skip"]).toContain(check.status);
      expect(check.fix === null || typeof check.fix === "string").toBe(true);
    }
    expect(json.checks.find((c) => c.id === "plex.token")).toMatchObject({ status: "error" });
    expect(json.checks.find((c) => c.id === "config")).toMatchObject({ status: "ok", fix: null });
    expect(result.stdout).not.toContain("wrong-token-0123456789");
  });

  it("in-process: every check is ok", async () => {
    const run = await doctor(await healthyConfig());
    expect(run.report.ok).toBe(true);
    expect(run.report.checks.filter((check) => check.status !== "ok")).toEqual([]);
    expect(run.check(`disk:1:${media.movies}`).detail).toContain("at the same path");
  });
});

describe("autoscan doctor: broken setups, each named with its fix", () => {
  it("wrong token: the token is named, the checks that need it are skipped", async () => {
    const run = await doctor({ ...(await healthyConfig()), PLEX_TOKEN: "not-the-token-123456" });
    expect(run.report.ok).toBe(false);
    expect(run.check("plex.reach").status).toBe("ok");
    expect(run.check("plex.token")).toMatchObject({ status: "error", detail: expect.stringContaining("Plex rejected PLEX_TOKEN (401") });
    expect(run.check("plex.token").fix).toContain("X-Plex-Token");
    expect(run.check("mappings")).toMatchObject({ status: "skip", detail: expect.stringContaining("Plex rejected the token") });
  });

  it("unreachable Plex: a closed port is named as such", async () => {
    const port = await freePort();
    const run = await doctor({ ...(await healthyConfig()), PLEX_LOCAL_URL: `http://127.0.0.1:${port}` });
    expect(run.check("plex.reach")).toMatchObject({ status: "error", detail: `connection refused: nothing listens at http://127.0.0.1:${port} (is Plex running? is the port right?).` });
    expect(run.check("plex.reach").fix).toContain("Start Plex");
    expect(statuses(run.report)).toMatchObject({ "plex.token": "skip", "plex.version": "skip", mappings: "skip" });
    // One error, not a cascade.
    expect(run.report.checks.filter((check) => check.status === "error")).toHaveLength(1);
  });

  it("unreachable Plex: a name that does not resolve", async () => {
    const run = await doctor({ ...(await healthyConfig()), PLEX_LOCAL_URL: "http://plex.autoscan-doctor.invalid:32400" });
    expect(run.check("plex.reach").detail).toMatch(/^plex\.autoscan-doctor\.invalid does not resolve \((ENOTFOUND|EAI_AGAIN)[):]/);
    expect(run.check("plex.reach").fix).toContain("same Docker network");
  });

  it("localhost inside a container: explains that localhost is autoscan's own container", async () => {
    const port = await freePort();
    const config = { ...(await healthyConfig()), PLEX_LOCAL_URL: `http://localhost:${port}` };
    const inside = await doctor(config, { inContainer: true });
    expect(inside.check("plex.reach")).toMatchObject({ status: "error", detail: expect.stringContaining("autoscan runs in a container") });
    expect(inside.check("plex.reach").fix).toContain("http://plex:32400");
    // The same URL outside a container is just a closed port.
    const outside = await doctor(config, { inContainer: false });
    expect(outside.check("plex.reach").detail).toContain("connection refused");
  });

  it("a mapping in no section: the key is named with Plex's folders", async () => {
    const config = await healthyConfig();
    const mappings = { ...(config.SERVER_PATH_MAPPINGS as object), "/mnt/unionfs/Music/": ["/downloads/Music/"] };
    const run = await doctor({ ...config, SERVER_PATH_MAPPINGS: mappings });
    const check = run.check("mapping:/mnt/unionfs/Music/");
    expect(check).toMatchObject({ status: "error", detail: expect.stringContaining("is in no Plex library") });
    expect(check.fix).toContain(media.movies);
    expect(run.check(`mapping:${media.movies}/`).status).toBe("ok");
  });

  it("a section no mapping reaches: a warning with the mapping to add", async () => {
    const config = await healthyConfig();
    const run = await doctor({ ...config, SERVER_PATH_MAPPINGS: { [`${media.movies}/`]: ["/downloads/Movies/"] } });
    const check = run.check(`library:2:${media.tv}`);
    expect(check).toMatchObject({ status: "warn", detail: expect.stringContaining(`No SERVER_PATH_MAPPINGS key reaches '${media.tv}'`) });
    expect(check.fix).toContain(`"${media.tv}/": ["<the folder as they see it>/"]`);
    expect(run.report.ok).toBe(true);
    // Without any mapping, paths pass unchanged: fine.
    const none = await doctor({ ...config, SERVER_PATH_MAPPINGS: {} });
    expect(none.check(`library:2:${media.tv}`).status).toBe("ok");
  });

  it("a mount autoscan cannot see: named, with SERVER_FILE_EXIST_PATH_MAPPINGS as the fix", async () => {
    const hidden = "/srv/autoscan-doctor-absent/Movies";
    plex.setSections([{ key: "1", title: "Movies", type: "movie", locations: [hidden] }]);
    try {
      const config = { ...(await healthyConfig()), SERVER_PATH_MAPPINGS: { [`${hidden}/`]: ["/downloads/Movies/"] } };
      const run = await doctor(config);
      const check = run.check(`disk:1:${hidden}`);
      expect(check).toMatchObject({ status: "error", detail: expect.stringContaining(`autoscan cannot see '${hidden}'`) });
      expect(check.fix).toContain("SERVER_FILE_EXIST_PATH_MAPPINGS");
      expect(run.report.ok).toBe(false);
      // Seen through the file-exist mapping, it passes.
      const mapped = await doctor({ ...config, SERVER_FILE_EXIST_PATH_MAPPINGS: { [`${media.movies}/`]: [`${hidden}/`] } });
      expect(mapped.check(`disk:1:${hidden}`)).toMatchObject({ status: "ok", detail: expect.stringContaining(`at '${media.movies}/'`) });
    } finally {
      plex.setSections([
        { key: "1", title: "Movies", type: "movie", locations: [media.movies] },
        { key: "2", title: "TV", type: "show", locations: [media.tv] },
      ]);
    }
  });

  it("a media folder autoscan cannot see, in Docker: MEDIA_DIR in .env and docker compose up -d; outside: the mount", async () => {
    // docker-compose.yml mounts MEDIA_DIR at /data, read-only: the advice names that variable, not a docker run flag.
    const compose = await readFile(join(import.meta.dirname, "..", "docker-compose.yml"), "utf8");
    expect(compose).toContain('"${MEDIA_DIR:-./media}:/data:ro"');
    const underData = "/data/autoscan-doctor-absent/Movies";
    const elsewhere = "/mnt/autoscan-doctor-absent/TV";
    plex.setSections([
      { key: "1", title: "Movies", type: "movie", locations: [underData] },
      { key: "2", title: "TV", type: "show", locations: [elsewhere] },
    ]);
    try {
      const config = { ...(await healthyConfig()), SERVER_PATH_MAPPINGS: { [`${underData}/`]: ["/movies/"], [`${elsewhere}/`]: ["/tv/"] } };
      const inside = await doctor(config, { inContainer: true });
      const movies = inside.check(`disk:1:${underData}`);
      expect(movies).toMatchObject({ status: "error", detail: expect.stringContaining(`autoscan cannot see '${underData}'`) });
      expect(movies.fix).toContain("MEDIA_DIR in .env");
      expect(movies.fix).toContain("'autoscan-doctor-absent/Movies'");
      expect(movies.fix).toContain("docker compose up -d");
      expect(movies.fix).not.toContain("-v ");
      const tv = inside.check(`disk:2:${elsewhere}`);
      expect(tv.fix).toContain("MEDIA_DIR in .env");
      expect(tv.fix).toContain("docker compose up -d");
      expect(tv.fix).toContain(`{"/data/<where it lies under MEDIA_DIR>/": ["${elsewhere}/"]} to SERVER_FILE_EXIST_PATH_MAPPINGS`);
      expect(tv.fix).not.toContain("-v ");

      const outside = await doctor(config, { inContainer: false });
      for (const [id, location] of [["disk:1", underData], ["disk:2", elsewhere]] as const) {
        const fix = outside.check(`${id}:${location}`).fix ?? "";
        expect(fix).toContain(`mount it at '${location}'`);
        expect(fix).toContain(`{"<where autoscan sees it>/": ["${location}/"]} to SERVER_FILE_EXIST_PATH_MAPPINGS`);
        expect(fix).not.toContain("MEDIA_DIR");
        expect(fix).not.toContain("-v ");
      }
    } finally {
      plex.setSections([
        { key: "1", title: "Movies", type: "movie", locations: [media.movies] },
        { key: "2", title: "TV", type: "show", locations: [media.tv] },
      ]);
    }
  });

  it("a mount that hangs: a warning after the timeout, not a hang", async () => {
    const hung = await mountHung();
    if (typeof hung === "string") {
      console.warn(`*** SKIPPED the hung-mount case: ${hung} ***`);
      return;
    }
    const location = join(hung.dir, "Movies");
    plex.setSections([{ key: "1", title: "Movies", type: "movie", locations: [location] }]);
    try {
      const run = await doctor({ ...(await healthyConfig()), SERVER_PATH_MAPPINGS: {} }, { diskTimeoutMs: 500 });
      const check = run.check(`disk:1:${location}`);
      expect(check).toMatchObject({ status: "warn", detail: expect.stringContaining("within 0.5 s: a hung mount?") });
      expect(check.fix).toContain("Check that mount");
    } finally {
      plex.setSections([
        { key: "1", title: "Movies", type: "movie", locations: [media.movies] },
        { key: "2", title: "TV", type: "show", locations: [media.tv] },
      ]);
      await hung.cleanup();
    }
  });

  it("an unwritable data directory: named, with the fix", async () => {
    const dataDir = join(root, "readonly-data");
    const asRoot = process.getuid?.() === 0;
    if (asRoot) {
      // root writes through permission bits: a read-only filesystem is what stops it.
      const mounts = probeMounts();
      if (!mounts.ok) {
        console.warn(`*** SKIPPED the unwritable data directory case: ${mounts.reason} ***`);
        return;
      }
      mountTmpfs(dataDir, 1024 * 1024);
      remount(dataDir, "ro");
    } else {
      await mkdir(dataDir);
      await chmod(dataDir, 0o555);
    }
    const run = await doctor(await healthyConfig(), { dataDir });
    const check = run.check("data-dir");
    expect(check.status).toBe("error");
    if (asRoot) {
      expect(check.detail).toBe(`'${dataDir}' is on a read-only filesystem.`);
      expect(check.fix).toContain("read-write");
    } else {
      expect(check.detail).toContain("cannot be written by uid");
      expect(check.fix).toContain("chown -R");
    }
    expect(run.report.ok).toBe(false);
  });

  it("a config with problems: each problem listed, the checks that need the config skipped (exit 1)", async () => {
    const path = await writeCase({ SERVER_PASS, SERVER_PORT: "3467", PLEX_LOCAL_URLS: "http://plex:32400" });
    const result = await runCli(["doctor", "--config", path]);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain("✗ Config");
    expect(result.stdout).toContain("SERVER_PORT");
    expect(result.stdout).toContain('did you mean "PLEX_LOCAL_URL"?');
    expect(result.stdout).toContain("- Other checks    Skipped until the config is valid");
    expect(result.stdout).toMatch(/\n2 errors, 0 warnings \(2 ok, 1 skipped\)\n$/);
  });

  it("no SERVER_PASS: doctor still runs every check, and warns that the server needs it", async () => {
    const { SERVER_PASS: _pass, ...config } = await healthyConfig();
    const run = await doctor(config);
    expect(run.check("config.warning.1")).toMatchObject({ status: "warn", detail: expect.stringContaining("SERVER_PASS: this key is required to run the server") });
    expect(run.check("plex.token").status).toBe("ok");
    expect(run.report.ok).toBe(true);
  });

  it("a plex_autoscan key autoscan renamed or dropped: a warning each, fixed by 'autoscan config upgrade', not by hand", async () => {
    const legacy = { ...(await healthyConfig()), PLEX_SECTION_PATH_MAPPINGS: { "1": ["/Movies/"] }, DOCKER_FILE_EXIST_PATH_MAPPINGS: {} };
    const warnings = (run: DoctorRun) => run.report.checks.filter((check) => check.id.startsWith("config.warning."));
    const onHost = await doctor(legacy);
    expect(warnings(onHost).map((check) => check.detail)).toEqual([
      expect.stringMatching(/^Config key "DOCKER_FILE_EXIST_PATH_MAPPINGS" was renamed to "SERVER_FILE_EXIST_PATH_MAPPINGS"/),
      expect.stringMatching(/^Config key "PLEX_SECTION_PATH_MAPPINGS" is obsolete and ignored/),
    ]);
    const path = /'autoscan config upgrade --config (\S+)'/.exec(warnings(onHost)[0]?.fix ?? "")?.[1];
    expect(path, warnings(onHost)[0]?.fix).toMatch(/config\.json$/);
    for (const check of warnings(onHost)) {
      expect(check.fix).toMatch(/^Run 'autoscan config upgrade --config \S+': it renames or drops each legacy key and names it/);
      expect(check.fix).not.toContain("Edit ");
    }
    const inDocker = await doctor(legacy, { inContainer: true });
    for (const check of warnings(inDocker)) expect(check.fix).toMatch(/^Run 'docker exec autoscan autoscan config upgrade( --config \S+)?'/);
    // Other warnings keep their own fix.
    const { SERVER_PASS: _pass, ...noPass } = await healthyConfig();
    expect((await doctor(noPass)).check("config.warning.1").fix).toMatch(/^Edit /);
    // And the command does what the fix says: run through the real CLI, the warnings are gone.
    const upgrade = await runCli(["config", "upgrade", "--config", path ?? ""]);
    expect(upgrade.code, upgrade.stderr).toBe(0);
    expect(upgrade.stdout).toContain("Dropped PLEX_SECTION_PATH_MAPPINGS: obsolete in autoscan");
    const settings = resolveSettings({ config: path }, {}, root);
    const after = await loadDoctorConfig(settings, {}, false);
    expect(after.checks.map((check) => check.id)).toEqual(["config"]);
  });

  it("a port taken by another service is an error; a free one is fine", async () => {
    const busy = await occupyPort();
    try {
      const run = await doctor({ ...(await healthyConfig()), SERVER_PORT: busy.port });
      expect(run.check("server.port")).toMatchObject({ status: "error", detail: expect.stringContaining("Something else listens on") });
      expect(run.check("server.port").fix).toContain("SERVER_PORT");
    } finally {
      await busy.close();
    }
  });

  it("an autoscan already running on the port is fine (doctor runs beside the server)", async () => {
    const config = await healthyConfig();
    const path = await writeCase(config);
    const server = startCli(["server", "--config", path], { timeoutMs: 60_000 });
    try {
      await within(
        (async () => {
          for (;;) {
            const ok = await fetch(`http://127.0.0.1:${String(config.SERVER_PORT)}/health`).then((r) => r.ok, () => false);
            if (ok) return;
            await new Promise((resolve) => setTimeout(resolve, 100));
          }
        })(),
        30_000,
        `autoscan server (${server.stdout()}${server.stderr()})`,
      );
      const run = await doctor(config);
      expect(run.check("server.port")).toMatchObject({ status: "ok", detail: expect.stringContaining("An autoscan is already running on 127.0.0.1:") });
      expect(run.report.ok).toBe(true);
    } finally {
      server.process.kill("SIGTERM");
      await server.exited;
    }
  });

  it("scanner mode on this host: the scanner found, PLEX_USER checked when sudo is used", async () => {
    const fake = await installHostFakeScanner(join(root, "host plex"));
    const base = { ...(await healthyConfig()), PLEX_SCAN_METHOD: "scanner", PLEX_SCANNER: fake.scanner.replace(/ /g, "\\ ") };
    const good = await doctor({ ...base, USE_SUDO: true, PLEX_USER: "root" });
    expect(statuses(good.report)).toMatchObject({ "scanner.binary": "ok", "scanner.user": "ok" });
    const noUser = await doctor({ ...base, USE_SUDO: true, PLEX_USER: "nosuchuser" });
    expect(noUser.check("scanner.user")).toMatchObject({ status: "error", detail: "There is no user 'nosuchuser' (PLEX_USER) on this host." });
    const missing = await doctor({ ...base, PLEX_SCANNER: "/opt/nowhere/Plex Media Scanner" });
    expect(missing.check("scanner.binary")).toMatchObject({ status: "error", fix: expect.stringContaining("USE_DOCKER and DOCKER_NAME") });
  });

  it("scanner mode with no Docker engine: the socket is named, the container checks skipped", async () => {
    const config = { ...(await healthyConfig()), USE_DOCKER: true, PLEX_SCAN_METHOD: "scanner" };
    const run = await doctor(config, { env: { DOCKER_HOST: `unix://${join(root, "no-docker.sock")}` } });
    expect(run.check("scanner.docker")).toMatchObject({ status: "error", detail: expect.stringContaining("No Docker socket at") });
    expect(statuses(run.report)).toMatchObject({ "scanner.container": "skip", "scanner.binary": "skip", "scanner.user": "skip" });
  });
});

describe("autoscan doctor: Google Drive and rclone (fake Google, fake rclone RC)", () => {
  const CLIENT_ID = "1234567890-doctor.apps.googleusercontent.com";
  const CLIENT_SECRET = "GOCSPX-doctor-secret";

  it("a stored token Google refreshes passes; a revoked one and a missing one are named with the fix", async () => {
    const google = await startFakeGoogle();
    const rc = await startFakeRcloneRc();
    try {
      google.addClient(CLIENT_ID, CLIENT_SECRET);
      const dataDir = join(root, "drive-data");
      await mkdir(dataDir, { recursive: true });
      const store = createTokenStore({ path: join(dataDir, "google-token.json") });
      const refreshToken = google.issueRefreshToken(CLIENT_ID, "https://www.googleapis.com/auth/drive.metadata.readonly");
      await store.save({ clientId: CLIENT_ID, refreshToken });
      const config = {
        ...(await healthyConfig()),
        SERVER_PATH_MAPPINGS: {
          [`${media.movies}/`]: ["My Drive/Media/Movies/"],
          [`${media.tv}/`]: ["/downloads/TV/"],
        },
        // "My Drive/Media/" holds a mapped form (Movies): watched and mapped. "My Drive/Other/" maps to nothing.
        CLOUD: { ENABLED: true, CLIENT_ID, CLIENT_SECRET, ALLOWED: { FILE_PATHS: ["My Drive/Media/", "My Drive/Media/Movies/", "My Drive/Other/"] } },
        RCLONE: { RC_CACHE_REFRESH: { ENABLED: true, RC_URL: rc.url } },
      };
      const env = { AUTOSCAN_GOOGLE_API_URL: google.url, AUTOSCAN_GOOGLE_TOKEN_URL: google.tokenUrl, AUTOSCAN_GOOGLE_AUTH_URL: google.authUrl };
      const good = await doctor(config, { env, dataDir });
      expect(statuses(good.report)).toMatchObject({ "drive.credentials": "ok", "drive.token": "ok", "rclone.rc": "ok" });
      expect(good.check("drive.paths")).toMatchObject({ status: "warn", detail: expect.stringContaining("'My Drive/Other/'") });
      expect(good.check("drive.paths")?.detail).not.toContain("'My Drive/Media/'");
      expect(JSON.stringify(good.report)).not.toContain(refreshToken);
      expect(JSON.stringify(good.report)).not.toContain(CLIENT_SECRET);

      google.revokeAll();
      const revoked = await doctor(config, { env, dataDir });
      expect(revoked.check("drive.token")).toMatchObject({ status: "error", detail: expect.stringContaining("autoscan authorize") });

      await store.remove();
      const none = await doctor(config, { env, dataDir });
      expect(none.check("drive.credentials")).toMatchObject({ status: "error", detail: expect.stringContaining("No Google Drive token yet") });
      expect(none.check("drive.token").status).toBe("skip");

      const closed = await freePort();
      const noRc = await doctor({ ...config, RCLONE: { RC_CACHE_REFRESH: { ENABLED: true, RC_URL: `http://127.0.0.1:${closed}` } } }, { env, dataDir });
      expect(noRc.check("rclone.rc")).toMatchObject({ status: "warn", fix: expect.stringContaining("--rc") });
    } finally {
      await google.close();
      await rc.close();
    }
  });
});

describe("the server's start-up checks", () => {
  it("log each warning and error once, and never throw", async () => {
    const port = await freePort();
    const path = await writeCase({ ...(await healthyConfig()), PLEX_LOCAL_URL: `http://localhost:${port}` });
    const settings = resolveSettings({ config: path }, {}, root);
    const loaded = await loadDoctorConfig(settings, {});
    if (!loaded.config) throw new Error("the config should load");
    const { log, records } = captureLog("info");
    await runStartupChecks({ config: loaded.config, settings, log }, log);
    const warnings = records.filter((record) => record.level === 40).map((record) => record.msg);
    // /.dockerenv decides at start: either message names the fix.
    expect(warnings[0]).toMatch(/^Plex: (No answer at http:\/\/localhost:\d+: autoscan runs in a container|connection refused: nothing listens at http:\/\/localhost:\d+ \(is Plex running\? is the port right\?\))/);
    expect(warnings[0]).toContain("Fix: ");
    expect(warnings.filter((message) => message.startsWith("Plex:"))).toHaveLength(1);
    expect(warnings.at(-1)).toContain("'autoscan doctor' shows all checks");
    // No port check at start: the server binds it itself.
    expect(records.some((record) => record.check === "server.port")).toBe(false);
  });
});

/**
 * A FUSE mount whose daemon never answers (as in paths-hung-mount.test.ts): every stat under it blocks until the
 * daemon dies. A string says why it cannot be made here (not root, no /dev/fuse).
 */
async function mountHung(): Promise<{ dir: string; cleanup(): Promise<void> } | string> {
  if (process.platform !== "linux" || process.getuid?.() !== 0 || !existsSync("/dev/fuse")) return "needs Linux, root and /dev/fuse";
  const dir = mkdtempSync(join(tmpdir(), "autoscan-doctor-hung-"));
  const script = `exec 3<>/dev/fuse; mount -i -t fuse -o fd=3,rootmode=40000,user_id=0,group_id=0 fuse '${dir}' && echo mounted; exec sleep 600`;
  const daemon = spawn("bash", ["-c", script], { stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  daemon.stdout.setEncoding("utf8").on("data", (chunk: string) => (out += chunk));
  daemon.stderr.setEncoding("utf8").on("data", (chunk: string) => (out += chunk));
  const exited = new Promise<void>((resolve) => daemon.once("exit", () => resolve()));
  const cleanup = async (): Promise<void> => {
    if (daemon.exitCode === null && daemon.signalCode === null) daemon.kill("SIGKILL");
    await exited;
    spawnSync("umount", ["-l", dir]);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await within(
      (async () => {
        while (!out.includes("mounted")) {
          if (daemon.exitCode !== null) throw new Error(out.trim() || `exit ${daemon.exitCode}`);
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      })(),
      10_000,
      "FUSE mount",
    );
  } catch (error) {
    await cleanup();
    return `cannot mount FUSE here: ${(error as Error).message}`;
  }
  return { dir, cleanup };
}
