/**
 * Errors from Google's token endpoint and the Drive API, classified once where they enter (docs:
 * ../shared/reference/integrations.md §1.5 and §2.5). The token endpoint answers `{"error":"invalid_grant", …}`;
 * the Drive API answers `{"error":{"code":403,"errors":[{"reason":"userRateLimitExceeded"}]}}`: decide on
 * `errors[0].reason`, since newer bodies add `status` and `details` around it.
 *
 * Two kinds of "not allowed" are kept apart, because what follows differs:
 * - `auth`: the token endpoint refused to issue a token (a revoked refresh token, a wrong client, a deleted service
 *   account key). No retry fixes that; a person must.
 * - `unauthenticated`: the Drive API answered 401 to an access token. Google drops tokens before their expiry at
 *   times (a password change, a security event); a new token usually fixes it (token-renewal.ts).
 */
export type GoogleFailure =
  | { readonly kind: "rate-limit"; readonly retryAfterMs?: number; readonly detail: string }
  | { readonly kind: "transient"; readonly retryAfterMs?: number; readonly detail: string }
  | { readonly kind: "auth"; readonly code: OAuthErrorCode; readonly detail: string }
  | { readonly kind: "unauthenticated"; readonly detail: string }
  | { readonly kind: "scope"; readonly detail: string }
  | { readonly kind: "not-found"; readonly detail: string }
  | { readonly kind: "other"; readonly status?: number; readonly detail: string };

export type OAuthErrorCode =
  | "invalid_grant"
  | "invalid_client"
  | "unauthorized_client"
  | "redirect_uri_mismatch"
  | "access_denied";

const OAUTH_CODES = new Set<string>([
  "invalid_grant",
  "invalid_client",
  "unauthorized_client",
  "redirect_uri_mismatch",
  "access_denied",
]);
const RATE_REASONS = new Set(["userRateLimitExceeded", "rateLimitExceeded", "sharingRateLimitExceeded"]);
const SCOPE_REASONS = new Set(["insufficientPermissions", "ACCESS_TOKEN_SCOPE_INSUFFICIENT", "insufficientScopes"]);
const NETWORK_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EPIPE", "ENOTFOUND", "EAI_AGAIN"]);

interface ErrorLike {
  readonly code?: unknown;
  readonly message?: unknown;
  readonly cause?: unknown;
  readonly response?: { readonly status?: number; readonly data?: unknown; readonly headers?: unknown };
}

export function classifyGoogleError(error: unknown, now: number = Date.now()): GoogleFailure {
  const e = (error ?? {}) as ErrorLike;
  const status = e.response?.status;
  const data = e.response?.data as Record<string, unknown> | undefined;
  const retryAfterMs = parseRetryAfter(headerOf(e.response?.headers, "retry-after"), now);
  const oauth = typeof data?.error === "string" ? data.error : undefined;
  const description = typeof data?.error_description === "string" ? data.error_description : undefined;
  if (oauth && OAUTH_CODES.has(oauth)) {
    return { kind: "auth", code: oauth as OAuthErrorCode, detail: description ? `${oauth}: ${description}` : oauth };
  }
  const apiError = data && typeof data.error === "object" && data.error ? (data.error as Record<string, unknown>) : {};
  const reasons = collectReasons(apiError);
  const detail = typeof apiError.message === "string" ? apiError.message : describe(e, status);
  if (status === 429 || reasons.some((reason) => RATE_REASONS.has(reason))) {
    return { kind: "rate-limit", retryAfterMs, detail };
  }
  if (reasons.some((reason) => SCOPE_REASONS.has(reason))) return { kind: "scope", detail };
  if (status === 401) return { kind: "unauthenticated", detail };
  if (status === 404) return { kind: "not-found", detail };
  if (status === 408 || (status !== undefined && status >= 500)) return { kind: "transient", retryAfterMs, detail };
  if (status === undefined && isNetworkError(e)) return { kind: "transient", detail: describe(e, status) };
  return { kind: "other", status, detail };
}

