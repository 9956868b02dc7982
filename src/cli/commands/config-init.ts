import { existsSync } from "node:fs";
import { describeFirstConfig, writeFirstConfig } from "../../config/first-config.ts";
import { resolveSettings } from "../../config/settings.ts";
import { isInContainer } from "../../core/in-container.ts";
import type { CommandSpec } from "../command.ts";

export const configInitCommand: CommandSpec = {
  usage: "autoscan config init [--config PATH]",
  description:
    "Writes a short config: PLEX_LOCAL_URL, PLEX_TOKEN, a fresh SERVER_PASS and SERVER_PATH_MAPPINGS (a key an environment " +
    "variable sets is left out); every other key keeps its default. Refuses to overwrite an existing file; use " +
    "'autoscan config upgrade' to add new keys to one.",
  async run({ values, io }) {
    const settings = resolveSettings(values, io.env, io.installDir);
    if (existsSync(settings.configPath)) {
      io.stderr.write(`A config file already exists at ${settings.configPath}; it was left as it is.\n`);
      io.stderr.write("Run 'autoscan config upgrade' to add keys that are new since it was written.\n");
      return 1;
    }
    const first = await writeFirstConfig(settings.configPath, io.env);
    io.stderr.write(describeFirstConfig(settings.configPath, first, { inContainer: isInContainer(), firstStart: false }));
    io.stdout.write(`${settings.configPath}\n`);
    return 0;
  },
};
