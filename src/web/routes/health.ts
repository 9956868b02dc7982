import type { Context } from "hono";
import { describeError } from "../../core/errors.ts";
import type { RouteDeps } from "../deps.ts";

/**
 * `GET /health` (no secret: container healthchecks and uptime monitors call it). 200 `{"status":"ok",…}` when the
 * service is ready; 503 while it starts, or when the queue store is unusable. The details come from `health()`.
 */
export function createHealthHandler(deps: RouteDeps) {
  return async (c: Context): Promise<Response> => {
    c.header("cache-control", "no-store");
    try {
      const { ready, status, ...details } = await deps.options.health();
      return c.json({ status: status ?? (ready ? "ok" : "starting"), ...details }, ready ? 200 : 503);
    } catch (error) {
      deps.log.warn({ err: error }, "The health check failed");
      return c.json({ status: "error", error: describeError(error) }, 503);
    }
  };
}
