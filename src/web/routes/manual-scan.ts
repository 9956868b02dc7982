import type { Context } from "hono";
import { describeError } from "../../core/errors.ts";
import type { EnqueuedItem } from "../../core/scan.ts";
import { parseManualPath, parseRefreshParam } from "../../intake/manual.ts";
import { sourceName } from "../../intake/webhook.ts";
import { clientAddress } from "../client-address.ts";
import type { RouteDeps } from "../deps.ts";
import { noteRequest } from "../request-count.ts";
import { consoleHtml, consoleShell } from "../console/console-deps.ts";
import type { PathPreview } from "../console/sources.ts";
import { text } from "../responses.ts";
import { submitScans } from "../../intake/submit.ts";
import { renderManualPage, type PageResult } from "../views/manual-page.ts";
import { pendingCount } from "./queue-count.ts";

/**
 * A manual scan of one path: `eventType=Manual&filepath=…` as a form (curl, the page) or as JSON. Answers in
 * plex_autoscan's words as text, or the page with the result when a browser posted it.
 *
 * The Scan page's own form (`source=page`) is previewed first, when the console has the preview: a path with
 * problems (no mapping and no Plex library, …) is not queued; the page says why and offers "Queue anyway"
 * (`confirm=1`). Scripts (no `source=page`) are queued as before, without a preview.
 */
export interface ManualScanInput {
  readonly filepath: unknown;
  /** `refresh=1` / `metadata`: the path's item is re-read in place after its scan (`parseRefreshParam`). */
  readonly refresh?: unknown;
  readonly label?: string;
  readonly asHtml: boolean;
  /** Posted by the Scan page's own form: `confirmed` when the user chose "Queue anyway". */
  readonly page?: { readonly confirmed: boolean };
}

export async function handleManualScan(c: Context, deps: RouteDeps, input: ManualScanInput): Promise<Response> {
  const ip = clientAddress(c);
  noteRequest(c, "Manual", "Manual");
  const sent = typeof input.filepath === "string" ? input.filepath : "";
  const refresh = parseRefreshParam(input.refresh);
  const parsed = !refresh.ok
    ? refresh
    : parseManualPath(input.filepath, "unknown", {
        mapper: deps.options.mapper,
        ignoreList: deps.options.ignoreList,
        source: sourceName("Manual", input.label),
        ...(refresh.wish ? { refresh: refresh.wish } : {}),
      });
  if (!parsed.ok) {
    deps.log.warn({ reason: parsed.reason }, `Client '${ip}' made an invalid manual scan request`);
    const reason = input.asHtml ? forPage(parsed.reason) : `Invalid manual scan request: ${parsed.reason}`;
    return answer(c, deps, input.asHtml, sent, 400, { kind: "refused", reason });
  }
  const { request } = parsed;
  const fields = { path: request.path, source: request.source };
  deps.log.debug(fields, `Client '${ip}' made a manual scan request for: '${request.receivedPath}'`);
  if (parsed.ignoredBy !== undefined) {
    const words = ignoreText(parsed.ignoredBy);
    deps.log.info(fields, `Client '${ip}' asked for '${request.receivedPath}': ${words}`);
    const reason = `it matches '${parsed.ignoredBy}' in SERVER_IGNORE_LIST`;
    return answer(c, deps, input.asHtml, sent, 200, { kind: "ignored", path: request.path, reason }, words);
  }
  const preview = input.page ? await previewOf(c, deps, request.receivedPath ?? sent) : undefined;
  if (preview && preview.problems.length > 0 && input.page?.confirmed !== true) {
    const why = preview.problems.map((problem) => problem.reason).join(" ");
    deps.log.info({ ...fields, problems: preview.problems.length }, `Client '${ip}' asked for '${request.receivedPath}': not queued until confirmed. ${why}`);
    return answer(c, deps, true, sent, 200, { kind: "held", sent: request.receivedPath ?? sent, preview, ...(request.refresh ? { refresh: request.refresh } : {}) });
  }
  if (preview && preview.problems.length > 0) {
    deps.log.info(fields, `Client '${ip}' confirmed '${request.receivedPath}' despite the preview's problems`);
  }
  const submitted = await submitScans(deps.options.sink, [request], deps.requestTimeoutMs, deps.log, `client '${ip}'`, input.page?.confirmed === true);
  if (!submitted.ok) return answer(c, deps, input.asHtml, sent, 503, { kind: "refused", reason: submitted.reason });
  const item = submitted.result.items[0];
  const result = pageResult(request.path, request.receivedPath ?? sent, item, parsed.mappedFrom, preview);
  return answer(c, deps, input.asHtml, sent, 200, result);
}

/** The console's preview of the path; none without the capability, or when it fails (the scan goes on as before). */
async function previewOf(c: Context, deps: RouteDeps, path: string): Promise<PathPreview | undefined> {
  const preview = deps.options.console?.preview;
  if (!preview) return undefined;
  try {
    return await preview(path, c.req.raw.signal);
  } catch (error) {
    deps.log.warn({ err: error, path }, `The path preview failed; queueing without it: ${describeError(error)}`);
    return undefined;
  }
}

function pageResult(
  path: string,
  sent: string,
  item: EnqueuedItem | undefined,
  mappedFrom: string | undefined,
  preview: PathPreview | undefined,
): PageResult {
  return {
    kind: "queued",
    sent,
    path,
    folder: item?.folder ?? path,
    merged: item?.merged ?? false,
    ...(mappedFrom === undefined ? {} : { mappedFrom }),
    ...(preview ? { preview } : {}),
  };
}

/** plex_autoscan's answer words, kept for scripts that check them. */
function resultText(result: PageResult): string {
  switch (result.kind) {
    case "queued":
      return result.merged
        ? `'${result.path}' has already been added to the scan queue.`
        : `'${result.path}' was added to scan queue.`;
    case "ignored":
      return `'${result.path}' was not queued because ${result.reason}.`;
    case "refused":
      return result.reason;
    case "held":
      return `'${result.sent}' was not queued: ${result.preview.problems.map((p) => p.reason).join(" ")}`;
  }
}

/** The parser's reason in the page's words: "The path must …" rather than "'filepath' must …". */
function forPage(reason: string): string {
  if (reason === "missing 'filepath'") return "Enter a path to scan.";
  return `${reason.replace(/^'filepath' /, "The path ")}.`;
}

function ignoreText(entry: string): string {
  return `Ignoring scan request because ${entry} was matched from your SERVER_IGNORE_LIST`;
}

async function answer(
  c: Context,
  deps: RouteDeps,
  asHtml: boolean,
  sent: string,
  status: 200 | 400 | 503,
  result: PageResult,
  plain?: string,
): Promise<Response> {
  if (!asHtml) return text(c, plain ?? resultText(result), status);
  const queueCount = await pendingCount(deps);
  const page = renderManualPage({ shell: consoleShell(deps.options), result, value: sent, ...(queueCount === undefined ? {} : { queueCount }) });
  return consoleHtml(c, page, status);
}
