import * as v from "valibot";
import { TargetAuthError, TargetUnavailableError } from "../../core/errors.ts";
import { classifyConnectionFailure, connectionFailureWords, timeoutCause } from "../../http/connection-failure.ts";
import { excerpt, httpCall, httpReason, HttpTooLargeError, type HttpAnswer } from "../../http/http-call.ts";
import { ActivitiesSchema, fileItems, LibraryItemsSchema, SectionsSchema, ServerInfoSchema, toActivity, toSection } from "./wire-schemas.ts";
import type { PlexActivity, PlexFileItem, PlexSection, PlexServerInfo } from "./wire-schemas.ts";

/**
 * The one place that speaks Plex's wire protocol: token header, JSON, timeouts, a response size cap, and the
 * status → meaning classification (done once, here). Facts: ../shared/reference/integrations.md §3.1.
 */
export type { PlexActivity, PlexFileItem, PlexSection, PlexServerInfo } from "./wire-schemas.ts";

export interface PlexClientOptions {
  /** `PLEX_LOCAL_URL`, e.g. `http://localhost:32400` (a trailing `/` is fine). */
  readonly url: string;
  /** `PLEX_TOKEN`; sent only in the `X-Plex-Token` header, never in a URL or a log line. */
  readonly token: string;
  /** `PLEX_TIMEOUT` in ms (default 30 s): a hung Plex must not stall the queue. */
  readonly timeoutMs?: number;
  /** Bodies larger than this are refused (default 16 MiB). */
  readonly maxResponseBytes?: number;
}

export interface PlexClient {
  /** The base URL, without a trailing slash (for messages; it carries no secret). */
  readonly url: string;
  /** `GET /`: answers only with a valid token, so it checks both reachability and the token. */
  serverInfo(signal?: AbortSignal): Promise<PlexServerInfo>;
  /** `GET /library/sections`. */
  listSections(signal?: AbortSignal): Promise<PlexSection[]>;
  /** `GET /activities`. */
  activities(signal?: AbortSignal): Promise<PlexActivity[]>;
  /** Partial scan: `GET /library/sections/{id}/refresh?path=<folder>`. */
  refreshSection(sectionId: string, folder: string, signal?: AbortSignal): Promise<void>;
  /**
   * `GET /library/sections/{id}/all?type=<n>&file=<path>`: the `Part.file` of every item answered. Plex narrows to the
   * file's neighbourhood (a show section can answer the whole season), not to the file: callers compare exactly.
   * `type` is Plex's item type number (1 movie, 4 episode, 10 track); a show section answers 500 without it.
   */
  filesInSection(sectionId: string, type: number, file: string, signal?: AbortSignal): Promise<string[]>;
  /** The same listing, item by item: each item's `ratingKey` with its parts' files (refresh in place finds its item). */
  itemsInSection(sectionId: string, type: number, file: string, signal?: AbortSignal): Promise<PlexFileItem[]>;
  /** `PUT /library/sections/{id}/emptyTrash`. */
  emptyTrash(sectionId: string, signal?: AbortSignal): Promise<void>;
  /** `PUT /library/metadata/{ratingKey}/analyze`. */
  analyzeItem(ratingKey: string, signal?: AbortSignal): Promise<void>;
  /** `PUT /library/metadata/{ratingKey}/refresh`: one item's metadata re-read (never `force`, never a section). */
  refreshItem(ratingKey: string, signal?: AbortSignal): Promise<void>;
}

/** Plex answered with a status that is neither success, auth nor "unavailable" (400, 403, 409 …). */
export class PlexResponseError extends Error {
  override name = "PlexResponseError";
  readonly status: number;
  constructor(message: string, status: number, options?: ErrorOptions) {
    super(message, options);
    this.status = status;
  }
}

const DEFAULT_TIMEOUT_MS = 30_000;
const DEFAULT_MAX_BYTES = 16 * 1024 * 1024;
const UNAVAILABLE_STATUSES = new Set([404, 500, 502, 503, 504]);
/**
 * A library listing is read a page at a time: Plex answers `file=` with the file's whole folder (a flat folder of
 * thousands of items with their metadata is a 15 MB answer), and one page is parsed in a few milliseconds where the
 * whole answer stalled the process about a second and took hundreds of MB. A page over `LISTING_PAGE_MAX_BYTES` (a
 * Plex that ignores paging) or a listing over `LISTING_MAX_ITEMS` is refused, saying so, rather than read.
 */
const LISTING_PAGE_ITEMS = 200;
const LISTING_PAGE_MAX_BYTES = 4 * 1024 * 1024;
const LISTING_MAX_ITEMS = 20_000;

type Method = "GET" | "PUT";

