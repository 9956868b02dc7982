import * as v from "valibot";
import type { Logger } from "../core/logger.ts";
import { ArrApiError, ArrAuthError, ArrUnavailableError } from "./arr-errors.ts";
import { ARR_TYPE_FACTS, type ArrType } from "./arr-type.ts";
import type { HistoryRecord } from "./history-record.ts";
import { historyPageSchema, systemStatusSchema, toHistoryRecord } from "./history-wire.ts";

/**
 * The one place that speaks an *arr app's history API (../shared/reference/arr-history.md): the API root per app,
 * the key in the `X-Api-Key` header (never in a URL: URLs end up in proxy logs), a timeout and a size cap on every
 * call, and the failure → meaning classification, done once here (src/backfill/arr-errors.ts).
 *
 * Pages are read newest first (`sortKey=date&sortDirection=descending`), which every app and version honours; the
 * apps sort on the date alone, so records of the same date can come in any order and, when records arrive while
 * one pages, repeat across pages: callers dedupe by `id`.
 */
export interface ArrClientOptions {
  /** The app's name in `ARR` (`sonarr`, `sonarr-anime`): in every message, and in the setting names they point to. */
  readonly name: string;
  readonly type: ArrType;
  /** `ARR.<name>.URL`: `http://sonarr:8989`, or with the app's URL base (`http://host/sonarr`). */
  readonly url: string;
  readonly apiKey: string;
  /** Per call (default 30 s): a hung app must not stall a backfill round. */
  readonly timeoutMs?: number;
  /** Bodies larger than this are refused (default 32 MiB: a page of 1,000 records is about 1 MiB). */
  readonly maxResponseBytes?: number;
  readonly log: Logger;
}

export interface ArrStatus {
  readonly appName: string;
  readonly version: string;
}

export interface HistoryPage {
  /** All records the app holds (the filters applied), not this page's count. */
  readonly totalRecords: number;
  /** Newest first. */
  readonly records: HistoryRecord[];
}

export interface ArrClient {
  readonly name: string;
  readonly type: ArrType;
  /** `GET {api}/system/status`: answers only with a valid key, so it checks the URL, the key and the version. */
  status(signal?: AbortSignal): Promise<ArrStatus>;
  /** `GET {api}/history`, page `page` (from 1) of `pageSize` records, newest first. */
  historyPage(page: number, pageSize: number, signal?: AbortSignal): Promise<HistoryPage>;
}

const DEFAULT_TIMEOUT_MS = 30_000;
const DEFAULT_MAX_BYTES = 32 * 1024 * 1024;