function collectReasons(apiError: Record<string, unknown>): string[] {
  const reasons: string[] = [];
  if (Array.isArray(apiError.errors)) {
    for (const item of apiError.errors) {
      const reason = (item as { reason?: unknown } | null)?.reason;
      if (typeof reason === "string") reasons.push(reason);
    }
  }
  if (Array.isArray(apiError.details)) {
    for (const item of apiError.details) {
      const reason = (item as { reason?: unknown } | null)?.reason;
      if (typeof reason === "string") reasons.push(reason);
    }
  }
  return reasons;
}

function isNetworkError(e: ErrorLike): boolean {
  const codes = [e.code, (e.cause as ErrorLike | undefined)?.code];
  if (codes.some((code) => typeof code === "string" && NETWORK_CODES.has(code))) return true;
  const message = typeof e.message === "string" ? e.message : "";
  return /fetch failed|socket hang up|network|timed? ?out|aborted due to timeout/i.test(message);
}

function describe(e: ErrorLike, status: number | undefined): string {
  const message = typeof e.message === "string" && e.message ? e.message : "request failed";
  return status ? `HTTP ${status}: ${message}` : message;
}

function headerOf(headers: unknown, name: string): string | undefined {
  if (!headers) return undefined;
  if (typeof (headers as Headers).get === "function") return (headers as Headers).get(name) ?? undefined;
  const value = (headers as Record<string, unknown>)[name];
  return typeof value === "string" ? value : undefined;
}

/** `Retry-After` is either delta-seconds or an HTTP date. */
export function parseRetryAfter(value: string | undefined, now: number): number | undefined {
  if (!value) return undefined;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000);
  const date = Date.parse(trimmed);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** What a person should do about an OAuth failure, in one line. */
export function explainOAuthError(code: OAuthErrorCode, context: "exchange" | "refresh"): string {
  switch (code) {
    case "invalid_grant":
      return context === "exchange"
        ? "Google rejected the authorization code (invalid_grant): a code works once and only for a few minutes. Run `autoscan authorize` again and paste the new URL promptly."
        : "Google says the refresh token has expired or was revoked (invalid_grant). Run `autoscan authorize` again, then restart autoscan. (Apps left in \"Testing\" status get tokens that die after 7 days: publish the OAuth consent screen.)";
    case "invalid_client":
      return "Google does not accept this OAuth client (invalid_client): check CLOUD.CLIENT_ID and CLOUD.CLIENT_SECRET; copy both from the same client in Google Cloud Console → APIs & Services → Credentials.";
    case "unauthorized_client":
      if (context === "exchange") {
        return 'This OAuth client may not use the installed-app flow (unauthorized_client): create a client of type "Desktop app" and put its id and secret in CLOUD.CLIENT_ID and CLOUD.CLIENT_SECRET.';
      }
      return "The refresh token was issued to a different OAuth client (unauthorized_client): CLOUD.CLIENT_ID changed since it was obtained. Run `autoscan authorize` again with the current client.";
    case "redirect_uri_mismatch":
      return 'Google refused the loopback redirect (redirect_uri_mismatch): create the OAuth client as type "Desktop app"; a "Web application" client only accepts the redirect URIs registered for it.';
    case "access_denied":
      return "Access was denied on Google's consent screen; run `autoscan authorize` again and allow access.";
  }
}

/**
 * What Google's refusal to refresh a user's access token means, without the fix: that depends on whose token it is
 * (autoscan's own, from `autoscan authorize`, or one borrowed from an rclone remote). `detail` is the token endpoint's
 * `error: error_description`.
 */
export function describeRefreshRefusal(code: OAuthErrorCode, detail: string): string {
  switch (code) {
    case "invalid_grant":
      return `the refresh token has expired or was revoked (${detail})`;
    case "invalid_client":
      return `Google no longer accepts the OAuth client (${detail}); check that CLOUD.CLIENT_ID and CLOUD.CLIENT_SECRET come from the same, still existing client in Google Cloud Console → APIs & Services → Credentials`;
    case "unauthorized_client":
      return `the refresh token was issued to a different OAuth client (${detail}): the client id changed since it was obtained`;
    default:
      return `Google answered ${detail}`;
  }
}
