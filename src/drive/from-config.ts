import { join } from "node:path";
import type { Config } from "../config/schema.ts";
import type { Settings } from "../config/settings.ts";
import type { Clock } from "../core/clock.ts";
import { ConfigError } from "../core/errors.ts";
import type { Logger } from "../core/logger.ts";
import type { DriveMetrics, RequestMetrics } from "../core/metrics.ts";
import type { ScanSink } from "../core/scan.ts";
import { countedDriveApi } from "./counted-api.ts";
import { connectDrive, type DriveCredentials, type GoogleEndpoints } from "./credentials.ts";
import { openDriveStateStore } from "./drive-store.ts";
import { createDriveMonitor, type DriveMonitor, type DriveMonitorOptions } from "./poller.ts";
import { createTokenStore, type TokenStore } from "./token-store.ts";
import { createScrubber } from "../logging/redact.ts";
import { countedSink } from "../ops/metrics/counted-sink.ts";
import type { PathMapper } from "../paths/mapping.ts";
import { RCLONE_SHARED_CLIENT_ID, rcloneSharedClientSecret } from "../rclone/obscure.ts";
import { loadRcloneRemote, type RemoteCheck } from "../rclone/remote.ts";

/**
 * Config → the Google Drive monitor (the service loads this module only when `CLOUD.ENABLED` is on: the Google
 * clients are large). The credentials are one of three ways, first match
 * wins: `CLOUD.SERVICE_ACCOUNT_FILE`; `CLOUD.RCLONE_CONFIG` + `CLOUD.RCLONE_REMOTE`; the OAuth client
 * (`CLIENT_ID`/`CLIENT_SECRET`) with the tokens `autoscan authorize` stored in the data dir.
 */
export interface DriveInput {
  readonly config: Config;
  readonly settings: Pick<Settings, "dataDir" | "cacheFile">;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly sink: ScanSink;
  /** plex/library-db's check: (server path, local path for the size comparison). */
  readonly isInLibrary: (serverPath: string, localPath?: string) => Promise<boolean>;
  readonly mapper: PathMapper;
  readonly clock: Clock;
  readonly log: Logger;
  /** The log scrubber's `add`. */
  readonly onSecret?: (value: string) => void;
  /** `SERVER_METRICS`: polls, API calls, and the requests the monitor queues. */
  readonly metrics?: DriveMetrics & RequestMetrics;
}

export const TOKEN_FILE = "google-token.json";

export function tokenStoreFor(settings: Pick<Settings, "dataDir">): TokenStore {
  return createTokenStore({ path: join(settings.dataDir, TOKEN_FILE) });
}

/** `undefined` when `CLOUD.ENABLED` is off. Call `monitor.start()` once the server is ready. */
export function createDriveMonitorFromConfig(input: DriveInput): DriveMonitor | undefined {
  return driveMonitorFactoryFromConfig(input)?.();
}

/**
 * What `createDriveMonitorFromConfig` makes, as a factory: the config is read (and warned about) once; each call makes
 * a new monitor, on the cache file or on `openStore`'s store (the PostgreSQL one, when instances share a database).
 */
export function driveMonitorFactoryFromConfig(
  input: DriveInput,
): ((openStore?: DriveMonitorOptions["openStore"]) => DriveMonitor) | undefined {
  const { config, settings } = input;
  const cloud = config.CLOUD;
  if (!cloud.ENABLED) return undefined;
  const log = input.log.child({ component: "GOOGLE" });
  const sharedDrives = cloud.TEAMDRIVE ? cloud.TEAMDRIVES : [];
  if (cloud.TEAMDRIVE && sharedDrives.length === 0) log.warn("CLOUD.TEAMDRIVE is on but CLOUD.TEAMDRIVES is empty: list the shared drives to watch (names or ids).");
  if (cloud.ALLOWED.FILE_PATHS.length === 0) log.warn("CLOUD.ALLOWED.FILE_PATHS is empty: no Google Drive file will be scanned (list drive folders such as \"My Drive/Media/\").");
  const endpoints = googleEndpointsFromEnv(input.env, log);
  const { metrics } = input;
  // The secrets the credentials register also leave the errors the console's Drive page shows.
  const scrubber = createScrubber([cloud.CLIENT_SECRET]);
  const onSecret = (value: string): void => {
    scrubber.add(value);
    input.onSecret?.(value);
  };
  return (openStore) => createDriveMonitor({
    connect: async (signal) => {
      const connection = await connectDrive(
        {
          credentials: await driveCredentialsFromConfig(config, settings, log),
          endpoints,
          scopeNeeds: { sharedDrives: sharedDrives.length > 0 },
          clock: input.clock,
          log,
          onSecret,
        },
        signal,
      );
      return metrics ? { ...connection, api: countedDriveApi(connection.api, metrics) } : connection;
    },
    openStore: openStore ?? (() => openDriveStateStore({ path: settings.cacheFile, log })),
    sink: metrics ? countedSink(input.sink, metrics) : input.sink,
    // plex_autoscan compared Plex's size with the file as autoscan sees it (SERVER_FILE_EXIST_PATH_MAPPINGS).
    isInLibrary: (serverPath) => input.isInLibrary(serverPath, input.mapper.localForms(serverPath)[0]),
    mapper: input.mapper,
    filter: {
      filePaths: cloud.ALLOWED.FILE_PATHS,
      fileExtensions: cloud.ALLOWED.FILE_EXTENSIONS,
      fileExtensionsList: cloud.ALLOWED.FILE_EXTENSIONS_LIST,
      mimeTypes: cloud.ALLOWED.MIME_TYPES,
      mimeTypesList: cloud.ALLOWED.MIME_TYPES_LIST,
    },
    pollIntervalMs: cloud.POLL_INTERVAL * 1000,
    sharedDrives,
    showCacheLogs: cloud.SHOW_CACHE_LOGS,
    clock: input.clock,
    log,
    ...(metrics ? { metrics } : {}),
    access: describeDriveAccess(config, settings),
    redact: (text) => scrubber.scrub(text),
  });
}

