import { BadRequestError } from "../core/errors.ts";
import type { Logger } from "../core/logger.ts";
import type { EnqueueResult, ScanRequest, ScanSink } from "../core/scan.ts";
import { isAbsolutePath } from "../paths/normalize.ts";
import { applyRequests, type EnqueueEvent, type MergePolicy } from "./enqueue-requests.ts";
import type { QueueStore } from "./store/queue-store.ts";

/**
 * The queue's `ScanSink`: validates, resolves what a path of unknown kind names on disk, merges the requests into
 * the queue in one store write, and resolves once that write is on disk. The store puts writes that arrive together
 * into one log record, so many webhooks at once cost few fsyncs.
 */
export interface QueueSinkOptions {
  readonly store: QueueStore;
  readonly now: () => number;
  readonly policy: MergePolicy;
  readonly log: Logger;
  /** Told the earliest time the new work may be due, once it is durable. */
  readonly notify: (earliest: number) => void;
  /** Looks a path of `unknown` kind up on disk before it is merged (file → its folder, folder → itself). */
  readonly resolveKind?: (request: ScanRequest) => Promise<ScanRequest>;
}

export function createQueueSink(options: QueueSinkOptions): ScanSink {
  const { store, log } = options;
  return async (requests, sinkOptions = {}): Promise<EnqueueResult> => {
    if (requests.length === 0) return { items: [] };
    const bad = requests.find((request) => !isAbsolutePath(request.path));
    if (bad) {
      throw new BadRequestError(`Scan path '${bad.path}' is not absolute; expected a full path such as /mnt/tv/Show`);
    }
    const { resolveKind } = options;
    const resolved = resolveKind
      ? await Promise.all(requests.map((request) => (request.kind === "unknown" ? resolveKind(request) : request)))
      : requests;
    const at = options.now();
    const outcome = await store.write((tx) => applyRequests(tx, resolved, at, options.policy), sinkOptions);
    for (const event of outcome.events) logRequest(log, event, at);
    if (outcome.earliestDue < Number.POSITIVE_INFINITY) options.notify(outcome.earliestDue);
    return { items: outcome.items };
  };
}

function logRequest(log: Logger, event: EnqueueEvent, at: number): void {
  const { request, folder } = event;
  const fields = { path: request.path, folder, source: request.source, event: request.event };
  log.info(fields, `Scan request from ${request.source} for '${request.path}'.`);
  if (event.merged) log.debug(fields, `Merged with the queued scan of '${folder}'.`);
  log.debug(fields, `Sleeping for ${String(Math.max(0, Math.round((event.dueAt - at) / 1000)))} seconds...`);
}
