import { BadRequestError } from "../core/errors.ts";
import type { Logger } from "../core/logger.ts";
import type { EnqueueResult, ScanRequest, ScanSink, ScanSinkOptions } from "../core/scan.ts";
import { isAbsolutePath } from "../paths/normalize.ts";
import type { EnqueueEvent, EnqueueOutcome } from "./rules/enqueue.ts";

/**
 * The queue's `ScanSink`: validates, merges the requests into the queue in one store write (`store`), and resolves
 * once that write is durable; it never waits on a media disk. The embedded store puts writes that arrive together into
 * one log record, so many webhooks at once cost few fsyncs; PostgreSQL commits each call in a short transaction.
 */
export interface QueueSinkOptions {
  /** Merges the requests into the queue, durably, at the store's time (the outcome's `at`); rejects when nothing was
   *  stored. */
  readonly store: (requests: readonly ScanRequest[], options: ScanSinkOptions) => Promise<EnqueueOutcome>;
  readonly log: Logger;
}

const KINDS: ReadonlySet<string> = new Set(["file", "folder", "unknown"]);

export function createQueueSink(options: QueueSinkOptions): ScanSink {
  const { store, log } = options;
  return async (requests, sinkOptions = {}): Promise<EnqueueResult> => {
    if (requests.length === 0) return { items: [] };
    const bad = requests.find((request) => !isAbsolutePath(request.path));
    if (bad) {
      throw new BadRequestError(`Scan path '${bad.path}' is not absolute; expected a full path such as /mnt/tv/Show`);
    }
    const odd = requests.find((request) => !KINDS.has(request.kind));
    if (odd) throw new BadRequestError(`Scan path '${odd.path}' has kind '${String(odd.kind)}'; expected file, folder or unknown`);
    const outcome = await store(requests, sinkOptions);
    logIntake(log, outcome.events, outcome.at, sinkOptions.origin);
    return { items: outcome.items };
  };
}

/**
 * One INFO line per folder a batch queued (a 12-track album is one line), with the item's id as `[<id>]`; each
 * request on its own at DEBUG.
 */
function logIntake(log: Logger, events: readonly EnqueueEvent[], at: number, origin: string | undefined): void {
  const byItem = new Map<number, EnqueueEvent[]>();
  for (const event of events) {
    const group = byItem.get(event.itemId);
    if (group) group.push(event);
    else byItem.set(event.itemId, [event]);
  }
  for (const [id, group] of byItem) {
    const first = group[0] as EnqueueEvent;
    const { request, folder } = first;
    for (const event of group) {
      const { path, kind, receivedPath } = event.request;
      log.debug({ id, path, kind, ...(receivedPath && receivedPath !== path ? { receivedPath } : {}) }, `Request for '${path}'.`);
    }
    const due = Math.max(0, Math.round((Math.max(...group.map((e) => e.dueAt)) - at) / 1000));
    const noun = group.every((e) => e.request.kind === "file") ? "files" : "paths";
    const what = group.length === 1 ? `'${request.path}'` : `${group.length} ${noun} in '${folder}'`;
    const deleted = group.every((e) => e.request.deleted) ? " (deleted)" : "";
    const from = origin ? ` from ${origin}` : "";
    // Merged when the folder was already waiting before this batch (the batch's own first request made it otherwise).
    const merged = first.merged ? ", merged into the waiting scan" : "";
    log.info(
      { id, source: request.source, event: request.event, folder, requests: group.length },
      `Queued ${request.source} '${request.event}'${from}: ${what}${deleted}${merged}; scan in ${due} s.`,
    );
  }
}
