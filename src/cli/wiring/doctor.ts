import type { Logger } from "../../core/logger.ts";
import { describeError } from "../../core/errors.ts";
import { runDoctor } from "../../ops/doctor/doctor.ts";
import type { Runtime } from "../runtime.ts";
import { STAT_TIMEOUT_MS, sharedDiskProbe } from "../../paths/shared-disk-probe.ts";

/**
 * The server's run of doctor's checks (src/ops/doctor/doctor.ts), at start: every `!` and `✗` logged once as a
 * warning (`Plex: Nothing listens at plex:32400 (connection refused). Fix: Start Plex, …`); the server starts whatever
 * they say. Fire and forget: never throws, never delays the start.
 */
export async function runStartupChecks(runtime: Pick<Runtime, "config" | "settings" | "log">, log: Logger): Promise<void> {
  const doctorLog = log.child({ component: "DOCTOR" });
  try {
    const loaded = { config: runtime.config, outcome: { kind: "loaded", path: runtime.settings.configPath, warnings: [] } } as const;
    const stat = sharedDiskProbe(runtime.log).stat;
    const report = await runDoctor({ settings: runtime.settings, env: {}, loaded, log: runtime.log, mode: "startup", stat, diskTimeoutMs: STAT_TIMEOUT_MS });
    const problems = report.checks.filter((check) => check.status === "warn" || check.status === "error");
    for (const check of problems) doctorLog.warn({ check: check.id }, `${check.title}: ${check.detail}${check.fix ? ` Fix: ${check.fix}` : ""}`);
    if (problems.length > 0) doctorLog.warn(`Start-up checks: ${problems.length} problem(s) above; 'autoscan doctor' shows all checks.`);
  } catch (error) {
    doctorLog.warn({ err: error }, `Start-up checks could not run: ${describeError(error)}`);
  }
}
