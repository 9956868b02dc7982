import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadDoctorConfig, runDoctor } from "../src/ops/doctor/doctor.ts";
import { resolveSettings } from "../src/config/settings.ts";
import type { CheckResult, DoctorReport } from "../src/ops/doctor/check.ts";
import { startWebServer, type WebServer } from "../src/web/server.ts";
import { captureLog } from "./support/capture-log.ts";
import { startFakeEmby, type FakeEmby } from "./support/fake-emby.ts";
import { startFakeJellyfin, type FakeJellyfin } from "./support/fake-jellyfin.ts";
import { startFakePlex, type FakePlex } from "./support/fake-plex.ts";
import { cleanupMounts, mountHungFuse, probeFuse } from "./support/faults/mounts.ts";
import { freePort } from "./support/free-port.ts";
import { runCli } from "./support/run-cli.ts";
import { TEST_PASS, buildWebApp } from "./support/web-builders.ts";

/**
 * `autoscan doctor` on the further targets (TARGETS) and SERVER_ANCHORS: a fake Jellyfin, a fake Emby, a second fake
 * Plex and a real autoscan as the relay, beside the primary fake Plex. The healthy case runs the real CLI as a process;
 * the broken ones run `runDoctor` in-process, the entry the command uses. No key or password ever shows.
 */
const SERVER_PASS = "doctor-targets-pass-0123456789abcdef";
const RELAY = { username: "relay", password: "relay-secret-p4ss" };
const JELLYFIN_KEY = "jellyfin-key-00112233445566778899aabb";
const EMBY_KEY = "emby-key-ffeeddccbbaa99887766554433";
const PLEX_4K_TOKEN = "plex-4k-token-0123456789abcdef";

let root: string;
let media: { movies: string; tv: string; anchor: string };
let plex: FakePlex;
let plex4k: FakePlex;
let jellyfin: FakeJellyfin;
let emby: FakeEmby;
let relay: WebServer;
let caseCount = 0;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "autoscan-doctor-targets-"));
  media = { movies: join(root, "media", "Movies"), tv: join(root, "media", "TV"), anchor: join(root, "media", ".anchor") };
  await mkdir(media.movies, { recursive: true });
  await mkdir(media.tv, { recursive: true });
  await writeFile(media.anchor, "");
  plex = await startFakePlex({
    sections: [
      { key: "1", title: "Movies", type: "movie", locations: [media.movies] },
      { key: "2", title: "TV", type: "show", locations: [media.tv] },
    ],
  });
  // The 4K Plex sees the movies at /data/4k; Jellyfin sees everything under /media; Emby at the primary's paths.
  plex4k = await startFakePlex({ token: PLEX_4K_TOKEN, sections: [{ key: "7", title: "Movies 4K", type: "movie", locations: ["/data/4k"] }] });
  jellyfin = await startFakeJellyfin({
    key: JELLYFIN_KEY,
    version: "12",
    libraries: [
      { name: "Shows", locations: ["/media/tv"] },
      { name: "Films", locations: ["/media/movies"] },
    ],
  });
  emby = await startFakeEmby({ key: EMBY_KEY, prefix: "emby-only", libraries: [{ name: "TV", locations: [media.tv] }] });
  relay = await startWebServer({ app: buildWebApp({ auth: RELAY }).app, hostname: "127.0.0.1", port: 0 });
});

afterAll(async () => {
  await Promise.all([plex.close(), plex4k.close(), jellyfin.close(), emby.close(), relay.close()]);
  cleanupMounts();
  await rm(root, { recursive: true, force: true });
});

function targets(): Record<string, Record<string, unknown>> {
  return {
    "plex-4k": { TYPE: "plex", URL: plex4k.url, TOKEN: PLEX_4K_TOKEN, PATH_MAPPINGS: { "/data/4k/": [`${media.movies}/`] } },
    jellyfin: {
      TYPE: "jellyfin",
      URL: jellyfin.url,
      TOKEN: JELLYFIN_KEY,
      PATH_MAPPINGS: { "/media/tv/": [`${media.tv}/`], "/media/movies/": [`${media.movies}/`] },
    },
    emby: { TYPE: "emby", URL: emby.url, TOKEN: EMBY_KEY },
    nas: { TYPE: "autoscan", URL: relay.url, USERNAME: RELAY.username, PASSWORD: RELAY.password },
  };
}

