import type Docker from "dockerode";
import type { Duplex } from "node:stream";
import { systemClock, type Clock } from "../core/clock.ts";
import { classifyDockerError, type ClassifyContext } from "./classify-error.ts";
import { assertArgv, toEnvList, type ExecResult, type ProcessInfo, type RunOptions } from "./command-runner.ts";
import { createDockerClient, describeEndpoint, parseDockerHost } from "./connect.ts";
import {
  inspectContainer,
  listContainerProcesses,
  listRunningContainers,
  statPath,
  type ContainerInfo,
  type PathStat,
} from "./container-queries.ts";
import { createDemuxer } from "./demuxer.ts";
import { ExecInterruptedError, ExecTimeoutError } from "./errors.ts";
import { formatDuration } from "../core/format-duration.ts";
import { createOutputBuffer, type OutputBuffer } from "./output-buffer.ts";

export interface DockerExecutorOptions {
  /** DOCKER_HOST as configured; unset → the default socket. Ignored when `docker` is given. */
  readonly dockerHost?: string;
  /** A ready client (tests). */
  readonly docker?: Docker;
  /** Output kept per stream (the end of it); default 1 MiB. Live lines are not limited. */
  readonly maxOutputBytes?: number;
  /** How long to poll for the exit code after the stream ended; default 5 s. */
  readonly exitCodeWaitMs?: number;
  readonly clock?: Clock;
}

/** dockerode exec with demultiplexed output, an output cap, live lines, a timeout and errors a user can act on. */
export interface DockerExecutor {
  /** Where the engine is (`/var/run/docker.sock`, `tcp://…`), for messages. */
  readonly endpoint: string;
  exec(container: string, argv: readonly string[], options?: RunOptions): Promise<ExecResult>;
  inspect(container: string): Promise<ContainerInfo>;
  /** `undefined` when the path does not exist in the container. */
  stat(container: string, path: string): Promise<PathStat | undefined>;
  processes(container: string): Promise<ProcessInfo[]>;
  runningContainers(): Promise<string[]>;
  ping(): Promise<void>;
}

const DEFAULT_MAX_OUTPUT = 1024 * 1024;

export function createDockerExecutor(options: DockerExecutorOptions = {}): DockerExecutor {
  const docker = options.docker ?? createDockerClient({ dockerHost: options.dockerHost });
  const endpoint = options.docker ? "the given Docker client" : describeEndpoint(parseDockerHost(options.dockerHost));
  const clock = options.clock ?? systemClock;
  const maxBytes = options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT;
  const exitCodeWaitMs = options.exitCodeWaitMs ?? 5000;

  const context = (container?: string): ClassifyContext => ({
    endpoint,
    ...(container !== undefined ? { container } : {}),
    listRunning: () => listRunningContainers(docker),
    stateOf: async (name) => (await docker.getContainer(name).inspect()).State.Status,
  });
  async function guarded<T>(container: string | undefined, call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (error) {
      throw await classifyDockerError(error, context(container));
    }
  }

  async function exec(container: string, argv: readonly string[], run: RunOptions = {}): Promise<ExecResult> {
    assertArgv(argv);
    const env = toEnvList(run.env);
    const started = clock.now();
    const handle = await guarded(container, () =>
      docker.getContainer(container).exec({
        Cmd: [...argv],
        Env: env,
        ...(run.user ? { User: run.user } : {}),
        ...(run.workdir ? { WorkingDir: run.workdir } : {}),
        AttachStdin: false,
        AttachStdout: true,
        AttachStderr: true,
        Tty: false,
      }),
    );
    const stream = await guarded(container, () => handle.start({ hijack: true, stdin: false }));
    const stdout = createOutputBuffer({ maxBytes, onLine: (text) => run.onLine?.({ stream: "stdout", text }) });
    const stderr = createOutputBuffer({ maxBytes, onLine: (text) => run.onLine?.({ stream: "stderr", text }) });
    const ending = await pump(stream, stdout, stderr, run, clock);
    stdout.end();
    stderr.end();
    if (ending.kind === "error") throw await classifyDockerError(ending.error, context(container));
    if (ending.kind !== "ended") {
      const pid = await handle
        .inspect()
        .then((info) => (info.Running ? info.Pid : undefined))
        .catch(() => undefined);
      throw abandoned(ending.kind, container, argv, pid, run.timeoutMs ?? 0);
    }
    const exitCode = await guarded(container, () => readExitCode(handle, clock, exitCodeWaitMs));
    return {
      exitCode,
      stdout: stdout.text(),
      stderr: stderr.text(),
      durationMs: clock.now() - started,
      truncated: stdout.truncated || stderr.truncated,
    };
  }

  return {
    endpoint,
    exec,
    inspect: (container) => guarded(container, () => inspectContainer(docker, container)),
    stat: (container, path) => guarded(container, () => statPath(docker, container, path)),
    processes: (container) => guarded(container, () => listContainerProcesses(docker, container)),
    runningContainers: () => guarded(undefined, () => listRunningContainers(docker)),
    ping: () => guarded(undefined, async () => void (await docker.ping())),
  };
}

