import { describeError } from "../core/errors.ts";
import type { Logger } from "../core/logger.ts";
import type { EnqueueResult, ScanRequest, ScanSink } from "../core/scan.ts";

/**
 * Hands requests to the sink and waits until they are durable. A 2xx is only ever sent after this resolves `ok`:
 * an *arr app that gets 2xx forgets the event, so we must not lose it afterwards.
 */
export type Submitted =
  | { readonly ok: true; readonly result: EnqueueResult }
  | { readonly ok: false; readonly reason: string };

export async function submitScans(
  sink: ScanSink,
  requests: readonly ScanRequest[],
  timeoutMs: number,
  log: Logger,
): Promise<Submitted> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<"timeout">((resolve) => {
    timer = setTimeout(() => resolve("timeout"), timeoutMs);
  });
  try {
    const result = await Promise.race([sink(requests), timeout]);
    if (result === "timeout") {
      log.error({ count: requests.length, timeoutMs }, "The queue did not confirm a scan request in time");
      return {
        ok: false,
        reason: `The queue did not confirm within ${Math.round(timeoutMs / 1000)} s that the request was stored; send it again`,
      };
    }
    return { ok: true, result };
  } catch (error) {
    log.error({ err: error, count: requests.length }, "The queue could not store a scan request; nothing was queued");
    return { ok: false, reason: `Nothing was queued: the queue could not store the request (${describeError(error)})` };
  } finally {
    clearTimeout(timer);
  }
}
