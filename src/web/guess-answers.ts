import type { Context } from "hono";
import { clientAddress } from "./client-address.ts";
import type { RouteDeps } from "./deps.ts";
import type { RejectionReason } from "./rejections.ts";

/**
 * The two answers of the guess brake (guess-brake.ts), for every route that checks a secret: a wrong secret's own
 * answer (404, 401), told in the log and sent when the brake lets it go; and 429 to a client whose wrong answers are
 * still waiting, its secret unchecked.
 */
export async function refuseGuess(c: Context, deps: RouteDeps, reason: RejectionReason, detail: string, answer: (c: Context) => Response): Promise<Response> {
  const client = clientAddress(c);
  deps.rejections.refuse(client, reason, detail);
  await deps.guesses.wrong(client);
  return answer(c);
}

export function tooManyGuesses(c: Context, deps: RouteDeps): Response {
  deps.rejections.refuse(clientAddress(c), "too many wrong secrets", "too many wrong secrets, answered 429 until its wrong answers have gone out");
  const wait = String(deps.guesses.retryAfterSeconds);
  return new Response(`Too many wrong secrets from this address: try again in ${wait} s.`, {
    status: 429,
    headers: { "content-type": "text/plain; charset=UTF-8", "retry-after": wait, "cache-control": "no-store" },
  });
}
