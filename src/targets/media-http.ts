import { TargetAuthError, TargetConfigError, TargetUnavailableError } from "../core/errors.ts";
import { classifyConnectionFailure, connectionFailureWords, timeoutCause } from "../http/connection-failure.ts";
import { excerpt, headersAreValid, httpCall, httpReason, HttpTooLargeError, originOf, type HttpAnswer } from "../http/http-call.ts";

/**
 * The one HTTP boundary of the Jellyfin, Emby and autoscan-relay targets: a timeout and the caller's AbortSignal on
 * every call, a response size cap, and the failure → meaning classification, done once here:
 * - no connection (refused, reset, DNS), a timeout, any 5xx, or 429 → `TargetUnavailableError` (retry later);
 * - 401/403 → `TargetAuthError`, whose message names the setting to fix (`TARGETS.jellyfin.TOKEN`);
 * - 404, when the caller says a 404 means a wrong setting (`notFoundHint`) → `TargetConfigError` with that hint;
 * - any other status ≥ 300 → `MediaHttpError` with the status and a short excerpt of the body.
 * Keys and passwords travel only in the headers the caller gives; they never appear in a message: excerpts have
 * them blanked out, and the URL shown is the base without credentials, query or path.
 */
export interface MediaHttpOptions {
  /** The server's base URL (`http://jellyfin:8096`, `https://host/jellyfin`); a trailing `/` is fine. */
  readonly url: string;
  /** Who answers, for messages: `Jellyfin 'jellyfin'`. */
  readonly label: string;
  /** The setting(s) to check when the server refuses our credentials: `TARGETS.jellyfin.TOKEN`. */
  readonly authKey: string;
  /** Sent on every request (the auth header). */
  readonly headers: Readonly<Record<string, string>>;
  /** Set when every route asked for exists on a right server, so a 404 means the URL is wrong: what to check. */
  readonly notFoundHint?: string;
  /** Values that must never appear in a message (the key, the password). */
  readonly secrets: readonly string[];
  /** Per call (default 30 s): a hung server must not stall the queue. */
  readonly timeoutMs?: number;
  /** Bodies larger than this are refused (default 4 MiB). */
  readonly maxResponseBytes?: number;
}

export interface MediaRequest {
  /** Query parameters, percent-encoded here (a space is `%20`, never `+`, which some servers keep as a plus). */
  readonly query?: Readonly<Record<string, string>>;
  /** Sent as `application/json`. */
  readonly json?: unknown;
  readonly signal?: AbortSignal;
  /**
   * Statuses the caller reads itself (their body says what happened), answered instead of thrown: the targeted-scans
   * plugin answers 404 for a path it cannot see and 500 for a stale item it removed.
   */
  readonly accept?: readonly number[];
}

export interface MediaResponse {
  readonly status: number;
  readonly body: string;
}

export interface MediaHttp {
  /** The base URL for messages: scheme, host and port only. */
  readonly shownUrl: string;
  /** Resolves for a 2xx answer; throws a classified error for anything else. `path` starts with `/`. */
  request(method: "GET" | "POST", path: string, request?: MediaRequest): Promise<MediaResponse>;
}

/** The server answered with a status that is neither success, auth nor "unavailable" (400, 404, 409 …). */
export class MediaHttpError extends Error {
  override name = "MediaHttpError";
  readonly status: number;
  constructor(message: string, status: number, options?: ErrorOptions) {
    super(message, options);
    this.status = status;
  }
}

const DEFAULT_TIMEOUT_MS = 30_000;
const DEFAULT_MAX_BYTES = 4 * 1024 * 1024;

export function createMediaHttp(options: MediaHttpOptions): MediaHttp {
  const base = options.url.replace(/\/+$/, "");
  const shownUrl = originOf(base);
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const maxBytes = options.maxResponseBytes ?? DEFAULT_MAX_BYTES;
  const secrets = options.secrets.filter((secret) => secret.length > 0);
  const blank = (text: string): string => secrets.reduce((out, secret) => out.split(secret).join("***"), text);
  // A key with a character no header can carry (a pasted line break) would make fetch throw an error that quotes the
  // header, key included: refuse it here, in words that name the setting and not the value.
  const badHeaders = !headersAreValid(options.headers);

  return {
    shownUrl,
    async request(method, path, request = {}) {
      const what = `${method} ${path}`;
      if (badHeaders) throw new TargetConfigError(`${options.authKey} has a character an HTTP header cannot carry (a line break?)`);
      const query = request.query ? `?${encodeQuery(request.query)}` : "";
      const headers: Record<string, string> = { Accept: "application/json", ...options.headers };
      if (request.json !== undefined) headers["Content-Type"] = "application/json";
      let answer: HttpAnswer;
      try {
        answer = await httpCall({
          method,
          url: `${base}${path}${query}`,
          headers,
          ...(request.json === undefined ? {} : { body: JSON.stringify(request.json) }),
          timeoutMs,
          maxBytes,
          ...(request.signal ? { signal: request.signal } : {}),
        });
      } catch (error) {
        // The caller gave up (a shutdown): its reason, as it is.
        if (request.signal?.aborted) throw error;
        throw networkError(error, options.label, what, shownUrl, timeoutMs, blank);
      }
      const { status, body } = answer;
      if ((status >= 200 && status < 300) || request.accept?.includes(status)) return { status, body };
      throw statusError(status, excerpt(blank(body)), options, what, shownUrl);
    },
  };
}

function statusError(status: number, bodyExcerpt: string, options: MediaHttpOptions, what: string, shown: string): Error {
  const { label, authKey } = options;
  if (status === 401 || status === 403) {
    return new TargetAuthError(`${label} rejected the key (${status} to ${what} at ${shown}): check ${authKey}`);
  }
  if (status === 404 && options.notFoundHint !== undefined) {
    return new TargetConfigError(`${label} answered 404 to ${what} at ${shown}: ${options.notFoundHint}`);
  }
  if (status >= 500 || status === 429) {
    return new TargetUnavailableError(`${label} answered ${status} to ${what} at ${shown}`);
  }
  return new MediaHttpError(`${label} answered ${status} to ${what} at ${shown}: ${bodyExcerpt}`, status);
}

function networkError(
  error: unknown,
  label: string,
  what: string,
  shown: string,
  timeoutMs: number,
  blank: (text: string) => string,
): Error {
  if (error instanceof HttpTooLargeError) return new MediaHttpError(`${label}: ${what}: ${error.message}`, 0);
  const failure = classifyConnectionFailure(error);
  if (failure?.kind === "timeout") {
    return new TargetUnavailableError(`${label} did not answer ${what} within ${timeoutMs / 1000} s (${shown}): ${timeoutCause(failure.phase)}`);
  }
  // The socket's error is kept only as words (no `cause`): pino would print a cause's whole message.
  const words = failure ? connectionFailureWords(failure) : httpReason(error);
  return new TargetUnavailableError(blank(`${label} is unreachable at ${shown} (${what}): ${words}`));
}

function encodeQuery(query: Readonly<Record<string, string>>): string {
  return Object.entries(query)
    .map(([key, value]) => `${encodeURIComponent(key)}=${encodeURIComponent(value)}`)
    .join("&");
}

