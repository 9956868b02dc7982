import { resolveSettings } from "../../config/settings.ts";
import { upgradeConfigFile, type UpgradeResult } from "../../config/upgrade.ts";
import { booleanFlag, type CommandSpec } from "../command.ts";

/**
 * `autoscan config upgrade [--dry-run]`: one line per change on stdout (each renamed, dropped, changed or added key,
 * with why), then the features the file could switch on; on stderr, what became of the file.
 */
export const configUpgradeCommand: CommandSpec = {
  usage: "autoscan config upgrade [--dry-run] [--config PATH]",
  description:
    "Renames plex_autoscan's legacy keys to their new names with their values, drops the obsolete ones (each named " +
    "with why), and adds a random SERVER_PASS to a file without one. Keys your file leaves out keep their defaults " +
    "and are not written. Lists the sections of autoscan's own features the file does not have yet (never written: " +
    "each needs your values). A backup of the file as it was is kept as config.json.bak. What it cannot fix (an " +
    "unknown key, a wrong type) is listed on stderr. Exit codes: 0 done (or nothing to do); 2 the file is not JSON, " +
    "or still has a problem to fix by hand.",
  options: { "dry-run": { type: "boolean" } },
  optionHelp: { "dry-run": "say what would change; write nothing" },
  async run({ values, io }) {
    const settings = resolveSettings(values, io.env, io.installDir);
    const dryRun = booleanFlag(values, "dry-run");
    const result = await upgradeConfigFile(settings.configPath, { dryRun, env: io.env });
    const changes = describeChanges(result, dryRun);
    const blocks = [[...changes, ...describeDefaults(result)], describeNewSections(result)].filter((block) => block.length > 0);
    io.stdout.write(blocks.map((block) => block.map((line) => `${line}\n`).join("")).join("\n"));
    const path = settings.configPath;
    if (changes.length === 0) io.stderr.write(`${path} is up to date; nothing to change.\n`);
    else if (dryRun) io.stderr.write(`Nothing was written (--dry-run). Run 'autoscan config upgrade' to apply it to ${path}.\n`);
    else io.stderr.write(`Your config was upgraded: ${path} (backup: ${result.backup ?? ""}).\n`);
    if (result.problems.length > 0) {
      const count = result.problems.length === 1 ? "1 problem" : `${String(result.problems.length)} problems`;
      io.stderr.write(`The file still has ${count} to fix by hand (an upgrade keeps what it does not know; 'autoscan config check' lists them too):\n`);
      for (const problem of result.problems) io.stderr.write(`  - ${problem}\n`);
    }
    if (result.written) {
      const then = result.problems.length > 0 ? "Once fixed, restart" : "Restart";
      io.stderr.write(`${then} autoscan to apply it (docker restart autoscan, or systemctl restart autoscan).\n`);
    }
    // Like `config check`: a file the server would refuse is exit 2, whatever the upgrade did to it.
    return result.problems.length > 0 ? 2 : 0;
  },
};

function describeChanges(result: UpgradeResult, dryRun: boolean): string[] {
  const verb = (done: string, would: string): string => (dryRun ? would : done);
  return [
    ...result.renamed.map((rename) => `${verb("Renamed", "Would rename")} ${rename} (value kept)`),
    ...result.dropped.map(({ key, why }) => `${verb("Dropped", "Would drop")} ${key}: ${why}`),
    ...result.changed.map((change) => `${verb("Changed", "Would change")} ${change}`),
    ...result.added.map((added) => `${verb("Added", "Would add")} ${added}`),
  ];
}

/** One line, not one per key: the defaults are the point of leaving keys out. */
function describeDefaults(result: UpgradeResult): string[] {
  const count = result.defaulted.length;
  if (count === 0) return [];
  const keys = count === 1 ? "1 other key keeps its default" : `${String(count)} other keys keep their defaults`;
  return [`${keys} (not in your file, not written): 'autoscan config show' lists them, docs/configuration.md says what each does.`];
}

function describeNewSections(result: UpgradeResult): string[] {
  if (result.newSections.length === 0) return [];
  const width = Math.max(...result.newSections.map((section) => section.key.length));
  return [
    "Sections new in autoscan that your file could add (shown, never written: each needs your own values):",
    ...result.newSections.map((section) => `  ${section.key.padEnd(width)}  ${section.what} (${section.docs})`),
  ];
}
