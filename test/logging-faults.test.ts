import { execFileSync, spawn } from "node:child_process";
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmdirSync, rmSync, writeFileSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { eventually } from "./support/faults/autoscan-server.ts";
import { probeMounts } from "./support/faults/mounts.ts";
import { freePort } from "./support/free-port.ts";
import { CLI_MAIN, childEnv, startCli, within, type RunningCli } from "./support/run-cli.ts";

/**
 * `autoscan server` as a child process while its log file cannot be written: a full disk (a small tmpfs filled up),
 * a read-only mount, a closed stdout. The server keeps answering, never exits, says so once per episode, and says
 * how many lines were lost when the file works again. Mounting needs root (or CAP_SYS_ADMIN): where it is refused
 * the tests that need it are skipped, and the reason is printed.
 */
const PASS = "c0ffee00d15ea5e0b1e55ed0a11f0123";
const mountSupport = probeMounts();
const mountRefusal = mountSupport.ok ? undefined : mountSupport.reason;
if (mountRefusal) console.warn(`logging-faults: mount tests skipped, cannot mount a tmpfs here: ${mountRefusal}`);

const mounts: string[] = [];
const children: RunningCli[] = [];
const dirs: string[] = [];
afterAll(() => {
  for (const child of children) if (child.process.exitCode === null && child.process.signalCode === null) child.process.kill("SIGKILL");
  for (const dir of mounts) {
    run("umount", ["-l", dir]);
    rmdirSync(dir);
  }
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
}

function mountTmpfs(size: string): string {
  const dir = mkdtempSync(join(tmpdir(), "autoscan-tmpfs-"));
  execFileSync("mount", ["-t", "tmpfs", "-o", `size=${size}`, "tmpfs", dir], { stdio: "pipe" });
  mounts.push(dir);
  return dir;
}

/** Fills the file system holding `dir` with one file; removing it makes room again. */
function fillDisk(dir: string): string {
  const path = join(dir, "filler");
  const fd = openSync(path, "w");
  const chunk = Buffer.alloc(4096, "x");
  try {
    for (;;) writeSync(fd, chunk);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOSPC") throw error;
  } finally {
    closeSync(fd);
  }
  return path;
}

async function startServer(options: { configDir: string; args?: string[] }) {
  const cwd = tempDir("autoscan-cwd-");
  const port = await freePort();
  const configPath = join(options.configDir, "config.json");
  writeFileSync(configPath, JSON.stringify({ SERVER_PASS: PASS, SERVER_IP: "127.0.0.1", SERVER_PORT: port, PLEX_TOKEN: "plexTokenForFaults42" }));
  const child = startCli(["server", "--config", configPath, ...(options.args ?? [])], { cwd, timeoutMs: 90_000 });
  children.push(child);
  await waitForHealth(child, port);
  return { child, port };
}

async function waitForHealth(child: RunningCli, port: number): Promise<void> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    if (child.process.exitCode !== null) throw new Error(`the server exited with ${child.process.exitCode}:\n${child.stdout()}\n${child.stderr()}`);
    const status = await fetch(`http://127.0.0.1:${port}/health`, { signal: AbortSignal.timeout(1000) }).then((r) => r.status, () => 0);
    if (status === 200) return;
    if (Date.now() > deadline) throw new Error(`no 200 from /health within 15 s:\n${child.stdout()}\n${child.stderr()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

let episode = 0;
/** A Sonarr import for a fresh folder each time (no merging), and its answer. */
/** A webhook autoscan cannot read: answered 400, one WARNING line each. */
async function badWebhook(port: number): Promise<number> {
  const response = await fetch(`http://127.0.0.1:${port}/${PASS}`, {
    method: "POST",
    body: JSON.stringify({ eventType: "Download", note: "no series, no file" }),
    headers: { "content-type": "application/json" },
    signal: AbortSignal.timeout(10_000),
  });
  await response.text();
  return response.status;
}

async function webhook(port: number): Promise<{ status: number; body: string }> {
  episode++;
  const body = JSON.stringify({
    eventType: "Download",
    series: { path: `/tv/Show ${episode}` },
    episodeFile: { relativePath: `Season 01/Show - S01E${String(episode).padStart(2, "0")}.mkv` },
  });
  const response = await fetch(`http://127.0.0.1:${port}/${PASS}`, {
    method: "POST",
    body,
    headers: { "content-type": "application/json" },
    signal: AbortSignal.timeout(10_000),
  });
  return { status: response.status, body: await response.text() };
}

