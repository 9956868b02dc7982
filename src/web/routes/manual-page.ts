import type { Context } from "hono";
import { consoleHtml, consoleShell } from "../console/console-deps.ts";
import type { RouteDeps } from "../deps.ts";
import { renderManualPage, renderManualPageDisabled } from "../views/manual-page.ts";
import { renderConnectPanel } from "../views/connect-panel.ts";
import { pendingCount } from "./queue-count.ts";

/**
 * `GET /<SERVER_PASS>`: the Scan page (the console's first page) when `SERVER_ALLOW_MANUAL_SCAN` is true.
 * plex_autoscan answered 401 with Flask's "could not verify that you are authorized" page when it was off (#160),
 * which sent users looking for a password; we answer 403 with a page that says which setting turns it on.
 */
export function createManualPageHandler(deps: RouteDeps) {
  const shell = consoleShell(deps.options);
  return async (c: Context): Promise<Response> => {
    const connect = connectPanel(c, deps);
    if (!deps.options.allowManualScan) return consoleHtml(c, renderManualPageDisabled(shell, connect), 403);
    const queueCount = await pendingCount(deps);
    return consoleHtml(c, renderManualPage({ shell, connect, ...(queueCount === undefined ? {} : { queueCount }) }));
  };
}

/** The "Connect your apps" panel for this request (its `Host` is the address the page was opened at). */
function connectPanel(c: Context, deps: RouteDeps): string {
  const options = deps.options.connectApps ?? { apps: {}, port: 3467, inContainer: false };
  const host = c.req.header("x-forwarded-host")?.split(",")[0]?.trim() || c.req.header("host");
  const https = (c.req.header("x-forwarded-proto") ?? new URL(c.req.url).protocol.replace(":", "")).split(",")[0]?.trim() === "https";
  return renderConnectPanel({ ...options, pass: deps.options.serverPass, pageHost: host || undefined, https });
}
