import type { PathKind, ScanRequest } from "../../src/core/scan.ts";
import type { ScanOutcome } from "../../src/core/target.ts";
import type { AttemptStart, CheckResult, FailureRecord, WorkItem } from "../../src/queue/dispatch/dispatch-port.ts";
import type { QueueItemView } from "../../src/queue/queue-views.ts";

/**
 * The scan queue as a plain in-memory model: the spec `test/queue-model.test.ts` holds the real queue (sql.js, log,
 * snapshots, the due index) to. Everything here is a list walked in full; nothing is indexed, cached or batched.
 *
 * The rules, in words (`src/queue/rules/enqueue.ts`, `dispatch-records.ts`, `admin.ts` say why):
 * - A request names a folder: a `file` request its parent, a `folder` or `unknown` one itself; a trailing `/` is
 *   dropped; the folder is compared in NFC. The request keeps its path as received.
 * - One pending item per folder. A new folder's item is due `delay` after its request. A request for a pending
 *   folder restarts the wait (never past 3 × `delay` after the first request, never earlier than it was), keeps the
 *   lowest priority number, and — unless it repeats a request the item already has (same path, kind, deleted,
 *   source, event) — adds work: a new `rev`, the file check starts again (a `deleted` request keeps the check count),
 *   and every target scans the folder again.
 * - An item is ready once its due time and its `next` time (a file check's or a failure's wait) have passed. Ready
 *   items are handed out by priority, then first request, then id: unchecked ones for the file check; checked ones
 *   to each target that has not finished them.
 * - Results carry the `rev` they were started for; a result for an older `rev` changes nothing (a scan's result
 *   still closes its attempt). A check is `ready` (what to scan), `wait` (check again later) or `failed` (final).
 *   An attempt is counted before it starts; after 3 started and never ended, the next one gives the folder up.
 *   A scan finishes the folder for its target; once every configured target has, the folder is `done`. A failure
 *   schedules a retry, or gives the folder up once it has been failing for `retryMaxMs`. A target down too long gives
 *   up every pending folder due by then that it has not finished.
 * - Retry forgets failures and attempts: a pending folder is due now; a finished or failed one is pending again, due
 *   now, checked again (a `done` one forgets its targets); when the folder already has a pending item, the old item's
 *   requests join it, and it is due now and checked again.
 * - Delete removes any item. History (`done`, `failed`) is pruned at open and every maintenance interval: older than
 *   `historyMaxDays`, or beyond the newest `historyMaxRows`.
 * - Item ids count up and are never reused. A restart or a crash keeps every acknowledged write; a write on its way
 *   during a crash is kept or lost as a whole.
 */
export const DAY_MS = 24 * 60 * 60 * 1000;

export interface ModelSettings {
  readonly delayMs: number;
  /** The priority of a folder under the queue's `priorities` option, written out by hand. */
  readonly priorityOf: (folder: string) => number;
  readonly historyMaxDays: number;
  readonly historyMaxRows: number;
  readonly maintenanceIntervalMs: number;
}

interface ModelRequest {
  /** Arrival order: requests are listed oldest first, also after a retry joined two items' requests. */
  readonly arrival: number;
  readonly path: string;
  readonly kind: PathKind;
  readonly deleted: boolean;
  readonly source: string;
  readonly event: string;
  readonly receivedPath?: string;
  readonly at: number;
}

interface ModelTarget {
  readonly status: "scanned" | "skipped";
  readonly detail?: string;
  readonly at: number;
}

interface ModelItem {
  readonly id: number;
  readonly folder: string;
  state: "pending" | "done" | "failed";
  priority: number;
  readonly firstAt: number;
  lastAt: number;
  dueAt: number;
  nextAt: number;
  rev: number;
  checks: number;
  scanFolder?: string;
  files: string[];
  attempts: number;
  unfinished: number;
  firstFailedAt?: number;
  lastError?: string;
  finishedAt?: number;
  requests: ModelRequest[];
  /** Requests let go when the folder finished: it keeps its first `HISTORY_REQUESTS_KEPT`. */
  requestsDropped: number;
  targets: Record<string, ModelTarget>;
  /** Targets that failed the folder: each waits on its own, or was given up. */
  deliveries: Record<string, ModelDelivery>;
}

