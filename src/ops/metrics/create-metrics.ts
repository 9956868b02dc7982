import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import type { Metrics, MetricsExposition } from "../../core/metrics.ts";
import { eventLabel, nameLabel, sourceLabel, statusClass } from "./labels.ts";

/**
 * The service's Prometheus metrics (prom-client), on a registry of their own: never prom-client's global one, so
 * several services in one process (tests) each count their own. The composition root makes one when
 * `SERVER_METRICS` is on and hands its small ports (`core/metrics.ts`) to the modules that count; the web app serves
 * `render()`. Every label is bounded (`labels.ts`); times are in seconds, as Prometheus wants.
 */
export interface ServiceMetrics extends Metrics, MetricsExposition {
  /** Where the queue's folders are counted by state, at each scrape (the queue opens after the metrics exist). */
  countQueueWith(count: () => Promise<Readonly<Record<string, number>>>): void;
  readonly registry: Registry;
}

export interface MetricsOptions {
  /** Node.js and process metrics (`process_cpu_seconds_total`, `nodejs_heap_size_used_bytes` …); default true. */
  readonly processMetrics?: boolean;
}

/** Queue states always reported (0 when empty), so a dashboard's series exist from the first scrape. */
const QUEUE_STATES = ["pending", "done", "failed"] as const;

