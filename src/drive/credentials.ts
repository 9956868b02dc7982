import { OAuth2Client, type Credentials } from "google-auth-library";
import type { Clock } from "../core/clock.ts";
import { ConfigError } from "../core/errors.ts";
import type { Logger } from "../core/logger.ts";
import { createDriveApi } from "./drive-api.ts";
import { describeRefreshRefusal, type OAuthErrorCode } from "./google-errors.ts";
import type { RetryPolicy } from "./google-retry.ts";
import { requiredScope, type ScopeNeeds } from "./scope.ts";
import { createServiceAccountClient, loadServiceAccountKey } from "./service-account.ts";
import type { DriveConnection } from "./session.ts";
import { createTokenRenewal, type TokenRenewal } from "./token-renewal.ts";
import type { StoredTokens, TokenStore } from "./token-store.ts";

/**
 * The three ways to give the monitor Google credentials, one connection type out:
 * 1. `oauth`: the tokens `autoscan authorize` stored (refreshed tokens are written back to the same file);
 * 2. `service-account`: a key file (`CLOUD.SERVICE_ACCOUNT_FILE`);
 * 3. `token`: a client and token borrowed from elsewhere (an rclone `drive` remote; the wiring reads rclone.conf and
 *    hands its values here, or a `service-account` for a remote that uses one). Borrowed tokens are refreshed in
 *    memory only: their owner keeps its own file.
 * Each way also says how to get a new access token when Drive refuses the current one early, and what a person should
 * do when Google refuses to issue one at all (token-renewal.ts).
 */
export type DriveCredentials =
  | { readonly kind: "oauth"; readonly clientId: string; readonly clientSecret: string; readonly tokenStore: TokenStore }
  | {
      readonly kind: "service-account";
      readonly key: { readonly file: string } | { readonly json: string; readonly origin: string };
      /** Defaults to the scope the settings need. */
      readonly scope?: string;
      readonly description?: string;
      readonly extraSharedDrives?: readonly string[];
    }
  | {
      readonly kind: "token";
      readonly clientId: string;
      readonly clientSecret: string;
      readonly token: { readonly accessToken?: string; readonly refreshToken: string; readonly expiryDate?: number; readonly tokenType?: string };
      readonly scope?: string;
      readonly description: string;
      readonly extraSharedDrives?: readonly string[];
    };

/** Test/dev overrides of Google's addresses (a local fake); production leaves them unset. */
export interface GoogleEndpoints {
  /** Drive API root, e.g. `http://127.0.0.1:4000/` (the client keeps the `/drive/v3/` path). */
  readonly apiRootUrl?: string;
  readonly tokenUrl?: string;
  readonly authUrl?: string;
}

export interface ConnectDriveOptions {
  readonly credentials: DriveCredentials;
  readonly endpoints?: GoogleEndpoints;
  readonly scopeNeeds: ScopeNeeds;
  readonly clock: Clock;
  readonly log: Logger;
  /** Registers secrets (tokens, client secret) with the log scrubber. */
  readonly onSecret?: (value: string) => void;
  readonly retry?: RetryPolicy;
  readonly random?: () => number;
  /** `changes.list` page size (Drive's maximum, 1000, by default). */
  readonly pageSize?: number;
}

export async function connectDrive(options: ConnectDriveOptions, signal?: AbortSignal): Promise<DriveConnection> {
  const { credentials } = options;
  const secret = (value: string | null | undefined): void => {
    if (value) options.onSecret?.(value);
  };
  const auth = await createAuth(options, secret);
  auth.client.on("tokens", (tokens: Credentials) => {
    secret(tokens.access_token);
    secret(tokens.refresh_token);
  });
  const api = createDriveApi({
    auth: auth.client,
    renewal: auth.renewal,
    rootUrl: options.endpoints?.apiRootUrl,
    clock: options.clock,
    log: options.log,
    signal,
    retry: options.retry,
    random: options.random,
    pageSize: options.pageSize,
  });
  options.log.debug({ kind: credentials.kind }, "Google Drive credentials loaded");
  return {
    api,
    grantedScope: auth.scope,
    description: auth.description,
    extraSharedDrives: auth.extraSharedDrives,
    tokenExpiresAt: () => knownExpiry(auth.client.credentials.expiry_date),
  };
}

/** The client's expiry, unless it is the "unknown, refresh first" mark `oauthClient` sets (1 ms after the epoch). */
function knownExpiry(expiry: number | null | undefined): number | undefined {
  return typeof expiry === "number" && expiry > 1 ? expiry : undefined;
}

interface Auth {
  readonly client: OAuth2Client;
  readonly renewal: TokenRenewal;
  readonly scope?: string;
  readonly description: string;
  readonly extraSharedDrives?: readonly string[];
}

async function createAuth(options: ConnectDriveOptions, secret: (value: string | undefined) => void): Promise<Auth> {
  const { credentials, endpoints } = options;
  if (credentials.kind === "service-account") {
    const key = await loadServiceAccountKey(credentials.key);
    secret(key.privateKey);
    const scope = credentials.scope ?? requiredScope(options.scopeNeeds);
    const client = createServiceAccountClient(key, { scope, tokenUrl: endpoints?.tokenUrl });
    const description = credentials.description ?? `service account ${key.clientEmail}`;
    const keySource = "file" in credentials.key ? `the key file ${credentials.key.file}` : credentials.key.origin;
    // A service account has no refresh token: a renewal signs a new JWT grant, which Google refuses for a dead key.
    const renewal = createTokenRenewal(client, {
      explainRefusal: (_code, detail) =>
        `Google refused a new access token for service account ${key.clientEmail} (${detail}): its key was deleted or disabled, or the account was. Create a new key for it (Google Cloud Console → IAM & Admin → Service Accounts → Keys), replace ${keySource} with it, then restart autoscan.`,
    });
    return { client, renewal, scope, description, extraSharedDrives: credentials.extraSharedDrives };
  }
  if (credentials.kind === "oauth") return oauthFromStore(credentials, options, secret);
  return borrowedAuth(credentials, options, secret);
}

