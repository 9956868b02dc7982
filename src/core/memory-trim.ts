import { performance } from "node:perf_hooks";
import { getHeapStatistics } from "node:v8";
import type { Logger } from "./logger.ts";

/**
 * Gives memory back to the system once a burst is over. After a burst (a Plex outage ending, a library import) V8
 * keeps the heap it grew to, and its own memory reducer, which would hand it back, waits for an allocation rate it
 * never measures on a process that is merely quiet: RSS stayed ~100 MB above what the process uses, for good. So,
 * every `everyMs` (10 s): when the event loop was nearly idle over that time and the heap holds much more than it
 * uses, one full collection that also releases V8's pooled pages (a few ms for autoscan's heap; each one's pause is
 * measured and logged). "Nearly idle" is under 10 % of the event loop: the trickle that follows a burst (the landed
 * check confirming its folders, 3–5 %) is quiet enough, and the heap it keeps churning is the heap to give back (a
 * minute after 100,000 requests: ~128 MB held, ~96 MB after the collection). Nothing happens while requests or scans
 * keep the process busy.
 *
 * The collector is V8's `gc`, which exists only when Node was started with `--expose-gc` (the Docker image, the systemd
 * unit and `npm start` give it in NODE_OPTIONS). Without it this does nothing: a V8 flag is never switched at run time.
 */
export interface MemoryTrimOptions {
  readonly log: Logger;
  /** How often to look (10 s): a burst's heap goes back 10–20 s after it ends. */
  readonly everyMs?: number;
  /** The first look, after the start (2 s). */
  readonly firstMs?: number;
  /** Event-loop utilisation below which the process counts as quiet enough (0.1: 10 %). */
  readonly idleBelow?: number;
  /** Heap held but not used beyond which a trim is worth it (8 MB). */
  readonly slackBytes?: number;
  /** The collector (default: `globalThis.gc`, present only under `--expose-gc`; `undefined`: none). */
  readonly collect?: CollectGarbage;
}

export interface MemoryTrim {
  stop(): void;
}

export type CollectGarbage = (options: { type: "major"; execution: "sync"; flavor: "last-resort" }) => void;

export function startMemoryTrim(options: MemoryTrimOptions): MemoryTrim {
  const collect = "collect" in options ? options.collect : (globalThis as { gc?: CollectGarbage }).gc;
  if (!collect) return { stop() {} };
  const idleBelow = options.idleBelow ?? 0.1;
  const slack = options.slackBytes ?? 8 * 1024 * 1024;
  let last = performance.eventLoopUtilization();
  const look = (): void => {
    const now = performance.eventLoopUtilization();
    const busy = performance.eventLoopUtilization(now, last).utilization;
    last = now;
    if (busy >= idleBelow) return;
    const heap = getHeapStatistics();
    if (heap.total_heap_size - heap.used_heap_size < slack) return;
    const started = performance.now();
    collect({ type: "major", execution: "sync", flavor: "last-resort" });
    const pauseMs = Math.round((performance.now() - started) * 10) / 10;
    const heapAfter = getHeapStatistics().total_heap_size;
    options.log.debug(
      { heapBefore: heap.total_heap_size, heapAfter, pauseMs },
      `Idle after a busy spell: ${String(Math.round((heap.total_heap_size - heapAfter) / 1048576))} MiB of heap given back in a ${String(pauseMs)} ms pause`,
    );
  };
  // The start itself is such a spell (modules compiled, the queue read): the first look comes soon after it.
  const first = setTimeout(look, options.firstMs ?? 2_000);
  const timer = setInterval(look, options.everyMs ?? 10_000);
  first.unref();
  timer.unref();
  return {
    stop() {
      clearTimeout(first);
      clearInterval(timer);
    },
  };
}
