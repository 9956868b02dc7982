import { resolveSettings } from "../../config/settings.ts";
import { upgradeConfigFile } from "../../config/upgrade.ts";
import type { CommandSpec } from "../command.ts";

export const configUpgradeCommand: CommandSpec = {
  usage: "autoscan config upgrade [--config PATH]",
  description:
    "Legacy plex_autoscan keys are renamed to their new names with their values. A backup is kept as config.json.bak.",
  async run({ values, io }) {
    const settings = resolveSettings(values, io.env, io.installDir);
    const result = await upgradeConfigFile(settings.configPath);
    if (result.added.length === 0 && result.renamed.length === 0 && result.removed.length === 0) {
      io.stderr.write(`${settings.configPath} is up to date; nothing was changed.\n`);
      return 0;
    }
    for (const rename of result.renamed) io.stdout.write(`Renamed ${rename}\n`);
    for (const added of result.added) io.stdout.write(`Added ${added}\n`);
    for (const removed of result.removed) io.stdout.write(`Removed: ${removed}\n`);
    io.stderr.write(`Your config was upgraded: ${settings.configPath} (backup: ${result.backup}).\n`);
    io.stderr.write("Restart autoscan to apply it (docker restart autoscan, or systemctl restart autoscan).\n");
    return 0;
  },
};
