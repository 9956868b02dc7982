import type { Context } from "hono";
import type { RequestMetrics } from "../core/metrics.ts";
import type { Handler } from "./responses.ts";

/**
 * Counts each request a route answers, by source, event and status (`SERVER_METRICS`). A route notes the source and
 * the event once it has read them (`noteRequest`); a request refused before that counts under the route's own
 * source and event (`none` unless the route has only one). Without metrics the route is returned as it is: nothing
 * is added to the webhook path but one `WeakMap` entry.
 */
const notes = new WeakMap<Context, { readonly source: string; readonly event: string }>();

export function noteRequest(c: Context, source: string, event: string): void {
  notes.set(c, { source, event });
}

export function countRequests(metrics: RequestMetrics | undefined, source: string, handler: Handler, event = "none"): Handler {
  if (!metrics) return handler;
  return async (c) => {
    // HEAD is a liveness probe (autoscan's trigger), not a request.
    if (c.req.method === "HEAD") return handler(c);
    let status = 500;
    try {
      const response = await handler(c);
      status = response.status;
      return response;
    } finally {
      const note = notes.get(c);
      metrics.requestReceived(note?.source ?? source, note?.event ?? event, status);
    }
  };
}
