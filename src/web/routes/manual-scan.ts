import type { Context } from "hono";
import type { EnqueuedItem } from "../../core/scan.ts";
import { parseManualPath } from "../../intake/manual.ts";
import { sourceName } from "../../intake/to-scan-requests.ts";
import { clientAddress } from "../client-address.ts";
import type { RouteDeps } from "../deps.ts";
import { noteRequest } from "../request-count.ts";
import { html, text } from "../responses.ts";
import { submitScans } from "../submit.ts";
import { renderManualPage, type PageResult } from "../views/manual-page.ts";
import { pendingCount } from "./queue-count.ts";

/**
 * A manual scan of one path: `eventType=Manual&filepath=…` as a form (curl, the page) or as JSON. Answers in
 * plex_autoscan's words as text, or the page with the result when a browser posted it.
 */
export async function handleManualScan(
  c: Context,
  deps: RouteDeps,
  input: { readonly filepath: unknown; readonly label?: string; readonly asHtml: boolean },
): Promise<Response> {
  const ip = clientAddress(c);
  noteRequest(c, "Manual", "Manual");
  const sent = typeof input.filepath === "string" ? input.filepath : "";
  const parsed = parseManualPath(input.filepath, "unknown", {
    mapper: deps.options.mapper,
    ignoreList: deps.options.ignoreList,
    source: sourceName("Manual", input.label),
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
  const submitted = await submitScans(deps.options.sink, [request], deps.requestTimeoutMs, deps.log, `client '${ip}'`);
  if (!submitted.ok) return answer(c, deps, input.asHtml, sent, 503, { kind: "refused", reason: submitted.reason });
  const item = submitted.result.items[0];
  const result = pageResult(request.path, request.receivedPath ?? sent, item, parsed.mappedFrom);
  return answer(c, deps, input.asHtml, sent, 200, result);
}

function pageResult(path: string, sent: string, item: EnqueuedItem | undefined, mappedFrom: string | undefined): PageResult {
  if (item?.ignoredBecause) return { kind: "ignored", path, reason: item.ignoredBecause };
  const base = { kind: "queued" as const, sent, path, folder: item?.folder ?? path, merged: item?.merged ?? false };
  return mappedFrom === undefined ? base : { ...base, mappedFrom };
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
  return html(c, renderManualPage({ result, value: sent, ...(queueCount === undefined ? {} : { queueCount }) }), status);
}
