import type { Context } from "hono";
import type { RouteDeps } from "../deps.ts";
import type { WebOptions } from "../options.ts";
import { consoleToken } from "./csrf.ts";
import type { ConsoleShell } from "./layout.ts";
import type { ConsoleSources } from "./sources.ts";

/** What every console route receives: the web's route deps, the page shell (links, token) and the console sources. */
export interface ConsoleDeps extends RouteDeps {
  readonly shell: ConsoleShell;
  readonly sources: ConsoleSources;
  /** The clock the pages print relative times against (ms since the epoch). */
  readonly now: () => number;
}

/**
 * The console pages' headers: the manual page's strict policy, plus scripts and connections from this origin only
 * (the page script and its event stream). No inline script can run.
 */
export const CONSOLE_HEADERS: Readonly<Record<string, string>> = {
  "content-security-policy":
    "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'unsafe-inline'; img-src 'self' data:; " +
    "form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
  "referrer-policy": "no-referrer",
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "cache-control": "no-store",
};

export function consoleHtml(c: Context, body: string, status: 200 | 400 | 403 | 404 | 503 = 200): Response {
  return c.html(body, status, CONSOLE_HEADERS);
}

/** The shell every console page is drawn in: links under the URL secret, the Drive link, the form token. */
export function consoleShell(options: Pick<WebOptions, "serverPass" | "console" | "urlBase">): ConsoleShell {
  return {
    base: `${options.urlBase ?? ""}/${encodeURIComponent(options.serverPass)}`,
    drive: options.console?.drive !== undefined,
    csrf: consoleToken(options.serverPass),
    live: options.console?.changes !== undefined,
  };
}
