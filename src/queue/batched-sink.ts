import { BadRequestError } from "../core/errors.ts";
import type { Logger } from "../core/logger.ts";
import type { EnqueueResult, ScanRequest, ScanSink } from "../core/scan.ts";
import { isAbsolutePath } from "../paths/normalize.ts";
import { applyRequests, type EnqueueEvent, type EnqueueOutcome, type MergePolicy } from "./enqueue-requests.ts";
import type { QueueStore } from "./store.ts";

/**
 * The queue's `ScanSink`. Calls that arrive in the same turn of the event loop (webhooks read from many sockets in
 * one poll, producers woken by the same fsync) are applied in one transaction and written as one journal line, so
 * the per-call cost stays small under load. Each call still resolves only once its requests are on disk, and a call
 * that fails on its own does not fail the others.
 */
export interface BatchedSinkOptions {
  readonly store: QueueStore;
  readonly now: () => number;
  readonly policy: MergePolicy;
  readonly log: Logger;
  /** Told the earliest time the new work may be due, once it is durable. */
  readonly notify: (earliest: number) => void;
}

interface Call {
  readonly requests: readonly ScanRequest[];
  resolve(result: EnqueueResult): void;
  reject(error: unknown): void;
}

export interface BatchedSink {
  readonly enqueue: ScanSink;
  /** Applies the calls waiting for the next turn now (before the queue closes). */
  flushNow(): void;
}

export function createBatchedSink(options: BatchedSinkOptions): BatchedSink {
  const { store, log } = options;
  let waiting: Call[] = [];

  async function settle(
    calls: readonly Call[],
    at: number,
    outcomes: readonly EnqueueOutcome[],
    durable: Promise<void>,
  ): Promise<void> {
    try {
      await durable;
    } catch (error) {
      for (const call of calls) call.reject(error);
      return;
    }
    let earliest = Number.POSITIVE_INFINITY;
    calls.forEach((call, i) => {
      const outcome = outcomes[i];
      if (!outcome) return;
      for (const event of outcome.events) logRequest(log, event, at);
      earliest = Math.min(earliest, outcome.earliestDue);
      call.resolve({ items: outcome.items });
    });
    if (earliest < Number.POSITIVE_INFINITY) options.notify(earliest);
  }

  function flush(): void {
    if (waiting.length === 0) return;
    const calls = waiting;
    waiting = [];
    const at = options.now();
    try {
      const { result, durable } = store.write((tx) =>
        calls.map((call) => applyRequests(tx, call.requests, at, options.policy)),
      );
      void settle(calls, at, result, durable);
    } catch (error) {
      if (calls.length === 1) return calls[0]?.reject(error);
      // Something in the batch failed: apply the calls one by one so that only the failing one is refused.
      for (const call of calls) {
        try {
          const { result, durable } = store.write((tx) => applyRequests(tx, call.requests, at, options.policy));
          void settle([call], at, [result], durable);
        } catch (single) {
          call.reject(single);
        }
      }
    }
  }

  const enqueue: ScanSink = (requests) => {
    if (requests.length === 0) return Promise.resolve({ items: [] });
    const bad = requests.find((request) => !isAbsolutePath(request.path));
    if (bad) {
      const message = `Scan path '${bad.path}' is not absolute; expected a full path such as /mnt/tv/Show`;
      return Promise.reject(new BadRequestError(message));
    }
    return new Promise<EnqueueResult>((resolve, reject) => {
      if (waiting.length === 0) setImmediate(flush);
      waiting.push({ requests, resolve, reject });
    });
  };
  return { enqueue, flushNow: flush };
}

function logRequest(log: Logger, event: EnqueueEvent, at: number): void {
  const { request, folder } = event;
  const fields = { path: request.path, folder, source: request.source, event: request.event };
  log.info(fields, `Scan request from ${request.source} for '${request.path}'.`);
  if (event.merged) log.info(fields, `Merged with the queued scan of '${folder}'.`);
  log.info(fields, `Sleeping for ${String(Math.max(0, Math.round((event.dueAt - at) / 1000)))} seconds...`);
}
