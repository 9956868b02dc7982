import type { Logger } from "../../core/logger.ts";
import type { HookContext } from "./run-command.ts";
import type { WorkItem } from "./dispatch-port.ts";

/**
 * Runs the before/after commands once per dispatch round of a folder, however many targets scan it: the before
 * command when the first target starts on the folder (the others wait for it), the after command when the last one
 * finishes, whatever the outcome.
 */
export interface CommandHooks {
  readonly before?: string;
  readonly after?: string;
  readonly timeoutMs: number;
  /** The shell (default `/bin/sh`), replaceable in tests. */
  readonly shell?: string;
  /** The environment the commands run in (autoscan's own; the composition root passes it). */
  readonly baseEnv?: Readonly<Record<string, string | undefined>>;
}

export interface ScanRoundCommands {
  enter(item: WorkItem): Promise<void>;
  leave(item: WorkItem): Promise<void>;
  /** New commands (a config reload), for the rounds that start from now on. */
  setCommands(commands: CommandHooks | undefined): void;
}

interface Round {
  inside: number;
  readonly before: Promise<void>;
}

export function createScanRoundCommands(options: {
  readonly commands: CommandHooks | undefined;
  readonly log: Logger;
  readonly signal: AbortSignal;
}): ScanRoundCommands {
  const rounds = new Map<number, Round>();
  let { commands } = options;
  const run = async (command: string | undefined, stage: "before" | "after", item: WorkItem): Promise<void> => {
    if (!commands || !command || command.trim().length === 0 || options.signal.aborted) return;
    // The child-process machinery is loaded with the first command that runs, not by every start.
    const { runCommandHook } = await import("./run-command.ts");
    await runCommandHook(command, stage, contextOf(item), {
      timeoutMs: commands.timeoutMs,
      log: options.log,
      signal: options.signal,
      ...(commands.shell ? { shell: commands.shell } : {}),
      ...(commands.baseEnv ? { baseEnv: commands.baseEnv } : {}),
    });
  };

  return {
    setCommands(next) {
      commands = next;
    },
    enter(item) {
      const round = rounds.get(item.id);
      if (round) {
        round.inside++;
        return round.before;
      }
      const before = run(commands?.before, "before", item);
      rounds.set(item.id, { inside: 1, before });
      return before;
    },
    async leave(item) {
      const round = rounds.get(item.id);
      if (!round || --round.inside > 0) return;
      rounds.delete(item.id);
      await run(commands?.after, "after", item);
    },
  };
}

function contextOf(item: WorkItem): HookContext {
  return {
    folder: item.scanFolder ?? item.folder,
    files: item.files,
    sources: item.requests.map((request) => request.source),
  };
}