async function health(port: number): Promise<number> {
  return (await healthReport(port)).status;
}

async function healthReport(port: number): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`http://127.0.0.1:${port}/health`, { signal: AbortSignal.timeout(10_000) });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

async function stop(child: RunningCli) {
  child.process.kill("SIGTERM");
  return within(child.exited, 10_000, "exit after SIGTERM");
}

const count = (text: string, pattern: RegExp): number => text.match(new RegExp(pattern.source, "g"))?.length ?? 0;
const FAILING = (path: string, reason: string) => new RegExp(`WARNING - AUTOSCAN \\[\\d+\\]: Log file ${escape(path)} cannot be written: ${escape(reason)}`);
const RECOVERED = (path: string) => new RegExp(`INFO - AUTOSCAN \\[\\d+\\]: Log file ${escape(path)} is written again; (\\d+) lines? (?:was|were) dropped`);
const escape = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
const NO_CRASH = /Unhandled|uncaught|ERR_UNHANDLED_REJECTION|at .*rotating-file/i;

describe.skipIf(mountRefusal !== undefined)("autoscan server while its log file cannot be written", () => {
  it.concurrent("the data directory (and the log file in it) on a full disk: answers 503 (not 500) to webhooks and to /health, warns once, counts the lost lines", async () => {
    const configDir = mountTmpfs("4m");
    const { child, port } = await startServer({ configDir });
    const logFile = join(configDir, "autoscan.log");
    expect(await webhook(port)).toMatchObject({ status: 200 });
    const filler = fillDisk(configDir);
    // The files' last pages still have a little room: send until both the queue and the log file have hit the wall.
    const statuses: number[] = [];
    while (statuses.length < 300 && !(statuses.includes(503) && FAILING(logFile, "").test(child.stdout()))) {
      statuses.push((await webhook(port)).status);
      // A refused webhook is a DEBUG line (the store says why once): a bad one is a WARNING each, so the log keeps
      // writing after the queue has stopped.
      expect(await badWebhook(port)).toBe(400);
    }
    // Nothing can be stored: "try again" (503), never an internal error (500) from a log line that failed.
    expect(statuses.filter((status) => status !== 200 && status !== 503)).toEqual([]);
    expect(statuses.slice(statuses.indexOf(503))).toEqual(statuses.slice(statuses.indexOf(503)).map(() => 503));
    for (let n = 0; n < 3; n++) {
      expect((await webhook(port)).status).toBe(503);
      expect(await badWebhook(port)).toBe(400);
      // /health keeps answering, and says what is wrong: the queue, not the log.
      expect(await healthReport(port)).toMatchObject({ status: 503, body: { status: "error", queue: expect.stringMatching(/ENOSPC|space|full/i) } });
    }
    expect(child.process.exitCode).toBeNull();
    expect(count(child.stdout(), FAILING(logFile, "disk full (ENOSPC)"))).toBe(1);
    // The console still got every line the file lost (the pipe may deliver the last one after the HTTP answer).
    const queued = statuses.filter((s) => s === 200).length + 1;
    const unknown = statuses.length + 3;
    await eventually(() => count(child.stdout(), /Unknown scan request from client '127\.0\.0\.1'/) >= unknown, { what: "every bad request's line on the console", timeoutMs: 5_000 });
    expect(count(child.stdout(), /Queued Sonarr 'Download' from client '127\.0\.0\.1'/)).toBe(queued);
    expect(count(child.stdout(), /Unknown scan request from client '127\.0\.0\.1'/)).toBe(unknown);

    rmSync(filler);
    // The queue retries its disk on its own schedule; the log file at the next line.
    const deadline = Date.now() + 30_000;
    while ((await health(port)) !== 200 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 200));
    expect((await webhook(port)).status).toBe(200);
    const exit = await stop(child);
    expect(exit).toMatchObject({ code: 0, signal: null });
    expect(Number(RECOVERED(logFile).exec(child.stdout())?.[1])).toBeGreaterThanOrEqual(3);
    expect(count(child.stdout(), RECOVERED(logFile))).toBe(1);
    expect(count(child.stdout(), FAILING(logFile, ""))).toBe(1);
    expect(child.stdout() + child.stderr()).not.toMatch(NO_CRASH);
  });

  it.concurrent("the log file alone on a full disk: webhooks still queue (200), every line still reaches stdout", async () => {
    const logDir = mountTmpfs("64k");
    const logFile = join(logDir, "autoscan.log");
    const configDir = tempDir("autoscan-config-");
    const { child, port } = await startServer({ configDir, args: ["--logfile", logFile] });
    const filler = fillDisk(logDir);
    // The file's last page still has a little room: send until it is used up.
    let sent = 0;
    while (sent < 300 && !FAILING(logFile, "").test(child.stdout())) {
      expect(await webhook(port)).toMatchObject({ status: 200, body: "OK" });
      sent++;
    }
    for (let n = 0; n < 5; n++, sent++) expect(await webhook(port)).toMatchObject({ status: 200, body: "OK" });
    expect(await health(port)).toBe(200);
    expect(count(child.stdout(), FAILING(logFile, "disk full (ENOSPC)"))).toBe(1);
    await eventually(() => count(child.stdout(), /Queued Sonarr 'Download' from client '127\.0\.0\.1'/) >= sent, { what: "every webhook's line on stdout", timeoutMs: 5_000 });
    expect(count(child.stdout(), /Queued Sonarr 'Download' from client '127\.0\.0\.1'/)).toBe(sent);
    rmSync(filler);
    await webhook(port);
    expect(await stop(child)).toMatchObject({ code: 0, signal: null });
    expect(count(child.stdout(), RECOVERED(logFile))).toBe(1);
    expect(count(child.stdout(), FAILING(logFile, ""))).toBe(1);
    expect(child.stdout() + child.stderr()).not.toMatch(NO_CRASH);
  });

  it.concurrent("the log file on a read-only mount: the server starts, answers, and says once that the file cannot be written", async () => {
    const logDir = mountTmpfs("64k");
    mkdirSync(join(logDir, "logs"));
    writeFileSync(join(logDir, "logs", "autoscan.log"), "an older line\n");
    execFileSync("mount", ["-o", "remount,ro", logDir]);
    const logFile = join(logDir, "logs", "autoscan.log");
    const configDir = tempDir("autoscan-config-");
    const { child, port } = await startServer({ configDir, args: ["--logfile", logFile] });
    for (let n = 0; n < 3; n++) expect(await webhook(port)).toMatchObject({ status: 200, body: "OK" });
    expect(await health(port)).toBe(200);
    expect(await stop(child)).toMatchObject({ code: 0, signal: null });
    expect(count(child.stdout(), FAILING(logFile, "read-only file system (EROFS)"))).toBe(1);
    expect(child.stdout()).toMatch(/Server stopped/);
    expect(child.stdout() + child.stderr()).not.toMatch(NO_CRASH);
  });
});