interface ModelDelivery {
  attempts: number;
  nextAt: number;
  firstFailedAt: number;
  lastError: string;
  failed: boolean;
}

/** A finished folder keeps this many of its requests, oldest first. */
export const HISTORY_REQUESTS_KEPT = 10;

export interface ModelState {
  now: number;
  settings: ModelSettings;
  items: ModelItem[];
  nextId: number;
  nextArrival: number;
  nextMaintenanceAt: number;
}

export const MAX_UNFINISHED = 3;

export interface QueueModel {
  readonly state: ModelState;
  /** A copy to go on from (a crash may keep or lose a write that was on its way). */
  clone(): QueueModel;
  /** A (re)start: new settings, history pruned, the maintenance interval counted from now. */
  open(settings: ModelSettings): void;
  /** Time passes; history is pruned at every maintenance tick on the way. */
  advance(ms: number): void;
  enqueue(requests: readonly ScanRequest[]): { id: number; folder: string; merged: boolean }[];
  dueForCheck(limit: number, skip: ReadonlySet<number>): WorkItem[];
  dueForTarget(target: string, limit: number, skip: ReadonlySet<number>): WorkItem[];
  /** The earliest time after now at which a pending item becomes ready. */
  nextReadyAt(): number | undefined;
  recordCheck(id: number, rev: number, result: CheckResult): void;
  beginAttempt(id: number, rev: number, targets?: number): AttemptStart | undefined;
  recordScan(id: number, rev: number, target: string, outcome: ScanOutcome, allTargets: readonly string[]):
    | { completed: boolean }
    | undefined;
  recordFailure(id: number, rev: number, target: string, failure: FailureRecord, allTargets: readonly string[]): { failed: boolean };
  recordInterrupted(id: number): void;
  failWaitingFor(target: string, waitedMs: number, reason: string, allTargets: readonly string[]): number;
  retry(id: number): boolean;
  remove(id: number): boolean;
  pendingCount(): number;
  listPending(): QueueItemView[];
  listHistory(): QueueItemView[];
  getItem(id: number): QueueItemView | undefined;
}

export function createQueueModel(settings: ModelSettings, now: number): QueueModel {
  const state: ModelState = { now, settings, items: [], nextId: 1, nextArrival: 1, nextMaintenanceAt: 0 };
  const model = modelOver(state);
  model.open(settings);
  return model;
}

