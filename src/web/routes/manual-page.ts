import type { Context } from "hono";
import { consoleHtml, consoleShell } from "../console/console-deps.ts";
import type { RouteDeps } from "../deps.ts";
import { renderManualPage, renderManualPageDisabled } from "../views/manual-page.ts";
import { pendingCount } from "./queue-count.ts";

/**
 * `GET /<SERVER_PASS>`: the Scan page (the console's first page) when `SERVER_ALLOW_MANUAL_SCAN` is true.
 * plex_autoscan answered 401 with Flask's "could not verify that you are authorized" page when it was off (#160),
 * which sent users looking for a password; we answer 403 with a page that says which setting turns it on.
 */
export function createManualPageHandler(deps: RouteDeps) {
  const shell = consoleShell(deps.options);
  return async (c: Context): Promise<Response> => {
    if (!deps.options.allowManualScan) return consoleHtml(c, renderManualPageDisabled(shell), 403);
    const queueCount = await pendingCount(deps);
    return consoleHtml(c, renderManualPage({ shell, ...(queueCount === undefined ? {} : { queueCount }) }));
  };
}