async function oauthFromStore(
  credentials: Extract<DriveCredentials, { kind: "oauth" }>,
  options: ConnectDriveOptions,
  secret: (value: string | undefined) => void,
): Promise<Auth> {
  const { clientId, clientSecret, tokenStore } = credentials;
  if (!clientId || !clientSecret) {
    throw new ConfigError("CLOUD.CLIENT_ID and CLOUD.CLIENT_SECRET are required (or set CLOUD.SERVICE_ACCOUNT_FILE, or CLOUD.RCLONE_CONFIG and CLOUD.RCLONE_REMOTE).");
  }
  const stored = await tokenStore.load();
  if (!stored) {
    throw new ConfigError(`No Google Drive token yet (${tokenStore.path}): run \`autoscan authorize\` (in Docker: docker exec -it autoscan autoscan authorize), then restart autoscan.`);
  }
  if (stored.clientId !== clientId) {
    throw new ConfigError(`The stored Google token was issued to OAuth client ${stored.clientId}, but CLOUD.CLIENT_ID is now ${clientId}; a refresh token only works with its own client. Run \`autoscan authorize\` again.`);
  }
  secret(clientSecret);
  secret(stored.refreshToken);
  secret(stored.accessToken);
  const client = oauthClient(clientId, clientSecret, options.endpoints, stored);
  let current = stored;
  let saving: Promise<void> = Promise.resolve();
  client.on("tokens", (tokens: Credentials) => {
    current = mergeTokens(current, tokens);
    const snapshot = current;
    saving = saving
      .then(() => tokenStore.save(snapshot))
      .catch((error: unknown) => options.log.error({ err: error, path: tokenStore.path }, "Could not save the refreshed Google token"));
  });
  const renewal = createTokenRenewal(client, {
    // The retried call goes out only once the new token is on disk: a crash right after it loses nothing.
    afterRenewal: () => saving,
    explainRefusal: (code, detail) =>
      `Google refused to refresh the access token: ${describeRefreshRefusal(code, detail)}. Run \`autoscan authorize\` again (in Docker: docker exec -it autoscan autoscan authorize), then restart autoscan.${testingAppHint(code)}`,
  });
  return { client, renewal, scope: stored.scope, description: `OAuth client ${clientId}` };
}

function borrowedAuth(
  credentials: Extract<DriveCredentials, { kind: "token" }>,
  options: ConnectDriveOptions,
  secret: (value: string | undefined) => void,
): Promise<Auth> {
  secret(credentials.clientSecret);
  secret(credentials.token.refreshToken);
  secret(credentials.token.accessToken);
  const stored: StoredTokens = { clientId: credentials.clientId, ...credentials.token, scope: credentials.scope };
  const client = oauthClient(credentials.clientId, credentials.clientSecret, options.endpoints, stored);
  const renewal = createTokenRenewal(client, {
    explainRefusal: (code, detail) =>
      `Google refused to refresh the access token of ${credentials.description}: ${describeRefreshRefusal(code, detail)}. Give the remote a new token (\`rclone config reconnect <remote>:\`) or run \`autoscan authorize\` for a token of autoscan's own, then restart autoscan.`,
  });
  return Promise.resolve({ client, renewal, scope: credentials.scope, description: credentials.description, extraSharedDrives: credentials.extraSharedDrives });
}

function oauthClient(clientId: string, clientSecret: string, endpoints: GoogleEndpoints | undefined, tokens: StoredTokens): OAuth2Client {
  const client = new OAuth2Client({
    clientId,
    clientSecret,
    endpoints: {
      ...(endpoints?.tokenUrl ? { oauth2TokenUrl: endpoints.tokenUrl } : {}),
      ...(endpoints?.authUrl ? { oauth2AuthBaseUrl: endpoints.authUrl } : {}),
    },
  });
  client.setCredentials({
    refresh_token: tokens.refreshToken,
    access_token: tokens.accessToken,
    // An unknown expiry counts as expired (1 ms after the epoch): the token is refreshed before the first call. Not 0:
    // the library reads a falsy expiry as "never expires", and would then refresh by itself on any 401 or 403.
    expiry_date: tokens.accessToken && tokens.expiryDate ? tokens.expiryDate : 1,
    token_type: tokens.tokenType ?? "Bearer",
    scope: tokens.scope,
  });
  return client;
}

/** Apps left in "Testing" publishing status get refresh tokens that die after about 7 days (integrations.md §2.5). */
function testingAppHint(code: OAuthErrorCode): string {
  return code === "invalid_grant"
    ? ' If this happens about a week after each authorization, the OAuth consent screen is still in "Testing" status: publish it.'
    : "";
}

function mergeTokens(current: StoredTokens, tokens: Credentials): StoredTokens {
  return {
    ...current,
    accessToken: tokens.access_token ?? current.accessToken,
    // Google normally sends no new refresh token on refresh: keep the old one.
    refreshToken: tokens.refresh_token ?? current.refreshToken,
    expiryDate: tokens.expiry_date ?? current.expiryDate,
    scope: tokens.scope ?? current.scope,
    tokenType: tokens.token_type ?? current.tokenType,
  };
}
