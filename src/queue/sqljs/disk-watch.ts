import type { Logger } from "../../core/logger.ts";
import type { StoreMetrics } from "../../core/metrics.ts";

/**
 * How long the disk takes to confirm a queue write: a write unconfirmed after `stallMs` is logged once and makes the
 * store report itself stalled (`/health` 503, new webhooks refused rather than left hanging) until the disk answers;
 * with SERVER_METRICS, each write's duration and outcome are counted.
 */
export interface DiskWatch {
  /** Runs one durable write under the watch; its error passes through. */
  watch(write: () => Promise<void>): Promise<void>;
  /** Since when (ms) a write has been waiting past `stallMs`; undefined while the disk answers in time. */
  stalledSince(): number | undefined;
}

export interface DiskWatchOptions {
  readonly stallMs: number;
  readonly now: () => number;
  readonly log: Logger;
  readonly file: string;
  readonly dir: string;
  readonly metrics?: StoreMetrics;
}

export function createDiskWatch(options: DiskWatchOptions): DiskWatch {
  const { stallMs, log, file, dir } = options;
  let stalledSince: number | undefined;
  return {
    async watch(write) {
      const started = performance.now();
      let stored = false;
      const stall = setTimeout(() => {
        stalledSince = options.now() - stallMs;
        log.error({ file, ms: stallMs }, `The disk under ${dir} has not confirmed a queue write for ${String(stallMs / 1000)} s; webhooks wait for it`);
      }, stallMs);
      try {
        await write();
        stored = true;
      } finally {
        clearTimeout(stall);
        options.metrics?.storeWrite((performance.now() - started) / 1000, stored);
        if (stalledSince !== undefined) log.info({ file }, `The disk under ${dir} answered again`);
        stalledSince = undefined;
      }
    },
    stalledSince: () => stalledSince,
  };
}
