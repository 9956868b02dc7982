import type { Command } from "./command.ts";
import { COMMON_FLAG_HELP } from "./common-flags.ts";

export function renderMainHelp(commands: readonly Pick<Command, "name" | "summary">[], version: string): string {
  const width = Math.max(...commands.map((c) => c.name.length));
  const lines = commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`);
  return [
    `autoscan ${version} — tells Plex exactly what to scan.`,
    "",
    "Usage: autoscan <command> [options]",
    "",
    "Commands:",
    ...lines,
    "",
    "Options for every command:",
    ...renderFlags(COMMON_FLAG_HELP),
    "  --version           print the version",
    "",
    "Run 'autoscan <command> --help' (or 'autoscan help <command>') for a command's own options.",
    "",
  ].join("\n");
}

export function renderCommandHelp(command: Command): string {
  const own = command.optionHelp && Object.keys(command.optionHelp).length ? ["Options:", ...renderFlags(command.optionHelp), ""] : [];
  return [
    `Usage: ${command.usage}`,
    "",
    command.summary,
    ...(command.description ? ["", command.description] : []),
    "",
    ...own,
    "Settings (every command):",
    ...renderFlags(COMMON_FLAG_HELP),
    "",
  ].join("\n");
}

function renderFlags(help: Readonly<Record<string, string>>): string[] {
  return Object.entries(help).map(([flag, text]) => {
    const [arg, ...rest] = text.includes("  ") ? text.split("  ") : ["", text];
    const left = `--${flag}${arg ? ` ${arg}` : ""}`;
    return `  ${left.padEnd(18)}  ${rest.join("  ")}`;
  });
}
