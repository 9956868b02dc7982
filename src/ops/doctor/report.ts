import type { CheckResult, CheckStatus, DoctorReport } from "./check.ts";

/**
 * The doctor's output: one line per check (`✓`, `!` warning, `✗` error, `-` skipped), the title in an aligned column,
 * then the finding and the fix; last a summary line. `--json` prints `{ok, checks:[{id, status, title, detail, fix}]}`.
 */
const MARKS: Readonly<Record<CheckStatus, string>> = { ok: "✓", warn: "!", error: "✗", skip: "-" };

export function renderReport(report: DoctorReport): string {
  const width = Math.min(28, Math.max(0, ...report.checks.map((check) => check.title.length)));
  const lines = report.checks.map((check) => renderLine(check, width));
  return `${lines.join("\n")}${lines.length ? "\n\n" : ""}${summarize(report)}\n`;
}

export function renderLine(check: CheckResult, width: number): string {
  const fix = check.fix ? ` Fix: ${check.fix}` : "";
  return `${MARKS[check.status]} ${check.title.padEnd(width)}  ${check.detail}${fix}`;
}

/** `2 errors, 1 warning (9 ok, 1 skipped)` */
export function summarize(report: DoctorReport): string {
  const count = (status: CheckStatus): number => report.checks.filter((check) => check.status === status).length;
  const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? "" : "s"}`;
  const skipped = count("skip");
  return `${plural(count("error"), "error")}, ${plural(count("warn"), "warning")} (${count("ok")} ok${skipped ? `, ${skipped} skipped` : ""})`;
}

export function reportJson(report: DoctorReport): string {
  const checks = report.checks.map(({ id, status, title, detail, fix }) => ({ id, status, title, detail, fix: fix ?? null }));
  return `${JSON.stringify({ ok: report.ok, checks }, null, 2)}\n`;
}