describe("autoscan server whose stdout cannot be written", () => {
  it("a closed pipe (the reader went away): keeps answering, says so once on stderr, exits 0 on SIGTERM", async () => {
    const configDir = tempDir("autoscan-config-");
    const { child, port } = await startServer({ configDir });
    child.process.stdout?.destroy();
    for (let n = 0; n < 5; n++) expect(await webhook(port)).toMatchObject({ status: 200, body: "OK" });
    expect(await health(port)).toBe(200);
    expect(child.process.exitCode).toBeNull();
    expect(await stop(child)).toMatchObject({ code: 0, signal: null });
    expect(count(child.stderr(), /cannot write the log to stdout: .*\(EPIPE\)/)).toBe(1);
    expect(child.stderr()).not.toMatch(NO_CRASH);
  });

  it.skipIf(mountRefusal !== undefined)("redirected to a file on a full disk: keeps answering, says so once on stderr, catches up when there is room", async () => {
    const outDir = mountTmpfs("64k");
    const server = await startWithStdoutFile(join(outDir, "stdout.log"));
    try {
      const filler = fillDisk(outDir);
      const sent = await sendUntil(server.port, () => /cannot write the log to stdout/.test(server.stderr()));
      expect(await health(server.port)).toBe(200);
      expect(server.child.exitCode).toBeNull();
      expect(count(server.stderr(), /cannot write the log to stdout: disk full \(ENOSPC\)/)).toBe(1);
      rmSync(filler);
      await webhook(server.port);
      // The next try (within a second) writes what waited.
      const deadline = Date.now() + 5000;
      while (!/the log is written to stdout again/.test(server.stderr()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      server.child.kill("SIGTERM");
      expect(await within(server.exited, 10_000, "exit after SIGTERM")).toMatchObject({ code: 0, signal: null });
      expect(count(server.stderr(), /the log is written to stdout again; no line was lost/)).toBe(1);
      expect(count(server.stdout(), /Queued Sonarr 'Download' from client '127\.0\.0\.1'/)).toBe(sent + 1);
      expect(server.stdout()).toMatch(/Server stopped\n$/);
      expect(server.stderr()).not.toMatch(NO_CRASH);
    } finally {
      server.kill();
    }
  });

  it.skipIf(mountRefusal !== undefined)("a stop while stdout is still on a full disk: exits 0 at once (the exit does not wait for room)", async () => {
    const outDir = mountTmpfs("64k");
    const server = await startWithStdoutFile(join(outDir, "stdout.log"));
    try {
      fillDisk(outDir);
      await sendUntil(server.port, () => /cannot write the log to stdout/.test(server.stderr()));
      server.child.kill("SIGTERM");
      expect(await within(server.exited, 10_000, "exit after SIGTERM")).toMatchObject({ code: 0, signal: null });
      expect(server.stderr()).not.toMatch(NO_CRASH);
    } finally {
      server.kill();
    }
  });

  it("a reader that stops reading (a stalled log collector): the server keeps answering, and stops at once on SIGTERM", async () => {
    const configDir = tempDir("autoscan-config-");
    const { child, port } = await startServer({ configDir, args: ["--loglevel", "debug"] });
    child.process.stdout?.pause();
    // Far more than a pipe holds (64 KiB): were the log written synchronously, the server would freeze here.
    const started = Date.now();
    for (let n = 0; n < 400; n++) expect((await webhook(port)).status).toBe(200);
    expect(await health(port)).toBe(200);
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(await stop(child)).toMatchObject({ code: 0, signal: null });
    expect(child.stderr()).not.toMatch(NO_CRASH);
  }, 60_000);
});

/** `autoscan server` with its stdout redirected to `outFile` (`autoscan server > file`). */
async function startWithStdoutFile(outFile: string) {
  const configDir = tempDir("autoscan-config-");
  const port = await freePort();
  const configPath = join(configDir, "config.json");
  writeFileSync(configPath, JSON.stringify({ SERVER_PASS: PASS, SERVER_IP: "127.0.0.1", SERVER_PORT: port, PLEX_TOKEN: "plexTokenForFaults42" }));
  const out = openSync(outFile, "a");
  const child = spawn(process.execPath, [CLI_MAIN, "server", "--config", configPath, "--logfile", "none"], {
    cwd: tempDir("autoscan-cwd-"),
    env: childEnv(),
    stdio: ["ignore", out, "pipe"],
  });
  closeSync(out);
  let stderr = "";
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("close", (code, signal) => resolve({ code, signal })),
  );
  const running = { process: child, stdout: () => readFileSync(outFile, "utf8"), stderr: () => stderr, exited };
  const kill = (): void => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  };
  try {
    await waitForHealth(running, port);
  } catch (error) {
    kill();
    throw error;
  }
  return { child, port, exited, stdout: running.stdout, stderr: running.stderr, kill };
}

/** Sends webhooks (each must be accepted) until `done()`, then five more; how many were sent. */
async function sendUntil(port: number, done: () => boolean): Promise<number> {
  let sent = 0;
  while (sent < 300 && !done()) {
    expect(await webhook(port)).toMatchObject({ status: 200, body: "OK" });
    sent++;
  }
  expect(done()).toBe(true);
  for (let n = 0; n < 5; n++, sent++) expect(await webhook(port)).toMatchObject({ status: 200, body: "OK" });
  return sent;
}

function run(command: string, args: string[]): boolean {
  try {
    execFileSync(command, args, { stdio: "pipe" });
    return true;
  } catch {
    return false;
  }
}
