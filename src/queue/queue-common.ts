import type { Clock } from "../core/clock.ts";
import type { Logger } from "../core/logger.ts";
import type { ScanPriorities } from "../paths/priority.ts";
import { isCovered } from "./coverage.ts";
import type { DispatchQueue } from "./dispatch/dispatch-port.ts";
import type { MergePolicy } from "./enqueue-requests.ts";
import { countByState, countHistory, findItem, listHistoryItems, listPendingItems, listSources } from "./queue-views.ts";
import type { AsyncRows } from "./rows-async.ts";
import type { ScanQueue } from "./scan-queue.ts";

/**
 * What both stores' `ScanQueue` do alike, around their own writes: the settings a config reload changes, the reads
 * (one SQL for both engines), and keeping the history near its row limit.
 */
export interface QueueSettingsInput {
  readonly scanDelayMs: number;
  readonly priorities?: ScanPriorities;
  readonly historyMaxDays?: number;
  readonly historyMaxRows?: number;
}

export interface QueueSettings {
  /** Read at each request, so a reload applies to the next one. */
  readonly policy: MergePolicy;
  maxDays(): number;
  maxRows(): number;
  reconfigure(next: QueueSettingsInput): void;
}

export function createQueueSettings(input: QueueSettingsInput): QueueSettings {
  const policy: { delayMs: number; priorities: MergePolicy["priorities"] } = {
    delayMs: Math.max(0, input.scanDelayMs),
    priorities: input.priorities ?? {},
  };
  let maxDays = input.historyMaxDays ?? 7;
  let maxRows = input.historyMaxRows ?? 10_000;
  return {
    policy,
    maxDays: () => maxDays,
    maxRows: () => maxRows,
    reconfigure(next) {
      policy.delayMs = Math.max(0, next.scanDelayMs);
      policy.priorities = next.priorities ?? {};
      maxDays = next.historyMaxDays ?? maxDays;
      maxRows = next.historyMaxRows ?? maxRows;
    },
  };
}

type ReadMethods = Pick<ScanQueue, "listPending" | "listHistory" | "historyCount" | "sources" | "isCovered" | "countByState" | "getItem">;

/** The pages, counts and the covered check, on either store's reader. */
export function queueReads(reads: AsyncRows): ReadMethods {
  return {
    listPending: (page = {}) => listPendingItems(reads, page),
    listHistory: (query = {}) => listHistoryItems(reads, query),
    historyCount: (query = {}) => countHistory(reads, query),
    sources: () => listSources(reads),
    isCovered: (request, since) => isCovered(reads, request, since),
    countByState: () => countByState(reads),
    getItem: (id) => findItem(reads, id),
  };
}

type FinishingMethods = Pick<DispatchQueue, "recordScan" | "recordFailure" | "failWaitingFor">;

/**
 * History is pruned at each maintenance tick, and also whenever a tenth of the row limit has finished since the last
 * prune, so the history kept stays near SERVER_HISTORY_MAX_ROWS however busy the queue is. Returns `work`'s methods
 * that finish folders, counting what they finish.
 */
export function pruneAsFoldersFinish(
  work: FinishingMethods,
  prune: () => Promise<void>,
  maxRows: () => number,
  log: Logger,
): FinishingMethods {
  let finishedSincePrune = 0;
  const finished = (count: number): void => {
    finishedSincePrune += count;
    if (finishedSincePrune < Math.max(100, maxRows() / 10)) return;
    finishedSincePrune = 0;
    prune().catch((error: unknown) => log.warn({ err: error }, "Could not prune the queue history; trying again later"));
  };
  return {
    async recordScan(...args) {
      const result = await work.recordScan(...args);
      if (result?.completed) finished(1);
      return result;
    },
    async recordFailure(...args) {
      const result = await work.recordFailure(...args);
      if (result.failed) finished(1);
      return result;
    },
    async failWaitingFor(...args) {
      const count = await work.failWaitingFor(...args);
      finished(count);
      return count;
    },
  };
}

/** Runs `tick` every `intervalMs` on the queue's clock: an interval after the last tick, however long it took. */
export function startMaintenance(clock: Clock, intervalMs: number, tick: () => Promise<void>, log: Logger): AbortController {
  const stop = new AbortController();
  void (async () => {
    let next = clock.sleep(intervalMs, stop.signal);
    for (;;) {
      await next;
      if (stop.signal.aborted) return;
      next = clock.sleep(intervalMs, stop.signal);
      await tick().catch((error: unknown) => log.warn({ err: error }, "Queue maintenance failed; trying again later"));
    }
  })();
  return stop;
}
