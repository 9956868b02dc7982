import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { connect } from "node:net";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { makeTempDir } from "./support/capture-log.ts";
import { freePort, occupyPort } from "./support/free-port.ts";
import { runCli, startCli, within, type RunningCli } from "./support/run-cli.ts";

// `autoscan server` as a child process, on a port picked free just before (the port comes from config.json).
const PASS = "f3e2d1c0b9a89786a5b4c3d2e1f00123";
const PLEX_TOKEN = "plexTokenForServerTest42";
const CLASSIC = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2},\d{3} - (DEBUG|INFO|WARNING|ERROR|CRITICAL) - [A-Z0-9_]+ \[[^\]]+\]: /;

const cleanups: (() => Promise<void>)[] = [];
const children: RunningCli[] = [];
afterAll(async () => {
  for (const child of children) if (child.process.exitCode === null && child.process.signalCode === null) child.process.kill("SIGKILL");
  await Promise.all(cleanups.map((cleanup) => cleanup()));
});

async function setup(config: Record<string, unknown> = {}) {
  const { dir: root, cleanup } = await makeTempDir("autoscan-server-");
  cleanups.push(cleanup);
  const configDir = join(root, "config");
  const cwd = join(root, "cwd");
  mkdirSync(configDir);
  mkdirSync(cwd);
  const configPath = join(configDir, "config.json");
  const port = await freePort();
  writeFileSync(
    configPath,
    JSON.stringify({ SERVER_PASS: PASS, SERVER_IP: "127.0.0.1", SERVER_PORT: port, PLEX_TOKEN, ...config }, null, 2),
  );
  return { root, configDir, cwd, configPath, port };
}

function start(args: readonly string[], cwd: string): RunningCli {
  const child = startCli(["server", ...args], { cwd, timeoutMs: 60_000 });
  children.push(child);
  return child;
}

