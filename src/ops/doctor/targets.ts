import { TargetAuthError, TargetConfigError, describeError } from "../../core/errors.ts";
import type { PathMappings } from "../../paths/mapping.ts";
import { fail, ok, skip, warn, type CheckResult } from "./check.ts";
import type { CheckFamily, Findings } from "./run-checks.ts";
import { mappingChecks, unique } from "./target-mappings.ts";
import { unreachableCheck } from "./unreachable.ts";

/**
 * The further scan targets (`TARGETS`), each as Plex is checked: does it answer (and if not, the likely cause:
 * `localhost` inside a container, a name that does not resolve, a closed port, a timeout), is the key accepted, which
 * libraries it has, and whether its `PATH_MAPPINGS` lead from the primary Plex's form into them:
 * - each mapping key (the folder as the target sees it) should lie in one of its libraries, or hold one;
 * - each of its library folders should be reached: by a mapping key, or by a primary Plex folder passed as it is.
 * A relay (another autoscan) has no libraries: it is checked for an answer and for its manual trigger taking our
 * credentials. A disabled target is one skipped line. The probes (cli/wiring/doctor-targets.ts) own the secrets:
 * nothing here sees a key.
 */
export type TargetKind = "plex" | "jellyfin" | "emby" | "autoscan";

export interface TargetLibraryFolder {
  /** The library's name. */
  readonly library: string;
  /** One of its folders, as the target sees it. */
  readonly path: string;
}

export interface TargetAnswer {
  /** What answered, when it says: `Jellyfin Server 10.11.2 ('den')`. */
  readonly server?: string;
  /** Something answered, but not as this kind of server does: what it said (`it answered 404 to GET /System/Info/Public`). */
  readonly foreign?: string;
}

export interface TargetProbe {
  /** The key in `TARGETS`. */
  readonly name: string;
  readonly kind: TargetKind;
  readonly enabled: boolean;
  /** The URL shown: scheme, host and port only (a path or userinfo may carry a secret). */
  readonly url: string;
  /** How long one call may take, for the message (the probe enforces it). */
  readonly timeoutSeconds: number;
  readonly mappings: PathMappings;
  /** Whether the relay has USERNAME/PASSWORD set (for the message). */
  readonly hasCredentials?: boolean;
  /** A call without credentials. Rejects with the network error (its `cause` kept) when nothing answers. */
  reach(signal: AbortSignal): Promise<TargetAnswer>;
  /**
   * A call with the key (a relay: `HEAD /triggers/manual` with Basic auth). Resolves with what it learnt (a version),
   * `TargetAuthError` when refused, `TargetConfigError` when the route is not there (404), another error else.
   */
  checkKey(signal: AbortSignal): Promise<string | undefined>;
  /** Every library folder; absent for a relay. `TargetAuthError` when the key may not list them. */
  readonly listLibraries?: (signal: AbortSignal) => Promise<readonly TargetLibraryFolder[]>;
}

export interface TargetsCheckOptions {
  readonly targets: readonly TargetProbe[];
  /** Whether autoscan runs inside a container; injected for tests. */
  readonly inContainer: boolean;
}

const KIND_LABEL: Readonly<Record<TargetKind, string>> = { plex: "Plex", jellyfin: "Jellyfin", emby: "Emby", autoscan: "the other autoscan" };
const KIND_PORT: Readonly<Record<TargetKind, string>> = {
  plex: "Plex listens on 32400",
  jellyfin: "Jellyfin listens on 8096",
  emby: "Emby listens on 8096",
  autoscan: "another autoscan listens on its SERVER_PORT, 3467 unless set",
};
const KIND_EXAMPLE: Readonly<Record<TargetKind, string>> = {
  plex: "http://plex-4k:32400",
  jellyfin: "http://jellyfin:8096",
  emby: "http://emby:8096",
  autoscan: "http://autoscan-nas:3467",
};

export function targetsFamily(options: TargetsCheckOptions): CheckFamily {
  return { name: "targets", run: (findings, signal) => targetsChecks(options, findings, signal) };
}

