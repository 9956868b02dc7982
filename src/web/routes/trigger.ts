import type { Context, MiddlewareHandler } from "hono";
import { parseManualTrigger } from "../../intake/manual.ts";
import { isAuthorized, unauthorized } from "../basic-auth.ts";
import { refuseGuess, tooManyGuesses } from "../guess-answers.ts";
import { clientAddress } from "../client-address.ts";
import type { RouteDeps } from "../deps.ts";
import { notFound, text } from "../responses.ts";
import { submitScans } from "../../intake/submit.ts";

/**
 * Cloudbox/autoscan's manual trigger, which Tdarr, FileFlows, Bazarr and scripts call:
 * `GET|POST|PUT /triggers/manual?dir=…&dir=…&path=…`, `&refresh=1` to have the named file's item re-read in place after
 * its scan (a subtitle Bazarr added, a file Tdarr transcoded: `parseRefreshParam`). The body is never read (tools built for autoscan POST with an
 * empty body; autopulse PR #546). `HEAD` → 200, autoscan's liveness probe.
 *
 * The bare route needs HTTP Basic auth (`SERVER_AUTH_USERNAME`/`SERVER_AUTH_PASSWORD`) and does not exist (404)
 * while those are unset; `/<SERVER_PASS>/triggers/manual` is the same trigger for tools that can only take a URL.
 */
export function createTriggerHandler(deps: RouteDeps) {
  return async (c: Context): Promise<Response> => {
    if (c.req.method === "HEAD") return c.body(null, 200);
    return trigger(c, deps);
  };
}

/**
 * Guards the bare route before anything else (even the method check), so that while it is off every request gets
 * the same 404 as an unknown URL, and while it is on nothing is learnt without the credentials.
 */
export function createTriggerAuth(deps: RouteDeps): MiddlewareHandler {
  const auth = deps.options.auth;
  const credentials = auth?.username && auth.password ? auth : undefined;
  return async (c, next) => {
    if (!credentials) return notFound(c);
    if (!deps.guesses.admits(clientAddress(c))) return tooManyGuesses(c, deps);
    if (!isAuthorized(c.req.header("authorization"), credentials)) {
      return refuseGuess(c, deps, "wrong credentials", "wrong or no credentials for /triggers/manual", unauthorized);
    }
    await next();
  };
}

async function trigger(c: Context, deps: RouteDeps): Promise<Response> {
  const ip = clientAddress(c);
  const parsed = parseManualTrigger(
    { dirs: c.req.queries("dir") ?? [], paths: c.req.queries("path") ?? [], ...refreshQuery(c.req.query("refresh")) },
    { mapper: deps.options.mapper, ignoreList: deps.options.ignoreList, source: "Manual" },
  );
  if (!parsed.ok) {
    deps.log.warn({ reason: parsed.reason }, `Client '${ip}' made an invalid manual trigger request`);
    return text(c, `Invalid manual trigger: ${parsed.reason}`, 400);
  }
  for (const request of parsed.accepted) {
    deps.log.debug({ path: request.path, kind: request.kind }, `Client '${ip}' made a manual scan request for: '${request.receivedPath}'`);
  }
  for (const entry of parsed.ignored) {
    deps.log.info({ path: entry.path }, `Ignoring scan request because ${entry.ignoredBy} was matched from your SERVER_IGNORE_LIST`);
  }
  const ignored = parsed.ignored.map((entry) => ({ path: entry.path, reason: `matches '${entry.ignoredBy}' in SERVER_IGNORE_LIST` }));
  if (parsed.accepted.length === 0) return c.json({ success: true, queued: [], ignored });
  const submitted = await submitScans(deps.options.sink, parsed.accepted, deps.requestTimeoutMs, deps.log, `client '${ip}'`);
  if (!submitted.ok) return c.json({ success: false, msg: submitted.reason }, 503);
  const queued = parsed.accepted.map((request, index) => {
    const item = submitted.result.items[index];
    return { path: request.path, folder: item?.folder ?? request.path, merged: item?.merged ?? false, ...(request.refresh ? { refresh: request.refresh } : {}) };
  });
  return c.json({ success: true, queued, ignored });
}

const refreshQuery = (value: string | undefined): { refresh?: string } => (value === undefined ? {} : { refresh: value });

/** The start-up line that says how to turn the bare trigger on (it is off until credentials are set). */
export function logTriggerState(deps: RouteDeps): void {
  const auth = deps.options.auth;
  if (auth?.username && auth.password) {
    deps.log.info("/triggers/manual is enabled with HTTP Basic auth (SERVER_AUTH_USERNAME)");
  } else {
    deps.log.info(
      "/triggers/manual is off: set SERVER_AUTH_USERNAME and SERVER_AUTH_PASSWORD to enable it; " +
        "/<SERVER_PASS>/triggers/manual works without them",
    );
  }
}
