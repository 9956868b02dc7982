import * as v from "valibot";
import type { Logger } from "../core/logger.ts";
import { excerpt, headersAreValid, httpCall, httpReason, HttpTimeoutError, HttpTooLargeError, originOf } from "../http/http-call.ts";
import { ArrApiError, ArrAuthError, ArrUnavailableError } from "./arr-errors.ts";
import { ARR_TYPE_FACTS, type ArrType } from "./arr-type.ts";
import { historyPageSchema, systemStatusSchema, toHistoryRecord, type HistoryRecord } from "./history-wire.ts";

/**
 * The one place that speaks an *arr app's API: its history (../shared/reference/arr-history.md) and, through `send`,
 * its connections and health list (src/arr/notification-api.ts). The API root per app,
 * the key in the `X-Api-Key` header (never in a URL: URLs end up in proxy logs), a timeout and a size cap on every
 * call, and the failure → meaning classification, done once here (src/arr/arr-errors.ts).
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
  /**
   * One call with the key to `{api}{path}` (a JSON body when `body` is given), for the app's other resources
   * (src/arr/notification-api.ts). Throws as the reads above do when the app does not answer, refuses the key (401,
   * 403) or is starting up (503 with its message); any other answer is handed back, for the caller to read.
   */
  send(method: ArrMethod, path: string, body?: unknown, signal?: AbortSignal): Promise<ArrRawAnswer>;
  /** A 2xx answer's JSON in `schema`'s shape; any other answer thrown as the reads above throw it. */
  readJson<S extends v.GenericSchema>(answer: ArrRawAnswer, schema: S): v.InferOutput<S>;
}

export type ArrMethod = "GET" | "POST" | "PUT" | "DELETE";

export interface ArrRawAnswer {
  /** `GET /api/v3/notification`: for messages. */
  readonly what: string;
  readonly status: number;
  /** With the key blanked. */
  readonly body: string;
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

  async function call(method: ArrMethod, path: string, query: Record<string, string>, body: unknown, signal?: AbortSignal): Promise<ArrRawAnswer> {
    const what = `${method} ${ARR_TYPE_FACTS[type].apiRoot}${path}`;
    // A key with a character no header can carry would make fetch throw an error quoting the header, key included.
    if (!headersAreValid({ "X-Api-Key": options.apiKey })) throw new ArrAuthError(name);
    const search = new URLSearchParams(query).toString();
    const headers: Record<string, string> = { "X-Api-Key": options.apiKey, Accept: "application/json" };
    if (body !== undefined) headers["Content-Type"] = "application/json";
    let answer: { status: number; body: string };
    try {
      answer = await httpCall({
        method,
        url: `${base}${path}${search ? `?${search}` : ""}`,
        headers,
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        timeoutMs,
        maxBytes,
        ...(signal ? { signal } : {}),
      });
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      if (error instanceof HttpTooLargeError) throw new ArrApiError(name, `${what} answered more than ${maxBytes} bytes`);
      if (error instanceof HttpTimeoutError) throw new ArrUnavailableError(`${name} did not answer ${what} within ${timeoutMs / 1000} s (${shown})`);
      throw new ArrUnavailableError(blank(`${name} is unreachable at ${shown} (${what}): ${httpReason(error)}`));
    }
    const { status } = answer;
    if (status === 401 || status === 403) throw new ArrAuthError(name, status);
    if (status === 503 && errorMessage(answer.body)) throw statusError(status, blank(answer.body), what);
    return { what, status, body: blank(answer.body) };
  }

  function readJson<S extends v.GenericSchema>(answer: ArrRawAnswer, schema: S): v.InferOutput<S> {
    const { what, status, body } = answer;
    if (status < 200 || status >= 300) throw statusError(status, body, what);
    let json: unknown;
    try {
      json = JSON.parse(body);
    } catch {
      throw new ArrApiError(name, `${what} answered ${status} with something that is not JSON: ${excerpt(body)}`, status);
    }
    const result = v.safeParse(schema, json);
    if (result.success) return result.output as v.InferOutput<S>;
    const issue = result.issues[0];
    const field = issue ? v.getDotPath(issue) : null;
    const problem = issue ? `${field ? `'${field}' ` : ""}${issue.message}` : "is not valid";
    throw new ArrApiError(name, `${what} answered JSON of another shape: ${blank(problem)}`, status);
  }

  async function getJson<S extends v.GenericSchema>(path: string, query: Record<string, string>, schema: S, signal?: AbortSignal) {
    return readJson(await call("GET", path, query, undefined, signal), schema);
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
    send: (method, path, body, signal) => call(method, path, {}, body, signal),
    readJson,
  };
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
