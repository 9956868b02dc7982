import { spawn } from "node:child_process";
import { readdir, readFile } from "node:fs/promises";
import { userInfo } from "node:os";
import { systemClock, type Clock } from "../../core/clock.ts";
import {
  assertArgv,
  toEnvList,
  type CommandRunner,
  type ExecResult,
  type ProcessInfo,
  type RunOptions,
  type RunPlan,
} from "../../docker/command-runner.ts";
import { ExecInterruptedError, ExecTimeoutError } from "../../docker/errors.ts";
import { formatDuration } from "../../core/format-duration.ts";
import { createOutputBuffer } from "../../docker/output-buffer.ts";

/**
 * Runs commands on this host, for systemd installs without Docker (`USE_DOCKER: false`). Like plex_autoscan's
 * `sudo -u plex bash -c 'export …; scanner …'`, minus the shell: `sudo -n -u plex -- /usr/bin/env K=V … scanner …`.
 * `env(1)` carries the variables because sudo drops `LD_*` from the environment it passes on.
 */
export interface HostRunnerOptions {
  /** USE_SUDO: run as `RunOptions.user` through `sudo -n -u` (skipped when we already are that user). */
  readonly useSudo: boolean;
  /** Output kept per stream; default 1 MiB. */
  readonly maxOutputBytes?: number;
  /** Grace between SIGTERM and SIGKILL on timeout; default 5 s. */
  readonly killGraceMs?: number;
  readonly clock?: Clock;
  /** Our own user name (tests); default os.userInfo(). */
  readonly currentUser?: string;
}

export function createHostRunner(options: HostRunnerOptions): CommandRunner {
  const clock = options.clock ?? systemClock;
  const maxBytes = options.maxOutputBytes ?? 1024 * 1024;
  const currentUser = options.currentUser ?? userInfo().username;

  function plan(argv: readonly string[], run: RunOptions = {}): RunPlan {
    assertArgv(argv);
    const env = run.env ?? {};
    const assignments = toEnvList(env);
    if (assignments.length > 0 && (argv[0] as string).includes("=")) {
      throw new Error(`Cannot run ${JSON.stringify(argv[0])} through env(1): its path contains "="`);
    }
    const sudo = options.useSudo && run.user !== undefined && run.user !== "" && run.user !== currentUser;
    const full = [
      ...(sudo ? ["sudo", "-n", "-u", run.user as string, "--"] : []),
      ...(assignments.length > 0 ? ["/usr/bin/env", ...assignments] : []),
      ...argv,
    ];
    return {
      where: "this host",
      ...(sudo ? { user: run.user } : {}),
      env,
      ...(run.workdir ? { workdir: run.workdir } : {}),
      argv: full,
    };
  }

  return {
    where: "this host",
    plan,
    run: (argv, run = {}) => spawnPlan(plan(argv, run), run, { clock, maxBytes, grace: options.killGraceMs ?? 5000 }),
    listProcesses: listHostProcesses,
    assertAvailable: async () => {},
  };
}

interface SpawnSettings {
  readonly clock: Clock;
  readonly maxBytes: number;
  readonly grace: number;
}

function spawnPlan(plan: RunPlan, run: RunOptions, settings: SpawnSettings): Promise<ExecResult> {
  const { clock, maxBytes } = settings;
  const started = clock.now();
  const [file, ...args] = plan.argv as [string, ...string[]];
  const stdout = createOutputBuffer({ maxBytes, onLine: (text) => run.onLine?.({ stream: "stdout", text }) });
  const stderr = createOutputBuffer({ maxBytes, onLine: (text) => run.onLine?.({ stream: "stderr", text }) });
  return new Promise<ExecResult>((resolve, reject) => {
    const child = spawn(file, args, {
      shell: false,
      stdio: ["ignore", "pipe", "pipe"],
      ...(plan.workdir ? { cwd: plan.workdir } : {}),
    });
    const stopTimer = new AbortController();
    let stopped: "timeout" | "aborted" | undefined;
    const stop = (why: "timeout" | "aborted"): void => {
      if (stopped || child.exitCode !== null) return;
      stopped = why;
      child.kill("SIGTERM");
      void clock.sleep(settings.grace, stopTimer.signal).then(() => {
        if (!stopTimer.signal.aborted) child.kill("SIGKILL");
      });
    };
    const onAbort = (): void => stop("aborted");
    run.signal?.addEventListener("abort", onAbort, { once: true });
    if (run.signal?.aborted) onAbort();
    if (run.timeoutMs !== undefined && run.timeoutMs > 0) {
      void clock.sleep(run.timeoutMs, stopTimer.signal).then(() => stopTimer.signal.aborted || stop("timeout"));
    }
    child.stdout.on("data", (chunk: Buffer) => stdout.write(chunk));
    child.stderr.on("data", (chunk: Buffer) => stderr.write(chunk));
    let spawnError: NodeJS.ErrnoException | undefined;
    child.once("error", (error: NodeJS.ErrnoException) => (spawnError = error));
    child.once("close", (code, signal) => {
      stopTimer.abort();
      run.signal?.removeEventListener("abort", onAbort);
      stdout.end();
      stderr.end();
      const what = `"${plan.argv.join(" ")}"`;
      if (stopped === "timeout") {
        return reject(new ExecTimeoutError(`Timed out after ${formatDuration(run.timeoutMs ?? 0)}: stopped ${what}`, child.pid));
      }
      if (stopped === "aborted") return reject(new ExecInterruptedError(`Stopped ${what} (shutting down)`, child.pid));
      resolve({
        exitCode: exitCodeOf(code, signal, spawnError),
        stdout: stdout.text(),
        stderr: spawnError && stderr.totalBytes === 0 ? `${spawnError.message}\n` : stderr.text(),
        durationMs: clock.now() - started,
        truncated: stdout.truncated || stderr.truncated,
      });
    });
  });
}

/** The shell's conventions, so callers judge native and Docker runs alike: 127 not found, 126 not executable. */
function exitCodeOf(code: number | null, signal: NodeJS.Signals | null, error: NodeJS.ErrnoException | undefined) {
  if (error) return error.code === "ENOENT" ? 127 : 126;
  if (code !== null) return code;
  const signals: Record<string, number> = { SIGHUP: 1, SIGINT: 2, SIGKILL: 9, SIGSEGV: 11, SIGTERM: 15 };
  return 128 + (signal ? (signals[signal] ?? 0) : 0);
}

/** Processes on this host from /proc (Linux); empty elsewhere. */
async function listHostProcesses(): Promise<ProcessInfo[]> {
  const entries = await readdir("/proc").catch(() => [] as string[]);
  const out: ProcessInfo[] = [];
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const raw = await readFile(`/proc/${entry}/cmdline`).catch(() => undefined);
    if (!raw || raw.length === 0) continue;
    out.push({ pid: Number(entry), command: raw.toString("utf8").replace(/\0+$/, "").split("\0").join(" ") });
  }
  return out;
}
