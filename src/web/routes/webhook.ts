import type { Context } from "hono";
import { parseWebhook, type WebhookOutcome } from "../../intake/webhook.ts";
import { clientAddress } from "../client-address.ts";
import type { RouteDeps } from "../deps.ts";
import { firstField, readBody, type FormFields } from "../read-body.ts";
import { noteRequest } from "../request-count.ts";
import { bodyProblem, text, wantsHtml } from "../responses.ts";
import { submitScans } from "../../intake/submit.ts";
import { handleManualScan } from "./manual-scan.ts";

/**
 * `POST|PUT /<SERVER_PASS>` and `/<SERVER_PASS>/<name>` (the *arr apps send PUT when set to). JSON → an *arr webhook
 * or a JSON manual request; a form → `eventType=Manual&filepath=…`. Answers as plex_autoscan did: `OK` for an accepted
 * webhook, 400 with a one-line reason for an empty or unrecognisable body.
 */
const LABEL = /^[\p{L}\p{N}][\p{L}\p{N} ._-]{0,63}$/u;

export function createWebhookHandler(deps: RouteDeps) {
  return async (c: Context): Promise<Response> => {
    const label = c.req.param("label");
    if (label !== undefined && !LABEL.test(label)) {
      return text(c, "Invalid source name: use up to 64 letters, digits, spaces, '.', '_' or '-'", 400);
    }
    const body = await readBody(c, deps.maxBodyBytes);
    const ip = clientAddress(c);
    switch (body.kind) {
      case "problem":
        deps.log.warn({ status: body.status, reason: body.reason }, `Invalid scan request from client '${ip}'`);
        return bodyProblem(c, body.status, body.reason);
      case "empty":
        deps.log.warn(`Invalid scan request from client '${ip}': empty body`);
        return text(c, "Invalid scan request: the body is empty", 400);
      case "form":
        return handleForm(c, deps, body.fields, label);
      case "json": {
        const outcome = parseWebhook(body.value, { mapper: deps.options.mapper, label, userAgent: c.req.header("user-agent") });
        if (outcome.kind === "invalid") noteRequest(c, "unknown", "invalid");
        else if (outcome.kind !== "manual") noteRequest(c, outcome.source, outcome.event);
        // An app's event at its own URL: it sends to autoscan, so a warning that it does not ends now. A Test says
        // nothing of the saved connection (the apps test before they save): it asks for a look shortly after.
        if (label !== undefined && (outcome.kind === "scan" || outcome.kind === "no-scan" || outcome.kind === "unusable")) deps.options.arrConnections?.heard(label);
        if (label !== undefined && outcome.kind === "test") deps.options.arrConnections?.tested(label);
        if (outcome.kind === "manual") return handleManualScan(c, deps, { filepath: outcome.filepath, refresh: outcome.refresh, label, asHtml: false });
        return handleOutcome(c, deps, outcome);
      }
    }
  };
}

async function handleOutcome(c: Context, deps: RouteDeps, outcome: Exclude<WebhookOutcome, { kind: "manual" }>): Promise<Response> {
  const ip = clientAddress(c);
  switch (outcome.kind) {
    case "invalid":
      deps.log.warn({ reason: outcome.reason }, `Unknown scan request from client '${ip}'`);
      return text(c, outcome.reason, 400);
    case "unusable":
      // 200, never 4xx: the app would mark the connection failing for an event it sends as designed.
      deps.log.warn({ source: outcome.source, reason: outcome.reason }, `Client '${ip}' sent a '${outcome.event}' event autoscan cannot use; nothing to scan: ${outcome.reason}`);
      return text(c, `OK, nothing to scan: ${outcome.reason}`);
    case "test":
      deps.log.info(
        { source: outcome.source, client: ip, ...(outcome.instance ? { instance: outcome.instance } : {}), ...(outcome.appUrl ? { appUrl: outcome.appUrl } : {}) },
        `${outcome.source}${testSender(outcome)} made a test request (client '${ip}'), event: '${outcome.event}': it reaches autoscan; nothing to scan`,
      );
      return text(c, "OK");
    case "no-scan":
      deps.log.debug({ source: outcome.source }, `Client '${ip}' sent a '${outcome.event}' event; nothing to scan`);
      return text(c, "OK");
    case "scan":
      break;
  }
  for (const request of outcome.requests) {
    deps.log.debug(
      { source: outcome.source, path: request.path, ...(request.deleted ? { deleted: true } : {}) },
      `Client '${ip}' scan request for ${outcome.app.noun}: '${request.receivedPath ?? request.path}', event: '${outcome.event}'`,
    );
  }
  if (outcome.requests.length === 0) {
    deps.log.info({ source: outcome.source }, `Client '${ip}' sent a '${outcome.event}' event with no files; nothing to scan`);
    return text(c, "OK");
  }
  const submitted = await submitScans(deps.options.sink, outcome.requests, deps.requestTimeoutMs, deps.log, `client '${ip}'`);
  return submitted.ok ? text(c, "OK") : text(c, submitted.reason, 503);
}

/**
 * Which app the Test came from, beyond the source: its instance name when it is not just the app's own name (two
 * Sonarrs), and its address, so a Test button pressed in one app of several is told apart from the log alone.
 */
function testSender(outcome: { readonly source: string; readonly instance?: string; readonly appUrl?: string }): string {
  const named = outcome.instance !== undefined && !outcome.source.toLowerCase().startsWith(outcome.instance.toLowerCase());
  const parts = [...(named ? [`instance '${outcome.instance}'`] : []), ...(outcome.appUrl ? [`at ${outcome.appUrl}`] : [])];
  return parts.length === 0 ? "" : ` [${parts.join(" ")}]`;
}

/** A form post: plex_autoscan's `eventType=Manual&filepath=…` (the `eventType` may be left out), or a `Test`. */
function handleForm(c: Context, deps: RouteDeps, fields: FormFields, label: string | undefined): Promise<Response> | Response {
  const event = firstField(fields, "eventType") ?? (fields.has("filepath") ? "Manual" : undefined);
  const fromPage = firstField(fields, "source") === "page";
  const asHtml = wantsHtml(c, fromPage);
  if (event === "Manual") {
    // The Scan page's own form is previewed before it is queued (`confirm=1`: the user chose "Queue anyway").
    const page = fromPage ? { confirmed: firstField(fields, "confirm") === "1" } : undefined;
    return handleManualScan(c, deps, { filepath: firstField(fields, "filepath"), refresh: firstField(fields, "refresh"), label, asHtml, ...(page ? { page } : {}) });
  }
  const ip = clientAddress(c);
  noteRequest(c, "Manual", event ?? "invalid");
  if (event === "Test") {
    const source = label === undefined ? "Manual" : `Manual (${label})`;
    deps.log.info({ source, client: ip }, `${source} made a test request (client '${ip}'), event: 'Test'; nothing to scan`);
    return text(c, "OK");
  }
  deps.log.warn(`Unknown scan request from client '${ip}': a form without eventType=Manual and filepath`);
  return text(c, "Unknown scan request: a form post needs eventType=Manual and filepath=<path>", 400);
}
