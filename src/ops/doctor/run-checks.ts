import { describeError } from "../../core/errors.ts";
import { fail, type CheckResult } from "./check.ts";

/**
 * `autoscan doctor` runs a list of check families in order; each adds its findings and may leave facts for the ones
 * after it (Plex's library folders, which the mapping checks read). A family that throws is reported as one error
 * and the others still run.
 *
 * Extension point: a further scan target (Jellyfin, Emby, another autoscan) is one more family — reachable, key
 * accepted, libraries matched — appended to the list the wiring builds (src/cli/wiring/doctor.ts); nothing here changes.
 */
export interface DoctorSection {
  readonly id: string;
  readonly title: string;
  /** The section's folders as the media server sees them. */
  readonly locations: readonly string[];
}

/** Facts found by earlier families, for later ones. */
export interface Findings {
  /** Plex's sections, once Plex answered with an accepted token. */
  sections?: readonly DoctorSection[];
  /** Why `sections` is unknown, for the checks that need it. */
  sectionsUnknown?: string;
}

export interface CheckFamily {
  readonly name: string;
  run(findings: Findings, signal: AbortSignal): Promise<readonly CheckResult[]>;
}

export interface DoctorReport {
  /** No check is an error. */
  readonly ok: boolean;
  readonly checks: readonly CheckResult[];
}

export async function runChecks(families: readonly CheckFamily[], signal: AbortSignal = new AbortController().signal): Promise<DoctorReport> {
  const findings: Findings = {};
  const checks: CheckResult[] = [];
  for (const family of families) {
    if (signal.aborted) break;
    try {
      checks.push(...(await family.run(findings, signal)));
    } catch (error) {
      checks.push(fail(family.name, family.name, `This check could not run: ${describeError(error)}`, "Report this as a bug if the message does not say what to do."));
    }
  }
  return { ok: checks.every((check) => check.status !== "error"), checks };
}
