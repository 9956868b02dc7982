#!/usr/bin/env node
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { readEnvironment } from "../config/environment.ts";
import { ConfigError, UsageError, describeError } from "../core/errors.ts";
import { describeAccessDenied } from "./access-denied.ts";
import type { Command, CommandIO } from "./command.ts";
import { COMMAND_TABLE, loadCommand, type CommandEntry } from "./commands/index.ts";
import { COMMON_FLAGS } from "./common-flags.ts";
import { renderCommandHelp, renderMainHelp } from "./help.ts";
import { INSTALL_DIR, readVersion } from "./version.ts";


/** Finds the command whose words start argv (`config check` before `config`). */
export function findCommand(commands: readonly CommandEntry[], argv: readonly string[]): { entry: CommandEntry; rest: string[] } | undefined {
  const sorted = [...commands].sort((a, b) => b.name.split(" ").length - a.name.split(" ").length);
  for (const entry of sorted) {
    const words = entry.name.split(" ");
    if (words.every((word, i) => argv[i] === word)) return { entry, rest: argv.slice(words.length) };
  }
  return undefined;
}

export async function main(argv: readonly string[], io: CommandIO): Promise<number> {
  const version = readVersion();
  const first = argv[0];
  if (first === "--version" || first === "-V" || first === "-v" || first === "version") {
    io.stdout.write(`${version}\n`);
    return 0;
  }
  const commands = COMMAND_TABLE;
  // Help someone asked for is the result (stdout, exit 0: `autoscan --help | less`); a bare `autoscan` is bad usage.
  if (first === undefined) {
    io.stderr.write(renderMainHelp(commands, version));
    return 2;
  }
  if (first === "--help" || first === "-h" || first === "help") return printHelp(commands, argv.slice(1), version, io);
  const found = findCommand(commands, argv);
  if (!found) {
    io.stderr.write(`autoscan: unknown command '${argv.join(" ")}'.\n\n${renderMainHelp(commands, version)}`);
    return 2;
  }
  const { rest } = found;
  const command = await loadCommand(found.entry);
  try {
    const { values, positionals } = parseArgs({
      args: rest,
      options: { ...COMMON_FLAGS, ...command.options },
      allowPositionals: command.allowPositionals ?? false,
      strict: true,
    });
    if (values.help) {
      io.stdout.write(renderCommandHelp(command));
      return 0;
    }
    return await command.run({ values, positionals, io });
  } catch (error) {
    return reportError(error, command, io);
  }
}

/** `autoscan help` → the command list; `autoscan help config check` → that command's help. */
async function printHelp(commands: readonly CommandEntry[], words: readonly string[], version: string, io: CommandIO): Promise<number> {
  if (words.length === 0) {
    io.stdout.write(renderMainHelp(commands, version));
    return 0;
  }
  const found = findCommand(commands, words);
  if (!found || found.rest.length > 0) {
    io.stderr.write(`autoscan: unknown command '${words.join(" ")}'.\n\n${renderMainHelp(commands, version)}`);
    return 2;
  }
  io.stdout.write(renderCommandHelp(await loadCommand(found.entry)));
  return 0;
}

function reportError(error: unknown, command: Command, io: CommandIO): number {
  const denied = describeAccessDenied(error instanceof ConfigError ? error.cause : error);
  if (denied !== undefined) {
    io.stderr.write(`autoscan ${command.name}: ${denied}\n`);
    return error instanceof ConfigError ? 2 : 1;
  }
  if (error instanceof ConfigError) {
    io.stderr.write(`autoscan: ${error.message}\n${error.problems.map((p) => `  - ${p}\n`).join("")}`);
    return 2;
  }
  const code = (error as { code?: string }).code ?? "";
  if (error instanceof UsageError || code.startsWith("ERR_PARSE_ARGS")) {
    const message = describeError(error).replace(/\. To specify a positional argument.*$/s, ".");
    io.stderr.write(`autoscan ${command.name}: ${message}\n\nUsage: ${command.usage}\nRun 'autoscan ${command.name} --help' for details.\n`);
    return 2;
  }
  io.stderr.write(`autoscan ${command.name}: ${describeError(error)}\n`);
  return 1;
}

function createIO(): CommandIO {
  const controller = new AbortController();
  let signals = 0;
  const onSignal = (signal: NodeJS.Signals): void => {
    signals += 1;
    // A second Ctrl-C means "now".
    if (signals > 1) process.exit(signal === "SIGINT" ? 130 : 143);
    controller.abort(signal);
  };
  process.on("SIGTERM", onSignal);
  process.on("SIGINT", onSignal);
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    stdin: process.stdin,
    env: readEnvironment(),
    installDir: INSTALL_DIR,
    shutdownSignal: controller.signal,
  };
}

const isEntryPoint = process.argv[1] !== undefined && fileURLToPath(import.meta.url) === (await realpath(process.argv[1]));

async function realpath(path: string): Promise<string> {
  const { realpath: resolveReal } = await import("node:fs/promises");
  return resolveReal(path).catch(() => path);
}

if (isEntryPoint) {
  const code = await main(process.argv.slice(2), createIO());
  // The command is done (the server returns after its graceful shutdown): do not wait for idle sockets or timers.
  setImmediate(() => process.exit(code));
}
