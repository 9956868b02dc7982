import { TargetAuthError, describeError } from "../../core/errors.ts";
import { causeCodes, fail, ok, skip, warn, type CheckResult } from "./check.ts";
import type { CheckFamily, DoctorSection, Findings } from "./run-checks.ts";

/**
 * Plex at PLEX_LOCAL_URL: does it answer, is the token accepted, which version. When it does not answer, the likely
 * cause is named: `localhost` inside a container (that is the container itself), a name that does not resolve, a
 * closed port, a timeout. The Plex client (targets/plex/client.ts) classifies statuses; the network error is under `cause`.
 */
export interface PlexProbe {
  /** PLEX_LOCAL_URL as configured (it carries no secret). */
  readonly url: string;
  readonly hasToken: boolean;
  /** `GET /`: answers only with a valid token (401 → TargetAuthError). */
  serverInfo(signal: AbortSignal): Promise<{ readonly version: string; readonly friendlyName: string }>;
  listSections(signal: AbortSignal): Promise<readonly DoctorSection[]>;
}

export interface PlexCheckOptions {
  readonly probe: PlexProbe;
  /** Whether autoscan runs inside a container (`/.dockerenv`, `/run/.containerenv`); injected for tests. */
  readonly inContainer: boolean;
  /** Scanner mode works without a token (plex_autoscan's way); the API mode does not. */
  readonly tokenRequired: boolean;
  /** How long Plex may take to answer, for the message (the probe enforces it). */
  readonly timeoutSeconds: number;
}

const TOKEN_HELP =
  "Set PLEX_TOKEN to your server's token: in Plex Web open any item's '…' → Get Info → View XML, and copy the " +
  "X-Plex-Token value from the address (support.plex.tv article 204059436).";

export function plexFamily(options: PlexCheckOptions): CheckFamily {
  return { name: "plex", run: (findings, signal) => plexChecks(options, findings, signal) };
}

export async function plexChecks(options: PlexCheckOptions, findings: Findings, signal: AbortSignal): Promise<CheckResult[]> {
  const { probe } = options;
  let info: { version: string; friendlyName: string } | undefined;
  let authError: unknown;
  try {
    info = await probe.serverInfo(signal);
  } catch (error) {
    if (!(error instanceof TargetAuthError)) {
      findings.sectionsUnknown = "Plex did not answer.";
      return [
        unreachable(options, error),
        skip("plex.token", "Plex token", "Plex did not answer."),
        skip("plex.version", "Plex version", "Plex did not answer."),
      ];
    }
    authError = error;
  }
  const out: CheckResult[] = [ok("plex.reach", "Plex", `Plex answers at ${probe.url}.`)];
  if (authError !== undefined) {
    findings.sectionsUnknown = probe.hasToken ? "Plex rejected the token." : "PLEX_TOKEN is empty.";
    if (!probe.hasToken) {
      out.push(
        options.tokenRequired
          ? fail("plex.token", "Plex token", "PLEX_TOKEN is empty: Plex rejects every scan request without it.", TOKEN_HELP)
          : skip("plex.token", "Plex token", "PLEX_TOKEN is empty (the scanner method works without it; set it to check sections and mappings)."),
      );
    } else {
      out.push(fail("plex.token", "Plex token", `Plex rejected PLEX_TOKEN (401 at ${probe.url}).`, TOKEN_HELP));
    }
    out.push(skip("plex.version", "Plex version", "Plex answers only with an accepted token."));
    return out;
  }
  out.push(ok("plex.token", "Plex token", "Plex accepted PLEX_TOKEN."));
  out.push(versionCheck(info?.version ?? "", info?.friendlyName ?? ""));
  try {
    const sections = await probe.listSections(signal);
    findings.sections = sections;
    out.push(
      sections.length === 0
        ? warn("plex.sections", "Plex libraries", "Plex has no library yet: every scan would be skipped.", "Add your libraries in Plex first.")
        : ok("plex.sections", "Plex libraries", `${sections.length} librar${sections.length === 1 ? "y" : "ies"}: ${sections.map((s) => `${s.id} ${s.title}`).join(", ")}.`),
    );
  } catch (error) {
    findings.sectionsUnknown = "Plex did not list its libraries.";
    out.push(fail("plex.sections", "Plex libraries", `Listing the libraries failed: ${describeError(error)}.`, "Check Plex's log; 'autoscan sections' shows the same call."));
  }
  return out;
}

/** Plex 1.20 (2020) is the oldest the partial-scan API we use is known to work with (integrations.md §3.1). */
function versionCheck(version: string, name: string): CheckResult {
  const [major = 0, minor = 0] = version.split(".").map((part) => Number.parseInt(part, 10));
  const what = `Plex Media Server ${version || "(version not given)"}${name ? ` ('${name}')` : ""}.`;
  if (version && (major < 1 || (major === 1 && minor < 20))) {
    return warn("plex.version", "Plex version", `${what} It is older than 1.20.`, "Update Plex: partial scans of older versions are not supported.");
  }
  return ok("plex.version", "Plex version", what);
}

/** What is wrong when Plex does not answer, and what to do about it. */
export function unreachable(options: PlexCheckOptions, error: unknown): CheckResult {
  const url = options.probe.url;
  const id = "plex.reach";
  const title = "Plex";
  let host = "";
  let port = "";
  try {
    const parsed = new URL(url);
    host = parsed.hostname.replace(/^\[|\]$/g, "");
    port = parsed.port || (parsed.protocol === "https:" ? "443" : "80");
  } catch {
    /* the config validated it */
  }
  const codes = causeCodes(error);
  if (isLoopback(host) && options.inContainer) {
    return fail(
      id,
      title,
      `No answer at ${url}: autoscan runs in a container, where '${host}' is the autoscan container itself, not Plex.`,
      "Set PLEX_LOCAL_URL to the Plex container's name on a Docker network both share, e.g. http://plex:32400 " +
        "(or the host's LAN address, e.g. http://192.168.1.10:32400).",
    );
  }
  if (codes.includes("ENOTFOUND") || codes.includes("EAI_AGAIN")) {
    return fail(
      id,
      title,
      `The name '${host}' in PLEX_LOCAL_URL does not resolve (${codes.includes("ENOTFOUND") ? "ENOTFOUND" : "EAI_AGAIN"}).`,
      "If Plex runs in a container, put autoscan on the same Docker network and use the container's name; else use Plex's IP address.",
    );
  }
  if (codes.includes("ECONNREFUSED")) {
    return fail(
      id,
      title,
      `Nothing listens at ${host}:${port} (connection refused).`,
      "Start Plex, or correct the address and port in PLEX_LOCAL_URL (Plex listens on 32400).",
    );
  }
  if (codes.includes("TIMEOUT")) {
    return fail(
      id,
      title,
      `No answer from ${url} within ${options.timeoutSeconds} s.`,
      "Check the address in PLEX_LOCAL_URL and any firewall between autoscan and Plex.",
    );
  }
  const code = codes.find((c) => /^E[A-Z]+$/.test(c));
  if (code) {
    return fail(id, title, `Cannot connect to ${url} (${code}).`, "Check the address in PLEX_LOCAL_URL and the network between autoscan and Plex.");
  }
  return fail(
    id,
    title,
    `Something answered at ${url}, but not as Plex does: ${describeError(error)}.`,
    "Check that PLEX_LOCAL_URL points at Plex itself (usually port 32400), not at a proxy or another app.",
  );
}

export function isLoopback(host: string): boolean {
  const name = host.toLowerCase();
  return name === "localhost" || name.endsWith(".localhost") || name === "::1" || /^127\./.test(name) || name === "0.0.0.0";
}
