import type { Context } from "hono";
import type { RouteDeps } from "../deps.ts";
import { html } from "../responses.ts";
import { renderManualPage, renderManualPageDisabled } from "../views/manual-page.ts";
import { pendingCount } from "./queue-count.ts";

/**
 * `GET /<SERVER_PASS>`: the manual scan page when `SERVER_ALLOW_MANUAL_SCAN` is true. plex_autoscan answered 401
 * with Flask's "could not verify that you are authorized" page when it was off (#160), which sent users looking for
 * a password; we answer 403 with a page that says which setting turns it on.
 */
export function createManualPageHandler(deps: RouteDeps) {
  return async (c: Context): Promise<Response> => {
    if (!deps.options.allowManualScan) return html(c, renderManualPageDisabled(), 403);
    const queueCount = await pendingCount(deps);
    return html(c, renderManualPage(queueCount === undefined ? {} : { queueCount }));
  };
}
