import type { Context } from "hono";

/**
 * Answers shared by the routes. Text answers keep plex_autoscan's plain style (`OK`, one-line reasons); HTML answers
 * carry headers that keep the secret URL out of Referer headers and forbid scripts and framing.
 */
export const HTML_HEADERS: Readonly<Record<string, string>> = {
  "content-security-policy":
    "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
  "referrer-policy": "no-referrer",
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "cache-control": "no-store",
};

export function html(c: Context, body: string, status: 200 | 400 | 403 | 413 | 415 | 503 = 200): Response {
  return c.html(body, status, HTML_HEADERS);
}

const TEXT_HEADERS: Readonly<Record<string, string>> = {
  "content-type": "text/plain; charset=UTF-8",
  "x-content-type-options": "nosniff",
  "cache-control": "no-store",
};

type TextStatus = 200 | 400 | 401 | 403 | 404 | 405 | 408 | 413 | 415 | 503;

/**
 * A plain-text answer. Its headers are a plain object, which @hono/node-server writes as they are (`c.text` would
 * build a `Headers` that the adapter then converts back, a good share of a webhook's cost), so headers set earlier
 * with `c.header()` do not apply: pass them in `extra`.
 */
export function text(_c: Context, body: string, status: TextStatus = 200, extra?: Readonly<Record<string, string>>): Response {
  return new Response(body, { status, headers: extra ? { ...TEXT_HEADERS, ...extra } : TEXT_HEADERS });
}

/** A refused body. After a 413 the rest of the body is not read, so the connection is closed after the answer. */
export function bodyProblem(c: Context, status: 400 | 413 | 415, reason: string): Response {
  return text(c, reason, status, status === 413 ? { connection: "close" } : undefined);
}

/** The same 404 for an unknown route and a wrong secret, so a wrong guess learns nothing. */
export function notFound(c: Context): Response {
  return text(c, "Not Found", 404);
}

export type Handler = (c: Context) => Response | Promise<Response>;
export type MethodHandlers = Partial<Record<"GET" | "POST" | "PUT", Handler>>;

/** Dispatch on the method; HEAD runs GET (Node drops the body); anything else → 405 with `Allow`. */
export function byMethod(handlers: MethodHandlers): Handler {
  const allowed = Object.keys(handlers);
  if (handlers.GET) allowed.push("HEAD");
  const allow = { allow: allowed.join(", ") };
  return (c) => {
    const method = c.req.method === "HEAD" ? "GET" : c.req.method;
    const handler = handlers[method as keyof MethodHandlers];
    if (handler) return handler(c);
    return text(c, "Method Not Allowed", 405, allow);
  };
}

/** The client wants HTML back: the manual page's form says so, or a browser's Accept header does. */
export function wantsHtml(c: Context, fromPage: boolean): boolean {
  return fromPage || (c.req.header("accept") ?? "").includes("text/html");
}