/** Every target and the anchor pass; Plex and its mappings as in doctor.test.ts. */
async function healthyConfig(): Promise<Record<string, unknown>> {
  return {
    SERVER_PASS,
    SERVER_IP: "127.0.0.1",
    SERVER_PORT: await freePort(),
    PLEX_LOCAL_URL: plex.url,
    PLEX_TOKEN: plex.token,
    TARGETS: targets(),
    SERVER_ANCHORS: [media.anchor],
  };
}

function withTarget(config: Record<string, unknown>, name: string, change: Record<string, unknown>): Record<string, unknown> {
  const all = config.TARGETS as Record<string, Record<string, unknown>>;
  return { ...config, TARGETS: { ...all, [name]: { ...all[name], ...change } } };
}

async function writeCase(config: Record<string, unknown>): Promise<string> {
  const dir = join(root, `case-${++caseCount}`);
  await mkdir(dir, { recursive: true });
  const path = join(dir, "config.json");
  await writeFile(path, JSON.stringify(config, null, 2));
  return path;
}

/** Every secret a case may carry: none may ever be shown. */
const SECRETS = [SERVER_PASS, TEST_PASS, RELAY.password, JELLYFIN_KEY, EMBY_KEY, PLEX_4K_TOKEN, "wrong-key-0123456789abcdef", "wrong-password-xyz"];

function expectNoSecret(text: string): void {
  for (const secret of SECRETS) expect(text).not.toContain(secret);
  expect(text).not.toContain(Buffer.from(`${RELAY.username}:${RELAY.password}`).toString("base64"));
}

interface DoctorRun {
  readonly report: DoctorReport;
  check(id: string): CheckResult;
}

async function doctor(config: Record<string, unknown>, options: { inContainer?: boolean; diskTimeoutMs?: number } = {}): Promise<DoctorRun> {
  const path = await writeCase(config);
  const settings = resolveSettings({ config: path }, {}, root);
  const loaded = await loadDoctorConfig(settings, {});
  expect(loaded.config).toBeDefined();
  const capture = captureLog();
  const report = await runDoctor({
    settings,
    env: {},
    loaded,
    log: capture.log,
    inContainer: options.inContainer ?? false,
    ...(options.diskTimeoutMs ? { diskTimeoutMs: options.diskTimeoutMs } : {}),
  });
  expectNoSecret(JSON.stringify(report));
  expectNoSecret(JSON.stringify(capture.records));
  return {
    report,
    check(id) {
      const found = report.checks.find((check) => check.id === id);
      if (!found) throw new Error(`no check ${id} in ${report.checks.map((c) => c.id).join(", ")}`);
      return found;
    },
  };
}

const statusOf = (run: DoctorRun, prefix: string) =>
  Object.fromEntries(run.report.checks.filter((check) => check.id.startsWith(prefix)).map((check) => [check.id, check.status]));

