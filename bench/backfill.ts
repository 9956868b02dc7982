/**
 * The backfill's figures (issue 16), printed, not asserted: one read of 100,000 Sonarr history records (a fake
 * Sonarr v4 over real HTTP, pages of 250, newest first) into a real queue file: records/s, requests queued and
 * covered, and the heap after every 10,000 records (it must stay flat: one page in memory at a time).
 *
 *   node --expose-gc bench/backfill.ts          BENCH_RECORDS=200000 node --expose-gc bench/backfill.ts
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { createArrClient } from "../src/arr/arr-client.ts";
import { recordRequests } from "../src/backfill/history-record.ts";
import type { HistoryRecord } from "../src/arr/history-wire.ts";
import { readHistory } from "../src/backfill/read-history.ts";
import { systemClock } from "../src/core/clock.ts";
import { createPathMapper } from "../src/paths/mapping.ts";
import { createScanQueue } from "../src/queue/open-scan-queue.ts";
import { startFakeArr } from "../test/support/fake-arr.ts";

const RECORDS = Number(process.env.BENCH_RECORDS ?? 100_000);
const FOLDERS = 2_000;
const silent = pino({ level: "silent" });
const gc = (globalThis as { gc?: () => void }).gc ?? (() => undefined);
const mb = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

const root = await mkdtemp(join(tmpdir(), "autoscan-bench-backfill-"));
const arr = await startFakeArr({ type: "sonarr", pathRoot: "/tv" });
try {
  const start = Date.now() - RECORDS * 1000;
  arr.addMany(RECORDS, (i) => {
    const folder = `/tv/Show ${i % FOLDERS}/Season ${String(1 + (Math.floor(i / FOLDERS) % 9)).padStart(2, "0")}`;
    return { kind: "import", path: `${folder}/Show ${i % FOLDERS} - E${i}.mkv`, date: start + i * 1000 };
  });
  const queue = await createScanQueue({ file: join(root, "queue.db"), clock: systemClock, log: silent, scanDelayMs: 3_600_000, lock: false });
  const client = createArrClient({ name: "sonarr", type: "sonarr", url: arr.url, apiKey: arr.apiKey, log: silent });
  const mapper = createPathMapper({ mappings: { "/data/TV/": ["/tv/"] } });
  gc();
  const heapStart = process.memoryUsage().heapUsed;
  const samples: string[] = [];
  let next = 10_000;
  let peak = heapStart;
  const started = performance.now();
  const result = await readHistory<HistoryRecord>({
    pages: client,
    toRequests: (record) => recordRequests(record, { type: "sonarr", source: "Sonarr (sonarr)", mapper }),
    from: 0,
    isCovered: (request, since) => queue.isCovered(request, since),
    sink: queue.enqueue,
    onProgress: (progress) => {
      const heap = process.memoryUsage().heapUsed;
      peak = Math.max(peak, heap);
      if (progress.records >= next) {
        gc();
        samples.push(`${(progress.records / 1000).toFixed(0)}k: ${mb(process.memoryUsage().heapUsed)}`);
        next += 10_000;
      }
    },
  });
  const seconds = (performance.now() - started) / 1000;
  console.log(`${result.records.toLocaleString("en-US")} history records read in ${seconds.toFixed(1)} s (${Math.round(result.records / seconds).toLocaleString("en-US")} records/s), ${result.pages} pages`);
  console.log(`requests queued ${result.queued.toLocaleString("en-US")}, left out as covered ${result.covered.toLocaleString("en-US")}; folders waiting ${(await queue.pendingCount()).toLocaleString("en-US")}`);
  console.log(`heap at start ${mb(heapStart)}, peak ${mb(peak)}; after each 10,000 records (after GC): ${samples.join(", ")}`);
  await queue.close();
} finally {
  await arr.close();
  await rm(root, { recursive: true, force: true });
}
