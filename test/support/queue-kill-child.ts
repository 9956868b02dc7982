/**
 * The process the SIGKILL durability test kills: it enqueues `/kill/item-<n>` for n in [start, end) through the real
 * queue (small checkpoints, so kills also land mid-checkpoint) with several concurrent producers, and prints
 * `ack <n>` on stdout once the sink call for n has resolved. Stdout is a pipe, which Node writes synchronously on
 * Linux, so the parent never sees an ack the child had not durably stored.
 *
 * Usage: node test/support/queue-kill-child.ts <queue file> <start> <end> [pause ms between calls per producer]
 */
import pino from "pino";
import { systemClock } from "../../src/core/clock.ts";
import { createScanQueue } from "../../src/queue/open-scan-queue.ts";

const [file, startArg, endArg, pauseArg] = process.argv.slice(2);
if (!file || !startArg || !endArg) throw new Error("usage: queue-kill-child.ts <file> <start> <end>");
const end = Number(endArg);
const pauseMs = Number(pauseArg ?? 0);
let next = Number(startArg);

const queue = await createScanQueue({
  file,
  clock: systemClock,
  log: pino({ level: "silent" }),
  scanDelayMs: 60_000,
  checkpointBytes: 8 * 1024,
  checkpointRatio: 0,
});
process.stdout.write("ready\n");

async function producer(): Promise<void> {
  while (next < end) {
    const n = next++;
    // Every fifth call carries two requests, so a batch is acknowledged as a whole.
    const extra = n % 5 === 0 && n + 1 < end ? [next++] : [];
    const ids = [n, ...extra];
    await queue.enqueue(ids.map((id) => ({ path: `/kill/item-${String(id)}`, kind: "folder", source: "Kill", event: "Test" })));
    for (const id of ids) process.stdout.write(`ack ${String(id)}\n`);
    // Paced, so that the parent's kill (sent after it read N acks) lands near the N-th, not hundreds later.
    if (pauseMs > 0) await new Promise((resolve) => setTimeout(resolve, pauseMs));
  }
}

await Promise.all(Array.from({ length: 8 }, producer));
await queue.close();
process.stdout.write("done\n");