describe("autoscan doctor: targets and anchors, healthy", () => {
  it("checks every target and the anchor, all ✓, and never prints a key (real process)", async () => {
    const path = await writeCase(await healthyConfig());
    const result = await runCli(["doctor", "--config", path]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const lines = result.stdout.trimEnd().split("\n");
    expect(lines.at(-1)).toMatch(/^0 errors, 0 warnings \(\d+ ok\)$/);
    for (const line of lines.slice(0, -2)) expect(line).toMatch(/^✓ /);
    expect(result.stdout).toContain("Jellyfin Server 12.0.0 ('fake-jellyfin') answers at");
    expect(result.stdout).toContain("Jellyfin accepted TARGETS.jellyfin.TOKEN.");
    expect(result.stdout).toContain("Emby accepted TARGETS.emby.TOKEN.");
    expect(result.stdout).toContain("Plex accepted TARGETS.plex-4k.TOKEN ('fake-plex').");
    expect(result.stdout).toContain("Its /triggers/manual takes TARGETS.nas.USERNAME and PASSWORD.");
    expect(result.stdout).toContain(`'${media.anchor}' is there`);
    expectNoSecret(result.stdout);
  });

  it("in-process: each family's lines, mappings reached by key and by the same path", async () => {
    const run = await doctor(await healthyConfig());
    expect(run.report.checks.filter((check) => check.status !== "ok")).toEqual([]);
    expect(run.check("target:jellyfin.libraries").detail).toBe("2 libraries: Shows, Films.");
    expect(run.check("target:jellyfin.library:/media/tv").detail).toContain("through the mapping '/media/tv/'");
    // Emby has no PATH_MAPPINGS: the primary Plex's folder reaches it as it is (and its API is only under /emby).
    expect(run.check(`target:emby.library:${media.tv}`).detail).toContain("(no PATH_MAPPINGS: the same path)");
    expect(run.check("target:plex-4k.mapping:/data/4k/").detail).toContain("is in plex-4k's library Movies 4K");
    expect(statusOf(run, "target:nas")).toEqual({ "target:nas": "ok", "target:nas.key": "ok" });
    expect(run.check("target:nas.key")).toMatchObject({ title: "nas trigger" });
  });

  it("Jellyfin and Emby: a line says how scans go, with how to install the TargetedScan plugin when it is not there", async () => {
    const without = await doctor(await healthyConfig());
    expect(without.check("target:jellyfin.scan-route")).toMatchObject({ status: "ok", title: "jellyfin scans" });
    expect(without.check("target:jellyfin.scan-route").detail).toContain("the TargetedScan plugin is not installed; install the TargetedScan plugin for scans in seconds");
    expect(without.check("target:jellyfin.scan-route").detail).toContain("https://raw.githubusercontent.com/d3v1l1989/targeted-scans/main/manifest.json");
    expect(without.check("target:emby.scan-route").detail).toContain("https://github.com/d3v1l1989/targeted-scans/releases");
    jellyfin.targetedScan.set({ installed: true });
    emby.targetedScan.set({ installed: true });
    try {
      const withPlugin = await doctor(await healthyConfig());
      expect(withPlugin.check("target:jellyfin.scan-route")).toMatchObject({
        status: "ok",
        detail: "jellyfin scans through the TargetedScan plugin 1.9.0.0 (POST /Library/ScanPath): new folders show in seconds.",
      });
      expect(withPlugin.check("target:emby.scan-route").detail).toContain("through the TargetedScan plugin");
    } finally {
      jellyfin.targetedScan.set({ installed: false });
      emby.targetedScan.set({ installed: false });
    }
  });

  it("a disabled target is one skipped line with the reason", async () => {
    const run = await doctor(withTarget(await healthyConfig(), "jellyfin", { ENABLED: false, URL: `http://127.0.0.1:${await freePort()}` }));
    expect(statusOf(run, "target:jellyfin")).toEqual({ "target:jellyfin": "skip" });
    expect(run.check("target:jellyfin").detail).toBe("TARGETS.jellyfin.ENABLED is false: not checked, and no scan goes to it.");
    expect(run.report.ok).toBe(true);
  });
});

describe("autoscan doctor: broken targets, each named with its fix", () => {
  it("a wrong key: ✗ naming TARGETS.<name>.TOKEN (or USERNAME and PASSWORD), the rest of that target skipped", async () => {
    let config = await healthyConfig();
    for (const name of ["jellyfin", "emby", "plex-4k"]) config = withTarget(config, name, { TOKEN: "wrong-key-0123456789abcdef" });
    config = withTarget(config, "nas", { PASSWORD: "wrong-password-xyz" });
    const run = await doctor(config);
    expect(run.report.ok).toBe(false);
    expect(run.check("target:jellyfin.key")).toMatchObject({ status: "error", detail: `Jellyfin rejected TARGETS.jellyfin.TOKEN (401 at ${jellyfin.url}).` });
    expect(run.check("target:jellyfin.key").fix).toContain("Dashboard → API Keys");
    expect(run.check("target:emby.key")).toMatchObject({ status: "error", detail: expect.stringContaining("Emby rejected TARGETS.emby.TOKEN") });
    expect(run.check("target:plex-4k.key")).toMatchObject({ status: "error", detail: expect.stringContaining("Plex rejected TARGETS.plex-4k.TOKEN") });
    expect(run.check("target:plex-4k.key").fix).toContain("X-Plex-Token");
    expect(run.check("target:nas.key")).toMatchObject({ status: "error", detail: expect.stringContaining("refused TARGETS.nas.USERNAME and PASSWORD") });
    expect(run.check("target:nas.key").fix).toContain("SERVER_AUTH_USERNAME");
    expect(statusOf(run, "target:jellyfin")).toMatchObject({ "target:jellyfin": "ok", "target:jellyfin.libraries": "skip", "target:jellyfin.mappings": "skip" });
    // The primary Plex is untouched by its neighbours.
    expect(run.check("plex.token").status).toBe("ok");
    expect(run.report.checks.filter((check) => check.status === "error")).toHaveLength(4);
  });

  it("a relay whose manual trigger is off (404): explained; its /<SERVER_PASS> route works, the secret never shown", async () => {
    const bare = await startWebServer({ app: buildWebApp({}).app, hostname: "127.0.0.1", port: 0 });
    try {
      const noAuth = { USERNAME: "", PASSWORD: "" };
      const run = await doctor(withTarget(await healthyConfig(), "nas", { URL: bare.url, ...noAuth }));
      expect(run.check("target:nas.key")).toMatchObject({ status: "error", detail: expect.stringContaining("its manual trigger is off") });
      expect(run.check("target:nas.key").fix).toContain("Set SERVER_AUTH_USERNAME and SERVER_AUTH_PASSWORD on that autoscan");
      const withPass = await doctor(withTarget(await healthyConfig(), "nas", { URL: `${bare.url}/${TEST_PASS}`, ...noAuth }));
      expect(withPass.check("target:nas.key")).toMatchObject({ status: "ok", detail: "Its /triggers/manual answers without credentials." });
    } finally {
      await bare.close();
    }
  });

  it("a target down: ✗ with the cause (closed port, timeout, localhost in a container, unknown name)", async () => {
    const port = await freePort();
    const closed = await doctor(withTarget(await healthyConfig(), "jellyfin", { URL: `http://127.0.0.1:${port}` }));
    expect(closed.check("target:jellyfin")).toMatchObject({ status: "error", detail: `connection refused: nothing listens at http://127.0.0.1:${port} (is Jellyfin running? is the port right?).` });
    expect(closed.check("target:jellyfin").fix).toContain("Start Jellyfin, or correct the address and port in TARGETS.jellyfin.URL");
    expect(statusOf(closed, "target:jellyfin")).toEqual({
      "target:jellyfin": "error",
      "target:jellyfin.key": "skip",
      "target:jellyfin.libraries": "skip",
      "target:jellyfin.mappings": "skip",
      "target:jellyfin.scan-route": "skip",
    });
    expect(closed.report.checks.filter((check) => check.status === "error")).toHaveLength(1);

    emby.setDelay(3000);
    try {
      const slow = await doctor(withTarget(await healthyConfig(), "emby", { TIMEOUT: 1 }));
      expect(slow.check("target:emby")).toMatchObject({ status: "error", detail: `no answer within 1 s from ${emby.url}: it took the connection but never answered (Emby hangs, or what listens there waits on something).` });
    } finally {
      emby.setDelay(0);
    }

    const inside = await doctor(withTarget(await healthyConfig(), "plex-4k", { URL: `http://localhost:${port}` }), { inContainer: true });
    expect(inside.check("target:plex-4k")).toMatchObject({ status: "error", detail: expect.stringContaining("autoscan runs in a container") });
    expect(inside.check("target:plex-4k").fix).toContain("http://plex-4k:32400");

    // A URL with a password in it is called as the relay target calls it (the password as Basic auth); it never shows.
    const userinfo = await doctor(withTarget(await healthyConfig(), "nas", { URL: `http://relay:${encodeURIComponent(RELAY.password)}@127.0.0.1:${port}` }));
    expect(userinfo.check("target:nas")).toMatchObject({ status: "error", detail: `connection refused: nothing listens at http://127.0.0.1:${port} (is the other autoscan running? is the port right?).` });
    expect(JSON.stringify(userinfo.report)).not.toContain(RELAY.password);

    const unknown = await doctor(withTarget(await healthyConfig(), "nas", { URL: "http://nas.autoscan-doctor.invalid:3467" }));
    expect(unknown.check("target:nas").detail).toMatch(/^nas\.autoscan-doctor\.invalid does not resolve \((ENOTFOUND|EAI_AGAIN)[):].*TARGETS\.nas\.URL/);
  });

  it("something else at the URL: ✗ saying it is not that server", async () => {
    const run = await doctor(withTarget(await healthyConfig(), "jellyfin", { URL: relay.url }));
    expect(run.check("target:jellyfin")).toMatchObject({ status: "error", detail: expect.stringContaining("answered, but not as Jellyfin does: it answered 404 to GET /System/Info/Public") });
  });

  it("a mapping reaching no library, and a library nothing reaches: ! with the fix", async () => {
    const config = withTarget(await healthyConfig(), "jellyfin", {
      PATH_MAPPINGS: { "/media/tv/": [`${media.tv}/`], "/media/music/": ["/downloads/Music/"] },
    });
    const run = await doctor(config);
    const mapping = run.check("target:jellyfin.mapping:/media/music/");
    expect(mapping).toMatchObject({ status: "warn", detail: "TARGETS.jellyfin.PATH_MAPPINGS key '/media/music/' is in no library of jellyfin: folders mapped there are skipped by jellyfin." });
    expect(mapping.fix).toContain("/media/tv, /media/movies");
    const library = run.check("target:jellyfin.library:/media/movies");
    expect(library).toMatchObject({ status: "warn", detail: expect.stringContaining("No folder of the primary Plex reaches '/media/movies' (Films)") });
    expect(library.fix).toContain(`"/media/movies/": ["<that folder as the primary Plex sees it>/"] to TARGETS.jellyfin.PATH_MAPPINGS`);
    expect(run.check("target:jellyfin.mapping:/media/tv/").status).toBe("ok");
    expect(run.report.ok).toBe(true);
  });

  it("a missing anchor: ! saying what waits; an anchor on a hung mount: ! after the timeout, not a hang", async () => {
    const gone = join(root, "unmounted", ".anchor");
    const run = await doctor({ ...(await healthyConfig()), SERVER_ANCHORS: [media.anchor, gone] });
    expect(run.check(`anchor:${media.anchor}`).status).toBe("ok");
    expect(run.check(`anchor:${gone}`)).toMatchObject({
      status: "warn",
      detail: `Anchor '${gone}' is missing: folders under '${join(root, "unmounted")}' will wait until it is back.`,
    });
    expect(run.report.ok).toBe(true);

    const fuse = probeFuse();
    if (!fuse.ok) {
      console.warn(`*** SKIPPED the hung-anchor case: ${fuse.reason} ***`);
      return;
    }
    const hung = await mountHungFuse(join(root, "hung"));
    try {
      const anchor = join(hung.dir, ".anchor");
      const hungRun = await doctor({ ...(await healthyConfig()), SERVER_ANCHORS: [anchor] }, { diskTimeoutMs: 500 });
      expect(hungRun.check(`anchor:${anchor}`)).toMatchObject({ status: "warn", detail: expect.stringContaining("within 0.5 s (a hung mount?)") });
    } finally {
      hung.release();
    }
  });
});
