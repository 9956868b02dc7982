import type Docker from "dockerode";
import { afterAll, beforeAll, expect, it } from "vitest";
import { TargetConfigError, TargetUnavailableError } from "../src/core/errors.ts";
import type { OutputLine } from "../src/docker/command-runner.ts";
import {
  ContainerNotFoundError,
  ContainerNotRunningError,
  ExecInterruptedError,
  ExecTimeoutError,
} from "../src/docker/errors.ts";
import { createDockerExecutor, type DockerExecutor } from "../src/docker/executor.ts";
import {
  absentContainerName,
  createContainerPool,
  describeDocker,
  ensureFakePlexImage,
  probeEngine,
  type ContainerPool,
} from "./support/docker/engine.ts";

const SCANNER = "/usr/lib/plexmediaserver/Plex Media Scanner";
const HOTIO_SCANNER = "/app/bin/usr/lib/plexmediaserver/Plex Media Scanner";

/** Paths a shell would mangle; without a shell they must arrive byte for byte. */
const HOSTILE = [
  `/data/Movies/It's a "Test" $HOME \`id\` $(id) (2020) [1080p] {x} & ; | < > * ? ~ ! # % ^ = \\ end`,
  "/data/Séries/東京 🎬/Ærø – naïve/cafe\u0301",
  "/data/line\nbreak\tand tab/trailing space ",
  "-not-an-option",
  "",
];

interface Record {
  script: string;
  argv: string[];
  env: { [name: string]: string };
  uid: number;
  user: string;
  cwd: string;
}

function recordOf(stdout: string): Record {
  const line = stdout.split("\n").find((entry) => entry.startsWith("FAKE-SCANNER-RECORD "));
  if (!line) throw new Error(`no record in output: ${stdout.slice(0, 500)}`);
  return JSON.parse(line.slice("FAKE-SCANNER-RECORD ".length)) as Record;
}

const engine = await probeEngine();

