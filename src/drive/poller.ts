import { systemClock, type Clock } from "../core/clock.ts";
import { ConfigError, describeError } from "../core/errors.ts";
import type { Logger } from "../core/logger.ts";
import type { DriveMetrics } from "../core/metrics.ts";
import type { ScanSink } from "../core/scan.ts";
import type { PathMapper } from "../paths/mapping.ts";
import { createChangeProcessor, type IsInLibrary, type PageStats } from "./change-processor.ts";
import type { DriveStateStore } from "./drive-store.ts";
import type { DriveFilterOptions } from "./filters.ts";
import { createDriveFilter } from "./filters.ts";
import { explainOAuthError } from "./google-errors.ts";
import { GoogleCallError } from "./google-retry.ts";
import type { DriveStatus } from "../core/drive-status.ts";
import { createMonitorStatus } from "./monitor-status.ts";
import { MY_DRIVE_NAME } from "./path-cache.ts";
import { requiredScope } from "./scope.ts";
import { openSession, type DriveConnection, type Session } from "./session.ts";
import { CredentialsRefusedError } from "./token-renewal.ts";

/**
 * The Google Drive monitor: polls each feed every `POLL_INTERVAL` seconds and hands new files to the ScanSink.
 * A page's token is committed only after the sink accepted that page's requests: a crash re-reads a page, never
 * skips one. An access token Google drops before its expiry is renewed on the spot (token-renewal.ts). Credentials
 * Google refuses to issue tokens for (revoked refresh token, wrong client, deleted key) or that lack a scope stop the
 * monitor with one error line that names the fix; the rest of the service keeps running. Other failures wait, longer
 * after each one, and try again. `status()` tells what it has been doing (the console's Drive page; monitor-status.ts).
 */
export interface DriveMonitorOptions {
  /** Builds the authenticated Drive API (the three credential ways live in credentials.ts). */
  readonly connect: (signal: AbortSignal) => Promise<DriveConnection>;
  readonly openStore: () => Promise<DriveStateStore>;
  readonly sink: ScanSink;
  readonly isInLibrary: IsInLibrary;
  readonly mapper: PathMapper;
  readonly filter: DriveFilterOptions;
  readonly pollIntervalMs: number;
  /** Poll My Drive's feed (default true). */
  readonly myDrive?: boolean;
  /** `CLOUD.TEAMDRIVES` when `CLOUD.TEAMDRIVE` is on: names or ids. */
  readonly sharedDrives: readonly string[];
  readonly showCacheLogs: boolean;
  readonly log: Logger;
  readonly clock?: Clock;
  /** Longest wait after repeated failures. */
  readonly maxFailureWaitMs?: number;
  /** `SERVER_METRICS`: polls by result. */
  readonly metrics?: Pick<DriveMetrics, "drivePolled">;
  /** The access method in words, for `status()` (the wiring knows which of the three ways the config chose). */
  readonly access?: string;
  /** Removes secrets from the error messages `status()` keeps (the log scrubber's). */
  readonly redact?: (text: string) => string;
}

export type MonitorState = "idle" | "starting" | "running" | "stopped" | "failed";

export interface DriveMonitor {
  /** Starts polling in the background; resolves once the first poll finished (or the monitor failed). */
  start(): Promise<void>;
  stop(): Promise<void>;
  /** One poll of every feed now (tests, benchmarks); rejects on failure. */
  pollOnce(): Promise<void>;
  /** `reset_page_token`: the next poll starts from "now" on every feed. */
  resetPageTokens(): Promise<string>;
  /** `clear_drive_cache`: forget every cached name and parent. */
  clearCache(): Promise<string>;
  readonly state: MonitorState;
  /** What the monitor has been doing (console's Drive page), from memory. */
  status(): DriveStatus;
}