function modelOver(state: ModelState): QueueModel {
  const find = (id: number): ModelItem | undefined => state.items.find((item) => item.id === id);
  const pending = (): ModelItem[] => state.items.filter((item) => item.state === "pending").sort(dispatchOrder);
  const pendingWith = (id: number): ModelItem | undefined => pending().find((item) => item.id === id);
  const pendingFolder = (folder: string): ModelItem | undefined => pending().find((item) => item.folder === folder);
  const isReady = (item: ModelItem): boolean => Math.max(item.dueAt, item.nextAt) <= state.now;
  const finish = (item: ModelItem, to: "done" | "failed", error: string | undefined): void => {
    item.state = to;
    item.finishedAt = state.now;
    item.lastError = error;
    if (item.requests.length > HISTORY_REQUESTS_KEPT) {
      item.requestsDropped += item.requests.length - HISTORY_REQUESTS_KEPT;
      item.requests = [...item.requests].sort((a, b) => a.arrival - b.arrival).slice(0, HISTORY_REQUESTS_KEPT);
    }
  };
  /** Made due now and tried afresh (a retry). */
  const fresh = (item: ModelItem): void => {
    item.nextAt = 0;
    item.attempts = 0;
    item.unfinished = 0;
    item.firstFailedAt = undefined;
    item.lastError = undefined;
    item.finishedAt = undefined;
  };
  /** Finished once every target has delivered the folder or been given up: failed if any was given up. */
  const settle = (item: ModelItem, allTargets: readonly string[]): void => {
    const givenUp = Object.entries(item.deliveries)
      .filter(([, d]) => d.failed)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    const through = new Set([...Object.keys(item.targets), ...givenUp.map(([target]) => target)]);
    if (!allTargets.every((name) => through.has(name))) return;
    if (givenUp.length === 0) return finish(item, "done", undefined);
    const error = givenUp.map(([target, d]) => (d.lastError.startsWith(`${target}:`) ? d.lastError : `${target}: ${d.lastError}`)).join("; ");
    finish(item, "failed", error);
  };
  const waitsFor = (item: ModelItem, target: string): boolean => {
    const delivery = item.deliveries[target];
    return delivery !== undefined && (delivery.failed || delivery.nextAt > state.now);
  };
  /** New work: results started before it do not count, and the files are checked again. */
  const newWork = (item: ModelItem, keepChecks: boolean): void => {
    item.rev += 1;
    item.scanFolder = undefined;
    item.files = [];
    if (!keepChecks) item.checks = 0;
  };

  function prune(): void {
    const before = state.now - state.settings.historyMaxDays * DAY_MS;
    const history = state.items
      .filter((item) => item.state !== "pending")
      .sort((a, b) => (b.finishedAt ?? 0) - (a.finishedAt ?? 0) || b.id - a.id);
    const dropped = new Set(
      history.filter((item, rank) => rank >= state.settings.historyMaxRows || (item.finishedAt ?? 0) < before),
    );
    state.items = state.items.filter((item) => !dropped.has(item));
  }

  return {
    state,
    clone: () => modelOver({ ...state, items: structuredClone(state.items) }),
    open(settings) {
      state.settings = settings;
      prune();
      state.nextMaintenanceAt = state.now + settings.maintenanceIntervalMs;
    },
    advance(ms) {
      const until = state.now + ms;
      while (state.nextMaintenanceAt <= until) {
        state.now = state.nextMaintenanceAt;
        prune();
        state.nextMaintenanceAt += state.settings.maintenanceIntervalMs;
      }
      state.now = until;
    },

    enqueue(requests) {
      const { delayMs, priorityOf } = state.settings;
      return requests.map((request) => {
        const path = request.path.length > 1 && request.path.endsWith("/") ? request.path.slice(0, -1) : request.path;
        const folder = (request.kind === "file" ? path.slice(0, path.lastIndexOf("/")) || "/" : path).normalize("NFC");
        const row: ModelRequest = {
          arrival: 0,
          path,
          kind: request.kind,
          deleted: request.deleted === true,
          source: request.source,
          event: request.event,
          ...(request.receivedPath === undefined ? {} : { receivedPath: request.receivedPath }),
          at: state.now,
        };
        const item = pendingFolder(folder);
        if (!item) {
          const id = state.nextId++;
          state.items.push({
            id,
            folder,
            state: "pending",
            priority: priorityOf(folder),
            firstAt: state.now,
            lastAt: state.now,
            dueAt: state.now + delayMs,
            nextAt: 0,
            rev: 1,
            checks: 0,
            files: [],
            attempts: 0,
            unfinished: 0,
            requests: [{ ...row, arrival: state.nextArrival++ }],
            requestsDropped: 0,
            targets: {},
            deliveries: {},
          });
          return { id, folder, merged: false };
        }
        item.priority = Math.min(item.priority, priorityOf(folder));
        item.lastAt = state.now;
        item.dueAt = Math.max(item.dueAt, Math.min(state.now + delayMs, item.firstAt + 3 * delayMs));
        const repeated = item.requests.some(
          (r) =>
            r.path === row.path &&
            r.kind === row.kind &&
            r.deleted === row.deleted &&
            r.source === row.source &&
            r.event === row.event,
        );
        if (!repeated) {
          item.requests.push({ ...row, arrival: state.nextArrival++ });
          item.targets = {};
          item.deliveries = {};
          newWork(item, row.deleted);
        }
        return { id: item.id, folder, merged: true };
      });
    },

    dueForCheck: (limit, skip) =>
      pending()
        .filter((item) => isReady(item) && item.scanFolder === undefined && !skip.has(item.id))
        .slice(0, limit)
        .map(toWorkItem),
    dueForTarget: (target, limit, skip) =>
      pending()
        .filter((item) => isReady(item) && item.scanFolder !== undefined && !(target in item.targets) && !waitsFor(item, target) && !skip.has(item.id))
        .slice(0, limit)
        .map(toWorkItem),
    nextReadyAt() {
      const times = pending()
        .flatMap((item) => [Math.max(item.dueAt, item.nextAt), ...Object.values(item.deliveries).filter((d) => !d.failed).map((d) => d.nextAt)])
        .filter((at) => at > state.now);
      return times.length === 0 ? undefined : Math.min(...times);
    },

    recordCheck(id, rev, result) {
      const item = pendingWith(id);
      if (!item || item.rev !== rev) return;
      item.checks = result.checks;
      if (result.kind === "ready") {
        item.scanFolder = result.scanFolder;
        item.files = [...result.files];
      } else if (result.kind === "wait") {
        item.nextAt = state.now + result.waitMs;
      } else {
        finish(item, "failed", result.reason);
      }
    },
    beginAttempt(id, rev, targets = 1) {
      const item = pendingWith(id);
      if (!item || item.rev !== rev) return undefined;
      if (item.unfinished >= MAX_UNFINISHED * Math.max(1, targets)) {
        const reason =
          `The last ${String(item.unfinished)} scan attempts of this folder started and never finished: autoscan ` +
          "stopped or crashed during each. Retry it once the cause is fixed.";
        finish(item, "failed", reason);
        return { go: false, reason };
      }
      item.unfinished += 1;
      return { go: true, attempt: item.attempts + 1 };
    },
    recordScan(id, rev, target, outcome, allTargets) {
      const item = pendingWith(id);
      if (!item) return undefined;
      item.unfinished = Math.max(0, item.unfinished - 1);
      if (item.rev !== rev) return undefined;
      delete item.deliveries[target];
      item.targets[target] =
        outcome.status === "scanned"
          ? { status: "scanned", ...(outcome.detail === undefined ? {} : { detail: outcome.detail }), at: state.now }
          : { status: "skipped", detail: outcome.reason, at: state.now };
      settle(item, allTargets);
      return { completed: item.state !== "pending" };
    },
    recordFailure(id, rev, target, failure, allTargets) {
      const item = pendingWith(id);
      if (!item) return { failed: false };
      item.unfinished = Math.max(0, item.unfinished - 1);
      if (item.rev !== rev) return { failed: false };
      item.attempts += 1;
      item.lastError = failure.error;
      const before = item.deliveries[target];
      const firstFailedAt = before?.firstFailedAt ?? state.now;
      const givenUp = state.now - firstFailedAt >= failure.retryMaxMs;
      item.deliveries[target] = {
        attempts: (before?.attempts ?? 0) + 1,
        nextAt: givenUp ? 0 : state.now + failure.retryInMs,
        firstFailedAt,
        lastError: failure.error,
        failed: givenUp,
      };
      if (givenUp) settle(item, allTargets);
      return { failed: givenUp };
    },
    recordInterrupted(id) {
      const item = pendingWith(id);
      if (item && item.unfinished > 0) item.unfinished -= 1;
    },
    failWaitingFor(target, waitedMs, reason, allTargets) {
      const since = state.now - waitedMs;
      const failing = pending().filter((item) => {
        const delivery = item.deliveries[target];
        return delivery !== undefined && !delivery.failed && delivery.firstFailedAt <= since;
      });
      for (const item of failing) {
        const delivery = item.deliveries[target] as ModelDelivery;
        item.deliveries[target] = { ...delivery, failed: true, nextAt: 0, lastError: reason };
        item.lastError = reason;
        settle(item, allTargets);
      }
      return failing.length;
    },

    retry(id) {
      const item = find(id);
      if (!item) return false;
      if (item.state === "pending") {
        fresh(item);
        item.deliveries = {};
        item.dueAt = Math.min(item.dueAt, state.now);
        return true;
      }
      const waiting = pendingFolder(item.folder);
      if (waiting) {
        waiting.requests = [...waiting.requests, ...item.requests].sort((a, b) => a.arrival - b.arrival);
        state.items = state.items.filter((other) => other !== item);
        waiting.targets = {};
        waiting.deliveries = {};
        fresh(waiting);
        newWork(waiting, false);
        waiting.dueAt = Math.min(waiting.dueAt, state.now);
        return true;
      }
      if (item.state === "done") item.targets = {};
      item.deliveries = {};
      item.state = "pending";
      fresh(item);
      newWork(item, false);
      item.dueAt = state.now;
      return true;
    },
    remove(id) {
      const before = state.items.length;
      state.items = state.items.filter((item) => item.id !== id);
      return state.items.length < before;
    },

    pendingCount: () => pending().length,
    listPending: () => pending().map(toView),
    listHistory: () =>
      state.items
        .filter((item) => item.state !== "pending")
        .sort((a, b) => (b.finishedAt ?? 0) - (a.finishedAt ?? 0) || b.id - a.id)
        .map(toView),
    getItem(id) {
      const item = find(id);
      return item ? toView(item) : undefined;
    },
  };
}

