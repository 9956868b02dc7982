import { chmod, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type Docker from "dockerode";
import * as v from "valibot";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createScannerFromConfig } from "../src/targets/plex/scanner-from-config.ts";
import { createPlexFromConfig, type PlexInput } from "../src/targets/plex/from-config.ts";
import { ConfigSchema, type Config } from "../src/config/schema.ts";
import { systemClock } from "../src/core/clock.ts";
import { TargetUnavailableError } from "../src/core/errors.ts";
import type { ScanContext } from "../src/core/target.ts";
import { ContainerNotFoundError, ScannerNotFoundError } from "../src/docker/errors.ts";
import { createLogger } from "../src/logging/create-logger.ts";
import { ScannerFailedError, createScannerTarget } from "../src/targets/plex/scanner-target.ts";
import {
  BASE_IMAGE,
  absentContainerName,
  createContainerPool,
  describeDocker,
  ensureFakePlexImage,
  probeEngine,
  readFakeScannerCalls,
  setFakeScannerControl,
  startBackgroundScanner,
  type ContainerPool,
  type FakePlexImage,
} from "./support/docker/engine.ts";
import { startFakePlex, type FakePlex } from "./support/fake-plex.ts";
import { createLibraryDir } from "./support/docker/library-dir.ts";

const engine = await probeEngine();

function config(overrides: Partial<v.InferInput<typeof ConfigSchema>>): Config {
  return v.parse(ConfigSchema, { SERVER_PASS: "test-pass-0123456789", USE_DOCKER: true, ...overrides });
}

/** The target exactly as the server composes it (PLEX_SCAN_METHOD "scanner"). */
const opened: { close(): void }[] = [];
async function createScannerTargetFromConfig(input: PlexInput) {
  const wiring = await createPlexFromConfig(input);
  opened.push(wiring);
  return wiring.target;
}

function context(attempt = 1): ScanContext {
  return { sources: [], files: [], priority: 0, attempt, signal: new AbortController().signal };
}

interface LogLine {
  level: number;
  msg: string;
  component?: string;
  [key: string]: unknown;
}

function capture() {
  const lines: LogLine[] = [];
  const { log } = createLogger({
    level: "debug",
    format: "json",
    // JSON lines say the level as a word; these tests compare pino's numbers.
    stream: {
      write: (line: string) => {
        const record = JSON.parse(line) as LogLine & { level: unknown };
        lines.push({ ...record, level: ({ debug: 20, info: 30, warn: 40, error: 50 } as Record<string, number>)[String(record.level)] ?? Number(record.level) });
      },
    },
  });
  return { log, lines, messages: () => lines.map((line) => line.msg) };
}

const SHOW = `/data/TV/It's "Show" $HOME \`id\` (2020) [x] 東京/Season 01`;