/** Polls GET /health until it answers 200 (or the server exits, or 15 s pass). */
async function waitForHealth(child: RunningCli, port: number): Promise<{ status: number; body: Record<string, unknown> }> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    if (child.process.exitCode !== null) throw new Error(`the server exited with ${child.process.exitCode}:\n${child.stderr()}`);
    try {
      const response = await fetch(`http://127.0.0.1:${port}/health`, { signal: AbortSignal.timeout(1000) });
      const body = (await response.json()) as Record<string, unknown>;
      if (response.status === 200) return { status: response.status, body };
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`no 200 from /health within 15 s:\n${child.stdout()}\n${child.stderr()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Sends `signal` and waits for the exit; the bound is generous (the budget is 5 s), so this is not a timing test. */
async function stopWith(child: RunningCli, signal: NodeJS.Signals) {
  const sent = Date.now();
  child.process.kill(signal);
  const exit = await within(child.exited, 10_000, `exit after ${signal}`);
  return { ...exit, elapsedMs: Date.now() - sent };
}

describe.concurrent("autoscan server", () => {
  it("starts, answers GET /health with 200 {status: ok}, and exits 0 on SIGTERM", async () => {
    const { configPath, port, cwd, configDir } = await setup();
    const child = start(["--config", configPath], cwd);
    const health = await waitForHealth(child, port);
    expect(health.body.status).toBe("ok");
    const exit = await stopWith(child, "SIGTERM");
    expect(exit).toMatchObject({ code: 0, signal: null });
    expect(exit.elapsedMs).toBeLessThan(10_000);
    expect(child.stdout()).toMatch(/Server stopped/);
    // Data files live beside the config, none in the working directory.
    expect(readdirSync(cwd)).toEqual([]);
    expect(existsSync(join(configDir, "autoscan.log"))).toBe(true);
  });

  it("exits 0 on SIGINT (Ctrl-C)", async () => {
    const { configPath, port, cwd } = await setup();
    const child = start(["--config", configPath], cwd);
    await waitForHealth(child, port);
    const exit = await stopWith(child, "SIGINT");
    expect(exit, `stderr: ${child.stderr()}\nstdout (end): ${child.stdout().slice(-2000)}`).toMatchObject({ code: 0, signal: null });
  });

  it("exits 0 on SIGTERM even while a client holds a keep-alive connection open", async () => {
    const { configPath, port, cwd } = await setup();
    const child = start(["--config", configPath], cwd);
    await waitForHealth(child, port);
    // An idle keep-alive connection (a monitor, a browser) must not hold the shutdown open.
    const socketOpen = new Promise<void>((resolve, reject) => {
      const req = request({ host: "127.0.0.1", port, path: "/health", headers: { connection: "keep-alive" } }, (res) => {
        res.resume();
        res.on("end", () => resolve());
      });
      req.on("error", reject);
      req.end();
    });
    await socketOpen;
    const exit = await stopWith(child, "SIGTERM");
    expect(exit).toMatchObject({ code: 0, signal: null });
  });

  it("logs classic lines on stdout by default, and never the secrets", async () => {
    const { configPath, port, cwd, configDir } = await setup();
    const child = start(["--config", configPath], cwd);
    await waitForHealth(child, port);
    await fetch(`http://127.0.0.1:${port}/${PASS}`, { method: "POST", body: "{}", headers: { "content-type": "application/json" } }).catch(() => undefined);
    await stopWith(child, "SIGTERM");
    const lines = child.stdout().trimEnd().split("\n");
    expect(lines.length).toBeGreaterThan(2);
    for (const line of lines) expect(line).toMatch(CLASSIC);
    expect(child.stdout()).toMatch(/ - INFO - AUTOSCAN \[\d+\]: Started server: http:\/\/127\.0\.0\.1:\d+\/<SERVER_PASS>/);
    const file = readFileSync(join(configDir, "autoscan.log"), "utf8");
    for (const text of [child.stdout(), child.stderr(), file]) {
      expect(text).not.toContain(PASS);
      expect(text).not.toContain(PLEX_TOKEN);
    }
  });

  it("logs JSON lines with --log-format json (the log file stays classic)", async () => {
    const { configPath, port, cwd, configDir } = await setup();
    const child = start(["--config", configPath, "--log-format", "json"], cwd);
    await waitForHealth(child, port);
    await stopWith(child, "SIGTERM");
    const records = child.stdout().trimEnd().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>);
    // What Loki and Elastic expect: the level as a word, ISO 8601 time, the component as a field.
    expect(records.find((record) => record.msg === "Server stopped")).toMatchObject({ level: "info", component: "AUTOSCAN" });
    for (const record of records) {
      expect(["debug", "info", "warn", "error", "fatal"]).toContain(record.level);
      expect(String(record.time)).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      expect(typeof record.component).toBe("string");
    }
    const fileLines = readFileSync(join(configDir, "autoscan.log"), "utf8").trimEnd().split("\n");
    for (const line of fileLines) expect(line).toMatch(CLASSIC);
  });

  it("answers a webhook from a client that half-closes its socket after sending (printf … | nc -q0)", async () => {
    const { configPath, port, cwd } = await setup();
    const child = start(["--config", configPath], cwd);
    await waitForHealth(child, port);
    const body = JSON.stringify({ eventType: "Download", series: { path: "/tv/Show" }, episodeFile: { relativePath: "Season 01/x.mkv" } });
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect({ port, host: "127.0.0.1", allowHalfOpen: true });
      let received = "";
      socket.setTimeout(10_000, () => socket.destroy(new Error("no answer within 10 s")));
      socket.on("data", (chunk) => (received += chunk.toString("latin1")));
      socket.on("end", () => {
        socket.end();
        resolve(received);
      });
      socket.on("error", reject);
      // end() sends the request and then the FIN, as nc -q0 does once its input is done.
      socket.end(`POST /${PASS} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
    });
    expect(answer).toMatch(/^HTTP\/1\.1 200 [\s\S]*\r\n\r\nOK$/);
    await stopWith(child, "SIGTERM");
    expect(child.stdout()).toMatch(/Queued Sonarr 'Download' from client '127\.0\.0\.1': '\/tv\/Show\/Season 01\/x\.mkv'/);
  });

  it("autoscan health asks the running server and exits 0", async () => {
    const { configPath, port, cwd } = await setup();
    const child = start(["--config", configPath], cwd);
    await waitForHealth(child, port);
    const health = await runCli(["health", "--config", configPath], { cwd });
    await stopWith(child, "SIGTERM");
    expect(health.code).toBe(0);
    expect(JSON.parse(health.stdout)).toMatchObject({ status: "ok" });
  });

  it("a port already in use: a clear message naming the port, and a non-zero exit", async () => {
    const busy = await occupyPort();
    try {
      const { configPath, cwd } = await setup({ SERVER_PORT: busy.port });
      const child = start(["--config", configPath], cwd);
      const exit = await within(child.exited, 15_000, "exit on a busy port");
      expect(exit.code).not.toBe(0);
      expect(exit.code).not.toBeNull();
      const output = child.stdout() + child.stderr();
      expect(output).toContain(`127.0.0.1:${busy.port}`);
      expect(output).toMatch(/in use/i);
      expect(output).toContain("SERVER_PORT");
    } finally {
      await busy.close();
    }
  });
});
