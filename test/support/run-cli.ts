import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";

/** The real entry point, run by the same Node that runs the tests (Node 24 runs the .ts sources directly). */
export const CLI_MAIN = fileURLToPath(new URL("../../src/cli/main.ts", import.meta.url));

export interface CliOptions {
  /** Extra environment variables. The child never inherits the tester's AUTOSCAN_* / PLEX_AUTOSCAN_* variables. */
  readonly env?: Readonly<Record<string, string>>;
  /** Working directory of the child (tests use an empty temp dir to prove nothing is written there). */
  readonly cwd?: string;
  /** Node's own flags, before the entry point (`--import` a hook). */
  readonly nodeArgs?: readonly string[];
  /** Kill the child if it has not exited by then (ms). */
  readonly timeoutMs?: number;
  /** Run the child as this user and group (tests run as root, where a chmod denies nothing). */
  readonly user?: { readonly uid: number; readonly gid: number };
}

export interface CliResult {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** A minimal, predictable environment: PATH and HOME only, plus what the test asks for. */
export function childEnv(extra: Readonly<Record<string, string>> = {}): Record<string, string> {
  const base: Record<string, string> = { PATH: process.env.PATH ?? "/usr/bin:/bin", NO_COLOR: "1" };
  if (process.env.HOME) base.HOME = process.env.HOME;
  return { ...base, ...extra };
}

/** Runs `autoscan <args>` to completion and collects its exit code and both streams. */
export function runCli(args: readonly string[], options: CliOptions = {}): Promise<CliResult> {
  const child = startCli(args, options);
  return child.exited.then(({ code, signal }) => ({ code, signal, stdout: child.stdout(), stderr: child.stderr() }));
}

export interface RunningCli {
  readonly process: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves once the process has exited (never rejects; a timeout kills it with SIGKILL). */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Starts `autoscan <args>` and returns at once (for `autoscan server`). */
export function startCli(args: readonly string[], options: CliOptions = {}): RunningCli {
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), CLI_MAIN, ...args], {
    cwd: options.cwd,
    env: childEnv(options.env),
    stdio: ["ignore", "pipe", "pipe"],
    ...(options.user ? { uid: options.user.uid, gid: options.user.gid } : {}),
  });
  let out = "";
  let err = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (out += chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (err += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 15_000);
    child.once("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal });
    });
  });
  return { process: child, stdout: () => out, stderr: () => err, exited };
}

/** Waits for `promise`, or fails with `what` after `ms` (the child is left to the caller). */
export async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: nothing after ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}
