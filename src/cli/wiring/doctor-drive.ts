import type { Config } from "../../config/schema.ts";
import { systemClock } from "../../core/clock.ts";
import { ConfigError } from "../../core/errors.ts";
import type { DriveProbe } from "../../ops/doctor/drive.ts";
import { createPathMapper } from "../../paths/mapping.ts";
import { normalizePath, withTrailingSlash } from "../../paths/normalize.ts";
import { parseRcUrl } from "../../rclone/rc.ts";
import type { DoctorInput } from "./doctor.ts";

/** Doctor's look at Google Drive (credentials, a token Google accepts, the watched folders) and at rclone's RC. */
export async function driveProbe(input: DoctorInput, config: Config, startup: boolean): Promise<DriveProbe> {
  // The Google clients are large: loaded only when Drive monitoring is on.
  const drive = await import("./drive.ts");
  const { connectDrive } = await import("../../drive/credentials.ts");
  const { loadServiceAccountKey } = await import("../../drive/service-account.ts");
  const mapper = createPathMapper({ mappings: config.SERVER_PATH_MAPPINGS });
  const cloud = config.CLOUD;
  const credentials = () => drive.driveCredentialsFromConfig(config, input.settings, input.log);
  const sharedDrives = cloud.TEAMDRIVE ? cloud.TEAMDRIVES : [];
  return {
    filePaths: cloud.ALLOWED.FILE_PATHS,
    // A watched folder is mapped when it is one of the forms, lies under one, or holds some (`My Drive/Media/` over
    // `My Drive/Media/Movies/` and `My Drive/Media/TV/`).
    isMapped: (path) => mapper.toServer(path).from !== undefined || holdsAForm(config.SERVER_PATH_MAPPINGS, path),
    async credentials() {
      const found = await credentials();
      if (found.kind === "service-account") {
        const key = await loadServiceAccountKey(found.key);
        return `Service account ${key.clientEmail}`;
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
    },
    ...(startup
      ? {}
      : {
          async connect() {
            const signal = AbortSignal.timeout(20_000);
            const connection = await connectDrive(
              {
                credentials: await credentials(),
                endpoints: drive.googleEndpointsFromEnv(input.env, input.log),
                scopeNeeds: { sharedDrives: sharedDrives.length > 0 },
                clock: systemClock,
                log: input.log,
                retry: { maxAttempts: 1, baseMs: 0, capMs: 0, jitterMs: 0 },
              },
              signal,
            );
            await connection.api.getStartPageToken();
          },
        }),
  };
}

export function rcProbe(rcUrl: string) {
  const { endpoint, authorization } = parseRcUrl(rcUrl);
  return {
    url: endpoint,
    async ping() {
      // vfs/list: answered by any rclone serving --rc (and it is the call the cache refresh itself makes first).
      const response = await fetch(new URL("vfs/list", endpoint), {
        method: "POST",
        headers: { "content-type": "application/json", ...(authorization ? { authorization } : {}) },
        body: "{}",
        signal: AbortSignal.timeout(3000),
      });
      await response.body?.cancel();
      if (!response.ok) throw new Error(`it answered ${response.status}${response.status === 401 ? " (check the user and password in RC_URL)" : ""}`);
    },
  };
}

function holdsAForm(mappings: Readonly<Record<string, readonly string[]>>, folder: string): boolean {
  const prefix = withTrailingSlash(normalizePath(folder));
  return Object.entries(mappings).some(([key, forms]) => [key, ...forms].some((form) => normalizePath(form).startsWith(prefix)));
}
