import { backoffDelay } from "../core/backoff.ts";
import type { Clock } from "../core/clock.ts";
import { describeError } from "../core/errors.ts";
import type { Logger } from "../core/logger.ts";
import type { ScanRequest, ScanSink } from "../core/scan.ts";

const BATCH_MS = 250;
/**
 * Requests per store write. The embedded store does a write's work in one stretch of the event loop (about a
 * millisecond a request on a busy machine): 50,000 files at once in 1,000s held webhooks and /health for a second at
 * a time; in 100s each write is short, and what else waits for the event loop or the store goes between two of them.
 */
const BATCH_REQUESTS = 100;

/**
 * The watchers' requests on their way to the store, in the order reported: handed to the sink in small batches (a
 * season pack moved in is one store write); a store that cannot take them now is tried again with backoff, and
 * nothing reported is dropped meanwhile.
 */
export interface WatchOutbox {
  /** Settles once all these requests are stored (a watcher saves its changes as seen only then). */
  send(requests: readonly ScanRequest[]): Promise<void>;
  /** Stops the retries; what was reported and not stored yet gets one last try (a stop waits for the store anyway). */
  stop(): Promise<void>;
}

export function createWatchOutbox(sink: ScanSink, clock: Clock, log: Logger): WatchOutbox {
  const stop = new AbortController();
  /** `stored` (on a report's last request) tells its watcher they are all stored. */
  const outbox: { readonly request: ScanRequest; readonly stored?: () => void }[] = [];
  let sending: Promise<void> | undefined;

  /** Hands the first `count` requests to the store; once it took them, their watchers hear so. */
  async function store(count: number): Promise<void> {
    const batch = outbox.slice(0, count);
    await sink(batch.map((entry) => entry.request));
    outbox.splice(0, batch.length);
    for (const entry of batch) entry.stored?.();
  }

  function drain(): void {
    sending ??= (async () => {
      let failures = 0;
      await clock.sleep(BATCH_MS, stop.signal);
      while (outbox.length > 0) {
        try {
          await store(BATCH_REQUESTS);
          failures = 0;
          // Whatever came in meanwhile (a webhook, /health) is served before the next write.
          await new Promise((resolve) => setImmediate(resolve));
        } catch (error) {
          failures++;
          const waitMs = backoffDelay(failures, { minMs: 1_000, maxMs: 60_000 });
          if (failures === 1) log.warn({ err: error, waiting: outbox.length }, `The queue cannot take the watchers' requests now (${describeError(error)}); ${String(outbox.length)} wait and are tried again.`);
          if (stop.signal.aborted) return;
          await clock.sleep(waitMs, stop.signal);
        }
      }
    })().finally(() => {
      sending = undefined;
      if (outbox.length > 0 && !stop.signal.aborted) drain();
    });
  }

  return {
    send: (requests) =>
      new Promise<void>((resolve) => {
        requests.forEach((request, index) => outbox.push(index === requests.length - 1 ? { request, stored: resolve } : { request }));
        if (requests.length === 0) resolve();
        drain();
      }),
    async stop() {
      stop.abort();
      await sending;
      if (outbox.length === 0) return;
      await store(outbox.length).catch((error: unknown) =>
        log.warn({ err: error, waiting: outbox.length }, `${String(outbox.length)} watcher request(s) could not be stored before the stop (${describeError(error)}); they are kept as not seen, and the next start's walk finds those changes again.`),
      );
    },
  };
}
