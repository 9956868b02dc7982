import type { Clock } from "../core/clock.ts";
import { formatDuration } from "../core/format-duration.ts";
import { TargetUnavailableError, describeError } from "../core/errors.ts";
import type { Logger } from "../core/logger.ts";
import type { ScanRequest } from "../core/scan.ts";
import type { LandedMetrics } from "../core/metrics.ts";
import type { NotifySink } from "../core/notify-event.ts";
import type { Target } from "../core/target.ts";
import type { DueLook } from "../queue/landed-reads.ts";
import { RESCAN_REQUEST, type LookRecord } from "../queue/rules/landed.ts";
import type { RefreshRecord } from "../queue/rules/refresh.ts";
import type { ScanQueue } from "../queue/scan-queue.ts";

/**
 * Did the files land? Looks the requested files up in each target's library after its scan (the target's
 * `LibraryLookup`: its API, never the disks), away from the dispatcher: no scan waits for a look. A file not visible at
 * the first look is looked up again after `SERVER_LANDED_RECHECK`; still missing, a rescan of its files is queued
 * (`RESCAN_REQUEST`: a scan like any other, so it waits for a missing anchor or a hung mount and gets the target's own
 * wait and retries; never sent from here), and once the target has scanned it the files are looked up a last time;
 * still missing, the delivery is `not visible` (a WARNING and a `not_visible` notification). A deleted file counts the
 * other way round: it must be gone.
 *
 * Bounded so that a burst of folders does not hammer a server: one look at a time per target, at most `perMinute`
 * looks per target each minute, each cut off after `timeoutMs`. What a look found is stored with the delivery
 * (`rules/landed.ts`), so a restart picks the looks up where they were.
 */
export interface LandedSettings {
  /** `SERVER_LANDED_RECHECK`, ms: the wait before the second look. */
  readonly recheckMs: number;
  /** Looks per target per minute (default 300). */
  readonly perMinute?: number;
  /** One look's limit (default 2 min). */
  readonly timeoutMs?: number;
}

export interface LandedCheckerOptions {
  readonly queue: Pick<ScanQueue, "dueLooks" | "nextLookAt" | "claimLook" | "recordLook" | "onChange" | "enqueue" | "rescanState">;
  /** The targets as configured now (a reload may change them). */
  readonly targets: () => readonly Target[];
  readonly settings: () => LandedSettings;
  readonly clock: Clock;
  /** The checker's logger (component LANDED). */
  readonly log: Logger;
  readonly metrics?: LandedMetrics;
  readonly notify?: NotifySink;
  /** How often due looks are read when nothing wakes the checker (default 5 s). */
  readonly pollMs?: number;
}

export interface LandedChecker {
  stop(): Promise<void>;
}

const DEFAULT_PER_MINUTE = 300;
const DEFAULT_TIMEOUT_MS = 2 * 60_000;
/** A target that cannot be asked is asked again this much later, and given up (`not checked`) after an hour. */
const UNREACHABLE_RETRY_MS = 60_000;
const UNREACHABLE_GIVE_UP_MS = 60 * 60_000;