describeDocker("Docker exec executor (real engine)", engine, (docker: Docker) => {
  let pool: ContainerPool;
  let plex: string;
  let executor: DockerExecutor;

  beforeAll(async () => {
    const images = await ensureFakePlexImage(docker);
    pool = createContainerPool(docker, "exec");
    plex = (await pool.start(images.plain)).name;
    executor = createDockerExecutor({ docker, maxOutputBytes: 64 * 1024 });
  });
  afterAll(async () => pool?.removeAll());

  it("passes argv and Env byte for byte, as the chosen user, in the chosen directory", async () => {
    const env = {
      LD_LIBRARY_PATH: "/usr/lib/plexmediaserver/lib",
      PLEX_MEDIA_SERVER_APPLICATION_SUPPORT_DIR: "/config/Library/Application Support",
      ODD_VALUE: "a=b c\nd $HOME `x`",
    };
    const args = ["--scan", "--refresh", "--section", "2", "--directory", ...HOSTILE];
    const result = await executor.exec(plex, [SCANNER, ...args], { user: "plex", env, workdir: "/config" });
    expect(result.exitCode).toBe(0);
    const record = recordOf(result.stdout);
    expect(record.script).toBe(SCANNER);
    expect(record.argv).toEqual(args);
    expect(Buffer.from(record.argv.join("\0"))).toEqual(Buffer.from(args.join("\0")));
    expect(record.env).toMatchObject(env);
    expect(record).toMatchObject({ uid: 797, user: "plex", cwd: "/config" });
  });

  it.each([
    ["plex", 797],
    ["abc", 911],
    ["hotio", 1000],
    ["1000:1000", 1000],
    [undefined, 0],
  ])("runs as user %s (uid %i)", async (user, uid) => {
    const result = await executor.exec(plex, [HOTIO_SCANNER, "--list"], user ? { user } : {});
    expect(recordOf(result.stdout)).toMatchObject({ uid, script: HOTIO_SCANNER });
  });

  it("returns the exit code and stderr as values, and hands over lines live, per stream", async () => {
    const lines: OutputLine[] = [];
    const result = await executor.exec(plex, [SCANNER, "--scan", "--directory", "/data/x"], {
      env: { FAKE_SCANNER_EXIT: "3", FAKE_SCANNER_STDERR: "Something went wrong" },
      onLine: (line) => lines.push(line),
    });
    expect(result.exitCode).toBe(3);
    expect(result.stderr).toContain("Something went wrong\n");
    expect(result.stderr).toContain("'--scan' operation is deprecated");
    expect(result.stdout).toContain("Scanning /data/x\n");
    expect(result.stdout.split("\n")).not.toContain("Something went wrong");
    expect(lines).toContainEqual({ stream: "stderr", text: "Something went wrong" });
    expect(lines).toContainEqual({ stream: "stdout", text: "Scanning /data/x" });
    expect(result.truncated).toBe(false);
    expect(result.durationMs).toBeGreaterThanOrEqual(0);
  });

  it.each([0, 1, 2, 42, 255])("reads exit code %i only after the stream ended", async (code) => {
    const result = await executor.exec(plex, [SCANNER, "--list"], { env: { FAKE_SCANNER_EXIT: String(code) } });
    expect(result.exitCode).toBe(code);
  });

  it("caps the kept output at the end of it, while every line still reaches onLine", async () => {
    let count = 0;
    const result = await executor.exec(plex, [SCANNER, "--list"], {
      env: { FAKE_SCANNER_STDOUT_BYTES: String(2 * 1024 * 1024) },
      onLine: () => count++,
    });
    expect(result.exitCode).toBe(0);
    expect(result.truncated).toBe(true);
    expect(Buffer.byteLength(result.stdout)).toBeLessThanOrEqual(64 * 1024);
    expect(result.stdout).toMatch(/^x{63}\n/);
    expect(count).toBeGreaterThanOrEqual((2 * 1024 * 1024) / 64);
  });

  it("reports a binary that is not there as exit 126/127 with the runtime's message", async () => {
    const result = await executor.exec(plex, ["/usr/lib/plexmediaserver/Plex Media Scanner (missing)"]);
    expect([126, 127]).toContain(result.exitCode);
    expect(result.stdout + result.stderr).toMatch(/no such file|not found/i);
  });

  it("times out, and reports the orphaned process that the exec API cannot stop", async () => {
    const error = await executor
      .exec(plex, [SCANNER, "--list"], { env: { FAKE_SCANNER_SLEEP_MS: "20000" }, timeoutMs: 500 })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ExecTimeoutError);
    const timeout = error as ExecTimeoutError;
    expect(timeout.message).toMatch(/Timed out after 500 ms .*still running \(host pid \d+\).*cannot stop it/);
    expect(timeout.pid).toBeGreaterThan(0);
    const processes = await executor.processes(plex);
    expect(processes.some((process) => process.pid === timeout.pid && process.command.includes("Plex Media Scanner"))).toBe(true);
  });

  it("stops waiting when the caller's signal aborts", async () => {
    const controller = new AbortController();
    const pending = executor.exec(plex, [SCANNER, "--list"], {
      env: { FAKE_SCANNER_SLEEP_MS: "20000" },
      signal: controller.signal,
      onLine: () => controller.abort(),
    });
    await expect(pending).rejects.toBeInstanceOf(ExecInterruptedError);
  });

  it("names DOCKER_NAME and lists the running containers when there is no such container", async () => {
    const missing = absentContainerName();
    const error = await executor.exec(missing, [SCANNER, "--list"]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ContainerNotFoundError);
    expect(error).toBeInstanceOf(TargetConfigError);
    expect((error as Error).message).toContain(`No container named "${missing}" (DOCKER_NAME)`);
    expect((error as ContainerNotFoundError).running).toContain(plex);
  });

  it("classifies a stopped or paused container as unavailable (the queue retries)", async () => {
    const images = await ensureFakePlexImage(docker);
    const stopped = await pool.start(images.plain);
    await stopped.stop({ t: 0 });
    const error = await executor.exec(stopped.name, [SCANNER, "--list"]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ContainerNotRunningError);
    expect(error).toBeInstanceOf(TargetUnavailableError);
    expect((error as Error).message).toContain(`Container "${stopped.name}" is not running (exited)`);

    const paused = await pool.start(images.plain);
    await paused.pause();
    const pausedError = await executor.exec(paused.name, [SCANNER, "--list"]).catch((e: unknown) => e);
    expect(pausedError).toBeInstanceOf(ContainerNotRunningError);
    expect((pausedError as Error).message).toContain("is paused");
    await paused.unpause();
  });

  it("inspects the container and stats paths without running anything in it", async () => {
    const info = await executor.inspect(plex);
    expect(info).toMatchObject({ name: plex, state: "running" });
    expect(await executor.stat(plex, HOTIO_SCANNER)).toMatchObject({ isExecutable: true, isDirectory: false });
    expect(await executor.stat(plex, "/app/bin")).toMatchObject({ isDirectory: true });
    expect(await executor.stat(plex, "/no/such/file")).toBeUndefined();
    await expect(executor.stat(absentContainerName(), "/")).rejects.toBeInstanceOf(ContainerNotFoundError);
  });
});