export async function targetsChecks(options: TargetsCheckOptions, findings: Findings, signal: AbortSignal): Promise<CheckResult[]> {
  // Each target on its own, at once: one that hangs costs its timeout, not the sum of them.
  const results = await Promise.all(options.targets.map((probe) => targetChecks(probe, options.inContainer, findings, signal)));
  return results.flat();
}

async function targetChecks(probe: TargetProbe, inContainer: boolean, findings: Findings, signal: AbortSignal): Promise<CheckResult[]> {
  const { name } = probe;
  const id = `target:${name}`;
  const kind = KIND_LABEL[probe.kind];
  if (!probe.enabled) {
    return [skip(id, name, `TARGETS.${name}.ENABLED is false: not checked, and no scan goes to it.`)];
  }
  let answer: TargetAnswer;
  try {
    answer = await probe.reach(signal);
  } catch (error) {
    return [unreachableTarget(probe, error, inContainer), ...skipRest(probe, `${name} did not answer.`)];
  }
  if (answer.foreign !== undefined) {
    return [
      fail(
        id,
        name,
        `Something answered at ${probe.url}, but not as ${kind} does: ${answer.foreign}.`,
        `Check that TARGETS.${name}.URL points at ${kind} itself (${KIND_PORT[probe.kind]}), not at a proxy or another app.`,
      ),
      ...skipRest(probe, `${name} did not answer as ${kind} does.`),
    ];
  }
  const out: CheckResult[] = [ok(id, name, `${answer.server ?? kind} answers at ${probe.url}.`)];
  const key = await keyCheck(probe, signal);
  out.push(key.check);
  if (!key.accepted) {
    out.push(...skipRest(probe, key.reason, false));
    return out;
  }
  if (!probe.listLibraries) return out;
  let folders: readonly TargetLibraryFolder[];
  try {
    folders = await probe.listLibraries(signal);
  } catch (error) {
    out.push(librariesFailed(probe, error), ...skipMappings(probe, `${name} did not list its libraries.`));
    return out;
  }
  const libraries = unique(folders.map((folder) => folder.library));
  out.push(
    libraries.length === 0
      ? warn(`${id}.libraries`, `${name} libraries`, `${name} has no library yet: every scan sent to it is skipped.`, `Add your libraries in ${kind} first.`)
      : ok(`${id}.libraries`, `${name} libraries`, `${libraries.length} librar${libraries.length === 1 ? "y" : "ies"}: ${libraries.join(", ")}.`),
  );
  out.push(...mappingChecks(probe, kind, folders, findings));
  return out;
}

interface KeyOutcome {
  readonly check: CheckResult;
  readonly accepted: boolean;
  /** Why the checks after it are skipped. */
  readonly reason: string;
}