function dispatchOrder(a: ModelItem, b: ModelItem): number {
  return a.priority - b.priority || a.firstAt - b.firstAt || a.id - b.id;
}

function toWorkItem(item: ModelItem): WorkItem {
  return {
    id: item.id,
    rev: item.rev,
    folder: item.folder,
    ...(item.scanFolder === undefined ? {} : { scanFolder: item.scanFolder }),
    files: item.files,
    priority: item.priority,
    firstAt: item.firstAt,
    checks: item.checks,
    attempts: item.attempts,
    requests: item.requests.map((r) => ({
      path: r.path,
      kind: r.kind,
      deleted: r.deleted,
      source: r.source,
      event: r.event,
    })),
  };
}

function toView(item: ModelItem): QueueItemView {
  return {
    id: item.id,
    folder: item.folder,
    state: item.state,
    priority: item.priority,
    firstRequestAt: item.firstAt,
    lastRequestAt: item.lastAt,
    dueAt: item.dueAt,
    // The page shows a pending item's own wait only when it outlasts the scan delay.
    ...(item.state === "pending" && item.nextAt > item.dueAt ? { nextAttemptAt: item.nextAt } : {}),
    fileChecks: item.checks,
    attempts: item.attempts,
    ...(item.scanFolder === undefined ? {} : { scanFolder: item.scanFolder }),
    ...(item.lastError === undefined ? {} : { lastError: item.lastError }),
    ...(item.finishedAt === undefined ? {} : { finishedAt: item.finishedAt }),
    requests: item.requests.map(({ arrival: _arrival, ...request }) => request),
    requestsDropped: item.requestsDropped,
    targets: Object.entries(item.targets)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([target, result]) => ({ target, ...result })),
    deliveries: Object.entries(item.deliveries)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([target, d]) => ({
        target,
        attempts: d.attempts,
        ...(d.failed ? {} : { nextAttemptAt: d.nextAt }),
        lastError: d.lastError,
        failed: d.failed,
      })),
  };
}
