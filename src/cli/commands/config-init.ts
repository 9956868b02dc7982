import { existsSync } from "node:fs";
import { writeDefaultConfig } from "../../config/load.ts";
import { resolveSettings } from "../../config/settings.ts";
import type { CommandSpec } from "../command.ts";

export const configInitCommand: CommandSpec = {
  usage: "autoscan config init [--config PATH]",
  description: "Refuses to overwrite an existing file; use 'autoscan config upgrade' to add new keys to one.",
  async run({ values, io }) {
    const settings = resolveSettings(values, io.env, io.installDir);
    if (existsSync(settings.configPath)) {
      io.stderr.write(`A config file already exists at ${settings.configPath}; it was left as it is.\n`);
      io.stderr.write("Run 'autoscan config upgrade' to add keys that are new since it was written.\n");
      return 1;
    }
    await writeDefaultConfig(settings.configPath);
    io.stderr.write(`Wrote a default config with a fresh SERVER_PASS. Edit PLEX_LOCAL_URL, PLEX_TOKEN and SERVER_PATH_MAPPINGS:\n`);
    io.stdout.write(`${settings.configPath}\n`);
    return 0;
  },
};