async function keyCheck(probe: TargetProbe, signal: AbortSignal): Promise<KeyOutcome> {
  const { name } = probe;
  const id = `target:${name}.key`;
  const kind = KIND_LABEL[probe.kind];
  const relay = probe.kind === "autoscan";
  const title = relay ? `${name} trigger` : `${name} key`;
  const setting = relay ? `TARGETS.${name}.USERNAME and PASSWORD` : `TARGETS.${name}.TOKEN`;
  try {
    const learnt = await probe.checkKey(signal);
    const detail = relay
      ? probe.hasCredentials
        ? `Its /triggers/manual takes ${setting}.`
        : "Its /triggers/manual answers without credentials."
      : `${kind} accepted ${setting}${learnt ? ` (${learnt})` : ""}.`;
    return { check: ok(id, title, detail), accepted: true, reason: "" };
  } catch (error) {
    if (error instanceof TargetAuthError) {
      const detail = relay
        ? probe.hasCredentials
          ? `That autoscan refused ${setting} (401 at ${probe.url}/triggers/manual).`
          : `That autoscan wants credentials for /triggers/manual (401): TARGETS.${name}.USERNAME and PASSWORD are empty.`
        : `${kind} rejected ${setting} (401 at ${probe.url}).`;
      return { check: fail(id, title, detail, keyHelp(probe)), accepted: false, reason: `${name} refused the ${relay ? "credentials" : "key"}.` };
    }
    if (relay && error instanceof TargetConfigError) {
      return {
        check: fail(
          id,
          title,
          `That autoscan answered 404 at ${probe.url}/triggers/manual: its manual trigger is off, or the URL is not an autoscan.`,
          `Set SERVER_AUTH_USERNAME and SERVER_AUTH_PASSWORD on that autoscan (its /triggers/manual is off without them) and the same in TARGETS.${name}.USERNAME and PASSWORD, or put its /<SERVER_PASS> in TARGETS.${name}.URL; else check the URL.`,
        ),
        accepted: false,
        reason: `${name}'s trigger is not there.`,
      };
    }
    return {
      check: fail(
        id,
        title,
        `${name} answers, but the check with the ${relay ? "credentials" : "key"} failed: ${describeError(error)}.`,
        `Check that TARGETS.${name}.URL points at ${kind} itself, and ${kind}'s log.`,
      ),
      accepted: false,
      reason: `The ${relay ? "trigger" : "key"} check failed.`,
    };
  }
}

function keyHelp(probe: TargetProbe): string {
  const { name } = probe;
  switch (probe.kind) {
    case "plex":
      return `Set TARGETS.${name}.TOKEN to that server's token: in its Plex Web open any item's '…' → Get Info → View XML, and copy the X-Plex-Token value from the address.`;
    case "jellyfin":
      return `Set TARGETS.${name}.TOKEN to an API key of that server: Dashboard → API Keys → '+'.`;
    case "emby":
      return `Set TARGETS.${name}.TOKEN to an API key of that server: Settings → Advanced → API Keys → New API Key.`;
    case "autoscan":
      return `Set TARGETS.${name}.USERNAME and PASSWORD to that autoscan's SERVER_AUTH_USERNAME and SERVER_AUTH_PASSWORD (Cloudbox/autoscan: its authentication username and password).`;
  }
}

function librariesFailed(probe: TargetProbe, error: unknown): CheckResult {
  const { name } = probe;
  const id = `target:${name}.libraries`;
  const kind = KIND_LABEL[probe.kind];
  if (error instanceof TargetAuthError) {
    return fail(
      id,
      `${name} libraries`,
      `${kind} accepted TARGETS.${name}.TOKEN but refuses to list the libraries with it (a user's key, not an administrator's?).`,
      keyHelp(probe),
    );
  }
  return fail(id, `${name} libraries`, `Listing the libraries failed: ${describeError(error)}.`, `Check ${kind}'s log.`);
}

function skipRest(probe: TargetProbe, reason: string, withKey = true): CheckResult[] {
  const { name } = probe;
  const out: CheckResult[] = [];
  if (withKey) out.push(skip(`target:${name}.key`, probe.kind === "autoscan" ? `${name} trigger` : `${name} key`, reason));
  if (probe.listLibraries) out.push(skip(`target:${name}.libraries`, `${name} libraries`, reason), ...skipMappings(probe, reason));
  return out;
}

function skipMappings(probe: TargetProbe, reason: string): CheckResult[] {
  return [skip(`target:${probe.name}.mappings`, `${probe.name} mappings`, reason)];
}

/** What is wrong when a target does not answer, and what to do about it (as for Plex: plex.ts `unreachable`). */
export function unreachableTarget(probe: TargetProbe, error: unknown, inContainer: boolean): CheckResult {
  return unreachableCheck(
    {
      id: `target:${probe.name}`,
      title: probe.name,
      url: probe.url,
      label: KIND_LABEL[probe.kind],
      setting: `TARGETS.${probe.name}.URL`,
      portHint: KIND_PORT[probe.kind],
      example: KIND_EXAMPLE[probe.kind],
      timeoutSeconds: probe.timeoutSeconds,
    },
    error,
    inContainer,
  );
}
