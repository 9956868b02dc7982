import type { Hono } from "hono";
import type { RouteDeps } from "../deps.ts";
import type { Handler } from "../responses.ts";
import { consoleShell, type ConsoleDeps } from "./console-deps.ts";
import { CONSOLE_SCRIPT } from "./client-script.ts";
import { createDrivePageHandler } from "./drive-page.ts";
import { createLibrariesPageHandler } from "./libraries-page.ts";
import { createDismissRefusedHandler, createItemActionHandler, createRetryFailedHandler, createRetryUnmappedHandler } from "./actions.ts";
import { createEventsHandler } from "./events.ts";
import { createHistoryPageHandler, createQueuePageHandler } from "./pages.ts";

/**
 * The operator's console, under the URL secret: the pages (GET only: a POST to `/<SERVER_PASS>/<name>` stays a
 * webhook labelled `<name>`), the page script, the event stream, and the actions (three path segments, so they never
 * meet a webhook label).
 */
export function registerConsole(app: Hono, deps: RouteDeps, guard: (handler: Handler) => Handler, now: () => number = Date.now): void {
  const sources = deps.options.console ?? {};
  const consoleDeps: ConsoleDeps = {
    ...deps,
    sources,
    now,
    shell: consoleShell(deps.options),
  };
  app.get("/:pass/console.js", guard((c) => c.body(CONSOLE_SCRIPT, 200, SCRIPT_HEADERS)));
  // Pages (each module exports a handler factory taking ConsoleDeps):
  app.get("/:pass/events", guard(createEventsHandler(consoleDeps)));
  app.get("/:pass/queue", guard(createQueuePageHandler(consoleDeps)));
  app.get("/:pass/history", guard(createHistoryPageHandler(consoleDeps)));
  app.post("/:pass/items/:id/:action", guard(createItemActionHandler(consoleDeps)));
  app.post("/:pass/history/retry-failed", guard(createRetryFailedHandler(consoleDeps)));
  app.post("/:pass/history/retry-unmapped", guard(createRetryUnmappedHandler(consoleDeps)));
  app.post("/:pass/refused/dismiss", guard(createDismissRefusedHandler(consoleDeps)));
  // --- console pages: begin
  app.get("/:pass/drive", guard(createDrivePageHandler(consoleDeps)));
  app.get("/:pass/libraries", guard(createLibrariesPageHandler(consoleDeps)));
  // --- console pages: end
}

const SCRIPT_HEADERS: Readonly<Record<string, string>> = {
  "content-type": "text/javascript; charset=utf-8",
  "x-content-type-options": "nosniff",
  "cache-control": "no-cache",
};