/** From a webhook to its scan: SERVER_SCAN_DELAY is 180 s by default, file checks add minutes, retries hours. */
const WAIT_BUCKETS = [1, 5, 15, 30, 60, 120, 180, 240, 300, 450, 600, 900, 1800, 3600, 7200, 21_600, 86_400];
/** A Plex API call takes milliseconds; a scan (the API target waits for Plex to finish, the scanner runs) minutes. */
const CALL_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800];
/** One fdatasync'd append to the queue's log: sub-millisecond on an SSD, seconds on a struggling disk. */
const WRITE_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export function createMetrics(options: MetricsOptions = {}): ServiceMetrics {
  const registry = new Registry();
  const registers = [registry];
  if (options.processMetrics ?? true) collectDefaultMetrics({ register: registry });

  const requests = new Counter({
    name: "autoscan_requests_received_total",
    help: "Requests received, by source (sonarr, radarr, lidarr, readarr, manual, trigger, api, drive), event and answer (HTTP status class).",
    labelNames: ["source", "event", "answer"] as const,
    registers,
  });
  let countQueue: (() => Promise<Readonly<Record<string, number>>>) | undefined;
  new Gauge({
    name: "autoscan_queue_folders",
    help: "Folders in the queue by state: pending (waiting, being checked or scanned), done and failed (the history).",
    labelNames: ["state"] as const,
    registers,
    async collect() {
      if (!countQueue) return;
      const counts = await countQueue();
      for (const state of QUEUE_STATES) this.set({ state }, counts[state] ?? 0);
    },
  });
  const scans = new Counter({
    name: "autoscan_scans_total",
    help: "Scans by target and result: scanned, skipped, failed (retried later), unavailable (the target was down).",
    labelNames: ["target", "result"] as const,
    registers,
  });
  const waited = new Histogram({
    name: "autoscan_request_to_scan_seconds",
    help: "Time from a folder's first request to the target's answer to its scan (scan delay, file checks and retries included).",
    labelNames: ["target"] as const,
    buckets: WAIT_BUCKETS,
    registers,
  });
  const calls = new Histogram({
    name: "autoscan_target_call_duration_seconds",
    help: "Duration of calls to scan targets (scan, probe) and to Plex's API, by target, operation and result (ok, error).",
    labelNames: ["target", "operation", "result"] as const,
    buckets: CALL_BUCKETS,
    registers,
  });
  const fileChecks = new Counter({
    name: "autoscan_file_checks_total",
    help: "File checks of a folder before its scan: found (all there), waiting (checked again later), not_found (given up), unanswered (the disk did not answer: the folder waits for its mount, no check spent).",
    labelNames: ["result"] as const,
    registers,
  });
  const fileCheckTimeouts = new Counter({
    name: "autoscan_file_check_timeouts_total",
    help: "Looks at the media disk that did not answer in time (the folder waits for its mount).",
    registers,
  });
  const polls = new Counter({
    name: "autoscan_drive_polls_total",
    help: "Google Drive polls of every watched drive, by result (ok, error).",
    labelNames: ["result"] as const,
    registers,
  });
  const driveCalls = new Counter({
    name: "autoscan_drive_api_calls_total",
    help: "Google Drive API calls (after their retries) by method and result (ok, or the kind of error).",
    labelNames: ["method", "result"] as const,
    registers,
  });
  const writes = new Histogram({
    name: "autoscan_store_write_duration_seconds",
    help: "Time to make one queue write durable (append to the log and fdatasync, or one PostgreSQL commit); writes that arrive meanwhile go together.",
    buckets: WRITE_BUCKETS,
    registers,
  });
  const writeFailures = new Counter({
    name: "autoscan_store_write_failures_total",
    help: "Queue writes the disk or the database refused (requests answered 503 until the store can write again).",
    registers,
  });
  const takeovers = new Counter({
    name: "autoscan_queue_takeovers_total",
    help: "Folders this instance took over from another that stopped renewing its claim (PostgreSQL); scan_in_flight=true: a scan had started there and may be sent once more.",
    labelNames: ["scan_in_flight"] as const,
    registers,
  });

  const backfillReads = new Counter({
    name: "autoscan_backfill_reads_total",
    help: "Reads of an *arr app's history (ARR) by app and result: ok, down, auth (key refused), api (not understood), other.",
    labelNames: ["app", "result"] as const,
    registers,
  });
  const backfillQueued = new Counter({
    name: "autoscan_backfill_requests_total",
    help: "Scan requests the backfill queued (history records no webhook brought), by app.",
    labelNames: ["app"] as const,
    registers,
  });
  const landedOutcomes = new Counter({
    name: "autoscan_landed_total",
    help: "Landed checks by target and outcome: landed (the server's library shows the files), not_visible (not after a rescan), not_checked (it could not be asked).",
    labelNames: ["target", "outcome"] as const,
    registers,
  });
  const refreshes = new Counter({
    name: "autoscan_refresh_total",
    help: "Refresh in place after a scan, by target and outcome: refreshed (the items were re-read), not_refreshed (no item holds the file, or the target cannot refresh one), failed (the server refused or did not answer).",
    labelNames: ["target", "outcome"] as const,
    registers,
  });
  const landedAfter = new Histogram({
    name: "autoscan_landed_seconds",
    help: "Time from a folder's first request to the look that found its files in the target's library.",
    labelNames: ["target"] as const,
    buckets: WAIT_BUCKETS,
    registers,
  });
  const watchChanges = new Counter({
    name: "autoscan_watch_changes_total",
    help: "Settled changes the folder watchers reported (each one a scan request), by watcher and event: Created, Modified, Deleted.",
    labelNames: ["watcher", "event"] as const,
    registers,
  });
  const watchWalks = new Histogram({
    name: "autoscan_watch_walk_seconds",
    help: "Duration of a walk of a watcher's folders (the first one at start, then each poll).",
    labelNames: ["watcher"] as const,
    buckets: CALL_BUCKETS,
    registers,
  });

  return {
    registry,
    contentType: registry.contentType,
    render: () => registry.metrics(),
    countQueueWith(count) {
      countQueue = count;
    },
    requestReceived(source, event, status) {
      requests.inc({ source: sourceLabel(source), event: eventLabel(event), answer: statusClass(status) });
    },
    scanFinished(target, result, waitedSeconds) {
      const name = nameLabel(target);
      scans.inc({ target: name, result });
      if (waitedSeconds !== undefined) waited.observe({ target: name }, Math.max(0, waitedSeconds));
    },
    fileChecked(result) {
      fileChecks.inc({ result });
    },
    fileCheckTimedOut() {
      fileCheckTimeouts.inc();
    },
    targetCall(target, operation, seconds, ok) {
      calls.observe({ target: nameLabel(target), operation: nameLabel(operation), result: ok ? "ok" : "error" }, seconds);
    },
    drivePolled(ok) {
      polls.inc({ result: ok ? "ok" : "error" });
    },
    driveApiCall(method, error) {
      driveCalls.inc({ method: nameLabel(method), result: error === undefined ? "ok" : nameLabel(error) });
    },
    storeWrite(seconds, ok) {
      if (ok) writes.observe(seconds);
      else writeFailures.inc();
    },
    queueTakeover(scanInFlight) {
      takeovers.inc({ scan_in_flight: scanInFlight ? "true" : "false" });
    },
    backfillRead(app, result, queued) {
      // App names come from the config's ARR section: a fixed set.
      backfillReads.inc({ app: nameLabel(app), result });
      if (queued > 0) backfillQueued.inc({ app: nameLabel(app) }, queued);
    },
    watchChange(watcher, event) {
      // Watcher names come from the config's WATCH section: a fixed set.
      watchChanges.inc({ watcher: nameLabel(watcher), event });
    },
    watchWalk(watcher, seconds) {
      watchWalks.observe({ watcher: nameLabel(watcher) }, seconds);
    },
    landed(target, outcome, afterSeconds) {
      landedOutcomes.inc({ target: nameLabel(target), outcome });
      if (afterSeconds !== undefined) landedAfter.observe({ target: nameLabel(target) }, Math.max(0, afterSeconds));
    },
    refreshed(target, outcome) {
      refreshes.inc({ target: nameLabel(target), outcome });
    },
  };
}
