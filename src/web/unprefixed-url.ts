import type { Context, Hono } from "hono";
import type { Clock } from "../core/clock.ts";
import { clientAddress } from "./client-address.ts";
import type { RouteDeps } from "./deps.ts";
import { notFound, text, type Handler } from "./responses.ts";

/**
 * A request to one of autoscan's secret URLs without `SERVER_URL_BASE` (`POST /<SERVER_PASS>/sonarr` after the base
 * became `/autoscan`): an app or a script still set up with the old URL. Nothing is queued (a prefix in front of
 * autoscan is there to be the only way in), but the answer and the log say where autoscan is now, so the change does
 * not break every webhook in silence: 404 with the new path in the body (the *arr apps show it beside a failed Test),
 * and one WARNING naming the new URL, SERVER_PASS hidden — then at most one an hour, with how many came meanwhile.
 *
 * Only a right secret learns this: a wrong one is a guess like any other (the same 404, slowed by the guess brake), so
 * the old URLs are no oracle for the secret.
 */
export const UNPREFIXED_WARNING_EVERY_MS = 3_600_000;

/**
 * Registers the old forms at the root, after every route under the base (which win): `/api/<x>`, `/<x>` and `/<x>/…`.
 * A path under the base that no route took stays a plain 404, not a guess.
 */
export function registerUnprefixed(root: Hono, deps: RouteDeps, guard: (handler: Handler) => Handler, urlBase: string, clock: Pick<Clock, "now">): void {
  const moved = guard(createUnprefixedHandler(deps, urlBase, clock));
  const outside: Handler = (c) => (c.req.path === urlBase || c.req.path.startsWith(`${urlBase}/`) ? notFound(c) : moved(c));
  root.all("/api/:pass", outside);
  root.all("/:pass", outside);
  root.all("/:pass/*", outside);
}

function createUnprefixedHandler(deps: RouteDeps, urlBase: string, clock: Pick<Clock, "now">): Handler {
  let lastWarnedAt: number | undefined;
  let since = 0;
  return (c: Context) => {
    const path = c.req.path;
    const moved = `${urlBase}${path}`;
    const now = clock.now();
    if (lastWarnedAt !== undefined && now - lastWarnedAt < UNPREFIXED_WARNING_EVERY_MS) {
      since += 1;
      deps.log.debug({ client: clientAddress(c), url: deps.secret.redact(path) }, "Request without SERVER_URL_BASE answered 404");
    } else {
      const newUrl = deps.secret.redact(`${new URL(c.req.url).origin}${moved}`);
      const more = since > 0 ? ` (${String(since)} more such request(s) in the last hour)` : "";
      deps.log.warn(
        { client: clientAddress(c), url: deps.secret.redact(path), newUrl },
        `Client '${clientAddress(c)}' sent ${c.req.method} ${deps.secret.redact(path)} without SERVER_URL_BASE (${urlBase}); answered 404${more}. ` +
          `autoscan answers at ${newUrl} now: update the URL where this request comes from ('autoscan arr connect' fixes the *arr apps' connections, ` +
          `'autoscan webhook-url' prints their URLs).`,
      );
      lastWarnedAt = now;
      since = 0;
    }
    return text(c, `Not found here: autoscan is served under SERVER_URL_BASE (${urlBase}) now: ${deps.secret.redact(moved)}`, 404);
  };
}
