import type { Config } from "../../config/schema.ts";
import type { Settings } from "../../config/settings.ts";
import { systemClock } from "../../core/clock.ts";
import { ConfigError, describeError } from "../../core/errors.ts";
import type { Logger } from "../../core/logger.ts";
import type { DriveCredentials } from "../../drive/credentials.ts";
import { httpCall } from "../../http/http-call.ts";
import { createPathMapper } from "../../paths/mapping.ts";
import { normalizePath, withTrailingSlash } from "../../paths/normalize.ts";
import { parseRcUrl } from "../../rclone/rc.ts";
import { fail, ok, skip, warn, type CheckResult } from "./check.ts";

/**
 * Google Drive monitoring (CLOUD.ENABLED): credentials present (service account key, rclone remote, or the token
 * `autoscan authorize` stored), Google issues an access token for them (not at server start, where the monitor does
 * it itself), the watched drive folders lead to paths Plex knows; and rclone's remote control answers when
 * RCLONE.RC_CACHE_REFRESH is on.
 */
export interface DriveCheckInput {
  readonly config: Config;
  readonly settings: Settings;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly log: Logger;
  readonly startup: boolean;
}

export async function driveChecks({ config, settings, env, log, startup }: DriveCheckInput): Promise<CheckResult[]> {
  // The Google clients are large: loaded only when Drive monitoring is on.
  const drive = await import("../../drive/from-config.ts");
  const out: CheckResult[] = [];
  let credentials: DriveCredentials | undefined;
  try {
    credentials = await drive.driveCredentialsFromConfig(config, settings, log);
    out.push(ok("drive.credentials", "Drive credentials", `${await describeCredentials(credentials)}.`));
  } catch (error) {
    out.push(
      fail("drive.credentials", "Drive credentials", describeError(error), "See the README's Google Drive section; 'autoscan authorize' stores a token."),
      skip("drive.token", "Drive token", "No usable credentials."),
    );
  }
  if (credentials && startup) out.push(skip("drive.token", "Drive token", "Checked by the Drive monitor itself at start."));
  else if (credentials) {
    try {
      const { connectDrive } = await import("../../drive/credentials.ts");
      const sharedDrives = config.CLOUD.TEAMDRIVE ? config.CLOUD.TEAMDRIVES : [];
      const endpoints = drive.googleEndpointsFromEnv(env, log);
      const retry = { maxAttempts: 1, baseMs: 0, capMs: 0, jitterMs: 0 };
      const connection = await connectDrive({ credentials, endpoints, scopeNeeds: { sharedDrives: sharedDrives.length > 0 }, clock: systemClock, log, retry }, AbortSignal.timeout(20_000));
      await connection.api.getStartPageToken();
      out.push(ok("drive.token", "Drive token", "Google issued an access token and Drive answered."));
    } catch (error) {
      out.push(fail("drive.token", "Drive token", describeError(error), "Run 'autoscan authorize' again (in Docker: docker exec -it autoscan autoscan authorize)."));
    }
  }
  const filePaths = config.CLOUD.ALLOWED.FILE_PATHS;
  if (filePaths.length === 0) {
    out.push(warn("drive.paths", "Drive folders", "CLOUD.ALLOWED.FILE_PATHS is empty: no Drive change is scanned.", 'List the drive folders to watch, e.g. ["My Drive/Media/"].'));
    return out;
  }
  // A watched folder is mapped when it is one of the forms, lies under one, or holds some (`My Drive/Media/` over
  // `My Drive/Media/Movies/` and `My Drive/Media/TV/`); else it reaches Plex unchanged.
  const mapper = createPathMapper({ mappings: config.SERVER_PATH_MAPPINGS });
  const forms = Object.entries(config.SERVER_PATH_MAPPINGS).flatMap(([key, others]) => [key, ...others].map(normalizePath));
  const holdsAForm = (folder: string): boolean => forms.some((form) => form.startsWith(withTrailingSlash(normalizePath(folder))));
  const unmapped = filePaths.filter((path) => mapper.toServer(path).from === undefined && !holdsAForm(path));
  out.push(
    unmapped.length === 0
      ? ok("drive.paths", "Drive folders", `${filePaths.length} watched; each maps to a Plex folder.`)
      : warn(
          "drive.paths",
          "Drive folders",
          `Not a form in SERVER_PATH_MAPPINGS: ${unmapped.map((p) => `'${p}'`).join(", ")}; their changes reach Plex as drive paths, which no library holds.`,
          'Add the drive form to the mapping of its Plex folder, e.g. {"/data/Movies/": ["My Drive/Media/Movies/"]}.',
        ),
  );
  return out;
}

/** What the credentials are (`OAuth client …`); throws a message that names the fix. */
async function describeCredentials(found: DriveCredentials): Promise<string> {
  if (found.kind === "service-account") {
    const { loadServiceAccountKey } = await import("../../drive/service-account.ts");
    return `Service account ${(await loadServiceAccountKey(found.key)).clientEmail}`;
  }
  if (found.kind === "token") return found.description;
  if (!found.clientId || !found.clientSecret) {
    throw new ConfigError("CLOUD.CLIENT_ID and CLOUD.CLIENT_SECRET are empty (or set CLOUD.SERVICE_ACCOUNT_FILE, or CLOUD.RCLONE_CONFIG and CLOUD.RCLONE_REMOTE).");
  }
  const stored = await found.tokenStore.load();
  if (!stored) throw new ConfigError(`No Google Drive token yet (${found.tokenStore.path}): run 'autoscan authorize'.`);
  if (stored.clientId !== found.clientId) {
    throw new ConfigError(`The stored Google token belongs to OAuth client ${stored.clientId}, not CLOUD.CLIENT_ID: run 'autoscan authorize' again.`);
  }
  return `OAuth client ${found.clientId}, token stored in ${found.tokenStore.path}`;
}

export async function rcChecks(rcUrl: string): Promise<CheckResult[]> {
  const { endpoint, authorization } = parseRcUrl(rcUrl);
  try {
    // vfs/list: answered by any rclone serving --rc (and it is the call the cache refresh itself makes first).
    const headers = { "content-type": "application/json", ...(authorization ? { authorization } : {}) };
    const { status } = await httpCall({ method: "POST", url: new URL("vfs/list", endpoint).href, headers, body: "{}", timeoutMs: 3000, maxBytes: 0, readsBody: () => false });
    if (status < 200 || status >= 300) throw new Error(`it answered ${status}${status === 401 ? " (check the user and password in RC_URL)" : ""}`);
    return [ok("rclone.rc", "rclone RC", `rclone's remote control answers at ${endpoint}.`)];
  } catch (error) {
    return [
      warn(
        "rclone.rc",
        "rclone RC",
        `rclone's remote control does not answer at ${endpoint}: ${describeError(error)}. File checks go on without cache refreshes.`,
        "Start the mount with --rc (and --rc-addr), or set RCLONE.RC_CACHE_REFRESH.RC_URL to its address.",
      ),
    ];
  }
}
