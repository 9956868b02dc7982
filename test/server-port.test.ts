import { mkdirSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { IMAGE_PORT } from "../src/config/container-port.ts";
import { resolveSettings } from "../src/config/settings.ts";
import type { CheckResult } from "../src/ops/doctor/check.ts";
import { loadDoctorConfig, runDoctor } from "../src/ops/doctor/doctor.ts";
import { portCheck } from "../src/ops/doctor/running-server.ts";
import { captureLog, makeTempDir } from "./support/capture-log.ts";
import { startFakePlex, type FakePlex } from "./support/fake-plex.ts";
import { freePort } from "./support/free-port.ts";
import { runCli, startCli, type RunningCli } from "./support/run-cli.ts";

/**
 * The port a server listens on is the one its users reach, and the checks look where it listens: the environment's
 * SERVER_PORT wins over config.json (the image sets it), `autoscan health` asks that port and fails loudly when nothing,
 * or something else, answers there; doctor in a container fails when its server does not answer, and names a
 * moved-over SERVER_PORT the image overrides with the AUTOSCAN_PORT that keeps it. The Docker end of it (compose up,
 * a webhook at the published port) is compose-port.test.ts.
 */
const PASS = "server-port-test-pass-0123456789";
let root: string;
let cleanup: () => Promise<void>;
let plex: FakePlex;
let count = 0;
const children: RunningCli[] = [];

beforeAll(async () => {
  ({ dir: root, cleanup } = await makeTempDir("autoscan-server-port-"));
  plex = await startFakePlex({ sections: [{ key: "1", title: "TV", type: "show", locations: [join(root, "tv")] }] });
});

afterAll(async () => {
  for (const child of children) if (child.process.exitCode === null) child.process.kill("SIGKILL");
  await plex.close();
  await cleanup();
});

function writeConfig(config: Record<string, unknown>): { dir: string; path: string } {
  const dir = join(root, `case-${String(++count)}`);
  mkdirSync(dir, { recursive: true });
  const path = join(dir, "config.json");
  writeFileSync(path, JSON.stringify({ SERVER_PASS: PASS, SERVER_IP: "127.0.0.1", PLEX_LOCAL_URL: plex.url, PLEX_TOKEN: plex.token, ...config }, null, 2));
  return { dir, path };
}

async function doctorChecks(
  config: Record<string, unknown>,
  options: { env?: Record<string, string>; inContainer: boolean; serverInContainer?: boolean; mode?: "doctor" | "startup" },
): Promise<readonly CheckResult[]> {
  const { path } = writeConfig(config);
  const env = options.env ?? {};
  const settings = resolveSettings({ config: path }, env, root);
  const loaded = await loadDoctorConfig(settings, env);
  const report = await runDoctor({
    settings,
    env,
    loaded,
    log: captureLog().log,
    inContainer: options.inContainer,
    serverInContainer: options.serverInContainer ?? false,
    mode: options.mode ?? "doctor",
  });
  return report.checks;
}

const byId = (checks: readonly CheckResult[], id: string): CheckResult | undefined => checks.find((check) => check.id === id);

describe("doctor in a container: where autoscan listens, and a moved-over SERVER_PORT", () => {
  it("config.json's SERVER_PORT 3468 under the image's SERVER_PORT: a warning naming both ports and AUTOSCAN_PORT=3468", async () => {
    const checks = await doctorChecks({ SERVER_PORT: 3468 }, { env: { SERVER_PORT: String(IMAGE_PORT) }, inContainer: true });
    const check = byId(checks, "server.container-port");
    expect(check?.status).toBe("warn");
    expect(check?.detail).toContain(`config.json says SERVER_PORT 3468; in this container autoscan listens on ${String(IMAGE_PORT)}`);
    expect(check?.fix).toContain("set AUTOSCAN_PORT=3468 in .env and run 'docker compose up -d'");
    expect(check?.fix).toContain("delete SERVER_PORT from config.json");
  });

  it("the server's own start-up run says the same (logged once as a WARNING)", async () => {
    const checks = await doctorChecks({ SERVER_PORT: 3468 }, { env: { SERVER_PORT: String(IMAGE_PORT) }, inContainer: true, mode: "startup" });
    expect(byId(checks, "server.container-port")).toMatchObject({ status: "warn", fix: expect.stringContaining("AUTOSCAN_PORT=3468") });
  });

  it("no SERVER_PORT in config.json: ok, naming the image's port and AUTOSCAN_PORT", async () => {
    const checks = await doctorChecks({}, { env: { SERVER_PORT: String(IMAGE_PORT) }, inContainer: true });
    const check = byId(checks, "server.container-port");
    expect(check?.status).toBe("ok");
    expect(check?.detail).toContain(`listens on ${String(IMAGE_PORT)} in this container (the image's port)`);
    expect(check?.detail).toContain("AUTOSCAN_PORT in .env");
  });

  it("SERVER_PORT moved in the container's environment: said, not blamed (right with network_mode: host)", async () => {
    const checks = await doctorChecks({ SERVER_PORT: 3468 }, { env: { SERVER_PORT: "3470" }, inContainer: true });
    const check = byId(checks, "server.container-port");
    expect(check?.status).toBe("ok");
    expect(check?.detail).toContain(`listens on 3470 in this container (SERVER_PORT=3470 in the container's environment), not on the image's ${String(IMAGE_PORT)}`);
  });

  it("outside a container SERVER_PORT is simply the port: no container check", async () => {
    const checks = await doctorChecks({ SERVER_PORT: await freePort() }, { inContainer: false });
    expect(byId(checks, "server.container-port")).toBeUndefined();
    expect(byId(checks, "server.port")?.status).toBe("ok");
  });

  it("run beside the container's server (docker exec), a port nobody answers on is an error, not 'free'", async () => {
    const port = await freePort();
    const checks = await doctorChecks({ SERVER_PORT: port }, { inContainer: true, serverInContainer: true });
    const check = byId(checks, "server.port");
    expect(check?.status).toBe("error");
    expect(check?.detail).toBe(
      `Nothing answers on 127.0.0.1:${String(port)} in this container, where its server should listen (SERVER_PORT ${String(port)}): every webhook to the port Docker publishes fails.`,
    );
    expect(check?.fix).toContain("docker logs autoscan");
    // A one-off container (`docker compose run --rm autoscan doctor`) has no server beside it: a free port is fine.
    expect((await portCheck({ SERVER_IP: "127.0.0.1", SERVER_PORT: port })).status).toBe("ok");
  });
});

describe("autoscan health asks where the server listens: the environment's SERVER_PORT wins over config.json", () => {
  let envPort: number;
  let filePort: number;
  let configPath: string;
  let cwd: string;

  beforeAll(async () => {
    [envPort, filePort] = [await freePort(), await freePort()];
    const written = writeConfig({ SERVER_PORT: filePort });
    configPath = written.path;
    cwd = written.dir;
    // One real server for the cases below, started as the image starts it: SERVER_PORT in its environment.
    const child = startCli(["server", "--config", configPath], { cwd, env: { SERVER_PORT: String(envPort) }, timeoutMs: 120_000 });
    children.push(child);
    for (;;) {
      if (child.process.exitCode !== null) throw new Error(`the server exited:\n${child.stderr()}`);
      const answered = await fetch(`http://127.0.0.1:${String(envPort)}/health`).then((r) => r.ok, () => false);
      if (answered) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  });

  it("with the same environment: the server's /health, exit 0", async () => {
    const health = await runCli(["health", "--config", configPath], { cwd, env: { SERVER_PORT: String(envPort) } });
    expect(health.stderr).toBe("");
    expect(health.code).toBe(0);
    expect(JSON.parse(health.stdout)).toMatchObject({ status: "ok" });
  });

  it("doctor beside it (as docker exec runs it) finds it on that port", async () => {
    const checks = await doctorChecks({ SERVER_PORT: filePort }, { env: { SERVER_PORT: String(envPort) }, inContainer: true, serverInContainer: true });
    expect(byId(checks, "server.port")).toMatchObject({ status: "ok", detail: expect.stringContaining(`An autoscan is already running on 127.0.0.1:${String(envPort)}`) });
  });

  it("nothing on the port: exit 1, naming the URL, the port and where it comes from", async () => {
    const health = await runCli(["health", "--config", configPath, "--timeout", "2"], { cwd });
    expect(health.code).toBe(1);
    expect(health.stdout).toBe("");
    expect(health.stderr).toContain(`No answer from http://127.0.0.1:${String(filePort)}/health (SERVER_PORT ${String(filePort)} from ${configPath})`);
    expect(health.stderr).toContain("Is 'autoscan server' running, and on that port?");
  });

  it("something else on the port: exit 1, never 'healthy' for another service's answer", async () => {
    const other: Server = createServer((_, response) => response.end("<html>another app</html>"));
    const port = await freePort();
    await new Promise<void>((resolve) => other.listen(port, "127.0.0.1", resolve));
    try {
      const health = await runCli(["health", "--config", configPath], { cwd, env: { SERVER_PORT: String(port) } });
      expect(health.code).toBe(1);
      expect(health.stdout).toBe("");
      expect(health.stderr).toContain(
        `http://127.0.0.1:${String(port)}/health (SERVER_PORT ${String(port)} from the environment variable SERVER_PORT, which wins over config.json) answered 200, but not as autoscan does`,
      );
    } finally {
      await new Promise((resolve) => other.close(resolve));
    }
  });
});