type Ending = { kind: "ended" } | { kind: "timeout" } | { kind: "aborted" } | { kind: "error"; error: unknown };

/** Feeds the hijacked stream through the demuxer until it ends (the daemon closes it when the process exits). */
function pump(stream: Duplex, stdout: OutputBuffer, stderr: OutputBuffer, run: RunOptions, clock: Clock) {
  const demuxer = createDemuxer((name, payload) => (name === "stdout" ? stdout : stderr).write(payload));
  const stopTimer = new AbortController();
  return new Promise<Ending>((resolve) => {
    let settled = false;
    const finish = (ending: Ending): void => {
      if (settled) return;
      settled = true;
      stopTimer.abort();
      run.signal?.removeEventListener("abort", onAbort);
      stream.destroy();
      resolve(ending);
    };
    const onAbort = (): void => finish({ kind: "aborted" });
    stream.on("data", (chunk: Buffer) => demuxer.push(chunk));
    stream.once("end", () => finish({ kind: "ended" }));
    stream.once("close", () => finish({ kind: "ended" }));
    stream.once("error", (error) => finish({ kind: "error", error }));
    if (run.signal?.aborted) return onAbort();
    run.signal?.addEventListener("abort", onAbort, { once: true });
    if (run.timeoutMs !== undefined && run.timeoutMs > 0) {
      void clock.sleep(run.timeoutMs, stopTimer.signal).then(() => {
        if (!stopTimer.signal.aborted) finish({ kind: "timeout" });
      });
    }
  });
}

/**
 * `ExitCode` is null before start and while running, and may still be null for a moment after the stream ended
 * (testcontainers-go #3766): poll briefly, never read a null as 0.
 */
async function readExitCode(handle: Docker.Exec, clock: Clock, waitMs: number): Promise<number> {
  const deadline = clock.now() + waitMs;
  let delay = 10;
  for (;;) {
    const info = await handle.inspect();
    if (!info.Running && typeof info.ExitCode === "number") return info.ExitCode;
    if (clock.now() >= deadline) {
      throw new Error(`Docker reported no exit code for exec ${handle.id.slice(0, 12)} within ${waitMs} ms`);
    }
    await clock.sleep(delay);
    delay = Math.min(delay * 2, 250);
  }
}

function abandoned(
  kind: "timeout" | "aborted",
  container: string,
  argv: readonly string[],
  pid: number | undefined,
  timeoutMs: number,
): Error {
  const what = `"${argv.join(" ")}" in container "${container}"`;
  const orphan =
    pid !== undefined
      ? `It is still running (host pid ${pid}); Docker's exec API cannot stop it, so it will finish on its own ` +
        `unless you stop it (\`docker top ${container}\` lists it)`
      : "It may still be running; Docker's exec API cannot stop it";
  if (kind === "timeout") {
    return new ExecTimeoutError(`Timed out after ${formatDuration(timeoutMs)} waiting for ${what}. ${orphan}.`, pid);
  }
  return new ExecInterruptedError(`Stopped waiting for ${what} (shutting down). ${orphan}.`, pid);
}