export function startLandedChecker(options: LandedCheckerOptions): LandedChecker {
  const { queue, clock, log, metrics } = options;
  const stop = new AbortController();
  const workers = new Map<string, TargetWorker>();
  let wake: (() => void) | undefined;
  const unsubscribe = queue.onChange(() => wake?.());

  interface TargetWorker {
    readonly waiting: DueLook[];
    readonly keys: Set<string>;
    readonly recent: number[];
    running: boolean;
  }

  const worker = (target: string): TargetWorker => {
    let found = workers.get(target);
    if (!found) {
      found = { waiting: [], keys: new Set(), recent: [], running: false };
      workers.set(target, found);
    }
    return found;
  };

  async function runWorker(name: string, w: TargetWorker): Promise<void> {
    w.running = true;
    try {
      while (w.waiting.length > 0 && !stop.signal.aborted) {
        await underCap(w);
        const look = w.waiting.shift();
        if (!look) break;
        try {
          await lookOnce(look);
        } catch (error) {
          log.warn({ err: error, id: look.itemId, target: name }, `Could not check whether '${look.folder}' landed in '${name}'; trying again later`);
        } finally {
          w.keys.delete(key(look));
        }
      }
    } finally {
      w.running = false;
    }
  }

  /** At most `perMinute` looks per target in any minute. */
  async function underCap(w: TargetWorker): Promise<void> {
    const perMinute = options.settings().perMinute ?? DEFAULT_PER_MINUTE;
    const now = clock.now();
    while (w.recent.length > 0 && (w.recent[0] ?? 0) <= now - 60_000) w.recent.shift();
    if (w.recent.length >= perMinute) await clock.sleep((w.recent[0] ?? now) + 60_000 - now, stop.signal);
    w.recent.push(clock.now());
  }

  async function lookOnce(look: DueLook): Promise<void> {
    const settings = options.settings();
    const timeoutMs = settings.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const claimed = await queue.claimLook(look.itemId, look.target, timeoutMs * 2 + 60_000);
    if (!claimed) return;
    const target = options.targets().find((t) => t.name === look.target);
    const fields = { id: look.itemId, folder: look.folder, target: look.target };
    if (!target?.lookup) {
      const reason = target ? `'${look.target}' cannot be asked which files its library holds` : `'${look.target}' is no longer a target`;
      return void (await record(look, { kind: "not_checked", reason }));
    }
    // A folder keeps its first requests only: when those named no file, there is nothing to look for.
    if (look.files.length === 0) return void (await record(look, { kind: "not_checked", reason: "the requests kept name no file" }));
    // The last look waits, without asking the server, until the target has scanned the rescan (it may wait for its
    // anchor or mount, or for the target) and had its own delay to act on it.
    const rescanWaitMs = claimed.looks >= 2 ? await untilRescanSettled(look, target.lookup.settleMs, settings.recheckMs) : 0;
    if (rescanWaitMs > 0) {
      return void (await record(look, { kind: "again", inMs: rescanWaitMs, missing: claimed.row.landed_detail ?? "", looked: false }));
    }
    let found: ReadonlyMap<string, boolean>;
    try {
      found = await withTimeout(timeoutMs, (signal) => target.lookup!.find(look.files.map((file) => file.path), signal));
    } catch (error) {
      if (stop.signal.aborted) return;
      const why = describeError(error);
      if (error instanceof TargetUnavailableError && clock.now() - claimed.row.at < UNREACHABLE_GIVE_UP_MS) {
        log.debug({ ...fields, err: error }, `Cannot ask '${look.target}' whether the files landed (${why}); asking again in a minute`);
        return void (await record(look, { kind: "again", inMs: UNREACHABLE_RETRY_MS, missing: claimed.row.landed_detail ?? "", looked: false }));
      }
      log.warn({ ...fields, err: error }, `Could not check whether the files of '${look.folder}' landed in '${look.target}': ${why}`);
      return void (await record(look, { kind: "not_checked", reason: `the lookup failed: ${why}` }));
    }
    const missing = look.files.filter((file) => (found.get(file.path) ?? false) === file.deleted);
    if (missing.length === 0) {
      const afterMs = Math.max(0, clock.now() - look.firstAt);
      log.info({ ...fields, landedAfterMs: afterMs }, `Landed: '${look.target}' shows ${describeFiles(look.files)} of '${look.folder}' (${formatDuration(afterMs)} after the request).`);
      metrics?.landed(look.target, "landed", afterMs / 1000);
      // The scan has ended and the items are visible: only now is a refresh of them worth sending.
      const refresh = look.refresh ? await refreshItems(look, target, timeoutMs, claimed.row.at) : undefined;
      if (refresh === "again") {
        if (stop.signal.aborted) return;
        return void (await record(look, { kind: "again", inMs: UNREACHABLE_RETRY_MS, missing: claimed.row.landed_detail ?? "", looked: false }));
      }
      return void (await record(look, { kind: "landed", afterMs, ...(refresh ? { refresh } : {}) }));
    }
    const what = missing.map((file) => `'${file.path}'${file.deleted ? " (deleted, still listed)" : ""}`).join(", ");
    if (claimed.looks === 0) {
      // Usual (a server that imports slowly): said at DEBUG; the outcome is the line people read.
      log.debug({ ...fields, missing: missing.map((f) => f.path) }, `Not visible in '${look.target}' yet: ${what}; looking again in ${formatDuration(settings.recheckMs)}.`);
      return void (await record(look, { kind: "again", inMs: settings.recheckMs, missing: what, looked: true }));
    }
    if (claimed.looks === 1) {
      log.info({ ...fields }, `Still not visible in '${look.target}': ${what}; scanning '${look.folder}' once more (queued like any scan).`);
      // Queued before the look is recorded: a stop in between queues it again, and it merges with the first.
      await queue.enqueue(missing.map(rescanRequest));
      return void (await record(look, { kind: "again", inMs: target.lookup.settleMs, missing: what, looked: true }));
    }
    return notVisible(look, `${what} not visible in '${look.target}' after a rescan`);
  }

  /** How long the last look still waits for the queued rescan: `recheckMs` while it waits, then the server's delay. */
  async function untilRescanSettled(look: DueLook, settleMs: number, recheckMs: number): Promise<number> {
    const rescan = await queue.rescanState(look.target, look.files.map((file) => file.path));
    if (!rescan) return 0;
    return rescan.waiting ? recheckMs : Math.max(0, rescan.scannedAt + settleMs - clock.now());
  }

  /**
   * Refresh in place of the items the look just saw (never a library): the files still there, each item once. What
   * happened is a value stored with the delivery, never an error: a refresh that failed is said in History and can be
   * asked again from there.
   */
  async function refreshItems(look: DueLook, target: Target, timeoutMs: number, scannedAt: number): Promise<RefreshRecord | "again"> {
    const wish = look.refresh ?? "metadata";
    const fields = { id: look.itemId, folder: look.folder, target: look.target };
    const files = look.files.filter((file) => !file.deleted).map((file) => file.path);
    if (!target.refresher) return refreshSkipped(look, `'${look.target}' cannot refresh one item`);
    if (files.length === 0) return refreshSkipped(look, "the requests named no file that is still there");
    try {
      const outcome = await withTimeout(timeoutMs, (signal) => target.refresher!.refresh(files, wish, signal));
      if (outcome.refreshed === 0) return refreshSkipped(look, `no item in '${look.target}' holds ${outcome.missing.map((f) => `'${f}'`).join(", ")}`);
      log.info({ ...fields, refreshed: outcome.refreshed }, `Refreshed in '${look.target}': ${outcome.detail}.`);
      metrics?.refreshed(look.target, "refreshed");
      return { state: "refreshed", detail: outcome.detail };
    } catch (error) {
      const why = describeError(error);
      // A server that cannot be asked now (down, busy, restarting) is asked again, look and refresh, for up to an hour.
      if (error instanceof TargetUnavailableError && !stop.signal.aborted && clock.now() - scannedAt < UNREACHABLE_GIVE_UP_MS) {
        log.info({ ...fields, err: error }, `Cannot refresh the items of '${look.folder}' in '${look.target}' now (${why}); asking again in a minute`);
        return "again";
      }
      if (stop.signal.aborted) return "again";
      log.warn({ ...fields, err: error }, `Could not refresh the items of '${look.folder}' in '${look.target}': ${why}. Use Refresh on the History item to ask again.`);
      metrics?.refreshed(look.target, "failed");
      return { state: "not_refreshed", detail: `the refresh failed: ${why}` };
    }
  }

  function refreshSkipped(look: DueLook, reason: string): RefreshRecord {
    log.info({ id: look.itemId, folder: look.folder, target: look.target }, `Not refreshed in '${look.target}': ${reason}.`);
    metrics?.refreshed(look.target, "not_refreshed");
    return { state: "not_refreshed", detail: reason };
  }

  /** A look that ends without seeing the files cannot refresh them: said with the delivery when one was asked. */
  const unrefreshed = (look: DueLook, reason: string): { refresh?: RefreshRecord } =>
    look.refresh ? { refresh: refreshSkipped(look, reason) } : {};

  async function notVisible(look: DueLook, reason: string): Promise<void> {
    log.warn({ id: look.itemId, folder: look.folder, target: look.target }, `Not visible: ${reason}. Check that '${look.target}' can read the file and that its library holds the folder.`);
    metrics?.landed(look.target, "not_visible");
    if (await record(look, { kind: "not_visible", reason, ...unrefreshed(look, "the files were not visible") })) {
      options.notify?.({ event: "not_visible", at: clock.now(), folder: look.folder, target: look.target, reason, id: look.itemId });
    }
  }

  async function record(look: DueLook, outcome: LookRecord): Promise<boolean> {
    if (outcome.kind === "not_checked") {
      metrics?.landed(look.target, "not_checked");
      if (!outcome.refresh && look.refresh) {
        const why = look.files.length === 0
          ? "the request named a folder: a refresh re-reads the item of a file, so send the file's path"
          : `the item could not be looked up: ${outcome.reason}`;
        return queue.recordLook(look.itemId, look.target, { ...outcome, ...unrefreshed(look, why) });
      }
    }
    return queue.recordLook(look.itemId, look.target, outcome);
  }

  async function withTimeout<T>(ms: number, call: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const signal = AbortSignal.any([stop.signal, AbortSignal.timeout(ms)]);
    return call(signal);
  }

  const done = (async () => {
    const pollMs = options.pollMs ?? 5_000;
    while (!stop.signal.aborted) {
      try {
        for (const look of await queue.dueLooks(500)) {
          const w = worker(look.target);
          if (w.keys.has(key(look))) continue;
          w.keys.add(key(look));
          w.waiting.push(look);
        }
        for (const [name, w] of workers) if (!w.running && w.waiting.length > 0) void runWorker(name, w);
      } catch (error) {
        log.debug({ err: error }, "Could not read the landed looks due; trying again shortly");
      }
      const next = await queue.nextLookAt().catch(() => undefined);
      const sleepMs = Math.max(250, Math.min(pollMs, next === undefined ? pollMs : next - clock.now()));
      await new Promise<void>((resolve) => {
        wake = resolve;
        void clock.sleep(sleepMs, stop.signal).then(resolve);
      });
      wake = undefined;
      // Many stored changes in a row (a burst of webhooks) wake the checker once each; a pause keeps it to a few reads.
      await clock.sleep(250, stop.signal);
    }
  })();

  return {
    async stop() {
      stop.abort();
      unsubscribe();
      wake?.();
      await done;
    },
  };
}

const key = (look: DueLook): string => `${String(look.itemId)}\u0000${look.target}`;

function rescanRequest(file: DueLook["files"][number]): ScanRequest {
  return { ...RESCAN_REQUEST, path: file.path, kind: "file", ...(file.deleted ? { deleted: true } : {}) };
}

function describeFiles(files: DueLook["files"]): string {
  const present = files.filter((f) => !f.deleted).length;
  const gone = files.length - present;
  return [present ? `${String(present)} file(s)` : "", gone ? `${String(gone)} deleted file(s) gone` : ""].filter(Boolean).join(" and ");
}
