import { request as httpRequest, type IncomingMessage } from "node:http";
import { request as httpsRequest } from "node:https";
import { isIP } from "node:net";

/**
 * The one outbound HTTP call of autoscan's hand-written clients (Plex, Jellyfin/Emby/relays, the *arr apps, the
 * doctor's probes), over `node:http`: the web server loads it anyway, while Node's `fetch` costs ~18 MB of memory the
 * first time it is used. One call, on a connection of its own: no redirect is followed (a redirect is an answer like any other), the answer's
 * body is read as text up to `maxBytes`, and the whole call ends within `timeoutMs` or when `signal` aborts. What
 * went wrong is told by the error's class, for each client to put in its own words:
 * - `HttpTimeoutError`: no complete answer within `timeoutMs` (its `phase`: the name's address, the connection, or the
 *   answer never came);
 * - `HttpTooLargeError`: the body is over `maxBytes` (unless `overCap` is `"cut"`: then the answer is what was read);
 * - `signal.reason` when the caller's signal aborted;
 * - else the socket's own error (`code`: ECONNREFUSED, ENOTFOUND …), as `httpReason` words it; an answer cut short
 *   carries `code: "ECONNRESET"`. connection-failure.ts reads every one of these once, for all callers.
 */
export interface HttpCallOptions {
  readonly method: string;
  readonly url: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string;
  readonly timeoutMs: number;
  readonly maxBytes: number;
  readonly signal?: AbortSignal;
  /**
   * Whether an answer of this status needs its body (default: all do). When not, the call ends at the status line with
   * an empty body: the status is the whole answer (a notifier's 2xx), and a large or slow body cannot undo it.
   */
  readonly readsBody?: (status: number) => boolean;
  /** Over `maxBytes`: `"fail"` (default, `HttpTooLargeError`) or `"cut"` (the first `maxBytes`, the rest unread). */
  readonly overCap?: "fail" | "cut";
}

export interface HttpAnswer {
  readonly status: number;
  readonly body: string;
}

/**
 * No complete answer in time. `phase`: `resolve` when the host's name had no address yet (a DNS server that does not
 * answer), `connect` when the connection itself never completed (a wrong address, a firewall dropping the packets),
 * `answer` when it did and the answer did not come (a hung server).
 */
export type HttpTimeoutPhase = "resolve" | "connect" | "answer";

export class HttpTimeoutError extends Error {
  override name = "HttpTimeoutError";
  readonly phase: HttpTimeoutPhase;
  constructor(message: string, phase: HttpTimeoutPhase) {
    super(message);
    this.phase = phase;
  }
}

export class HttpTooLargeError extends Error {
  override name = "HttpTooLargeError";
}

export function httpCall(options: HttpCallOptions): Promise<HttpAnswer> {
  return new Promise<HttpAnswer>((resolve, reject) => {
    const { signal } = options;
    if (signal?.aborted) return reject(signal.reason);
    const url = new URL(options.url);
    const send = url.protocol === "https:" ? httpsRequest : httpRequest;
    const headers: Record<string, string> = { ...options.headers };
    if (options.body !== undefined) headers["Content-Length"] = String(Buffer.byteLength(options.body));
    let settled = false;
    const finish = (error: unknown, answer?: HttpAnswer): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      // The connection is ours alone: closing it also stops a body that was left unread (or is still coming).
      req.destroy();
      if (answer) resolve(answer);
      else reject(error);
    };
    // A connection of its own (no keep-alive pool): these calls are few, and a pooled socket the server has closed
    // meanwhile (a restart) would fail the next call with "socket hang up".
    const req = send(url, { method: options.method, headers, agent: false }, (response: IncomingMessage) => {
      const status = response.statusCode ?? 0;
      // (`finish` ends the connection, after it has settled: ending it first would report the close instead.)
      if (options.readsBody?.(status) === false) return finish(undefined, { status, body: "" });
      const cut = options.overCap === "cut";
      const declared = Number(response.headers["content-length"] ?? "0");
      if (declared > options.maxBytes && !cut) {
        return finish(new HttpTooLargeError(`response of ${String(declared)} bytes is over the ${String(options.maxBytes)}-byte cap`));
      }
      const chunks: Buffer[] = [];
      let size = 0;
      const answer = (): HttpAnswer => ({ status, body: Buffer.concat(chunks).toString("utf8") });
      response.on("data", (chunk: Buffer) => {
        const room = options.maxBytes - size;
        size += chunk.byteLength;
        if (size <= options.maxBytes) return void chunks.push(chunk);
        if (!cut) return finish(new HttpTooLargeError(`response is over the ${String(options.maxBytes)}-byte cap`));
        chunks.push(chunk.subarray(0, room));
        finish(undefined, answer());
      });
      response.on("end", () => finish(undefined, answer()));
      response.on("error", (error) => finish(error));
      response.on("aborted", () => finish(Object.assign(new Error("the connection closed before the answer was complete"), { code: "ECONNRESET" })));
    });
    // How far the call got, for the timeout to say which part never came (connection-failure.ts). An IP address
    // needs no lookup (and the socket emits none for it).
    let reached: HttpTimeoutPhase = isIP(url.hostname.replace(/^\[|\]$/g, "")) ? "connect" : "resolve";
    req.once("socket", (socket) => {
      if (!socket.connecting) reached = "answer";
      socket.once("lookup", () => (reached = reached === "resolve" ? "connect" : reached));
      socket.once("connect", () => (reached = "answer"));
    });
    const timer = setTimeout(() => {
      const seconds = String(options.timeoutMs / 1000);
      const what = {
        resolve: `no answer within ${seconds} s (the name '${url.hostname}' had no address yet: no answer from the DNS server)`,
        connect: `no answer within ${seconds} s (the connection never completed)`,
        answer: `connected, but no answer within ${seconds} s`,
      };
      finish(new HttpTimeoutError(what[reached], reached));
    }, options.timeoutMs);
    const onAbort = (): void => finish(signal?.reason);
    signal?.addEventListener("abort", onAbort, { once: true });
    req.on("error", (error) => finish(error));
    req.end(options.body);
  });
}

/** The socket's error in words: `ECONNREFUSED connect ECONNREFUSED 127.0.0.1:32400`. */
export function httpReason(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = (error as { code?: unknown }).code;
  return typeof code === "string" && !error.message.includes(code) ? `${code} ${error.message}` : error.message;
}

/** Scheme, host and port: a base path may carry a secret (`http://host/<SERVER_PASS>`), userinfo always does. */
export function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return "(invalid URL)";
  }
}

/** Whether every value can be sent as an HTTP header (a pasted line break cannot), without saying the value. */
export function headersAreValid(headers: Readonly<Record<string, string>>): boolean {
  return Object.entries(headers).every(([name, value]) => /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/.test(name) && !/[\r\n\0]/.test(value));
}

/**
 * A short, single-line excerpt of a body for an error message (HTML tags stripped). `hide` (a scrubber) runs on the
 * whole text before it is cut: a secret the cut went through would no longer be found, and its first part would show.
 */
export function excerpt(body: string, hide: (text: string) => string = (text) => text): string {
  const plain = body
    .replace(/<script[\s\S]*?<\/script>/gi, " ")
    .replace(/<[^>]+>/g, " ")
    .replace(/\s+/g, " ")
    .trim();
  const text = hide(plain);
  if (!text) return "(empty body)";
  return text.length > 160 ? `${text.slice(0, 157)}...` : text;
}
