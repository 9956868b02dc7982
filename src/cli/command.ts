import type { ParseArgsOptionsConfig } from "node:util";

/**
 * One CLI command. `autoscan <name> [flags]`; multi-word names (`config check`) are matched word by word. The name and
 * summary live in the command table (`commands/index.ts`), which loads a command's module only when it runs.
 * Human output goes to `io.stderr`, results (what a script reads) to `io.stdout`. `run` returns the exit code:
 * 0 success, 1 the operation failed, 2 bad usage or a bad config.
 */
export interface Command {
  readonly name: string;
  /** One line for `autoscan --help`. */
  readonly summary: string;
  /** `autoscan sections [--json]` */
  readonly usage: string;
  /** Optional paragraphs printed under the usage by `--help`. */
  readonly description?: string;
  /** The command's own flags (node:util parseArgs form); the common settings flags are added for every command. */
  readonly options?: ParseArgsOptionsConfig;
  /** Help text per flag, shown by `--help`. */
  readonly optionHelp?: Readonly<Record<string, string>>;
  readonly allowPositionals?: boolean;
  run(input: CommandInput): Promise<number>;
}

/** What a command's module holds: everything but the name and summary, which the table holds. */
export type CommandSpec = Omit<Command, "name" | "summary">;

export interface CommandIO {
  readonly stdout: { write(text: string): unknown; isTTY?: boolean };
  readonly stderr: { write(text: string): unknown; isTTY?: boolean };
  readonly stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  /** The process environment, read once by src/config (no other module reads the environment). */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Where autoscan is installed (the folder holding package.json): the default config lives under it. */
  readonly installDir: string;
  /** Registers cleanup to run on SIGTERM/SIGINT; returns a signal that aborts when the process is asked to stop. */
  readonly shutdownSignal: AbortSignal;
}

export type FlagValues = Readonly<Record<string, string | boolean | (string | boolean)[] | undefined>>;

export interface CommandInput {
  readonly values: FlagValues;
  readonly positionals: readonly string[];
  readonly io: CommandIO;
}

/** Reads a string flag (the last one wins when repeated). */
export function stringFlag(values: FlagValues, name: string): string | undefined {
  const value = values[name];
  if (Array.isArray(value)) {
    const last = value.at(-1);
    return typeof last === "string" ? last : undefined;
  }
  return typeof value === "string" ? value : undefined;
}

export function booleanFlag(values: FlagValues, name: string): boolean {
  return values[name] === true;
}
