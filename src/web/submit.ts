import { StoreUnavailableError, describeError } from "../core/errors.ts";
import type { Logger } from "../core/logger.ts";
import type { EnqueueResult, ScanRequest, ScanSink } from "../core/scan.ts";

/**
 * Hands requests to the sink and waits until they are durable. A 2xx is only ever sent after this resolves `ok`:
 * an *arr app that gets 2xx forgets the event, so we must not lose it afterwards. A 503 is only ever sent for
 * requests that were not stored and never will be: after `timeoutMs` the requests still waiting in front of the store
 * are withdrawn (and the sender is told to send them again); requests already on their way to the disk are waited
 * for, however long the disk takes, because telling the sender to retry them would scan them twice.
 */
export type Submitted =
  | { readonly ok: true; readonly result: EnqueueResult }
  | { readonly ok: false; readonly reason: string };

export async function submitScans(
  sink: ScanSink,
  requests: readonly ScanRequest[],
  timeoutMs: number,
  log: Logger,
  origin?: string,
  confirmed = false,
): Promise<Submitted> {
  const giveUp = new AbortController();
  const timer = setTimeout(() => giveUp.abort(), timeoutMs);
  try {
    return { ok: true, result: await sink(requests, { signal: giveUp.signal, ...(origin ? { origin } : {}), ...(confirmed ? { confirmed } : {}) }) };
  } catch (error) {
    if (giveUp.signal.aborted) {
      log.warn({ count: requests.length, timeoutMs }, "The queue did not take a scan request in time; nothing was queued");
      const seconds = String(Math.round(timeoutMs / 1000));
      return { ok: false, reason: `Nothing was queued: the queue did not take the request within ${seconds} s; send it again` };
    }
    // The store logs a write fault once per episode, with its cause and fix; other failures are logged here.
    if (error instanceof StoreUnavailableError) log.debug({ err: error, count: requests.length }, "Scan request refused");
    else log.error({ err: error, count: requests.length }, "The queue could not store a scan request; nothing was queued");
    return { ok: false, reason: `Nothing was queued: ${describeError(error)}` };
  } finally {
    clearTimeout(timer);
  }
}
