import { execFile } from "node:child_process";
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { networkInterfaces, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, expect, it } from "vitest";
import { describeDocker, probeEngine } from "./support/docker/engine.ts";
import { findCompose } from "./support/compose.ts";
import { startFakePlex, type FakePlex } from "./support/fake-plex.ts";
import { freePort } from "./support/free-port.ts";

/**
 * A mover's setup, end to end on the real Docker engine: the plex_autoscan config.json says `"SERVER_PORT": 3468` (and
 * `"SERVER_IP": "127.0.0.1"`, as plex_autoscan behind a local proxy has it, which would not answer from outside), and
 * `docker compose up -d` runs docker-compose.yml as shipped (Compose v1.29 behind the v2 command here). A Sonarr
 * webhook at the port Compose publishes (AUTOSCAN_PORT) is answered and scanned by a fake Plex on this host, which the
 * container reaches at the host's own address; the container's `autoscan health` and `autoscan doctor` look where the
 * server listens, and doctor and the start-up log name the AUTOSCAN_PORT that keeps the mover's 3468.
 *
 * The image is the one .ci/image-check builds (autoscan:ci), built here from the working tree (Docker's layer cache
 * makes that quick when nothing changed). One compose project for the file, in a folder of its own as a user has it.
 */
const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const IMAGE = "autoscan:ci";
const PASS = "compose-port-pass-0123456789abcdef";
const MOVERS_PORT = 3468;

const engine = await probeEngine();
const compose = findCompose();
const usable = engine.ok && compose.ok ? engine : { ok: false as const, reason: engine.ok ? (compose.ok ? "" : compose.reason) : engine.reason };

interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** A command, asynchronously (the fake Plex in this process must keep answering the container meanwhile). */
function run(command: string, args: readonly string[], options: { cwd?: string; timeoutMs?: number } = {}): Promise<Run> {
  const env = { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? tmpdir(), ...(process.env.DOCKER_HOST ? { DOCKER_HOST: process.env.DOCKER_HOST } : {}) };
  return new Promise((resolve) => {
    execFile(command, args, { cwd: options.cwd, env, timeout: options.timeoutMs ?? 60_000, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === "number" ? error.code : 1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

/** This host's own IPv4 address, which a container on a Compose network reaches through its gateway. */
function hostAddress(): string {
  const address = Object.values(networkInterfaces())
    .flat()
    .find((entry) => entry?.family === "IPv4" && !entry.internal);
  if (!address) throw new Error("this host has no IPv4 address besides loopback: a container cannot reach the fake Plex");
  return address.address;
}

async function until<T>(what: string, timeoutMs: number, look: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = await look();
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${String(timeoutMs / 1000)} s`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describeDocker("docker compose up -d with a moved-over SERVER_PORT 3468", usable, () => {
  let dir: string;
  let plex: FakePlex;
  let publishedPort: number;
  let container: string;
  let project: string;
  const composeArgs = (...args: string[]): string[] => {
    if (!compose.ok) throw new Error(compose.reason);
    return [...compose.argv.slice(1), "-p", project, "-f", "docker-compose.yml", "-f", "test-name.yml", ...args];
  };
  const composeRun = (...args: string[]): Promise<Run> => run(compose.ok ? (compose.argv[0] ?? "docker") : "docker", composeArgs(...args), { cwd: dir, timeoutMs: 180_000 });
  const logs = async (): Promise<string> => {
    const result = await run("docker", ["logs", container]);
    return result.stdout + result.stderr;
  };

  beforeAll(async () => {
    const build = await run("docker", ["build", "--network", "host", "-t", IMAGE, ROOT], { timeoutMs: 900_000 });
    if (build.code !== 0) throw new Error(`docker build failed:\n${build.stdout.slice(-3000)}\n${build.stderr.slice(-3000)}`);

    dir = mkdtempSync(join(tmpdir(), "autoscan-compose-port-"));
    chmodSync(dir, 0o755);
    const media = join(dir, "media");
    mkdirSync(join(media, "TV", "Show", "Season 01"), { recursive: true });
    writeFileSync(join(media, "TV", "Show", "Season 01", "Show - S01E01.mkv"), "video");
    plex = await startFakePlex({
      listenHost: "0.0.0.0",
      sections: [{ key: "2", title: "TV", type: "show", locations: ["/data/TV"] }],
      toLocal: (path) => (path.startsWith("/data/") ? join(media, path.slice("/data/".length)) : undefined),
    });
    publishedPort = await freePort();
    const suffix = `${String(process.pid)}-${Date.now().toString(36)}`;
    project = `autoscan-port-${suffix}`;
    container = `autoscan-port-test-${suffix}`;

    // What a user has: the compose file as shipped, a .env, and their plex_autoscan config.json in ./config.
    copyFileSync(join(ROOT, "docker-compose.yml"), join(dir, "docker-compose.yml"));
    // Only the container's name differs (docker-compose.yml names it "autoscan"), so that parallel runs cannot collide.
    writeFileSync(join(dir, "test-name.yml"), `services:\n  autoscan:\n    container_name: ${container}\n`);
    writeFileSync(
      join(dir, ".env"),
      [
        `AUTOSCAN_IMAGE=${IMAGE}`,
        `AUTOSCAN_PORT=${String(publishedPort)}`,
        `MEDIA_DIR=${media}`,
        `PLEX_LOCAL_URL=http://${hostAddress()}:${new URL(plex.url).port}`,
        "",
      ].join("\n"),
    );
    mkdirSync(join(dir, "config"));
    writeFileSync(
      join(dir, "config", "config.json"),
      JSON.stringify(
        {
          PLEX_LOCAL_URL: "http://localhost:32400",
          PLEX_TOKEN: plex.token,
          PLEX_CHECK_BEFORE_SCAN: false,
          PLEX_EMPTY_TRASH: false,
          SERVER_IP: "127.0.0.1",
          SERVER_PORT: MOVERS_PORT,
          SERVER_PASS: PASS,
          SERVER_PATH_MAPPINGS: { "/data/TV/": ["/tv/"] },
          SERVER_SCAN_DELAY: 1,
          SERVER_USE_SQLITE: true,
        },
        null,
        2,
      ),
    );
    const up = await composeRun("up", "-d");
    if (up.code !== 0) throw new Error(`docker compose up -d failed:\n${up.stdout}\n${up.stderr}`);
  }, 960_000);

  afterAll(async () => {
    if (dir) {
      await composeRun("down", "-v", "-t", "2");
      rmSync(dir, { recursive: true, force: true });
    }
    await plex?.close();
  });

  it("a Sonarr webhook at the published port is answered 200 and scanned in Plex", async () => {
    const base = `http://127.0.0.1:${String(publishedPort)}`;
    await until("autoscan answering at the published port", 60_000, async () => {
      const answer = await fetch(`${base}/health`).catch(() => undefined);
      return answer?.ok ? true : undefined;
    }).catch(async (error: unknown) => {
      throw new Error(`${String(error)}\n${await logs()}`);
    });
    const webhook = await fetch(`${base}/${PASS}`, {
      method: "POST",
      headers: { "content-type": "application/json", "user-agent": "Sonarr/4.0.11.2680" },
      body: JSON.stringify({ eventType: "Download", series: { path: "/tv/Show" }, episodeFile: { relativePath: "Season 01/Show - S01E01.mkv" } }),
    });
    expect(webhook.status).toBe(200);
    const scan = await until("the scan in Plex", 60_000, async () => plex.scans.find((recorded) => recorded.path === "/data/TV/Show/Season 01")).catch(async (error: unknown) => {
      throw new Error(`${String(error)}\n${await logs()}`);
    });
    expect(scan.sectionId).toBe("2");
  });

  it("the container's health and doctor look where the server listens, and name the AUTOSCAN_PORT that keeps 3468", async () => {
    const health = await run("docker", ["exec", container, "autoscan", "health"]);
    expect(health.code, health.stderr).toBe(0);
    expect(JSON.parse(health.stdout)).toMatchObject({ status: "ok" });

    const doctor = await run("docker", ["exec", container, "autoscan", "doctor", "--json"], { timeoutMs: 120_000 });
    const checks = (JSON.parse(doctor.stdout) as { checks: { id: string; status: string; detail: string; fix: string | null }[] }).checks;
    const byId = (id: string) => checks.find((check) => check.id === id);
    expect(byId("server.port")).toMatchObject({ status: "ok", detail: expect.stringContaining("An autoscan is already running on 0.0.0.0:3467") });
    expect(byId("server.container-port")).toMatchObject({
      status: "warn",
      detail: expect.stringContaining("config.json says SERVER_PORT 3468; in this container autoscan listens on 3467"),
      fix: expect.stringContaining("set AUTOSCAN_PORT=3468 in .env"),
    });
    // The server's start-up checks said it once in its log.
    expect((await logs()).match(/config\.json says SERVER_PORT 3468/g)).toHaveLength(1);
  });
});
