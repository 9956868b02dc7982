import { ConfigError } from "../../core/errors.ts";
import { RCLONE_SHARED_CLIENT_ID } from "../../rclone/obscure.ts";
import { loadRcloneRemote, type RemoteCheck } from "../../rclone/remote.ts";
import { stringFlag, type CommandSpec, type CommandInput } from "../command.ts";
import { loadRuntime } from "../runtime.ts";

/**
 * `autoscan rclone check [--config RCLONE_CONF] [--remote NAME]`: validates the rclone `drive` remote the monitor
 * would borrow, and prints every problem. Here `--config` is rclone's flag name: the rclone.conf to read. Without
 * flags the values come from CLOUD.RCLONE_CONFIG and CLOUD.RCLONE_REMOTE of autoscan's config (found through
 * AUTOSCAN_CONFIG or the default place). Exit 0 when the remote is usable, 1 when not, 2 when nothing names one.
 */
export const rcloneCheckCommand: CommandSpec = {
  usage: "autoscan rclone check [--config RCLONE_CONF] [--remote NAME]",
  description:
    "Reads rclone.conf (never writes it) and validates the remote: type = drive, scope, the token JSON " +
    "(access_token, token_type Bearer, refresh_token, expiry with an offset), team_drive, root_folder_id, " +
    "service_account_file. For this command --config names the rclone.conf, as in rclone itself.",
  options: { remote: { type: "string" } },
  optionHelp: {
    config: "PATH  the rclone.conf to check (default CLOUD.RCLONE_CONFIG)",
    remote: "NAME  the remote to check (default CLOUD.RCLONE_REMOTE)",
  },
  async run(input) {
    let configPath = stringFlag(input.values, "config");
    let remote = stringFlag(input.values, "remote");
    if (configPath === undefined || remote === undefined) {
      const fromConfig = await readCloudSettings(input);
      if (typeof fromConfig === "number") return fromConfig;
      configPath ??= fromConfig.configPath;
      remote ??= fromConfig.remote;
    }
    if (!configPath || !remote) {
      throw new ConfigError("No rclone remote to check", [
        "pass --config PATH and --remote NAME, or set CLOUD.RCLONE_CONFIG and CLOUD.RCLONE_REMOTE in autoscan's config",
      ]);
    }
    const check = await loadRcloneRemote(configPath, remote);
    input.io.stdout.write(renderCheck(remote, check));
    return check.remote ? 0 : 1;
  },
};

async function readCloudSettings(input: CommandInput): Promise<{ configPath: string; remote: string } | number> {
  // `--config` belongs to rclone here: autoscan's own config comes from the environment or the default place.
  const { config: _rcloneConfig, ...values } = input.values;
  const runtime = await loadRuntime({ ...input, values });
  if ("exitCode" in runtime) return runtime.exitCode;
  runtime.logs.close();
  return { configPath: runtime.config.CLOUD.RCLONE_CONFIG, remote: runtime.config.CLOUD.RCLONE_REMOTE };
}

export function renderCheck(remoteName: string, check: RemoteCheck): string {
  const lines = [`rclone remote '${remoteName.replace(/:$/, "")}' in ${check.configPath}:`];
  const remote = check.remote;
  if (remote) {
    const client = remote.clientId ? remote.clientId : `rclone's shared client (${RCLONE_SHARED_CLIENT_ID})`;
    lines.push(`  client:      ${remote.serviceAccountFile || remote.serviceAccountCredentials ? "service account" : client}`);
    lines.push(`  scope:       ${remote.scope.replaceAll("https://www.googleapis.com/auth/", "")}`);
    if (remote.token) {
      lines.push(`  token:       refresh token present; access token ${remote.token.expiryDate > Date.now() ? "valid until" : "expired at"} ${new Date(remote.token.expiryDate).toISOString()} (autoscan refreshes it)`);
    }
    if (remote.serviceAccountFile) lines.push(`  service account file: ${remote.serviceAccountFile}`);
    lines.push(`  shared drive: ${remote.teamDrive ?? "(none: My Drive)"}`);
    if (remote.rootFolderId) lines.push(`  root_folder_id: ${remote.rootFolderId} (drive paths stay relative to the drive's root)`);
  }
  if (check.problems.length) lines.push("Problems:", ...check.problems.map((p) => `  - ${p}`));
  if (check.warnings.length) lines.push("Warnings:", ...check.warnings.map((w) => `  - ${w}`));
  lines.push(remote ? "OK: the Google Drive monitor can use this remote." : "NOT USABLE: fix the problems above.");
  return `${lines.join("\n")}\n`;
}
