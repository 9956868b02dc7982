/**
 * What the modules count, as small ports. `ops/metrics` implements them with prom-client when `SERVER_METRICS` is on;
 * when it is off the composition root passes nothing, and every counting point is one `metrics?.…` that does nothing.
 *
 * Callers pass what they know (the source as users read it, the raw event name, the target's name); the
 * implementation bounds every label to a fixed set, so nothing a sender controls (a path, a label, an event name)
 * can grow the number of series.
 */

/** One request received over HTTP (or from the Drive monitor): who sent it, which event, and how it was answered. */
export interface RequestMetrics {
  /** `source` as in `ScanRequest.source` (`Sonarr (4k)`, `Manual` …) or a route's name (`trigger`, `api`);
   *  `status`: the HTTP status answered (Drive: 200 once stored, 503 when the queue refused). */
  requestReceived(source: string, event: string, status: number): void;
}

/** What the dispatcher and its targets did. */
export interface DispatchMetrics {
  /** A scan ended: `scanned`, `skipped`, `failed`, `unavailable` (the target is down). `waitedSeconds`: from the
   *  folder's first request to the target's answer, for a scan that was done. */
  scanFinished(target: string, result: ScanResult, waitedSeconds?: number): void;
  /** One folder's file check ended: all there (`found`), some missing and checked again later (`waiting`), given up
   *  (`not_found`), or the disk did not answer (`unanswered`: the folder waits for its mount, no check spent). */
  fileChecked(result: FileCheckResult): void;
  /** A look at the disk that did not answer in time (counts as "not there yet"). */
  fileCheckTimedOut(): void;
}

/** A call to a target or to Plex's API: how long it took and whether it answered. */
export interface TargetCallMetrics {
  targetCall(target: string, operation: string, seconds: number, ok: boolean): void;
}

export interface DriveMetrics {
  /** One poll of every feed: `ok` or `error`. */
  drivePolled(ok: boolean): void;
  /** One Drive API call (after its own retries): `error` is the failure's kind (`rate-limit`, `transient` …). */
  driveApiCall(method: string, error?: string): void;
}

export interface StoreMetrics {
  /** One record appended to the queue's log (fdatasync included), or refused by the disk. */
  storeWrite(seconds: number, ok: boolean): void;
  /** PostgreSQL, several instances: a folder taken over from an instance that stopped renewing its claim
   *  (`scanInFlight`: an attempt had started there, so that scan may be sent once more). */
  queueTakeover(scanInFlight: boolean): void;
}

export type ScanResult = "scanned" | "skipped" | "failed" | "unavailable";
export type FileCheckResult = "found" | "waiting" | "not_found" | "unanswered";

export interface BackfillMetrics {
  /** One read of an *arr app's history: `ok`, or why not (`down`, `auth`, `api`, `other`), and the requests it queued. */
  backfillRead(app: string, result: "ok" | "down" | "auth" | "api" | "other", queued: number): void;
}

/** The landed check (`landed/landed-checker.ts`): one outcome per (folder, target). */
export interface LandedMetrics {
  /** `landed` (with the seconds from the first request to the look that saw the files), `not_visible`, `not_checked`. */
  landed(target: string, outcome: "landed" | "not_visible" | "not_checked", afterSeconds?: number): void;
  /** Refresh in place after a look: `refreshed`, `not_refreshed` (no item, no file, the target cannot), `failed`. */
  refreshed(target: string, outcome: "refreshed" | "not_refreshed" | "failed"): void;
}

/** The folder watchers (`WATCH`). */
export interface WatchMetrics {
  /** A settled change a watcher reported (one request): `Created`, `Modified`, `Deleted`. */
  watchChange(watcher: string, event: "Created" | "Modified" | "Deleted"): void;
  /** A walk of a watcher's folders ended (the first one, and each `poll`). */
  watchWalk(watcher: string, seconds: number): void;
}

export type Metrics = RequestMetrics &
  DispatchMetrics &
  TargetCallMetrics &
  DriveMetrics &
  StoreMetrics &
  BackfillMetrics &
  LandedMetrics &
  WatchMetrics;

/** The scrape: the text Prometheus reads, with its content type (`GET /<SERVER_PASS>/metrics`). */
export interface MetricsExposition {
  readonly contentType: string;
  render(): Promise<string>;
}

/** Runs `call` and tells `metrics` how long it took and whether it answered; without metrics, just runs it. */
export async function timedCall<T>(
  metrics: TargetCallMetrics | undefined,
  target: string,
  operation: string,
  call: () => Promise<T>,
): Promise<T> {
  if (!metrics) return call();
  const started = performance.now();
  let ok = false;
  try {
    const value = await call();
    ok = true;
    return value;
  } finally {
    metrics.targetCall(target, operation, (performance.now() - started) / 1000, ok);
  }
}
