import type { Context } from "hono";
import { describeError } from "../../core/errors.ts";
import { landedFilter } from "../../core/queue-view.ts";
import { clientAddress } from "../client-address.ts";
import type { RouteDeps } from "../deps.ts";
import { readBody } from "../read-body.ts";
import { noteRequest } from "../request-count.ts";
import { bodyProblem } from "../responses.ts";
import type { PathPreview } from "../console/sources.ts";
import { itemJson } from "../item-json.ts";
import { answerBackfill } from "./backfill.ts";
import { answerArrCheck } from "./arr-check.ts";
import { refuseCrossSite } from "../cross-site.ts";
import { NO_FILES_TO_REFRESH, refreshItem } from "../refresh-item.ts";
import type { HistoryQuery } from "../options.ts";

/**
 * `GET|POST /api/<SERVER_PASS>` with `cmd` (and `id`, `limit`) from a JSON body, a form, or the query, lower-cased.
 * by275's answers: `{"success":true,"queue_count":N}`, `{"success":false,"msg":"Unknown cmd: x"}`, and the Drive
 * commands' `{"success":false,"msg":"Google Drive monitoring is not enabled"}`; always 200 (by275's Docker healthcheck
 * reads `success`), except 503 when the queue itself fails.
 */
type Params = (name: string) => string | undefined;
type ApiAnswer = { readonly success: boolean } & Readonly<Record<string, unknown>>;

const MAX_PAGE = 1000;
/** The commands that change something: a browser's request for one from another site is refused. */
const CHANGES_STATE: ReadonlySet<string> = new Set(["retry_failed", "retry_unmapped", "retry", "delete", "refresh", "reset_page_token", "clear_drive_cache", "backfill", "arr_check"]);

export function createApiHandler(deps: RouteDeps) {
  return async (c: Context): Promise<Response> => {
    const params = await readParams(c, deps);
    if (typeof params !== "function") return params;
    const raw = params("cmd");
    const cmd = raw?.trim().toLowerCase() ?? "";
    noteRequest(c, "api", cmd);
    deps.log.info(`Client ${c.req.method} API call from '${clientAddress(c)}', type: ${/^[a-z_]{1,40}$/.test(cmd) ? cmd : "<invalid>"}`);
    c.header("cache-control", "no-store");
    if (CHANGES_STATE.has(cmd)) {
      const refused = refuseCrossSite(c, deps, true);
      if (refused) return refused;
    }
    if (cmd === "backfill") return answerBackfill(c, params, deps);
    if (cmd === "arr_check") return c.json(await answerArrCheck(params, deps));
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
    case "queue": {
      const page = pageParams(params, 1000);
      if (typeof page === "string") return { success: false, msg: page };
      const found = await queue.listPending(page);
      // What the dispatcher holds from memory: a folder waiting for its anchor (SERVER_ANCHORS), or for a mount that
      // does not answer, says which.
      const activity = deps.options.console?.activity?.();
      const anchors = new Map((activity?.held ?? []).map((h) => [h.id, h.anchor]));
      const mounts = new Map((activity?.waitingForMount ?? []).map((h) => [h.id, h.mount]));
      const items = found.items.map((item) => {
        const anchor = anchors.get(item.id);
        const mount = mounts.get(item.id);
        return {
          ...itemJson(item),
          ...(anchor === undefined ? {} : { waitingForAnchor: anchor }),
          ...(mount === undefined ? {} : { waitingForMount: mount }),
        };
      });
      return { success: true, total: found.total, offset: page.offset, queue: items };
    }
    case "history": {
      const query = historyParams(params);
      if (typeof query === "string") return { success: false, msg: query };
      const found = await queue.listHistory(query);
      return { success: true, total: found.total, offset: query.offset, history: found.items.map(itemJson) };
    }
    case "preview": {
      const path = params("path")?.trim();
      if (!path) return { success: false, msg: "The preview command needs a path parameter" };
      const preview = deps.options.console?.preview;
      if (!preview) return { success: false, msg: "The preview is not available in this setup" };
      return { success: true, ...previewJson(await preview(path)) };
    }
    case "retry_failed":
      return { success: true, retried: await queue.retryFailed() };
    // The requests refused for lack of a mapping that today's SERVER_PATH_MAPPINGS reach: each waits under its mapped folder.
    case "retry_unmapped":
      return { success: true, retried: (await queue.retryRemapped?.()) ?? 0 };
    case "retry":
    case "delete": {
      const id = params("id")?.trim();
      if (!id) return { success: false, msg: `The ${cmd} command needs an id parameter` };
      const found = cmd === "retry" ? await queue.retry(id) : await queue.remove(id);
      return found ? { success: true } : { success: false, msg: `No queue item with id ${id}` };
    }
    // Scanned again, then each named file's item re-read in place on every target once it shows (refresh-item.ts).
    case "refresh": {
      const id = params("id")?.trim();
      if (!id) return { success: false, msg: "The refresh command needs an id parameter" };
      const asked = await refreshItem(await queue.getItem(id), deps.options.sink, "API");
      if (asked.kind === "missing") return { success: false, msg: `No queue item with id ${id}` };
      if (asked.kind === "no-files") return { success: false, msg: `Nothing to refresh for item ${id}: ${NO_FILES_TO_REFRESH}` };
      return { success: true, files: asked.files };
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

/** `limit` (1…1000, default 100 or `defaultLimit`) and `offset` (≥ 0); a problem in words for anything else. */
function pageParams(params: Params, defaultLimit = 100): { limit: number; offset: number } | string {
  const limit = whole(params("limit"), defaultLimit);
  const offset = whole(params("offset"), 0);
  if (limit === undefined || limit < 1) return `limit must be a whole number from 1 to ${MAX_PAGE}`;
  if (offset === undefined) return "offset must be a whole number (0 or more)";
  return { limit: Math.min(MAX_PAGE, limit), offset };
}

function historyParams(params: Params): (HistoryQuery & { offset: number }) | string {
  const page = pageParams(params);
  if (typeof page === "string") return page;
  const state = params("state")?.trim().toLowerCase() || undefined;
  if (state !== undefined && state !== "done" && state !== "failed") return "state must be done or failed";
  const source = params("source")?.trim() || undefined;
  const search = (params("q") ?? params("search"))?.trim() || undefined;
  const landedParam = params("landed")?.trim() || undefined;
  const landed = landedFilter(landedParam);
  if (landedParam !== undefined && landed === undefined) return "landed must be not_visible, landed, pending or not_checked";
  return {
    ...page,
    ...(state ? { state } : {}),
    ...(source ? { source } : {}),
    ...(search ? { search: search.slice(0, 500) } : {}),
    ...(landed ? { landed } : {}),
  };
}

function whole(raw: string | undefined, fallback: number): number | undefined {
  const value = raw?.trim();
  if (!value) return fallback;
  return /^\d{1,9}$/.test(value) ? Number(value) : undefined;
}

/** The preview in the API's words (snake_case, as the scripts expect). */
function previewJson(preview: PathPreview): Record<string, unknown> {
  return {
    path: preview.input,
    matched_form: preview.matchedForm ?? null,
    server_path: preview.serverPath,
    sections: preview.sections ?? null,
    ...(preview.sectionsError ? { sections_error: preview.sectionsError } : {}),
    on_disk: preview.onDisk,
    scan_folder: preview.scanFolder,
    problems: preview.problems,
  };
}
