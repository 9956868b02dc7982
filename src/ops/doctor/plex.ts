import type { Config } from "../../config/schema.ts";
import { TargetAuthError, describeError } from "../../core/errors.ts";
import { createPlexClient } from "../../targets/plex/client.ts";
import { fail, ok, skip, warn, type CheckResult, type Findings } from "./check.ts";
import { unreachableCheck } from "./unreachable.ts";

/**
 * Plex at PLEX_LOCAL_URL, through the Plex client the service uses (targets/plex/client.ts classifies statuses; the
 * network error is under `cause`): does it answer (if not, the likely cause in unreachable.ts's words), is the token
 * accepted, which version, which libraries (left in the findings for the mapping checks after it).
 */
const TOKEN_HELP =
  "Set PLEX_TOKEN to your server's token: in Plex Web open any item's '…' → Get Info → View XML, and copy the " +
  "X-Plex-Token value from the address (support.plex.tv article 204059436).";

export async function plexChecks(config: Config, inContainer: boolean, findings: Findings, signal: AbortSignal): Promise<CheckResult[]> {
  const url = config.PLEX_LOCAL_URL;
  const hasToken = config.PLEX_TOKEN !== "";
  const timeoutSeconds = Math.min(config.PLEX_TIMEOUT, 10);
  const client = createPlexClient({ url, token: config.PLEX_TOKEN, timeoutMs: timeoutSeconds * 1000 });
  let info: { version: string; friendlyName: string } | undefined;
  try {
    info = await client.serverInfo(signal);
  } catch (error) {
    if (!(error instanceof TargetAuthError)) {
      findings.sectionsUnknown = "Plex did not answer.";
      const server = { id: "plex.reach", title: "Plex", url, label: "Plex", setting: "PLEX_LOCAL_URL", portHint: "Plex listens on 32400" };
      return [
        unreachableCheck({ ...server, example: "http://plex:32400", timeoutSeconds, describeAnswer }, error, inContainer),
        skip("plex.token", "Plex token", "Plex did not answer."),
        skip("plex.version", "Plex version", "Plex did not answer."),
      ];
    }
  }
  const out: CheckResult[] = [ok("plex.reach", "Plex", `Plex answers at ${url}.`)];
  if (info === undefined) {
    findings.sectionsUnknown = hasToken ? "Plex rejected the token." : "PLEX_TOKEN is empty.";
    if (hasToken) out.push(fail("plex.token", "Plex token", `Plex rejected PLEX_TOKEN (401 at ${url}).`, TOKEN_HELP));
    // Scanner mode works without a token (plex_autoscan's way); the API mode does not.
    else if (config.PLEX_SCAN_METHOD === "api") out.push(fail("plex.token", "Plex token", "PLEX_TOKEN is empty: Plex rejects every scan request without it.", TOKEN_HELP));
    else out.push(skip("plex.token", "Plex token", "PLEX_TOKEN is empty (the scanner method works without it; set it to check sections and mappings)."));
    out.push(skip("plex.version", "Plex version", "Plex answers only with an accepted token."));
    return out;
  }
  out.push(ok("plex.token", "Plex token", "Plex accepted PLEX_TOKEN."), versionCheck(info.version, info.friendlyName));
  try {
    const sections = (await client.listSections(signal)).map(({ id, title, locations }) => ({ id, title, locations }));
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

/**
 * What answered in Plex's place, from the client's error: its messages speak of "Plex" (`Plex answered 404 to GET / at
 * http://…`, `GET /: Plex did not answer JSON: …`), which here is what did not answer as Plex does.
 */
function describeAnswer(error: unknown): string {
  return describeError(error)
    .replace(/\bPlex (answered|did not answer)/, "it $1")
    .replace(/ at https?:\/\/\S+$/, "");
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
