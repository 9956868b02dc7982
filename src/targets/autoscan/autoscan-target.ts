import { TargetAuthError } from "../../core/errors.ts";
import type { Logger } from "../../core/logger.ts";
import type { ScanOutcome, Target } from "../../core/target.ts";
import { createAvailabilityCheck } from "../availability.ts";
import { createMediaHttp, MediaHttpError } from "../media-http.ts";

/**
 * Another relay: an autoscan like this one, or Cloudbox/autoscan, through its manual trigger
 * `POST <URL>/triggers/manual?dir=<folder>` with HTTP Basic auth. Any 2xx is delivered (Cloudbox/autoscan answers 200
 * with an empty body; ours answers JSON saying what it queued). There is no library check: the other relay decides
 * what to do with the folder. Availability is `GET <URL>/health`: any answer below 500 is "up" (Cloudbox/autoscan
 * has no /health and answers 404; ours answers 503 while it cannot store requests).
 */
export interface AutoscanTargetOptions {
  /** The target's name in logs and the queue: `autoscan-nas`. */
  readonly name: string;
  /** `TARGETS.<name>.URL`, e.g. `http://nas:3468`. */
  readonly url: string;
  /** `TARGETS.<name>.USERNAME`/`PASSWORD`: HTTP Basic; both empty or absent → no Authorization header. */
  readonly username?: string;
  readonly password?: string;
  /** `TARGETS.<name>.TIMEOUT` in ms (default 30 s). */
  readonly timeoutMs?: number;
  readonly log: Logger;
  /** The settings named when the credentials are refused (default `TARGETS.<name>.USERNAME and …PASSWORD`). */
  readonly credentialsKey?: string;
  /** The setting named when the trigger route does not exist (default `TARGETS.<name>.URL`). */
  readonly urlKey?: string;
}

export function createAutoscanTarget(options: AutoscanTargetOptions): Target {
  const { name } = options;
  const label = `autoscan relay '${name}'`;
  const authKey = options.credentialsKey ?? `TARGETS.${name}.USERNAME and TARGETS.${name}.PASSWORD`;
  const urlKey = options.urlKey ?? `TARGETS.${name}.URL`;
  const log = options.log.child({ component: "TARGET" });
  const fields = { target: name };
  const username = options.username ?? "";
  const password = options.password ?? "";
  const basic = Buffer.from(`${username}:${password}`, "utf8").toString("base64");
  const headers: Record<string, string> = username || password ? { Authorization: `Basic ${basic}` } : {};
  const common = {
    url: options.url,
    label,
    authKey,
    headers,
    secrets: [password, basic],
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
  };
  const http = createMediaHttp({
    ...common,
    // Our autoscan answers 404 on /triggers/manual while its SERVER_AUTH_USERNAME/PASSWORD are unset.
    notFoundHint: `set SERVER_AUTH_USERNAME and SERVER_AUTH_PASSWORD on that autoscan (its /triggers/manual is off without them), or check ${urlKey}`,
  });
  const probeHttp = createMediaHttp(common);

  return {
    name,
    async scan(folder, context): Promise<ScanOutcome> {
      const answer = await http.request("POST", "/triggers/manual", { query: { dir: folder }, signal: context.signal });
      const ignored = ignoredReason(answer.body);
      if (ignored !== undefined) {
        log.info({ ...fields, path: folder, reason: ignored }, `${label} took '${folder}' but ignores it: ${ignored}`);
        return { status: "skipped", reason: `${name} ignores it: ${ignored}` };
      }
      log.info({ ...fields, path: folder }, `Scan requested for '${folder}' from ${label}`);
      return { status: "scanned", detail: `queued on ${name}` };
    },
    isAvailable: createAvailabilityCheck({
      label,
      authKey,
      log,
      fields,
      async probe() {
        try {
          await probeHttp.request("GET", "/health");
        } catch (error) {
          // Any answer below 500 means something is listening there; the scan itself tells a refusal.
          if (error instanceof MediaHttpError || error instanceof TargetAuthError) return;
          throw error;
        }
      },
    }),
  };
}

/**
 * Our autoscan answers `{"success":true,"queued":[…],"ignored":[{"path","reason"}]}`; a folder it ignores (its
 * SERVER_IGNORE_LIST) was taken but will not be scanned. Any other answer (Cloudbox/autoscan's empty 200) is a
 * delivery.
 */
function ignoredReason(body: string): string | undefined {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    return undefined;
  }
  if (typeof json !== "object" || json === null) return undefined;
  const { queued, ignored } = json as { queued?: unknown; ignored?: unknown };
  const first = (list: unknown): Record<string, unknown> | undefined =>
    Array.isArray(list) && typeof list[0] === "object" && list[0] !== null ? (list[0] as Record<string, unknown>) : undefined;
  const queuedEntry = first(queued);
  if (queuedEntry && typeof queuedEntry.ignoredBecause === "string") return queuedEntry.ignoredBecause;
  const ignoredEntry = first(ignored);
  if (!queuedEntry && ignoredEntry) return typeof ignoredEntry.reason === "string" ? ignoredEntry.reason : "its ignore list";
  return undefined;
}
