import { TargetAuthError, TargetConfigError, TargetUnavailableError } from "../core/errors.ts";

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
      const timeout = AbortSignal.timeout(timeoutMs);
      const headers: Record<string, string> = { Accept: "application/json", ...options.headers };
      if (request.json !== undefined) headers["Content-Type"] = "application/json";
      const timedOut = (): number | undefined => (timeout.aborted ? timeoutMs : undefined);
      let response: Response;
      try {
        response = await fetch(`${base}${path}${query}`, {
          method,
          headers,
          ...(request.json === undefined ? {} : { body: JSON.stringify(request.json) }),
          signal: request.signal ? AbortSignal.any([request.signal, timeout]) : timeout,
          redirect: "manual",
        });
      } catch (error) {
        throw networkError(error, options.label, what, shownUrl, timedOut(), blank);
      }
      let body: string;
      try {
        body = await readCapped(response, maxBytes, `${options.label}: ${what}`);
      } catch (error) {
        throw networkError(error, options.label, what, shownUrl, timedOut(), blank);
      }
      if (response.status >= 200 && response.status < 300) return { status: response.status, body };
      throw statusError(response.status, excerpt(blank(body)), options, what, shownUrl);
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
  timedOutAfter: number | undefined,
  blank: (text: string) => string,
): Error {
  if (error instanceof MediaHttpError) return error;
  if (timedOutAfter !== undefined) {
    return new TargetUnavailableError(`${label} did not answer ${what} within ${timedOutAfter / 1000} s (${shown})`);
  }
  // The socket's error is kept only as words (no `cause`): pino would print a cause's whole message.
  return new TargetUnavailableError(blank(`${label} is unreachable at ${shown} (${what}): ${networkReason(error)}`));
}

function headersAreValid(headers: Readonly<Record<string, string>>): boolean {
  try {
    new Headers(headers);
    return true;
  } catch {
    return false;
  }
}

/** fetch hides the socket error under `cause` ("fetch failed" ← ECONNREFUSED). */
function networkReason(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause;
  if (cause instanceof Error) {
    const code = (cause as { code?: unknown }).code;
    return typeof code === "string" ? `${code} ${cause.message}` : cause.message;
  }
  return error.message;
}

function encodeQuery(query: Readonly<Record<string, string>>): string {
  return Object.entries(query)
    .map(([key, value]) => `${encodeURIComponent(key)}=${encodeURIComponent(value)}`)
    .join("&");
}

/** Scheme, host and port: a base path may carry a secret (`http://host/<SERVER_PASS>`), userinfo always does. */
function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return "(invalid URL)";
  }
}

/** Reads the body as text, refusing to hold more than `maxBytes` (a misdirected URL could stream anything). */
async function readCapped(response: Response, maxBytes: number, what: string): Promise<string> {
  const declared = Number(response.headers.get("content-length") ?? "0");
  if (declared > maxBytes) {
    await response.body?.cancel();
    throw new MediaHttpError(`${what}: response of ${declared} bytes is over the ${maxBytes}-byte cap`, 0);
  }
  if (!response.body) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength;
    if (size > maxBytes) throw new MediaHttpError(`${what}: response is over the ${maxBytes}-byte cap`, 0);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/** A short, single-line excerpt of a body for an error message (HTML tags stripped). */
function excerpt(body: string): string {
  const text = body
    .replace(/<script[\s\S]*?<\/script>/gi, " ")
    .replace(/<[^>]+>/g, " ")
    .replace(/\s+/g, " ")
    .trim();
  if (!text) return "(empty body)";
  return text.length > 160 ? `${text.slice(0, 157)}...` : text;
}
