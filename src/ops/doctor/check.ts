import { describeError } from "../../core/errors.ts";
import type { PlexSection } from "../../targets/plex/wire-schemas.ts";

/**
 * One finding of `autoscan doctor`: what was checked, what was found, and what to do about it. A check that cannot run
 * because an earlier one failed is `skip`ped with the reason, so one broken thing reads as one error, not a cascade.
 * The JSON form (`--json`) is this shape, with `fix: null` when there is nothing to do.
 *
 * Doctor runs a list of check families in order; each adds its findings and may leave facts for the ones after it
 * (Plex's library folders, which the mapping checks read). A family that throws is reported as one error and the
 * others still run.
 */
export type CheckStatus = "ok" | "warn" | "error" | "skip";

export interface CheckResult {
  /** Stable, for scripts: `plex.token`, `mapping:/data/Movies/`, `disk:1:/data/Movies` … */
  readonly id: string;
  readonly status: CheckStatus;
  /** Short name shown in the first column (`Plex token`). */
  readonly title: string;
  /** What was found, one sentence. */
  readonly detail: string;
  /** What to do; absent when nothing needs doing. */
  readonly fix?: string;
}

export const ok = (id: string, title: string, detail: string): CheckResult => ({ id, status: "ok", title, detail });
export const warn = (id: string, title: string, detail: string, fix: string): CheckResult => ({ id, status: "warn", title, detail, fix });
export const fail = (id: string, title: string, detail: string, fix: string): CheckResult => ({ id, status: "error", title, detail, fix });

export const skip = (id: string, title: string, reason: string): CheckResult => ({ id, status: "skip", title, detail: reason });

/** A family's steps after `failed` (`steps`: id → title, in order), each skipped for `reason`. */
export function skipAfter(steps: Readonly<Record<string, string>>, failed: string, reason: string): CheckResult[] {
  const ids = Object.keys(steps);
  return ids.slice(ids.indexOf(failed) + 1).map((id) => skip(id, steps[id] ?? id, reason));
}

/** A Plex section as doctor reads it: its folders (`locations`) as Plex sees them. */
export type DoctorSection = Pick<PlexSection, "id" | "title" | "locations">;

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
