import type { OAuth2Client } from "google-auth-library";
import type { Logger } from "../core/logger.ts";
import { classifyGoogleError, type GoogleFailure, type OAuthErrorCode } from "./google-errors.ts";
import { GoogleCallError } from "./google-retry.ts";

/**
 * Google can drop an access token before its expiry (a password change, a security event, a token revoked by hand).
 * The client cannot know: the token looks valid until the Drive API answers 401. Then the token is renewed once (a
 * refresh-token grant for a user, a new signed JWT grant for a service account) and the call is sent again, once.
 *
 * Only Google refusing to issue a new token is final (`CredentialsRefusedError`, whose message names the fix): no
 * retry can fix a revoked refresh token or a deleted key, a person must. Anything else (the token endpoint down, a
 * second 401 right after a renewal) fails this poll only; the monitor waits and tries again, one renewal per refused
 * call at most, never in a loop.
 *
 * google-auth-library renews on a 401 by itself only for credentials without an expiry date, and on a 403 too (a rate
 * limit would cost a refresh): credentials.ts always sets an expiry, so this is the one place it happens.
 */

/** Google refused to issue a new access token for these credentials: stop, and show the message (it names the fix). */
export class CredentialsRefusedError extends Error {
  override name = "CredentialsRefusedError";
  readonly code: OAuthErrorCode;
  constructor(message: string, code: OAuthErrorCode, options?: ErrorOptions) {
    super(message, options);
    this.code = code;
  }
}

export interface TokenRenewal {
  /** Gets a new access token now, whatever the client thinks of the current one; rejects with the token endpoint's error. */
  renew(): Promise<void>;
  /** One line for a person: what Google's refusal means for these credentials, and what to do. */
  explainRefusal(code: OAuthErrorCode, detail: string): string;
}

export interface TokenRenewalOptions {
  /** Runs after a new token was obtained, before the call is retried (the token store's write). */
  readonly afterRenewal?: () => Promise<void>;
  readonly explainRefusal: (code: OAuthErrorCode, detail: string) => string;
}

export function createTokenRenewal(client: OAuth2Client, options: TokenRenewalOptions): TokenRenewal {
  let inFlight: Promise<void> | undefined;
  const renewNow = async (): Promise<void> => {
    // Forget the refused token and mark it expired: the library then asks Google for a new one, and so does gtoken,
    // which would otherwise hand a service account its cached (refused) token back.
    client.setCredentials({ ...client.credentials, access_token: null, expiry_date: 1 });
    await client.getAccessToken();
    await options.afterRenewal?.();
  };
  return {
    // Calls refused together share one renewal.
    renew: () =>
      (inFlight ??= renewNow().finally(() => {
        inFlight = undefined;
      })),
    explainRefusal: options.explainRefusal,
  };
}

/** Runs one Drive call; on a 401 renews the access token once and runs it once more. */
export async function withTokenRenewal<T>(what: string, call: () => Promise<T>, renewal: TokenRenewal, log: Logger): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (!isRefusedAccessToken(error)) throw finalIfRefused(error, renewal);
  }
  await renew(what, renewal, log);
  try {
    return await call();
  } catch (error) {
    if (!isRefusedAccessToken(error)) throw finalIfRefused(error, renewal);
    const detail = `Google Drive refused the new access token too (401: ${error.failure.detail}); the next poll tries again`;
    throw new GoogleCallError(what, { kind: "unauthenticated", detail }, { cause: error });
  }
}

async function renew(what: string, renewal: TokenRenewal, log: Logger): Promise<void> {
  try {
    await renewal.renew();
  } catch (error) {
    const failure = classifyGoogleError(error);
    if (failure.kind === "auth") {
      throw new CredentialsRefusedError(renewal.explainRefusal(failure.code, failure.detail), failure.code, { cause: error });
    }
    const detail = `Google Drive refused the access token before its expiry (401), and no new access token could be obtained: ${failure.detail}`;
    throw new GoogleCallError(what, { ...failure, detail } as GoogleFailure, { cause: error });
  }
  // Said only once Google issued the new token: the log never claims a renewal that did not happen.
  log.info({ call: what }, `Google Drive refused the access token before its expiry (401); got a new access token and retrying ${what}`);
}

function isRefusedAccessToken(error: unknown): error is GoogleCallError {
  return error instanceof GoogleCallError && error.failure.kind === "unauthenticated";
}

/**
 * The library also refreshes by itself, when the token is expired or due: its refusal surfaces inside the call as a
 * token-endpoint error, and is just as final.
 */
function finalIfRefused(error: unknown, renewal: TokenRenewal): unknown {
  if (!(error instanceof GoogleCallError) || error.failure.kind !== "auth") return error;
  const { code, detail } = error.failure;
  return new CredentialsRefusedError(renewal.explainRefusal(code, detail), code, { cause: error });
}