export function createArrClient(options: ArrClientOptions): ArrClient {
  const { name, type, log } = options;
  const base = options.url.replace(/\/+$/, "") + ARR_TYPE_FACTS[type].apiRoot;
  const shown = originOf(options.url);
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const maxBytes = options.maxResponseBytes ?? DEFAULT_MAX_BYTES;
  const blank = (text: string): string => (options.apiKey ? text.split(options.apiKey).join("***") : text);

  async function getJson<S extends v.GenericSchema>(path: string, query: Record<string, string>, schema: S, signal?: AbortSignal) {
    const what = `GET ${ARR_TYPE_FACTS[type].apiRoot}${path}`;
    // A key with a character no header can carry would make fetch throw an error quoting the header, key included.
    if (!headerValueIsValid(options.apiKey)) throw new ArrAuthError(name);
    const search = new URLSearchParams(query).toString();
    const timeout = AbortSignal.timeout(timeoutMs);
    const timedOut = (): boolean => timeout.aborted && !signal?.aborted;
    let status: number;
    let body: string;
    try {
      const response = await fetch(`${base}${path}${search ? `?${search}` : ""}`, {
        headers: { "X-Api-Key": options.apiKey, Accept: "application/json" },
        signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
        redirect: "manual",
      });
      status = response.status;
      body = await readCapped(response, maxBytes);
    } catch (error) {
      if (error instanceof ArrApiError) throw error;
      if (signal?.aborted) throw signal.reason;
      if (error instanceof TooLarge) throw new ArrApiError(name, `${what} answered more than ${maxBytes} bytes`);
      if (timedOut()) throw new ArrUnavailableError(`${name} did not answer ${what} within ${timeoutMs / 1000} s (${shown})`);
      throw new ArrUnavailableError(blank(`${name} is unreachable at ${shown} (${what}): ${networkReason(error)}`));
    }
    if (status < 200 || status >= 300) throw statusError(status, body, what);
    let json: unknown;
    try {
      json = JSON.parse(body);
    } catch {
      throw new ArrApiError(name, `${what} answered ${status} with something that is not JSON: ${excerpt(blank(body))}`, status);
    }
    const result = v.safeParse(schema, json);
    if (result.success) return result.output as v.InferOutput<S>;
    const issue = result.issues[0];
    const field = issue ? v.getDotPath(issue) : null;
    const problem = issue ? `${field ? `'${field}' ` : ""}${issue.message}` : "is not valid";
    throw new ArrApiError(name, `${what} answered JSON of another shape: ${blank(problem)}`, status);
  }

  function statusError(status: number, body: string, what: string): Error {
    if (status === 401 || status === 403) return new ArrAuthError(name, status);
    if (status === 503) {
      // While starting up: {"errorMessage":"Sonarr is starting up, please try again later"} (StartingUpMiddleware).
      const message = errorMessage(body);
      if (message) return new ArrUnavailableError(blank(`${name}: ${message} (${shown})`), status);
    }
    if (status >= 500 || status === 429) {
      return new ArrUnavailableError(blank(`${name} answered ${status} to ${what} at ${shown}`), status);
    }
    return new ArrApiError(name, blank(`${what} answered ${status} at ${shown}: ${excerpt(body)}`), status);
  }

  return {
    name,
    type,
    async status(signal) {
      const answer = await getJson("/system/status", {}, systemStatusSchema, signal);
      return { appName: answer.appName, version: answer.version };
    },
    async historyPage(page, pageSize, signal) {
      const query = { page: String(page), pageSize: String(pageSize), sortKey: "date", sortDirection: "descending" };
      const answer = await getJson("/history", query, historyPageSchema, signal);
      const records = answer.records.map((record) => toHistoryRecord(record, type));
      log.debug({ app: name, page, pageSize, records: records.length, totalRecords: answer.totalRecords }, "History page read");
      return { totalRecords: answer.totalRecords, records };
    },
  };
}

class TooLarge extends Error {}

/** Reads the body as text, refusing to hold more than `maxBytes` (a misdirected URL could stream anything). */
async function readCapped(response: Response, maxBytes: number): Promise<string> {
  const declared = Number(response.headers.get("content-length") ?? "0");
  if (declared > maxBytes) {
    await response.body?.cancel();
    throw new TooLarge();
  }
  if (!response.body) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength;
    if (size > maxBytes) throw new TooLarge();
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}

function errorMessage(body: string): string | undefined {
  try {
    const parsed = JSON.parse(body) as { errorMessage?: unknown; message?: unknown };
    const message = parsed.errorMessage ?? parsed.message;
    return typeof message === "string" && message.trim() ? excerpt(message) : undefined;
  } catch {
    return undefined;
  }
}

function headerValueIsValid(value: string): boolean {
  try {
    new Headers({ "X-Api-Key": value });
    return true;
  } catch {
    return false;
  }
}

/** fetch hides the socket error under `cause` ("fetch failed" ← ECONNREFUSED). */
function networkReason(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause;
  if (cause instanceof Error) {
    const code = (cause as { code?: unknown }).code;
    return typeof code === "string" ? `${code} ${cause.message}` : cause.message;
  }
  return error.message;
}

/** Scheme, host and port only: userinfo or a URL base may carry a secret. */
function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return "(invalid URL)";
  }
}

/** A short, single-line excerpt of a body for a message (HTML tags stripped). */
function excerpt(body: string): string {
  const text = body
    .replace(/<script[\s\S]*?<\/script>/gi, " ")
    .replace(/<[^>]+>/g, " ")
    .replace(/\s+/g, " ")
    .trim();
  if (!text) return "(empty body)";
  return text.length > 160 ? `${text.slice(0, 157)}...` : text;
}
