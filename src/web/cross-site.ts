import type { Context } from "hono";
import { clientAddress } from "./client-address.ts";
import type { RouteDeps } from "./deps.ts";
import type { Handler } from "./responses.ts";

/**
 * Browsers say where a request comes from; scripts, curl and the *arr apps say nothing. A request that changes state
 * (a scan, a retry, a delete) is refused when a browser says it comes from another site, so a page elsewhere cannot
 * make a visitor's browser post to autoscan (the URL's secret may sit in its history or a bookmark). Checked:
 * - `Sec-Fetch-Site: cross-site` or `same-site`: a sibling subdomain is another site to autoscan (an `<img>` on
 *   `blog.example.org` sends a GET to `autoscan.example.org` with `same-site` and no `Origin`);
 * - an `Origin` whose host is neither the `Host` the request was sent to nor, behind a reverse proxy, the
 *   `X-Forwarded-Host` the proxy passed on (a page of another site cannot set that header without a preflight that
 *   autoscan never grants);
 * `Origin: null` decides nothing: autoscan's own pages send it (their `Referrer-Policy: no-referrer` makes a form
 * post's origin opaque), and a page elsewhere that sends it is also `cross-site` by `Sec-Fetch-Site`.
 * Requests without these headers go on as before.
 */
export function crossSiteProblem(c: Context): string | undefined {
  const site = c.req.header("sec-fetch-site");
  if (site === "cross-site" || site === "same-site") return "the request came from another site";
  const origin = c.req.header("origin");
  if (origin === undefined || origin === "null") return undefined;
  const from = hostOf(origin);
  const hosts = [c.req.header("host"), ...(c.req.header("x-forwarded-host") ?? "").split(",")].map((h) => h?.trim().toLowerCase());
  return from !== undefined && hosts.includes(from) ? undefined : "the request came from another site";
}

/** The handler, behind the check above: a refusal is 403 with the reason, and one WARNING line (client, route). */
export function sameSiteOnly(deps: RouteDeps, handler: Handler): Handler {
  return (c) => refuseCrossSite(c, deps) ?? handler(c);
}

/** The refusal's answer (403) for a cross-site request, or undefined when it may go on. */
export function refuseCrossSite(c: Context, deps: RouteDeps, json = false): Response | undefined {
  const problem = crossSiteProblem(c);
  if (!problem) return undefined;
  const what = `${c.req.method} ${deps.secret.redact(c.req.path)}`;
  deps.log.warn({ client: clientAddress(c), origin: c.req.header("origin"), reason: problem }, `Refused ${what} from client '${clientAddress(c)}': ${problem}`);
  const message = `Refused: ${problem}. Send it from autoscan's own pages, or from a script or app (they send no Origin).`;
  return json ? c.json({ success: false, msg: message }, 403) : c.text(message, 403, { "cache-control": "no-store" });
}

function hostOf(origin: string): string | undefined {
  try {
    return new URL(origin).host.toLowerCase();
  } catch {
    return undefined;
  }
}
