import type { QueueItemView } from "../core/queue-view.ts";

/**
 * A queue item as the API and the console's scripts get it: the queue's view with every time in ISO 8601 (UTC).
 */
export function itemJson(item: QueueItemView): Record<string, unknown> {
  return {
    ...item,
    firstRequestAt: iso(item.firstRequestAt),
    lastRequestAt: iso(item.lastRequestAt),
    dueAt: iso(item.dueAt),
    ...(item.nextAttemptAt === undefined ? {} : { nextAttemptAt: iso(item.nextAttemptAt) }),
    ...(item.finishedAt === undefined ? {} : { finishedAt: iso(item.finishedAt) }),
    requests: item.requests.map((request) => ({ ...request, at: iso(request.at) })),
    targets: item.targets.map((target) => ({
      ...target,
      at: iso(target.at),
      ...(target.landedCheckAt === undefined ? {} : { landedCheckAt: iso(target.landedCheckAt) }),
    })),
    deliveries: item.deliveries.map((d) => ({ ...d, ...(d.nextAttemptAt === undefined ? {} : { nextAttemptAt: iso(d.nextAttemptAt) }) })),
  };
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}
