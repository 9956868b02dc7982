import { resolveSettings } from "../../config/settings.ts";
import { createLogger } from "../../logging/create-logger.ts";
import type { CheckStatus, DoctorReport } from "../../ops/doctor/check.ts";
import { loadDoctorConfig, runDoctor } from "../../ops/doctor/doctor.ts";
import { booleanFlag, type CommandSpec } from "../command.ts";

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
      const report = await runDoctor({ settings, env: io.env, loaded, log: logs.log }, io.shutdownSignal);
      io.stdout.write(booleanFlag(values, "json") ? reportJson(report) : renderReport(report));
      return report.ok ? 0 : 1;
    } finally {
      logs.close();
    }
  },
};

const MARKS: Readonly<Record<CheckStatus, string>> = { ok: "✓", warn: "!", error: "✗", skip: "-" };

/**
 * One line per check (`✓`, `!` warning, `✗` error, `-` skipped), the title in an aligned column, the finding and the
 * fix; then the summary: `2 errors, 1 warning (9 ok, 1 skipped)`.
 */
function renderReport(report: DoctorReport): string {
  const width = Math.min(28, Math.max(0, ...report.checks.map((check) => check.title.length)));
  const lines = report.checks.map((check) => `${MARKS[check.status]} ${check.title.padEnd(width)}  ${check.detail}${check.fix ? ` Fix: ${check.fix}` : ""}`);
  const count = (status: CheckStatus): number => report.checks.filter((check) => check.status === status).length;
  const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? "" : "s"}`;
  const skipped = count("skip");
  const summary = `${plural(count("error"), "error")}, ${plural(count("warn"), "warning")} (${count("ok")} ok${skipped ? `, ${skipped} skipped` : ""})`;
  return `${lines.join("\n")}${lines.length ? "\n\n" : ""}${summary}\n`;
}

function reportJson(report: DoctorReport): string {
  const checks = report.checks.map(({ id, status, title, detail, fix }) => ({ id, status, title, detail, fix: fix ?? null }));
  return `${JSON.stringify({ ok: report.ok, checks }, null, 2)}\n`;
}
