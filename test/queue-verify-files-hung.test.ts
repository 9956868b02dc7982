import { mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import type { ScanRequest } from "../src/core/scan.ts";
import type { ScanQueue } from "../src/queue/scan-queue.ts";
import { createScanQueue } from "../src/queue/open-scan-queue.ts";
import { captureLog, makeTempDir } from "./support/capture-log.ts";
import { describeFaults } from "./support/faults/describe-faults.ts";
import { mountHungFuse, probeFuse, umountLazy, type HungMount } from "./support/faults/mounts.ts";
import { createManualClock } from "./support/manual-clock.ts";
import { within } from "./support/run-cli.ts";

/**
 * The store looks at its own files every second (`verifyFiles`: a stat of the queue file and of its log), to notice one
 * deleted or replaced under it. When the data disk stops answering, such a stat hangs: the next look must not start
 * beside it, or they pile up on libuv's thread pool until the journal's own writes (the same pool) never run.
 * Here a FUSE mount that never answers is put over the data folder after the queue is open (the open log file keeps
 * working through its descriptor, as on a disk whose path lookups hang), and the check runs every 20 ms.
 */
const request = (n: number): ScanRequest => ({ path: `/movies/Film ${String(n)}/Film ${String(n)}.mkv`, kind: "file", source: "Radarr", event: "Download" });

/** libuv's pool threads of this process busy in the kernel (an idle one waits on a futex for work). */
function poolThreadsBusy(): number {
  return readdirSync("/proc/self/task").filter((task) => {
    try {
      const comm = readFileSync(`/proc/self/task/${task}/comm`, "utf8").trim();
      return comm === "libuv-worker" && !readFileSync(`/proc/self/task/${task}/wchan`, "utf8").startsWith("futex");
    } catch {
      return false;
    }
  }).length;
}

describeFaults("the queue's look at its own files on a data disk that hangs", probeFuse(), {}, () => {
  let temp: Awaited<ReturnType<typeof makeTempDir>>;
  let hung: HungMount | undefined;
  let queue: ScanQueue | undefined;
  beforeEach(async () => {
    temp = await makeTempDir("autoscan-verify-hung-");
  });
  afterEach(async () => {
    if (hung) {
      umountLazy(hung.dir);
      hung.release();
    }
    hung = undefined;
    await queue?.close();
    queue = undefined;
    await temp.cleanup();
  });

  it("runs one check at a time: a check still going skips the next ones (said once), and the queue keeps writing", async () => {
    const logs = captureLog();
    const data = join(temp.dir, "data");
    mkdirSync(data);
    queue = await createScanQueue({ file: join(data, "queue.db"), clock: createManualClock(), log: logs.log, scanDelayMs: 0, verifyIntervalMs: 20, lock: false });
    await queue.enqueue([request(1)]);
    hung = await mountHungFuse(data);

    // Fifty ticks of the check while its first stat hangs.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(poolThreadsBusy()).toBe(1);
    const skipped = logs.records.filter((r) => typeof r.msg === "string" && r.msg.includes("still waiting for the disk"));
    expect(skipped, JSON.stringify(logs.records)).toHaveLength(1);
    expect(skipped[0]).toMatchObject({ level: 40, component: "QUEUE" });
    // The journal's writes still get a thread: a new request is stored.
    await within(queue.enqueue([request(2)]), 5_000, "a write to the queue beside the hung check");
    expect(await queue.pendingCount()).toBe(2);
  });
});
