import type { RouteDeps } from "../deps.ts";

/** The number of waiting folders for the page's footer; undefined (and logged) when the queue cannot say. */
export async function pendingCount(deps: RouteDeps): Promise<number | undefined> {
  try {
    return await deps.options.queue.pendingCount();
  } catch (error) {
    deps.log.warn({ err: error }, "Could not count the queue for the manual page");
    return undefined;
  }
}