export function createDriveMonitor(options: DriveMonitorOptions): DriveMonitor {
  const log = options.log;
  const clock = options.clock ?? systemClock;
  const abort = new AbortController();
  let state: MonitorState = "idle";
  let session: Session | undefined;
  let store: DriveStateStore | undefined;
  let loop: Promise<void> | undefined;
  let chain: Promise<unknown> = Promise.resolve();
  const status = createMonitorStatus({
    clock,
    pollIntervalMs: options.pollIntervalMs,
    access: options.access,
    drives: [...((options.myDrive ?? true) ? [MY_DRIVE_NAME] : []), ...options.sharedDrives],
    redact: options.redact,
  });
  const exclusive = <T>(task: () => Promise<T>): Promise<T> => {
    const run = chain.then(task, task);
    chain = run.catch(() => undefined);
    return run;
  };

  async function ensureSession(): Promise<Session> {
    if (session) return session;
    store ??= await options.openStore();
    const connection = await options.connect(abort.signal);
    session = await openSession({
      connection,
      store,
      wanted: { myDrive: options.myDrive ?? true, sharedDrives: options.sharedDrives },
      makeProcessor: (cache) =>
        createChangeProcessor({
          cache,
          filter: createDriveFilter(options.filter),
          mapper: options.mapper,
          isInLibrary: options.isInLibrary,
          log,
          showCacheLogs: options.showCacheLogs,
        }),
      log,
    });
    const { description, tokenExpiresAt } = connection;
    status.connected({ description, tokenExpiresAt, drives: session.feeds.map((feed) => feed.name) });
    return session;
  }

  async function pollFeeds(): Promise<void> {
    status.pollStarted();
    try {
      const s = await ensureSession();
      for (const feed of s.feeds) {
        if (abort.signal.aborted) return;
        await s.pollFeed(feed, options.sink, logPage);
      }
    } catch (error) {
      if (!abort.signal.aborted) status.pollFailed(error);
      throw error;
    }
    status.pollSucceeded();
  }

  function logPage(feedName: string, changes: number, stats: PageStats, scanned: readonly string[]): void {
    status.page(changes, scanned.length);
    if (changes === 0) return;
    const summary = `${stats.added} added / ${stats.removed} removed / ${stats.unwanted} unwanted / ${stats.ignored} ignored / ${stats.renamed} renamed / ${stats.moved} moved`;
    const level = stats.added + stats.removed + stats.renamed + stats.moved > 0 ? "info" : "debug";
    log[level]({ drive: feedName }, `Processing ${changes} changes: ${summary}`);
    if (stats.rejected) log.info(`Rejected ${stats.rejected} file(s) from Google Drive changes for already being in Plex.`);
    if (scanned.length) {
      log.info({ drive: feedName }, `Proceeding with scan of ${scanned.length} file(s) from Google Drive changes: ${JSON.stringify(scanned)}`);
    }
  }

  /**
   * Stops for good when only a person can help (Google refuses to issue tokens, a scope is missing, the config is
   * wrong); anything else, a 401 included, is retried at the next interval.
   */
  function fatalReason(error: unknown): string | undefined {
    if (error instanceof ConfigError || error instanceof CredentialsRefusedError) return error.message;
    if (!(error instanceof GoogleCallError)) return undefined;
    const failure = error.failure;
    if (failure.kind === "auth") return explainOAuthError(failure.code, "refresh");
    if (failure.kind === "scope") {
      const scope = requiredScope({ sharedDrives: options.sharedDrives.length > 0 });
      return `Google refused the call for lack of scope (${failure.detail}). Run \`autoscan authorize\` again (it asks for ${scope}), then restart autoscan.`;
    }
    return undefined;
  }

  async function runLoop(firstPoll: { resolve: () => void }): Promise<void> {
    let failures = 0;
    while (!abort.signal.aborted) {
      let wait = options.pollIntervalMs;
      try {
        await exclusive(pollFeeds);
        options.metrics?.drivePolled(true);
        if (state === "starting") {
          state = "running";
          log.info("Google Drive changes monitor started.");
        }
        failures = 0;
      } catch (error) {
        if (abort.signal.aborted) break;
        options.metrics?.drivePolled(false);
        const reason = fatalReason(error);
        if (reason) {
          state = "failed";
          status.failed(reason);
          log.error({ err: error }, `Google Drive monitoring stopped: ${reason}`);
          break;
        }
        failures++;
        wait = Math.max(wait, Math.min(2 ** failures * 1000, options.maxFailureWaitMs ?? 15 * 60_000));
        log.warn({ err: error, retryInMs: wait }, `Polling Google Drive failed: ${describeError(error)}`);
      } finally {
        firstPoll.resolve();
      }
      status.nextPollAt(clock.now() + wait);
      await clock.sleep(wait, abort.signal);
    }
    if (state !== "failed") state = "stopped";
  }

  return {
    get state() {
      return state;
    },
    status: () => status.snapshot(state),
    start() {
      if (loop) return Promise.resolve();
      state = "starting";
      log.info(`Starting Google Drive monitoring (every ${Math.round(options.pollIntervalMs / 1000)} seconds)...`);
      return new Promise<void>((resolve) => {
        loop = runLoop({ resolve });
      });
    },
    async stop() {
      abort.abort();
      await loop;
      await chain;
      store?.close();
      store = undefined;
      if (state !== "failed") state = "stopped";
    },
    pollOnce: () => exclusive(pollFeeds),
    resetPageTokens: () =>
      exclusive(async () => {
        store ??= await options.openStore();
        await store.clearPageTokens();
        log.info("Reset the Google Drive page tokens: the next poll starts from the current changes.");
        return "Google Drive page tokens were reset.";
      }),
    clearCache: () =>
      exclusive(async () => {
        store ??= await options.openStore();
        if (session) await session.clearCache();
        else await store.clearItems();
        log.info("Cleared the Google Drive cache.");
        return "Google Drive cache was cleared.";
      }),
  };
}
