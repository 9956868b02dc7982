/**
 * The process the store fault suites kill: the real queue (real store, real files) enqueuing `/fault/item-<n>` for n
 * in [start, end) with a few concurrent producers, printing `ack <n>` once the sink call for n has resolved (stdout
 * is a pipe, written synchronously on Linux, so the parent never sees an ack the child had not stored), then `done`.
 *
 * Usage: node queue-child.ts <queue file> <start> <end> <checkpointBytes> [pause ms] [producers]
 * `checkpointBytes` 1 with ratio 0 makes nearly every write end in a checkpoint, so kills land inside them.
 */
import pino from "pino";
import { systemClock } from "../../../src/core/clock.ts";
import { createScanQueue } from "../../../src/queue/open-scan-queue.ts";

const [file, startArg, endArg, checkpointArg, pauseArg, producersArg] = process.argv.slice(2);
if (!file || !startArg || !endArg || !checkpointArg) throw new Error("usage: queue-child.ts <file> <start> <end> <checkpointBytes> [pause] [producers]");
const end = Number(endArg);
const pauseMs = Number(pauseArg ?? 0);
let next = Number(startArg);

const queue = await createScanQueue({
  file,
  clock: systemClock,
  log: pino({ level: "silent" }),
  scanDelayMs: 3_600_000,
  checkpointBytes: Number(checkpointArg),
  checkpointRatio: 0,
});
process.stdout.write("ready\n");

async function producer(): Promise<void> {
  while (next < end) {
    const n = next++;
    await queue.enqueue([{ path: `/fault/item-${String(n)}`, kind: "folder", source: "Fault", event: "Test" }]);
    process.stdout.write(`ack ${String(n)}\n`);
    if (pauseMs > 0) await new Promise((resolve) => setTimeout(resolve, pauseMs));
  }
}

await Promise.all(Array.from({ length: Number(producersArg ?? 4) }, producer));
await queue.close();
process.stdout.write("done\n");
