import { resolveSettings } from "../../config/settings.ts";
import { createLogger } from "../../logging/create-logger.ts";
import { renderReport, reportJson } from "../../ops/doctor/report.ts";
import { booleanFlag, type CommandSpec } from "../command.ts";
import { isInContainer } from "../in-container.ts";
import { loadDoctorConfig, runDoctor } from "../../ops/doctor/doctor.ts";

/**
 * `autoscan doctor`: every check it can run — the config, the data directory, Plex, the path mappings against Plex's
 * libraries and autoscan's own disk, the scanner's container, Google Drive, the server's port — one line each with
 * the fix. Its output is the result, so it goes to stdout; exit 0 when nothing is an error, 1 otherwise.
 */
export const doctorCommand: CommandSpec = {
  usage: "autoscan doctor [--json] [--config PATH]",
  description:
    "Prints one line per check: ✓ fine, ! warning, ✗ error, - skipped (because an earlier check failed), each with " +
    "what to do, then a summary. Exits 0 when no check is an error, 1 otherwise. Never prints PLEX_TOKEN or SERVER_PASS.",
  options: { json: { type: "boolean" } },
  optionHelp: { json: "print {ok, checks:[{id, status, title, detail, fix}]} as JSON on stdout" },
  async run({ values, io }) {
    const settings = resolveSettings(values, io.env, io.installDir);
    const loaded = await loadDoctorConfig(settings, io.env);
    const config = loaded.config;
    // Quiet: the report is the output. Log lines (a hung mount …) only with an explicit --loglevel.
    const logs = createLogger({
      level: settings.origin.logLevel === "default" ? "silent" : settings.logLevel,
      format: settings.logFormat,
      stream: "stderr",
      secrets: config ? [config.PLEX_TOKEN, config.SERVER_PASS, config.SERVER_AUTH_PASSWORD, config.CLOUD.CLIENT_SECRET] : [],
    });
    try {
      const report = await runDoctor(
        { settings, env: io.env, loaded, log: logs.log, inContainer: isInContainer() },
        io.shutdownSignal,
      );
      io.stdout.write(booleanFlag(values, "json") ? reportJson(report) : renderReport(report));
      return report.ok ? 0 : 1;
    } finally {
      logs.close();
    }
  },
};
