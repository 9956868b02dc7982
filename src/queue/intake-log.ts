import type { Logger } from "../core/logger.ts";
import type { EnqueueEvent } from "./rules/enqueue.ts";

/**
 * One INFO line per folder a batch queued (a 12-track album is one line), with the item's id as `[<id>]`; each
 * request on its own at DEBUG.
 */
export function logIntake(log: Logger, events: readonly EnqueueEvent[], at: number, origin: string | undefined): void {
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
