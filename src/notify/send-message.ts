import { excerpt, httpCall, httpReason, HttpTimeoutError } from "../http/http-call.ts";
import type { OutgoingMessage } from "./batch.ts";

/**
 * One POST of one message to one notifier, and what it came to, as a value:
 * - `sent`: a 2xx;
 * - `retry`: worth trying again later — no answer, a timeout, 5xx, 408, 429 (with the receiver's `retry_after` when it
 *   gives one, as Discord does), apprise-api's 424 (a service behind it failed);
 * - `refused`: trying the same message again will not help — any other 4xx (a deleted Discord webhook is 404, a wrong
 *   password 401/403), or a redirect (the URL has moved: the config must say where).
 * The words never hold the URL: only `shown` (scheme, host and port), and the answer's excerpt goes through `scrub`.
 */
export type Delivery =
  | { readonly kind: "sent"; readonly status: number }
  | { readonly kind: "retry"; readonly problem: string; readonly waitAtLeastMs?: number }
  | { readonly kind: "refused"; readonly problem: string };

export interface SendTarget {
  /** Where to POST, without userinfo (`NotifierUrl.sendUrl`). */
  readonly url: string;
  readonly authorization?: string;
  /** What may be said of the address (`https://discord.com`). */
  readonly shown: string;
  readonly timeoutMs: number;
  /** Hides the notifier's secrets in text from the receiver (its error page may echo the path). */
  readonly scrub: (text: string) => string;
}

/**
 * A 2xx is delivered at its status line: its body is not read, so neither its size nor its pace can turn a delivered
 * message into one sent again. Another answer's body is read up to this size (it is quoted, and a 429 says when to
 * come back); the rest is left unread.
 */
const ANSWER_MAX_BYTES = 256 * 1024;
/** A receiver's `retry_after` is followed up to an hour. */
const RETRY_AFTER_MAX_MS = 3_600_000;

export async function sendMessage(target: SendTarget, message: OutgoingMessage, signal?: AbortSignal): Promise<Delivery> {
  const headers: Record<string, string> = { "User-Agent": "autoscan", ...message.headers };
  if (target.authorization) headers.Authorization = target.authorization;
  let answer: { status: number; body: string };
  try {
    answer = await httpCall({ method: "POST", url: target.url, headers, body: message.body, timeoutMs: target.timeoutMs, maxBytes: ANSWER_MAX_BYTES, overCap: "cut", readsBody: (status) => !isDelivered(status), ...(signal ? { signal } : {}) });
  } catch (error) {
    if (signal?.aborted) return { kind: "retry", problem: "stopped" };
    const why = error instanceof HttpTimeoutError ? `no answer within ${String(target.timeoutMs / 1000)} s` : target.scrub(httpReason(error));
    return { kind: "retry", problem: `${target.shown}: ${why}` };
  }
  const { status } = answer;
  if (isDelivered(status)) return { kind: "sent", status };
  const said = `${target.shown} answered ${String(status)} (${excerpt(answer.body, target.scrub)})`;
  if (status === 429) {
    const wait = retryAfterMs(answer.body);
    return wait === undefined ? { kind: "retry", problem: said } : { kind: "retry", problem: said, waitAtLeastMs: wait };
  }
  if (status >= 500 || status === 408 || status === 424) return { kind: "retry", problem: said };
  if (status >= 300 && status < 400) return { kind: "refused", problem: `${said}: a redirect; put the address it leads to in the notifier's URL` };
  return { kind: "refused", problem: said };
}

function isDelivered(status: number): boolean {
  return status >= 200 && status < 300;
}

/** `{"retry_after": 64.57}` (Discord's 429, in seconds) → ms. */
function retryAfterMs(body: string): number | undefined {
  try {
    const value = (JSON.parse(body) as { retry_after?: unknown }).retry_after;
    return typeof value === "number" && Number.isFinite(value) && value > 0 ? Math.min(RETRY_AFTER_MAX_MS, Math.ceil(value * 1000)) : undefined;
  } catch {
    return undefined;
  }
}
