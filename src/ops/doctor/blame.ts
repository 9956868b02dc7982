import type { CheckResult } from "./check.ts";
import type { DoctorReport } from "./run-checks.ts";

/**
 * A fix that names a config key also says where that key's value comes from (config.json, an environment variable
 * that wins over it, a `KEY_FILE` variable, the default), so "check PLEX_LOCAL_URL" points at the place to edit.
 * `describe` answers for a top-level key (config/provenance.ts), undefined for anything else.
 */
export function withSources(report: DoctorReport, describe: (key: string) => string | undefined): DoctorReport {
  return { ...report, checks: report.checks.map((check) => withSource(check, describe)) };
}

const KEY = /\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b/g;

function withSource(check: CheckResult, describe: (key: string) => string | undefined): CheckResult {
  if (!check.fix || (check.status !== "warn" && check.status !== "error")) return check;
  const named = [...new Set(check.fix.match(KEY) ?? [])];
  const sentences = named.map(describe).filter((sentence): sentence is string => sentence !== undefined);
  return sentences.length ? { ...check, fix: `${check.fix} ${sentences.join(" ")}` } : check;
}