describeDocker("Plex scanner target in a container (real engine)", engine, (docker: Docker) => {
  let images: FakePlexImage;
  let pool: ContainerPool;
  let root: string;
  let hotio: string;
  let pms: string;
  const dockerHost = process.env.DOCKER_HOST;

  beforeAll(async () => {
    images = await ensureFakePlexImage(docker);
    pool = createContainerPool(docker, "target");
    root = await mkdtemp(join(tmpdir(), "autoscan-target-"));
    await chmod(root, 0o755);
    hotio = (await pool.start(images.hotio, { binds: [`${await createLibraryDir(root, "")}:/config`] })).name;
    const pmsConfig = await createLibraryDir(root, "Library/Application Support/Plex Media Server");
    pms = (await pool.start(images.pmsDocker, { binds: [`${pmsConfig}:/config`] })).name;
  });
  afterAll(async () => {
    for (const wiring of opened.splice(0)) wiring.close();
    await pool?.removeAll();
    if (root) await rm(root, { recursive: true, force: true });
  });

  it("scans a hostile folder in the section the library database names, as hotio's user with hotio's env", async () => {
    const { log, messages } = capture();
    const target = await createScannerTargetFromConfig({
      config: config({ DOCKER_NAME: hotio, PLEX_SCAN_METHOD: "scanner" }),
      dockerHost,
      clock: systemClock,
      log,
    });
    expect(await target.isAvailable()).toBe(true);
    expect(await target.scan(SHOW, context())).toEqual({ status: "scanned", detail: "section 2" });
    const scans = (await readFakeScannerCalls(docker, hotio)).filter((call) => call.argv.includes("--scan"));
    expect(scans).toHaveLength(1);
    expect(scans[0]).toMatchObject({
      script: "/app/bin/usr/lib/plexmediaserver/Plex Media Scanner",
      argv: ["--scan", "--refresh", "--section", "2", "--directory", SHOW],
      uid: 1000,
      user: "hotio",
      env: {
        LD_LIBRARY_PATH: "/app/bin/usr/lib/plexmediaserver/lib",
        PLEX_MEDIA_SERVER_APPLICATION_SUPPORT_DIR: "/app/config",
      },
    });
    expect(messages()).toContain(`Running Plex Media Scanner for: ${SHOW}`);
    expect(messages()).toContain("Plex Media Scanner finished.");
    expect(messages().some((m) => m.startsWith(`Plex scanner in container '${hotio}': preset hotio (auto: image`))).toBe(true);
  });

  it("logs scanner output under PLEX, and the deprecation notice is no error", async () => {
    const { log, lines } = capture();
    const target = await createScannerTargetFromConfig({
      config: config({ DOCKER_NAME: pms, PLEX_SCAN_METHOD: "scanner" }),
      dockerHost,
      clock: systemClock,
      log,
    });
    expect(await target.scan("/data/Movies/Heat (1995)", context())).toEqual({ status: "scanned", detail: "section 1" });
    const scanning = lines.find((line) => line.msg === "Scanning /data/Movies/Heat (1995)");
    // The scanner's own output is DEBUG: at INFO a scan is the request, the scan sent and its result.
    expect(scanning).toMatchObject({ component: "PLEX", level: 20 });
    const notice = lines.find((line) => line.msg.includes("'--scan' operation is deprecated"));
    expect(notice).toMatchObject({ level: 20 });
    expect(lines.filter((line) => line.level >= 40)).toEqual([]);
  });

  it("skips a folder in no section with plex_autoscan's words", async () => {
    const { log, messages } = capture();
    const target = await createScannerTargetFromConfig({
      config: config({ DOCKER_NAME: pms, PLEX_SCAN_METHOD: "scanner" }),
      dockerHost,
      clock: systemClock,
      log,
    });
    const outcome = await target.scan("/elsewhere/Film", context());
    expect(outcome.status).toBe("skipped");
    expect(messages()).toContain("Unable to map '/elsewhere/Film' to a Section ID.");
  });

  it("fails (for the queue to retry) when the scanner exits non-zero, with its last words", async () => {
    await setFakeScannerControl(docker, pms, { exit: 2, stderr: "Database is locked" });
    try {
      const target = await createScannerTargetFromConfig({
        config: config({ DOCKER_NAME: pms, PLEX_SCAN_METHOD: "scanner" }),
        dockerHost,
        clock: systemClock,
        log: capture().log,
      });
      const error = await target.scan("/data/Movies/Heat (1995)", context()).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ScannerFailedError);
      expect((error as ScannerFailedError).exitCode).toBe(2);
      expect((error as Error).message).toBe(
        "Plex Media Scanner exited with code 2 for '/data/Movies/Heat (1995)' (section 1): Database is locked",
      );
    } finally {
      await setFakeScannerControl(docker, pms, {});
    }
  });

  it("waits while another Plex Media Scanner runs in the container, then scans", async () => {
    const { log, messages } = capture();
    const input = { config: config({ DOCKER_NAME: pms }), dockerHost, clock: systemClock, log };
    const { scanner } = createScannerFromConfig(input);
    const target = createScannerTarget({
      scanner,
      sections: { resolve: async () => [{ id: "1" }] },
      timeoutMs: 60_000,
      waitForExternalScanners: true,
      externalScannerPollMs: 200,
      clock: systemClock,
      log,
    });
    await startBackgroundScanner(docker, pms, 1500);
    await waitUntil(async () => (await scanner.runningScanners()).length > 0);
    await target.scan("/data/Movies/Alien (1979)", context());
    const said = messages();
    const waiting = said.findIndex((m) => /^'Plex Media Scanner' is running, pid: \d+\. Checking again in 200 ms\.\.\.$/.test(m));
    const clear = said.indexOf("No 'Plex Media Scanner' processes were found.");
    expect(waiting).toBeGreaterThanOrEqual(0);
    expect(clear).toBeGreaterThan(waiting);
    expect(said.indexOf("Running Plex Media Scanner for: /data/Movies/Alien (1979)")).toBeGreaterThan(clear);
  });

  it("stops waiting for other scanners at the bound, says so, and scans anyway", async () => {
    const { log, lines } = capture();
    const { scanner } = createScannerFromConfig({ config: config({ DOCKER_NAME: pms }), dockerHost, clock: systemClock, log });
    const target = createScannerTarget({
      scanner,
      sections: { resolve: async () => [{ id: "1" }] },
      timeoutMs: 60_000,
      waitForExternalScanners: true,
      externalScannerPollMs: 100,
      externalScannerMaxWaitMs: 300,
      clock: systemClock,
      log,
    });
    await startBackgroundScanner(docker, pms, 20_000);
    await waitUntil(async () => (await scanner.runningScanners()).length > 0);
    expect(await target.scan("/data/Movies/Ran (1985)", context())).toMatchObject({ status: "scanned" });
    expect(lines.find((line) => line.msg.includes("is still running after 300 ms; scanning anyway"))).toMatchObject({
      level: 40,
    });
  });

  it("falls back to --list names without a database, and uses the Plex API when PLEX_TOKEN is set", async () => {
    const bare = (await pool.start(images.linuxserver)).name;
    const noToken = await createScannerTargetFromConfig({
      config: config({ DOCKER_NAME: bare, PLEX_SCAN_METHOD: "scanner" }),
      dockerHost,
      clock: systemClock,
      log: capture().log,
    });
    expect(await noToken.scan("/mnt/media/Movies/Heat (1995)", context())).toEqual({ status: "scanned", detail: "section 1" });

    let plex: FakePlex | undefined;
    try {
      plex = await startFakePlex({ sections: [{ key: "7", title: "Films", type: "movie", locations: ["/mnt/media/Movies"] }] });
      const withToken = await createScannerTargetFromConfig({
        config: config({ DOCKER_NAME: bare, PLEX_SCAN_METHOD: "scanner", PLEX_LOCAL_URL: plex.url, PLEX_TOKEN: plex.token }),
        dockerHost,
        clock: systemClock,
        log: capture().log,
      });
      // The default setup: Plex's database is not mounted, so analysis is off (said once at start, no note here).
      expect(await withToken.scan("/mnt/media/Movies/Heat (1995)", context())).toEqual({ status: "scanned", detail: "section 7" });
    } finally {
      await plex?.close();
    }
    const calls = (await readFakeScannerCalls(docker, bare)).filter((call) => call.argv.includes("--scan"));
    expect(calls.map((call) => call.argv[3])).toEqual(["1", "7"]);
    expect(calls[0]).toMatchObject({ user: "abc", uid: 911 });
  });

  it("is unavailable while the container is stopped (the queue holds the work and retries)", async () => {
    const stopped = await pool.start(images.pmsDocker);
    await stopped.stop({ t: 0 });
    const target = await createScannerTargetFromConfig({
      config: config({ DOCKER_NAME: stopped.name, PLEX_SCAN_METHOD: "scanner" }),
      dockerHost,
      clock: systemClock,
      log: capture().log,
    });
    expect(await target.isAvailable()).toBe(false);
    await expect(target.scan("/data/Movies/x", context())).rejects.toBeInstanceOf(TargetUnavailableError);
  });

  it("names the missing container, and the paths tried when the image has no scanner", async () => {
    const missing = absentContainerName();
    const gone = await createScannerTargetFromConfig({
      config: config({ DOCKER_NAME: missing, PLEX_SCAN_METHOD: "scanner" }),
      dockerHost,
      clock: systemClock,
      log: capture().log,
    });
    expect(await gone.isAvailable()).toBe(false);
    await expect(gone.scan("/data/Movies/x", context())).rejects.toBeInstanceOf(ContainerNotFoundError);

    const notPlex = await pool.start(BASE_IMAGE, { env: {} });
    await notPlex.stop({ t: 0 }).catch(() => undefined);
    const { scanner } = createScannerFromConfig({
      config: config({ DOCKER_NAME: notPlex.name }),
      dockerHost,
      clock: systemClock,
      log: capture().log,
    });
    const error = await scanner.layout().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ScannerNotFoundError);
    expect((error as Error).message).toContain(
      'looked for "/app/bin/usr/lib/plexmediaserver/Plex Media Scanner" and "/usr/lib/plexmediaserver/Plex Media Scanner"',
    );
  });
});

async function waitUntil(check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error("condition not met within 5 s");
}
