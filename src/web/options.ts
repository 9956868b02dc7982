import type { ConnectAppsOptions } from "./views/connect-panel.ts";
import type { Logger } from "../core/logger.ts";
import type { MetricsExposition, RequestMetrics } from "../core/metrics.ts";
import type { ScanSink } from "../core/scan.ts";
import type { PathMapper } from "../paths/mapping.ts";
import type { HistoryQuery, PageOptions, QueueItemView } from "../core/queue-view.ts";
import type { GuessBrake } from "./guess-brake.ts";
import type { RejectionLog } from "./rejections.ts";
import type { ConsoleSources, ItemPage } from "./console/sources.ts";

/**
 * What the web layer is given. It owns no state: scans go to `sink` (durable when it resolves), queue commands to
 * `queue`, Google Drive commands to `drive`; the composition root adapts the real modules to these ports.
 */
export interface WebOptions {
  /** Resolves once the requests are on disk (only then does the app answer 2xx); rejects → 503, nothing queued. */
  readonly sink: ScanSink;
  /** `SERVER_PATH_MAPPINGS`: any listed form → the media server's form. */
  readonly mapper: PathMapper;
  readonly queue: QueueAdmin;
  /** Present when Google Drive monitoring is enabled. */
  readonly drive?: DriveAdmin;
  /** `GET /health`: 200 when `ready`, 503 otherwise; the other fields are passed through to the JSON answer. */
  readonly health: () => HealthReport | Promise<HealthReport>;
  readonly log: Logger;
  /** `SERVER_PASS`: the URL secret of `/<SERVER_PASS>` and `/api/<SERVER_PASS>`. Must not be empty. */
  readonly serverPass: string;
  /** `SERVER_URL_BASE` (`/autoscan`, default ""): every route is served under it (`/health` also at the root). */
  readonly urlBase?: string;
  /** `SERVER_ALLOW_MANUAL_SCAN`: gates only the `GET /<SERVER_PASS>` page (form posts always work, as before). */
  readonly allowManualScan: boolean;
  /** `SERVER_IGNORE_LIST`: case-insensitive substrings of the mapped path; manual requests only. */
  readonly ignoreList: readonly string[];
  /** `SERVER_AUTH_USERNAME`/`SERVER_AUTH_PASSWORD` for the bare `/triggers/manual`; absent or empty → that route is off. */
  readonly auth?: { readonly username: string; readonly password: string };
  /** `SERVER_MAX_REQUEST_BYTES` (default 1 MiB): larger bodies get 413. */
  readonly maxBodyBytes?: number;
  /** How long a request may take to arrive and to be stored (default 30 s); past it, 408 or 503. */
  readonly requestTimeoutMs?: number;
  /** `SERVER_METRICS`: requests are counted and `GET /<SERVER_PASS>/metrics` serves the scrape; absent → 404 there. */
  readonly metrics?: RequestMetrics & MetricsExposition;
  /** Log the start-up line about /triggers/manual (default true; a config reload's new app says nothing). */
  readonly announce?: boolean;
  /** Where refused requests are told (summarised per client); shared across reloads. Default: the app's own. */
  readonly rejections?: RejectionLog;
  /** How wrong secrets are slowed (guess-brake.ts); shared across reloads. Default: the app's own, on the system clock. */
  readonly guesses?: GuessBrake;
  /** What the console pages show beyond the queue (live changes, activity, preview, libraries, Drive). */
  readonly console?: ConsoleSources;
  /** The Scan page's "Connect your apps" panel: the `ARR` apps, the port, whether autoscan runs in a container. */
  readonly connectApps?: ConnectAppsOptions;
  /** `ARR`: the backfill from the *arr apps' history (`cmd=backfill`); absent when no app is configured. */
  readonly backfill?: BackfillAdmin;
  /** `ARR`: the watch on each app's connection to autoscan; absent when no app is watched. */
  readonly arrConnections?: ArrConnectionsAdmin;
}

