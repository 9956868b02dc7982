import { createHmac, timingSafeEqual } from "node:crypto";
import type { Context } from "hono";

/**
 * Cross-site protection of the console's actions (scan now, retry, delete). Three checks, any of which refuses:
 * - a browser's `Sec-Fetch-Site` saying the request came from another site;
 * - an `Origin` whose host is not the one the request was sent to;
 * - a missing or wrong form token. The token is derived from `SERVER_PASS`, so it survives restarts and reloads,
 *   and a page from another site (which does not know the secret) cannot make one.
 */
export function consoleToken(serverPass: string): string {
  return createHmac("sha256", serverPass).update("autoscan console form token v1").digest("base64url");
}

/** Why the request is refused, or undefined when it may go on. */
export function crossSiteProblem(c: Context, expected: string, token: string | undefined): string | undefined {
  const site = c.req.header("sec-fetch-site");
  if (site === "cross-site") return "the request came from another site";
  const origin = c.req.header("origin");
  if (origin !== undefined && origin !== "null" && hostOf(origin) !== (c.req.header("host") ?? "").toLowerCase()) {
    return "the request came from another site";
  }
  if (origin === "null") return "the request came from a page without an origin";
  if (token === undefined || !sameText(token, expected)) return "the form's token is missing or out of date (reload the page)";
  return undefined;
}

function hostOf(origin: string): string | undefined {
  try {
    return new URL(origin).host.toLowerCase();
  } catch {
    return undefined;
  }
}

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
