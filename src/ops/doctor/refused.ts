import { ok, warn, type CheckResult } from "./check.ts";
import type { CheckFamily } from "./run-checks.ts";

/**
 * The last requests the running server refused at intake because no server can scan them (no `SERVER_PATH_MAPPINGS`
 * form, no library): read from its History (failed, "Not queued: …"). Doctor runs beside the server; when none
 * answers, there is nothing to read.
 */
export interface RefusedProbe {
  /** Newest first; undefined when no server answered. */
  recent(): Promise<readonly { readonly folder: string; readonly reason: string; readonly at: string }[] | undefined>;
}

export function refusedFamily(probe: RefusedProbe): CheckFamily {
  return { name: "refused", run: async () => refusedCheck(probe) };
}

/** No line when no server answers here (nothing to read, nothing wrong). */
async function refusedCheck(probe: RefusedProbe): Promise<CheckResult[]> {
  const recent = await probe.recent().catch(() => undefined);
  return recent === undefined ? [] : [refusedLine(recent)];
}

function refusedLine(recent: Awaited<ReturnType<RefusedProbe["recent"]>> & object): CheckResult {
  const id = "intake.refused";
  const title = "Unmapped paths";
  if (recent.length === 0) return ok(id, title, "No request was refused for lack of a mapping or a library.");
  const listed = recent.slice(0, 5).map((r) => `${r.at}: ${r.reason.replace(/^Not queued: /, "")}`);
  return warn(
    id,
    title,
    `${String(recent.length)} request(s) were not queued: their path matches no SERVER_PATH_MAPPINGS form and lies in no library. Last: ${listed.join(" | ")}`,
    "Add each app's path form to SERVER_PATH_MAPPINGS under the folder Plex uses (the reason names the nearest form; 'autoscan sections' lists Plex's folders), then Retry them in History.",
  );
}
