import { TargetConfigError } from "../../core/errors.ts";
import { createMediaHttp, MediaHttpError, type MediaHttp } from "../media-http.ts";
import {
  parseAbsAuthorization,
  parseAbsItemFiles,
  parseAbsItemScan,
  parseAbsItemsPage,
  parseAbsLibraries,
  parseRunningScans,
  type AbsAuthorization,
  type AbsItem,
  type AbsLibrary,
} from "./wire-schemas.ts";

/**
 * The wire client of one Audiobookshelf server (refresh-fastpath-targets.md §5). Its key is an API key (Audiobookshelf
 * 2.26.0 or newer) sent as `Authorization: Bearer <key>`, never in the URL; statuses are classified once, by
 * media-http.ts (401/403 → `TargetAuthError` naming `TARGETS.<name>.API_KEY`, 5xx/429/no answer → retry later).
 */
export interface AudiobookshelfClientOptions {
  /** `TARGETS.<name>.URL`, e.g. `http://audiobookshelf:13378` (a sub-path behind a proxy is kept). */
  readonly url: string;
  /** `TARGETS.<name>.API_KEY`. */
  readonly apiKey: string;
  /** `Audiobookshelf 'abs'`, for messages. */
  readonly label: string;
  /** The setting named when the key is refused: `TARGETS.abs.API_KEY`. */
  readonly keySetting: string;
  /** The setting named when a route is missing: `TARGETS.abs.URL`. */
  readonly urlSetting: string;
  readonly timeoutMs?: number;
}

export type WatcherChange = "add" | "unlink";

export interface AudiobookshelfClient {
  readonly shownUrl: string;
  libraries(signal?: AbortSignal): Promise<AbsLibrary[]>;
  /** The key's user and whether the server turned every watcher off. */
  authorize(signal?: AbortSignal): Promise<AbsAuthorization>;
  /** The libraries scanning now; `undefined` when the server cannot say (no `/api/tasks`). */
  runningScans(signal?: AbortSignal): Promise<Set<string> | undefined>;
  /** `POST /api/watcher/update`: one path into the library's watcher queue (200 even when no watcher takes it). */
  watcherUpdate(libraryId: string, path: string, type: WatcherChange, signal?: AbortSignal): Promise<void>;
  /** `POST /api/libraries/{id}/scan`: answered before the scan runs; dropped silently while one runs. */
  scanLibrary(libraryId: string, signal?: AbortSignal): Promise<void>;
  /** One page of a library's items, newest first. */
  itemsPage(libraryId: string, page: number, limit: number, signal?: AbortSignal): Promise<{ items: AbsItem[]; total?: number }>;
  /** The paths of an item's files. */
  itemFiles(itemId: string, signal?: AbortSignal): Promise<string[]>;
  /** `POST /api/items/{id}/scan`: re-reads one folder item's files; its result (`UPDATED`, `UPTODATE` …). */
  scanItem(itemId: string, signal?: AbortSignal): Promise<string>;
}

export function createAudiobookshelfClient(options: AudiobookshelfClientOptions): AudiobookshelfClient {
  const { label } = options;
  const http: MediaHttp = createMediaHttp({
    url: options.url,
    label,
    authKey: options.keySetting,
    headers: { Authorization: `Bearer ${options.apiKey}` },
    secrets: [options.apiKey],
    // Every route we call exists on any server that takes API keys: a 404 means the URL points elsewhere.
    notFoundHint: `check ${options.urlSetting}`,
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
  });
  const opts = (signal?: AbortSignal) => (signal ? { signal } : {});
  const what = (route: string): string => `${label}: ${route}`;

  return {
    shownUrl: http.shownUrl,
    libraries: async (signal) => parseAbsLibraries((await http.request("GET", "/api/libraries", opts(signal))).body, what("GET /api/libraries")),
    authorize: async (signal) => parseAbsAuthorization((await http.request("POST", "/api/authorize", opts(signal))).body, what("POST /api/authorize")),
    async runningScans(signal) {
      try {
        return parseRunningScans((await http.request("GET", "/api/tasks", opts(signal))).body, what("GET /api/tasks"));
      } catch (error) {
        // A server without the route (404) or with another shape: the scan is sent as it would be without the look.
        // A server that is down or refuses the key is that, for the scan as well.
        if (error instanceof MediaHttpError || error instanceof TargetConfigError) return undefined;
        throw error;
      }
    },
    async watcherUpdate(libraryId, path, type, signal) {
      await http.request("POST", "/api/watcher/update", { json: { libraryId, path, type }, ...opts(signal) });
    },
    async scanLibrary(libraryId, signal) {
      await http.request("POST", `/api/libraries/${encodeURIComponent(libraryId)}/scan`, opts(signal));
    },
    async itemsPage(libraryId, page, limit, signal) {
      const route = `/api/libraries/${encodeURIComponent(libraryId)}/items`;
      const query = { minified: "1", sort: "addedAt", desc: "1", limit: String(limit), page: String(page) };
      return parseAbsItemsPage((await http.request("GET", route, { query, ...opts(signal) })).body, what(`GET ${route}`));
    },
    async itemFiles(itemId, signal) {
      const route = `/api/items/${encodeURIComponent(itemId)}`;
      return parseAbsItemFiles((await http.request("GET", route, opts(signal))).body, what(`GET ${route}`));
    },
    async scanItem(itemId, signal) {
      const route = `/api/items/${encodeURIComponent(itemId)}/scan`;
      return parseAbsItemScan((await http.request("POST", route, opts(signal))).body, what(`POST ${route}`));
    },
  };
}
