import { spawn } from "node:child_process";
import { describeError } from "../../core/errors.ts";
import type { Logger } from "../../core/logger.ts";

/**
 * `RUN_COMMAND_BEFORE_SCAN` / `RUN_COMMAND_AFTER_SCAN`. The command is the user's own shell text, run with
 * `/bin/sh -c` as plex_autoscan did; what the scan is about reaches it only through environment variables, never
 * pasted into the shell text (a folder named `$(rm -rf ~)` stays a name):
 *
 * - `AUTOSCAN_FOLDER`  the folder being scanned (the media server's path form)
 * - `AUTOSCAN_FILES`   the requested files found in it, one per line (may be empty)
 * - `AUTOSCAN_SOURCES` who asked, comma-separated and de-duplicated (`Sonarr, Radarr (4k)`)
 * - `AUTOSCAN_STAGE`   `before` or `after`
 *
 * A hook never fails the scan: a non-zero exit, a timeout (the process group is killed) or a spawn error is logged.
 */
export type HookStage = "before" | "after";

export interface HookContext {
  readonly folder: string;
  readonly files: readonly string[];
  readonly sources: readonly string[];
}

export interface RunHookOptions {
  readonly timeoutMs: number;
  readonly log: Logger;
  /** Aborted on shutdown: the command is stopped like on a timeout. */
  readonly signal?: AbortSignal;
  /** The shell, replaceable in tests. */
  readonly shell?: string;
  /** The environment the command runs in (autoscan's own: PATH, HOME …), to which the AUTOSCAN_* variables are added. */
  readonly baseEnv?: Readonly<Record<string, string | undefined>>;
}

const KILL_GRACE_MS = 5_000;
const MAX_LOGGED_LINES = 100;

export function hookEnvironment(stage: HookStage, context: HookContext): Record<string, string> {
  return {
    AUTOSCAN_FOLDER: context.folder,
    AUTOSCAN_FILES: context.files.join("\n"),
    AUTOSCAN_SOURCES: [...new Set(context.sources)].join(", "),
    AUTOSCAN_STAGE: stage,
  };
}

export async function runCommandHook(
  command: string,
  stage: HookStage,
  context: HookContext,
  options: RunHookOptions,
): Promise<void> {
  const { log } = options;
  log.info({ command, stage, folder: context.folder }, `Running external command: '${command}'`);
  const outcome = await runShell(command, hookEnvironment(stage, context), options);
  if (outcome.kind === "ok") return void log.debug({ command, stage }, "Finished running external command.");
  const why = describeOutcome(outcome, options.timeoutMs);
  log.error({ command, stage, folder: context.folder }, `External command '${command}' ${why}; the scan goes on.`);
}

function describeOutcome(outcome: Exclude<ShellOutcome, { kind: "ok" }>, timeoutMs: number): string {
  switch (outcome.kind) {
    case "timeout":
      return `did not finish within ${Math.round(timeoutMs / 1000)} seconds and was stopped`;
    case "aborted":
      return "was stopped by shutdown";
    case "exit":
      return `exited with ${outcome.detail}`;
    case "error":
      return `could not be started: ${outcome.detail}`;
  }
}

type ShellOutcome =
  | { readonly kind: "ok" }
  | { readonly kind: "timeout" }
  | { readonly kind: "aborted" }
  | { readonly kind: "exit"; readonly detail: string }
  | { readonly kind: "error"; readonly detail: string };

function runShell(command: string, env: Record<string, string>, options: RunHookOptions): Promise<ShellOutcome> {
  return new Promise((resolve) => {
    const child = spawn(options.shell ?? "/bin/sh", ["-c", command], {
      // The user's command runs in the environment it was given (autoscan's own) plus the variables above.
      env: { ...options.baseEnv, ...env },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    let stopped: { kind: "timeout" } | { kind: "aborted" } | undefined;
    let logged = 0;
    const logLines = (chunk: Buffer): void => {
      for (const line of chunk.toString("utf8").split("\n")) {
        if (line.trim().length === 0 || logged++ >= MAX_LOGGED_LINES) continue;
        options.log.info({ command }, line.trimEnd());
      }
    };
    child.stdout.on("data", logLines);
    child.stderr.on("data", logLines);
    const stop = (why: "timeout" | "aborted"): void => {
      stopped ??= { kind: why };
      killGroup(child.pid, "SIGTERM");
      setTimeout(() => killGroup(child.pid, "SIGKILL"), KILL_GRACE_MS).unref();
    };
    const timer = setTimeout(() => stop("timeout"), options.timeoutMs);
    const onAbort = (): void => stop("aborted");
    options.signal?.addEventListener("abort", onAbort, { once: true });
    const finish = (outcome: ShellOutcome): void => {
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", onAbort);
      resolve(outcome);
    };
    child.on("error", (error) => finish({ kind: "error", detail: describeError(error) }));
    child.on("close", (code, signal) => {
      if (stopped) return finish(stopped);
      if (code === 0) return finish({ kind: "ok" });
      finish({ kind: "exit", detail: code === null ? `signal ${String(signal)}` : `code ${String(code)}` });
    });
    if (options.signal?.aborted) stop("aborted");
  });
}

/** The shell may have started children of its own: signal the whole process group. */
function killGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // Already gone.
  }
}
