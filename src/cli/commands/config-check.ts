import { SERVER_PASS_MISSING, loadConfig } from "../../config/load.ts";
import type { Config, TargetConfig } from "../../config/schema.ts";
import { resolveSettings, type Settings } from "../../config/settings.ts";
import { unbuiltFeatureWarnings } from "../../config/features.ts";
import { maskDatabaseUrl } from "../../core/database-url.ts";
import { shownNotifierUrl } from "../../notify/notifier-url.ts";
import type { CommandSpec } from "../command.ts";
import { BUILT_FEATURES } from "../../config/built-features.ts";

export const configCheckCommand: CommandSpec = {
  usage: "autoscan config check [--config PATH]",
  async run({ values, io }) {
    const settings = resolveSettings(values, io.env, io.installDir);
    const loaded = await loadConfig(settings.configPath, io.env, false);
    if (loaded.kind !== "loaded") return 2;
    io.stdout.write(renderSummary(settings, loaded.config));
    // A missing SERVER_PASS is a warning, not a failure: scan, sections, authorize … run without it; only the server
    // refuses to start (and says so the same way).
    const serverPass = loaded.config.SERVER_PASS === "" ? [SERVER_PASS_MISSING] : [];
    const warnings = [...serverPass, ...loaded.warnings, ...unbuiltFeatureWarnings(loaded.config, BUILT_FEATURES)];
    for (const warning of warnings) io.stderr.write(`warning: ${warning}\n`);
    if (loaded.upgradable.length > 0) io.stderr.write("Run 'autoscan config upgrade' to rename or drop the legacy keys above ('--dry-run' shows it first).\n");
    io.stderr.write(`${settings.configPath} is valid${warnings.length ? ` (${warnings.length} warning(s))` : ""}.\n`);
    return 0;
  },
};

function renderSummary(settings: Settings, config: Config): string {
  const yes = (flag: boolean): string => (flag ? "yes" : "no");
  const mappings = Object.entries(config.SERVER_PATH_MAPPINGS).map(
    ([server, forms]) => `    ${server}  ←  ${forms.join(", ") || "(no other forms)"}`,
  );
  return [
    `Config file:     ${settings.configPath}`,
    `Data directory:  ${settings.dataDir}`,
    config.SERVER_DATABASE_URL === ""
      ? `Queue file:      ${settings.queueFile}`
      : `Queue:           PostgreSQL at ${maskDatabaseUrl(config.SERVER_DATABASE_URL)} (lease ${config.SERVER_LEASE_SECONDS} s)`,
    `Log file:        ${settings.logFile ?? "(none)"}`,
    "",
    config.SERVER_PASS === ""
      ? `Listening on:    (none: the server does not start until SERVER_PASS is set)`
      : `Listening on:    http://${config.SERVER_IP}:${config.SERVER_PORT}${config.SERVER_URL_BASE}/<SERVER_PASS>  (manual page: ${yes(config.SERVER_ALLOW_MANUAL_SCAN)})`,
    `Plex:            ${config.PLEX_LOCAL_URL}  (token set: ${yes(config.PLEX_TOKEN !== "")}, scan method: ${config.PLEX_SCAN_METHOD})`,
    `Scan delay:      ${config.SERVER_SCAN_DELAY} s, file checks: ${config.SERVER_MAX_FILE_CHECKS} × ${config.SERVER_FILE_CHECK_DELAY} s`,
    `Docker exec:     ${config.USE_DOCKER || config.PLEX_SCAN_METHOD === "scanner" ? `container '${config.DOCKER_NAME}'` : "not used"}`,
    `Google Drive:    ${config.CLOUD.ENABLED ? `enabled, polling every ${config.CLOUD.POLL_INTERVAL} s` : "disabled"}`,
    `Path mappings:   ${mappings.length ? "" : "(none: paths are used as they arrive)"}`,
    ...mappings,
    `Targets:         plex (${config.PLEX_LOCAL_URL})${Object.keys(config.TARGETS).length ? "" : ", no others"}`,
    ...Object.entries(config.TARGETS).map(([name, target]) => `    ${targetLine(name, target)}`),
    `Anchors:         ${config.SERVER_ANCHORS.length ? config.SERVER_ANCHORS.join(", ") : "(none)"}`,
    // A notifier's URL is its secret: its scheme and host only.
    `Notifiers:       ${Object.entries(config.NOTIFY).map(([name, notifier]) => `${name} (${notifier.TYPE} at ${shownNotifierUrl(notifier.URL)})`).join(", ") || "(none)"}`,
    "",
  ].join("\n");
}

function targetLine(name: string, target: TargetConfig): string {
  const auth = target.TYPE === "autoscan" ? (target.USERNAME ? "Basic auth" : "no auth") : target.TYPE === "audiobookshelf" ? "API key set" : "token set";
  const forms = Object.keys(target.PATH_MAPPINGS).length;
  const mapping = forms ? `${forms} path mapping(s)` : "same paths as Plex";
  return `${name}: ${target.TYPE} at ${target.URL} (${auth}, ${mapping}, timeout ${target.TIMEOUT} s)${target.ENABLED ? "" : "  [disabled]"}`;
}
