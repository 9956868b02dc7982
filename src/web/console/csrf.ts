import { createHmac, timingSafeEqual } from "node:crypto";
import type { Context } from "hono";
import { crossSiteProblem as fromAnotherSite } from "../cross-site.ts";

/**
 * Cross-site protection of the console's actions (scan now, retry, delete). Two checks, either of which refuses:
 * - the browser says the request came from another site (`../cross-site.ts`, as for every route that changes state);
 * - a missing or wrong form token. The token is derived from `SERVER_PASS`, so it survives restarts and reloads,
 *   and a page from another site (which does not know the secret) cannot make one.
 */
export function consoleToken(serverPass: string): string {
  return createHmac("sha256", serverPass).update("autoscan console form token v1").digest("base64url");
}

/** Why the request is refused, or undefined when it may go on. */
export function consoleActionProblem(c: Context, expected: string, token: string | undefined): string | undefined {
  const site = fromAnotherSite(c);
  if (site) return site;
  if (token === undefined || !sameText(token, expected)) return "the form's token is missing or out of date (reload the page)";
  return undefined;
}

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
