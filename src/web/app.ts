import { Hono, type Context, type MiddlewareHandler } from "hono";
import { ConfigError } from "../core/errors.ts";
import type { RouteDeps } from "./deps.ts";
import { DEFAULT_MAX_BODY_BYTES, DEFAULT_REQUEST_TIMEOUT_MS, type WebOptions } from "./options.ts";
import { byMethod, notFound, type Handler } from "./responses.ts";
import { createApiHandler } from "./routes/api.ts";
import { createHealthHandler } from "./routes/health.ts";
import { createManualPageHandler } from "./routes/manual-page.ts";
import { createMetricsHandler } from "./routes/metrics.ts";
import { countRequests } from "./request-count.ts";
import { createTriggerAuth, createTriggerHandler, logTriggerState } from "./routes/trigger.ts";
import { createWebhookHandler } from "./routes/webhook.ts";
import { createUrlSecret } from "./secret.ts";
import { clientAddress } from "./client-address.ts";
import { sameSiteOnly } from "./cross-site.ts";
import { createRejectionLog } from "./rejections.ts";
import { createGuessBrake } from "./guess-brake.ts";
import { refuseGuess, tooManyGuesses } from "./guess-answers.ts";
import { systemClock } from "../core/clock.ts";
import { registerConsole } from "./console/routes.ts";
import { registerUnprefixed } from "./unprefixed-url.ts";

/**
 * The one HTTP app: plex_autoscan's URLs first (`/<SERVER_PASS>`, `/api/<SERVER_PASS>`), then autoscan's
 * `/triggers/manual`, then `/health`. A wrong secret gets the same 404 as an unknown route, and only a right secret
 * learns which methods a route takes (405).
 */
export function createApp(options: WebOptions): Hono {
  if (options.serverPass.length === 0) throw new ConfigError("SERVER_PASS must not be empty: it is the webhook URL's secret");
  const secret = createUrlSecret(options.serverPass);
  const log = options.log.child({ component: "WEB" });
  const deps: RouteDeps = {
    options,
    log,
    rejections: options.rejections ?? createRejectionLog({ log }),
    guesses: options.guesses ?? createGuessBrake({ clock: systemClock }),
    secret,
    maxBodyBytes: options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
    requestTimeoutMs: options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
  };
  const root = new Hono();
  // SERVER_URL_BASE: behind a reverse proxy that forwards a path prefix, every route lives under it; /health is also
  // answered at the root, for the container's healthcheck and `autoscan health`, which ask autoscan directly.
  const app = options.urlBase ? root.basePath(options.urlBase) : root;
  // The secret is checked before anything else the route does (even the method), as a wrapper rather than a
  // middleware: one step less per request on the webhook path.
  const guard =
    (handler: Handler): Handler =>
    (c) => {
      // A browser's own fetches (`/favicon.ico`) are not attempts: the same 404 as ever, not slowed.
      const attempt = !BROWSER_FETCHES.has(c.req.param("pass") ?? "");
      if (attempt && !deps.guesses.admits(clientAddress(c))) return tooManyGuesses(c, deps);
      if (secret.matches(c.req.param("pass"))) return handler(c);
      // The attempted secret is never logged (it may be a near miss of the real one).
      if (!attempt) return notFound(c);
      return refuseGuess(c, deps, "wrong secret", "wrong secret in the URL", notFound);
    };

  // The level is fixed for the process: below debug the access log would only cost an extra async step per request.
  if (deps.log.isLevelEnabled("debug")) app.use(accessLog(deps));
  const health = byMethod({ GET: createHealthHandler(deps) });
  app.all("/health", health);
  if (options.urlBase) root.all("/health", health);
  // Every route that changes state refuses a browser's request from another site (cross-site.ts); the API checks
  // its state-changing commands itself.
  const trigger = sameSiteOnly(deps, countRequests(options.metrics, "trigger", createTriggerHandler(deps), "Manual"));
  app.all("/triggers/manual", createTriggerAuth(deps), byMethod({ GET: trigger, POST: trigger, PUT: trigger }));
  const api = countRequests(options.metrics, "api", createApiHandler(deps));
  app.all("/api/:pass", guard(byMethod({ GET: api, POST: api })));
  app.all("/:pass/triggers/manual", guard(byMethod({ GET: trigger, POST: trigger, PUT: trigger })));
  // GET only: a webhook labelled "metrics" (POST/PUT /<SERVER_PASS>/metrics) still reaches the webhook route below.
  app.get("/:pass/metrics", guard(createMetricsHandler(deps)));
  registerConsole(app, deps, guard);
  const webhook = sameSiteOnly(deps, countRequests(options.metrics, "unknown", createWebhookHandler(deps)));
  app.all("/:pass/:label", guard(byMethod({ POST: webhook, PUT: webhook })));
  app.all("/:pass", guard(byMethod({ GET: createManualPageHandler(deps), POST: webhook, PUT: webhook })));
  // SERVER_URL_BASE set: the old, unprefixed URLs get 404 and one WARNING naming the new one (unprefixed-url.ts).
  if (options.urlBase) registerUnprefixed(root, deps, guard, options.urlBase, systemClock);
  root.notFound(notFound);
  root.onError((error, c) => {
    deps.log.error({ err: error, method: c.req.method, url: secret.redact(c.req.path) }, "Unexpected error while answering a request");
    return c.text("Internal error; see the autoscan log", 500);
  });
  if (options.announce !== false) logTriggerState(deps);
  return root;
}

const BROWSER_FETCHES: ReadonlySet<string> = new Set(["favicon.ico", "robots.txt", "apple-touch-icon.png", "apple-touch-icon-precomposed.png"]);

/** One debug line per request, with the secret replaced in the URL (the body is never logged). */
function accessLog(deps: RouteDeps): MiddlewareHandler {
  return async (c: Context, next) => {
    const started = performance.now();
    await next();
    deps.log.debug(
      { method: c.req.method, url: deps.secret.redact(c.req.path), status: c.res.status, ms: Math.round(performance.now() - started) },
      "HTTP request",
    );
  };
}
