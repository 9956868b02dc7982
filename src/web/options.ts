import type { Logger } from "../core/logger.ts";
import type { MetricsExposition, RequestMetrics } from "../core/metrics.ts";
import type { ScanSink } from "../core/scan.ts";
import type { PathMapper } from "../paths/mapping.ts";
import type { RejectionLog } from "./rejections.ts";

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
  readonly health: () => HealthReport;
  readonly log: Logger;
  /** `SERVER_PASS`: the URL secret of `/<SERVER_PASS>` and `/api/<SERVER_PASS>`. Must not be empty. */
  readonly serverPass: string;
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
}

type Awaitable<T> = T | Promise<T>;

/**
 * The queue functions of `/api/<SERVER_PASS>`. Items are passed through to the JSON answer as they are; the queue
 * adapter should give at least `id` and `folder`, and ideally `status`, `priority`, `sources`, `attempts`,
 * `lastError` and ISO timestamps.
 */
export interface QueueAdmin {
  pendingCount(): Awaitable<number>;
  listPending(): Awaitable<readonly QueueItemView[]>;
  listHistory(limit: number): Awaitable<readonly QueueItemView[]>;
  /** Puts a failed or finished item back in the queue; false when there is no such item. */
  retry(id: string): Awaitable<boolean>;
  /** Drops a waiting item; false when there is no such item. */
  remove(id: string): Awaitable<boolean>;
}

/** What the API needs of a queue item; every other field of the queue's own view is passed through as it is. */
export interface QueueItemView {
  readonly id: string | number;
  readonly folder: string;
}

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