/** The way `driveCredentialsFromConfig` picks, in words (the console's Drive page); reads no file. */
export function describeDriveAccess(config: Config, settings: Pick<Settings, "dataDir">): string {
  const cloud = config.CLOUD;
  if (cloud.SERVICE_ACCOUNT_FILE) return `service account key ${cloud.SERVICE_ACCOUNT_FILE}`;
  // The same words as the connection's own description (credentialsFromRclone), so the page does not say it twice.
  if (cloud.RCLONE_CONFIG || cloud.RCLONE_REMOTE) return `rclone remote ${cloud.RCLONE_REMOTE.replace(/:$/, "")}: (${cloud.RCLONE_CONFIG})`;
  return `OAuth token stored by autoscan authorize (${join(settings.dataDir, TOKEN_FILE)})`;
}

export async function driveCredentialsFromConfig(
  config: Config,
  settings: Pick<Settings, "dataDir">,
  log: Logger,
): Promise<DriveCredentials> {
  const cloud = config.CLOUD;
  if (cloud.SERVICE_ACCOUNT_FILE) return { kind: "service-account", key: { file: cloud.SERVICE_ACCOUNT_FILE } };
  if (cloud.RCLONE_CONFIG || cloud.RCLONE_REMOTE) {
    if (!cloud.RCLONE_CONFIG || !cloud.RCLONE_REMOTE) {
      throw new ConfigError("Set both CLOUD.RCLONE_CONFIG (the rclone.conf path) and CLOUD.RCLONE_REMOTE (the drive remote's name).");
    }
    const check = await loadRcloneRemote(cloud.RCLONE_CONFIG, cloud.RCLONE_REMOTE);
    for (const warning of check.warnings) log.warn({ remote: cloud.RCLONE_REMOTE }, warning);
    return credentialsFromRclone(check);
  }
  return { kind: "oauth", clientId: cloud.CLIENT_ID, clientSecret: cloud.CLIENT_SECRET, tokenStore: tokenStoreFor(settings) };
}

/** A validated rclone remote → credentials the monitor understands (it never learns about rclone). */
export function credentialsFromRclone(check: RemoteCheck): DriveCredentials {
  const remote = check.remote;
  if (!remote) throw new ConfigError(`rclone remote cannot be used: ${check.problems.join(" ")}`, [...check.problems]);
  const description = `rclone remote ${remote.name}: (${check.configPath})`;
  const extraSharedDrives = remote.teamDrive ? [remote.teamDrive] : [];
  if (remote.serviceAccountFile || remote.serviceAccountCredentials) {
    const key = remote.serviceAccountFile
      ? { file: remote.serviceAccountFile }
      : { json: remote.serviceAccountCredentials ?? "", origin: `service_account_credentials of ${remote.name}` };
    return { kind: "service-account", key, scope: remote.scope, description, extraSharedDrives };
  }
  if (!remote.token) throw new ConfigError(`rclone remote '${remote.name}' has no token.`);
  return {
    kind: "token",
    clientId: remote.clientId ?? RCLONE_SHARED_CLIENT_ID,
    clientSecret: remote.clientId ? (remote.clientSecret ?? "") : rcloneSharedClientSecret(),
    token: remote.token,
    scope: remote.scope,
    description,
    extraSharedDrives,
  };
}

/**
 * Test/dev only: `AUTOSCAN_GOOGLE_API_URL`, `AUTOSCAN_GOOGLE_TOKEN_URL`, `AUTOSCAN_GOOGLE_AUTH_URL` point the clients at
 * a local fake Google. Honoured only for loopback addresses, so they cannot send tokens anywhere else.
 */
export function googleEndpointsFromEnv(env: Readonly<Record<string, string | undefined>>, log?: Logger): GoogleEndpoints | undefined {
  const pick = (name: string): string | undefined => {
    const value = env[name];
    if (!value) return undefined;
    if (!isLoopbackUrl(value)) {
      log?.warn({ variable: name }, `${name} is ignored: only loopback addresses (127.0.0.1, localhost) are allowed`);
      return undefined;
    }
    return value;
  };
  const endpoints = {
    apiRootUrl: pick("AUTOSCAN_GOOGLE_API_URL"),
    tokenUrl: pick("AUTOSCAN_GOOGLE_TOKEN_URL"),
    authUrl: pick("AUTOSCAN_GOOGLE_AUTH_URL"),
  };
  return Object.values(endpoints).some(Boolean) ? endpoints : undefined;
}

function isLoopbackUrl(value: string): boolean {
  try {
    const host = new URL(value).hostname;
    return host === "127.0.0.1" || host === "localhost" || host === "[::1]";
  } catch {
    return false;
  }
}
