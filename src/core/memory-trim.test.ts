import { getHeapStatistics } from "node:v8";
import { describe, expect, it } from "vitest";
import { captureLog } from "../../test/support/capture-log.ts";
import { startMemoryTrim, type CollectGarbage } from "./memory-trim.ts";

// The test workers run under `node --expose-gc` (vitest.config.ts), as the image, the unit and `npm start` run the service.
const testGc = (globalThis as { gc?: CollectGarbage }).gc;

const until = async (done: () => boolean, ms = 5_000): Promise<void> => {
  const end = Date.now() + ms;
  while (!done() && Date.now() < end) await new Promise((resolve) => setTimeout(resolve, 20));
};

describe("memory trim", () => {
  it("has V8's collector here only because Node was started with --expose-gc", () => {
    expect(typeof testGc).toBe("function");
  });

  it("gives the heap a burst left behind back once the process is idle", async () => {
    const { log, records } = captureLog();
    // A burst: 40 MB of objects that live long enough to reach the old generation, then are dropped.
    let burst: object[] | undefined = Array.from({ length: 300_000 }, (_, i) => ({ i, s: `row ${String(i)}`, a: [i] }));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(burst.length).toBe(300_000);
    burst = undefined;
    const held = getHeapStatistics().total_heap_size;

    const trim = startMemoryTrim({ log, firstMs: 100, everyMs: 100, idleBelow: 1.01, slackBytes: 1, collect: testGc });
    try {
      await until(() => records.some((r) => r.msg.includes("of heap given back")));
    } finally {
      trim.stop();
    }
    const line = records.find((r) => r.msg.includes("of heap given back"));
    expect(line?.level).toBe(20);
    expect(line?.msg).toMatch(/MiB of heap given back in a [\d.]+ ms pause/);
    expect(line).toHaveProperty("pauseMs");
    expect(getHeapStatistics().total_heap_size).toBeLessThan(held);
  });

  it("leaves a busy process alone", async () => {
    const { log, records } = captureLog();
    // Nothing counts as idle below 0 % of the event loop.
    const trim = startMemoryTrim({ log, firstMs: 10, everyMs: 20, idleBelow: 0, slackBytes: 1, collect: testGc });
    await new Promise((resolve) => setTimeout(resolve, 200));
    trim.stop();
    expect(records).toEqual([]);
  });

  it("does nothing without a collector given at start (no --expose-gc): no V8 flag is switched at run time", async () => {
    const { log, records } = captureLog();
    const trim = startMemoryTrim({ log, firstMs: 10, everyMs: 20, idleBelow: 1.01, slackBytes: 1, collect: undefined });
    await new Promise((resolve) => setTimeout(resolve, 100));
    trim.stop();
    expect(records).toEqual([]);
  });
});
