import type { Context } from "hono";
import { describeError } from "../../core/errors.ts";
import { clientAddress } from "../client-address.ts";
import type { RouteDeps } from "../deps.ts";
import { readBody } from "../read-body.ts";
import { noteRequest } from "../request-count.ts";
import { bodyProblem } from "../responses.ts";

/**
 * `GET|POST /api/<SERVER_PASS>` with `cmd` (and `id`, `limit`) from a JSON body, a form, or the query, lower-cased.
 * by275's answers: `{"success":true,"queue_count":N}`, `{"success":false,"msg":"Unknown cmd: x"}`, and the Drive
 * commands' `{"success":false,"msg":"Google Drive monitoring is not enabled"}`; always 200 (by275's Docker healthcheck
 * reads `success`), except 503 when the queue itself fails.
 */
type Params = (name: string) => string | undefined;
type ApiAnswer = { readonly success: boolean } & Readonly<Record<string, unknown>>;

const MAX_HISTORY = 1000;

export function createApiHandler(deps: RouteDeps) {
  return async (c: Context): Promise<Response> => {
    const params = await readParams(c, deps);
    if (typeof params !== "function") return params;
    const raw = params("cmd");
    const cmd = raw?.trim().toLowerCase() ?? "";
    noteRequest(c, "api", cmd);
    deps.log.info(`Client ${c.req.method} API call from '${clientAddress(c)}', type: ${/^[a-z_]{1,40}$/.test(cmd) ? cmd : "<invalid>"}`);
    c.header("cache-control", "no-store");
    try {
      return c.json(await run(cmd, params, deps));
    } catch (error) {
      deps.log.error({ err: error, cmd }, "API command failed");
      return c.json({ success: false, msg: `The ${cmd} command failed: ${describeError(error)}` }, 503);
    }
  };
}

async function run(cmd: string, params: Params, deps: RouteDeps): Promise<ApiAnswer> {
  const { queue, drive } = deps.options;
  switch (cmd) {
    case "":
      return { success: false, msg: "No cmd parameter was supplied" };
    case "queue_count":
      return { success: true, queue_count: await queue.pendingCount() };
    case "queue":
      return { success: true, queue: await queue.listPending() };
    case "history": {
      const limit = Math.min(MAX_HISTORY, Math.max(1, Number.parseInt(params("limit") ?? "", 10) || 100));
      return { success: true, history: await queue.listHistory(limit) };
    }
    case "retry":
    case "delete": {
      const id = params("id")?.trim();
      if (!id) return { success: false, msg: `The ${cmd} command needs an id parameter` };
      const found = cmd === "retry" ? await queue.retry(id) : await queue.remove(id);
      return found ? { success: true } : { success: false, msg: `No queue item with id ${id}` };
    }
    case "reset_page_token":
    case "clear_drive_cache":
      if (!drive) return { success: false, msg: "Google Drive monitoring is not enabled" };
      await (cmd === "reset_page_token" ? drive.resetPageToken() : drive.clearCache());
      return { success: true };
    default:
      return { success: false, msg: `Unknown cmd: ${cmd.slice(0, 100)}` };
  }
}

/** Parameters from the body (POST: JSON or form) first, then the query. */
async function readParams(c: Context, deps: RouteDeps): Promise<Params | Response> {
  const query: Params = (name) => c.req.query(name);
  if (c.req.method !== "POST") return query;
  const body = await readBody(c, deps.maxBodyBytes);
  switch (body.kind) {
    case "problem":
      return bodyProblem(c, body.status, body.reason);
    case "empty":
      return query;
    case "form":
      return (name) => body.fields.get(name)?.[0] ?? query(name);
    case "json": {
      const fields = typeof body.value === "object" && body.value !== null ? (body.value as Record<string, unknown>) : {};
      return (name) => scalar(fields[name]) ?? query(name);
    }
  }
}

function scalar(value: unknown): string | undefined {
  return typeof value === "string" || typeof value === "number" ? String(value) : undefined;
}
