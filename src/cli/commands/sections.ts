import { systemClock } from "../../core/clock.ts";
import { TargetAuthError, TargetUnavailableError, describeError } from "../../core/errors.ts";
import { listScannerSections } from "../../docker/scanner-sections.ts";
import type { PlexSection } from "../../targets/plex/sections.ts";
import { booleanFlag, type CommandSpec, type CommandIO } from "../command.ts";
import { loadRuntime, type Runtime } from "../runtime.ts";
import { createScannerFromConfig, plexClientFromConfig } from "../../targets/plex/scanner-from-config.ts";

/**
 * `autoscan sections`: the Plex library sections and their folders, from Plex's API (plex_autoscan's `sections` and
 * `sections+` in one). Users check here which section a path will go to. `--json` for scripts.
 */
export const sectionsCommand: CommandSpec = {
  usage: "autoscan sections [--json] [--config PATH]",
  description:
    "Asks Plex at PLEX_LOCAL_URL with PLEX_TOKEN; without a token, runs Plex Media Scanner --list (in the Plex " +
    "container when USE_DOCKER is on). Exits 1 when Plex cannot be reached or rejects the token, 2 when the config is wrong.",
  options: { json: { type: "boolean" } },
  optionHelp: { json: "print the sections as JSON (id, title, type, locations) on stdout" },
  async run(input) {
    const runtime = await loadRuntime(input);
    if ("exitCode" in runtime) return runtime.exitCode;
    const { config } = runtime;
    const { stdout, stderr } = input.io;
    let sections: readonly SectionView[];
    try {
      sections =
        config.PLEX_TOKEN === ""
          ? await sectionsFromScanner(runtime, input.io.stderr)
          : await plexClientFromConfig(config).listSections(input.io.shutdownSignal);
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

type SectionView = Pick<PlexSection, "id" | "title" | "type" | "locations">;

/**
 * No token: ask Plex's own scanner (plex_autoscan's `sections` ran `Plex Media Scanner --list`), through the Docker
 * exec API when USE_DOCKER is on, else on this host. Folders come from the library database when `Plex SQLite` can read it.
 */
async function sectionsFromScanner(runtime: Runtime, stderr: CommandIO["stderr"]): Promise<SectionView[]> {
  const { config, settings, log } = runtime;
  stderr.write(
    `PLEX_TOKEN is empty: asking Plex Media Scanner ${config.USE_DOCKER ? `in container '${config.DOCKER_NAME}'` : "on this host"} instead.\n`,
  );
  const { scanner } = createScannerFromConfig({ config, dockerHost: settings.dockerHost, clock: systemClock, log });
  const listed = await listScannerSections(scanner);
  if (listed.source === "list") stderr.write("(folders are not shown: set PLEX_TOKEN to see them)\n");
  return listed.sections;
}

/** plex_autoscan's `  1: Movies`, then each folder with a trailing `/` (its `sections+`). */
export function renderSections(sections: readonly SectionView[]): string {
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
