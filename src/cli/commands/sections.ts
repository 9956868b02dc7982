import { ConfigError, TargetAuthError, TargetUnavailableError, describeError } from "../../core/errors.ts";
import type { PlexSection } from "../../plex/sections.ts";
import { booleanFlag, type Command } from "../command.ts";
import { loadRuntime } from "../runtime.ts";
import { plexClientFromConfig } from "../wiring/plex.ts";

/**
 * `autoscan sections`: the Plex library sections and their folders, from Plex's API (plex_autoscan's `sections` and
 * `sections+` in one). Users check here which section a path will go to. `--json` for scripts.
 */
export const sectionsCommand: Command = {
  name: "sections",
  summary: "List Plex's library sections and their folders (--json for scripts)",
  usage: "autoscan sections [--json] [--config PATH]",
  description:
    "Asks Plex at PLEX_LOCAL_URL with PLEX_TOKEN. Exits 1 when Plex cannot be reached or rejects the token, " +
    "2 when the config is wrong.",
  options: { json: { type: "boolean" } },
  optionHelp: { json: "print the sections as JSON (id, title, type, locations) on stdout" },
  async run(input) {
    const runtime = await loadRuntime(input);
    if ("exitCode" in runtime) return runtime.exitCode;
    const { config } = runtime;
    const { stdout, stderr } = input.io;
    if (config.PLEX_TOKEN === "") {
      throw new ConfigError("PLEX_TOKEN is empty", [
        `PLEX_TOKEN: set it in ${runtime.settings.configPath} (autoscan sections asks Plex's API at ${config.PLEX_LOCAL_URL})`,
      ]);
    }
    let sections: PlexSection[];
    try {
      sections = await plexClientFromConfig(config).listSections(input.io.shutdownSignal);
    } catch (error) {
      stderr.write(`autoscan sections: ${explain(error)}\n`);
      return 1;
    } finally {
      runtime.logs.close();
    }
    if (booleanFlag(input.values, "json")) {
      const out = sections.map(({ id, title, type, locations }) => ({ id, title, type, locations }));
      stdout.write(`${JSON.stringify(out, null, 2)}\n`);
    } else {
      stdout.write(renderSections(sections));
    }
    return 0;
  },
};

/** plex_autoscan's `  1: Movies`, then each folder with a trailing `/` (its `sections+`). */
export function renderSections(sections: readonly PlexSection[]): string {
  if (sections.length === 0) return "Plex Sections:\n==============\n  (none: add a library in Plex first)\n";
  const lines = ["Plex Sections:", "=============="];
  for (const section of sections) {
    lines.push(`  ${section.id}: ${section.title}`);
    for (const location of section.locations) lines.push(`      ${location.endsWith("/") ? location : `${location}/`}`);
  }
  return `${lines.join("\n")}\n`;
}

function explain(error: unknown): string {
  if (error instanceof TargetAuthError) return `${error.message}.`;
  if (error instanceof TargetUnavailableError) {
    return `${error.message}. Is Plex running, and is PLEX_LOCAL_URL right?`;
  }
  return describeError(error);
}
