import type { OutputStreamName } from "./demuxer.ts";

/**
 * Runs one program with an argv array, never through a shell, either inside a container (Docker exec) or on this
 * host (spawn, optionally `sudo -u`). The Plex scanner code talks to this port and does not care which.
 */
export interface RunOptions {
  /** User to run as (`plex`, `abc`, `1000`, `plex:plex`). Docker: exec `User`. Native: `sudo -u` when enabled. */
  readonly user?: string;
  /** Extra environment variables (Docker: exec `Env`; native: through `/usr/bin/env`). */
  readonly env?: Readonly<Record<string, string>>;
  readonly workdir?: string;
  /** Stop waiting after this long (ExecTimeoutError). */
  readonly timeoutMs?: number;
  /** Every output line as it arrives (for live progress and logging), without its newline. */
  readonly onLine?: (line: OutputLine) => void;
  /** Aborted on shutdown: stop waiting (ExecInterruptedError). */
  readonly signal?: AbortSignal;
}

export interface OutputLine {
  readonly stream: OutputStreamName;
  readonly text: string;
}

/** An exec run is a value: a non-zero exit code is for the caller to judge. */
export interface ExecResult {
  readonly exitCode: number;
  /** The last `maxOutputBytes` of each stream. */
  readonly stdout: string;
  readonly stderr: string;
  readonly durationMs: number;
  /** True when output beyond the cap was dropped (the start of it). */
  readonly truncated: boolean;
}

/** Exactly what would run, for `--dry-run` and logs. */
export interface RunPlan {
  /** `container "plex" (Docker exec)` or `this host`. */
  readonly where: string;
  readonly user?: string;
  readonly env: Readonly<Record<string, string>>;
  readonly workdir?: string;
  readonly argv: readonly string[];
}

export interface ProcessInfo {
  readonly pid: number;
  /** The command line as `ps` shows it (arguments joined by spaces). */
  readonly command: string;
}

export interface CommandRunner {
  /** For logs and errors: `container "plex"` or `this host`. */
  readonly where: string;
  plan(argv: readonly string[], options?: RunOptions): RunPlan;
  run(argv: readonly string[], options?: RunOptions): Promise<ExecResult>;
  /** Processes running where commands run (for "wait for external scanners"). */
  listProcesses(): Promise<ProcessInfo[]>;
  /** Throws the classified error (TargetUnavailableError …) when commands cannot run there now. */
  assertAvailable(): Promise<void>;
}

/** `{K: V}` → `["K=V"]`, refusing names Docker or env(1) would misread. */
export function toEnvList(env: Readonly<Record<string, string>> | undefined): string[] {
  return Object.entries(env ?? {}).map(([name, value]) => {
    if (name === "" || name.includes("=") || name.includes("\0")) {
      throw new Error(`Invalid environment variable name ${JSON.stringify(name)}`);
    }
    if (value.includes("\0")) throw new Error(`Environment variable ${name} contains a NUL byte`);
    return `${name}=${value}`;
  });
}

export function assertArgv(argv: readonly string[]): void {
  if (argv.length === 0 || argv[0] === "") throw new Error("Nothing to run: the command line is empty");
  const bad = argv.find((arg) => arg.includes("\0"));
  if (bad !== undefined) throw new Error(`An argument contains a NUL byte: ${JSON.stringify(bad)}`);
}
