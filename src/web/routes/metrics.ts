import type { Context } from "hono";
import { isAuthorized, unauthorized } from "../basic-auth.ts";
import type { RouteDeps } from "../deps.ts";
import { refuseGuess } from "../guess-answers.ts";
import { notFound } from "../responses.ts";

/**
 * `GET /<SERVER_PASS>/metrics`: Prometheus's text format (`SERVER_METRICS`). Behind the URL secret (checked first, by
 * the app's guard), and behind HTTP Basic as well when `SERVER_AUTH_USERNAME`/`SERVER_AUTH_PASSWORD` are set: a
 * scrape config can send both. While metrics are off the URL answers the same 404 as an unknown one. A bare
 * `/metrics` has no secret: it is 404 like any other URL without one.
 */
export function createMetricsHandler(deps: RouteDeps) {
  const metrics = deps.options.metrics;
  const auth = deps.options.auth;
  const credentials = auth?.username && auth.password ? auth : undefined;
  return async (c: Context): Promise<Response> => {
    if (!metrics) return notFound(c);
    if (credentials && !isAuthorized(c.req.header("authorization"), credentials)) {
      return refuseGuess(c, deps, "wrong credentials", "wrong or no credentials for /<SERVER_PASS>/metrics", unauthorized);
    }
    const body = await metrics.render();
    return new Response(body, { status: 200, headers: { "content-type": metrics.contentType, "cache-control": "no-store" } });
  };
}