export function createPlexClient(options: PlexClientOptions): PlexClient {
  const base = options.url.replace(/\/+$/, "");
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const maxBytes = options.maxResponseBytes ?? DEFAULT_MAX_BYTES;
  const hideToken = (text: string): string => (options.token ? text.split(options.token).join("***") : text);

  async function call(method: Method, path: string, query?: Record<string, string>, signal?: AbortSignal, capBytes = maxBytes) {
    const what = `${method} ${path}`;
    const url = `${base}${path}${query ? `?${new URLSearchParams(query).toString()}` : ""}`;
    let answer: HttpAnswer;
    try {
      answer = await httpCall({
        method,
        url,
        headers: { "X-Plex-Token": options.token, Accept: "application/json" },
        timeoutMs,
        maxBytes: capBytes,
        ...(signal ? { signal } : {}),
      });
    } catch (error) {
      // The caller gave up (a shutdown): its reason, as it is.
      if (signal?.aborted) throw error;
      throw classifyNetworkError(error, what, base, timeoutMs);
    }
    // The token is hidden before an excerpt is cut from the answer (an error page may quote the URL or the header).
    if (answer.status < 200 || answer.status >= 300) throw classifyStatus(answer.status, hideToken(answer.body), what, base);
    return answer.body;
  }

  async function getJson<S extends v.GenericSchema>(path: string, schema: S, signal?: AbortSignal, query?: Record<string, string>, capBytes?: number) {
    const body = await call("GET", path, query, signal, capBytes);
    return parseBody(body, schema, `GET ${path}`, hideToken);
  }

  async function itemsInSection(sectionId: string, type: number, file: string, signal?: AbortSignal): Promise<PlexFileItem[]> {
    // Form-encoded like refreshSection: "&" and "+" in a file name arrive as themselves ("%26", "%2B").
    const path = `/library/sections/${encodeURIComponent(sectionId)}/all`;
    const files: PlexFileItem[] = [];
    for (let start = 0; ; ) {
      const paging = { "X-Plex-Container-Start": String(start), "X-Plex-Container-Size": String(LISTING_PAGE_ITEMS) };
      const page = await getJson(path, LibraryItemsSchema, signal, { type: String(type), file, ...paging }, LISTING_PAGE_MAX_BYTES);
      files.push(...fileItems(page));
      const count = page.MediaContainer.Metadata.length;
      const total = page.MediaContainer.totalSize;
      start += count;
      // A Plex that does not page answers everything at once, without a total: that one page is the listing.
      if (count === 0 || total === undefined || start >= total) return files;
      if (start >= LISTING_MAX_ITEMS) {
        throw new PlexResponseError(`GET ${path}: Plex lists ${String(total)} items beside '${file}', too many to look through (at most ${String(LISTING_MAX_ITEMS)})`, 200);
      }
    }
  }

  return {
    url: base,
    async serverInfo(signal) {
      const parsed = await getJson("/", ServerInfoSchema, signal);
      const c = parsed.MediaContainer;
      return { version: c.version, friendlyName: c.friendlyName ?? "", machineIdentifier: c.machineIdentifier ?? "" };
    },
    async listSections(signal) {
      const parsed = await getJson("/library/sections", SectionsSchema, signal);
      return (parsed.MediaContainer.Directory ?? []).map(toSection);
    },
    async activities(signal) {
      const parsed = await getJson("/activities", ActivitiesSchema, signal);
      return (parsed.MediaContainer.Activity ?? []).map(toActivity);
    },
    async refreshSection(sectionId, folder, signal) {
      // GET, never PUT/POST: Plex answers 404 to those since PMS 1.32.7.7484 (Cloudbox/autoscan#218).
      // URLSearchParams form-encodes like python-plexapi's quote_plus: space → "+", "/" → "%2F", "(" → "%28".
      await call("GET", `/library/sections/${encodeURIComponent(sectionId)}/refresh`, { path: folder }, signal);
    },
    async filesInSection(sectionId, type, file, signal) {
      return (await itemsInSection(sectionId, type, file, signal)).flatMap((item) => item.files);
    },
    itemsInSection,
    async emptyTrash(sectionId, signal) {
      await call("PUT", `/library/sections/${encodeURIComponent(sectionId)}/emptyTrash`, undefined, signal);
    },
    async analyzeItem(ratingKey, signal) {
      await call("PUT", `/library/metadata/${encodeURIComponent(ratingKey)}/analyze`, undefined, signal);
    },
    async refreshItem(ratingKey, signal) {
      // A bare PUT, as python-plexapi sends it: the item route takes no `force` (that is the section's "re-download
      // everything"); plex-api-spec's refreshItemsMetadata (refresh-fastpath-targets.md §4).
      await call("PUT", `/library/metadata/${encodeURIComponent(ratingKey)}/refresh`, undefined, signal);
    },
  };
}

function classifyStatus(status: number, body: string, what: string, base: string): Error {
  // A bad or missing token gets 401 with an HTML page even when JSON was asked for (integrations.md §3.1).
  if (status === 401) {
    return new TargetAuthError(`Plex rejected the token (401 to ${what} at ${base}); check PLEX_TOKEN`);
  }
  if (UNAVAILABLE_STATUSES.has(status)) {
    return new TargetUnavailableError(`Plex answered ${status} to ${what} at ${base}`);
  }
  return new PlexResponseError(`Plex answered ${status} to ${what}: ${excerpt(body)}`, status);
}

function classifyNetworkError(error: unknown, what: string, base: string, timeoutMs: number): Error {
  if (error instanceof HttpTooLargeError) return new PlexResponseError(`${what}: ${error.message}`, 0);
  const failure = classifyConnectionFailure(error);
  if (failure?.kind === "timeout") {
    return new TargetUnavailableError(`Plex did not answer ${what} within ${timeoutMs / 1000} s (${base}): ${timeoutCause(failure.phase)}`, { cause: error });
  }
  const words = failure ? connectionFailureWords(failure) : httpReason(error);
  return new TargetUnavailableError(`Plex is unreachable at ${base} (${what}): ${words}`, { cause: error });
}

function parseBody<S extends v.GenericSchema>(body: string, schema: S, what: string, hide: (text: string) => string): v.InferOutput<S> {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    throw new PlexResponseError(`${what}: Plex did not answer JSON: ${excerpt(body, hide)}`, 200);
  }
  const result = v.safeParse(schema, json);
  if (!result.success) {
    const issue = result.issues[0];
    const where = issue ? v.getDotPath(issue) : undefined;
    throw new PlexResponseError(
      `${what}: unexpected response shape${where ? ` at ${where}` : ""}: ${issue?.message ?? "invalid"}`,
      200,
    );
  }
  return result.output;
}