/**
 * The server's watch on the *arr apps' connections (src/arr/connection-watch.ts), as the web uses it: told of each
 * accepted webhook from an app (the URL's label), and asked to look now (`cmd=arr_check`, which `autoscan arr
 * connect` sends after it fixed a connection), so a warning ends when the app is fixed.
 */
export interface ArrConnectionsAdmin {
  heard(app: string): void;
  /** A Test event from the app: a flagged app is looked at again shortly (after the app saved the connection). */
  tested(app: string): void;
  /** Undefined: no such app is watched. */
  recheck(app?: string): Promise<readonly ArrCheckView[]> | undefined;
}

export interface ArrCheckView {
  readonly app: string;
  /** `ok`, `wrong-events`, `missing`, `wrong-url`, `disabled`, `failing`, or `unknown` (the app could not be asked). */
  readonly state: string;
  readonly detail: string;
  /** A warning about the app ended with this look. */
  readonly cleared: boolean;
}

/** The backfill as the API runs it for `autoscan backfill`: one read now, told as it goes. */
export interface BackfillAdmin {
  readonly apps: readonly string[];
  run(options: BackfillRunOptions, report: (event: BackfillEvent) => void, signal: AbortSignal): Promise<readonly BackfillAppResult[]>;
}

export interface BackfillRunOptions {
  /** ms since the epoch. */
  readonly since?: number;
  readonly app?: string;
  readonly dryRun: boolean;
}

export type BackfillEvent =
  | { readonly kind: "progress"; readonly app: string; readonly pages: number; readonly records: number; readonly queued: number; readonly covered: number }
  | { readonly kind: "request"; readonly app: string; readonly path: string; readonly event: string; readonly date: string };

export interface BackfillAppResult {
  readonly app: string;
  readonly ok: boolean;
  readonly records: number;
  readonly queued: number;
  readonly covered: number;
  readonly error?: string;
}

type Awaitable<T> = T | Promise<T>;

/**
 * The queue functions of `/api/<SERVER_PASS>` and of the console. Ids arrive as URL text; an id that names no item
 * answers `false`/`undefined`.
 */
export interface QueueAdmin {
  pendingCount(): Awaitable<number>;
  /** Waiting folders in dispatch order (priority, then oldest first). */
  listPending(page?: PageOptions): Awaitable<ItemPage>;
  /** Finished and failed folders, newest first. */
  listHistory(query?: HistoryQuery): Awaitable<ItemPage>;
  getItem(id: string): Awaitable<QueueItemView | undefined>;
  /** The request sources kept, for the history's filter. */
  sources(): Awaitable<readonly string[]>;
  /** Puts a failed or finished item back in the queue (a waiting one is made due now); false when there is none. */
  retry(id: string): Awaitable<boolean>;
  /** Drops an item; false when there is no such item. */
  remove(id: string): Awaitable<boolean>;
  /** Retries every failed item; how many. */
  retryFailed(): Awaitable<number>;
  /** Retries the items refused for lack of a mapping that today's SERVER_PATH_MAPPINGS reach; how many. */
  retryRemapped?(): Awaitable<number>;
  /** How many items `retryRemapped` would retry now. */
  remappedCount?(): Awaitable<number>;
  /** Rows done and in all while plex_autoscan's queue is being imported (the Queue page says so). */
  importing?(): { readonly done: number; readonly total: number } | undefined;
}

export type { HistoryQuery, PageOptions, QueueItemView } from "../core/queue-view.ts";

export interface DriveAdmin {
  /** Forgets every drive's page token (the next poll starts from "now"). */
  resetPageToken(): Awaitable<void>;
  /** Empties the file-id → path cache. */
  clearCache(): Awaitable<void>;
}

export interface HealthReport {
  readonly ready: boolean;
  /** Shown as `status` (default `ok` when ready, `starting` when not). */
  readonly status?: string;
  readonly [detail: string]: unknown;
}

export const DEFAULT_MAX_BODY_BYTES = 1_048_576;
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
