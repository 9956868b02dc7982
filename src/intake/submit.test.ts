import { setImmediate as nextTurn } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import type { ScanRequest } from "../core/scan.ts";
import { unroutableReason, type Unroutable } from "../paths/unroutable.ts";
import { createQueueHarness, fileRequest, type QueueHarness } from "../../test/support/queue-harness.ts";
import { createUnroutableGuard, submitScans } from "./submit.ts";

/** A promise the test settles: Plex's section list, hanging until the test says what it holds. */
function deferred<T>(): { promise: Promise<T>; resolve(value: T): void } {
  let resolve: (value: T) => void = () => undefined;
  const promise = new Promise<T>((done) => (resolve = done));
  return { promise, resolve };
}

const lost: ScanRequest = fileRequest("/TV/Severance/Season 02/S02E01.mkv");
const verdict: Unroutable = unroutableReason(lost.path, lost.path, { "/data/TV/": ["/tv/"] });

let h: QueueHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

async function setup() {
  const harness = await createQueueHarness({ targets: [] });
  h = harness;
  const list = deferred<Unroutable | undefined>();
  const judged: ScanRequest[] = [];
  const refused = deferred<readonly number[]>();
  const guard = createUnroutableGuard({
    sink: harness.queue.enqueue,
    refuse: async (entries) => {
      const ids = await harness.queue.refuseWaiting(entries);
      refused.resolve(ids);
      return ids;
    },
    judge: (request) => (judged.push(request), list.promise),
    log: harness.logs.log,
    clock: harness.clock,
  });
  return { harness, guard, list, judged, refused };
}

describe("the unroutable guard", () => {
  it("stores and answers a request while the section list hangs, then moves it to History as failed once the list is known", async () => {
    const { harness, guard, list, judged, refused } = await setup();
    const submitted = await submitScans(guard.sink, [lost], 5_000, harness.logs.log);
    // Answered (stored) while the verdict still waits on the list.
    expect(submitted.ok).toBe(true);
    await nextTurn();
    expect(judged).toEqual([lost]);
    expect(await harness.queue.pendingCount()).toBe(1);
    list.resolve(verdict);
    const id = submitted.ok ? submitted.result.items[0]?.id : undefined;
    expect(await refused.promise).toEqual([id]);
    await nextTurn();
    expect(await harness.queue.pendingCount()).toBe(0);
    expect(await harness.queue.listHistory({ state: "failed" })).toEqual([expect.objectContaining({ id, lastError: verdict.reason })]);
    const warnings = harness.logs.records.filter((record) => record.level === 40 && record.msg.startsWith("Not queued:"));
    expect(warnings).toHaveLength(1);
    expect(guard.recent()).toEqual([expect.objectContaining({ path: lost.path, reason: verdict.reason, fix: verdict.fix })]);
    guard.dismiss();
    expect(guard.recent()).toEqual([]);
  });

  it("leaves a request where a library holds it, and never judges one the user confirmed", async () => {
    const { harness, guard, list, judged } = await setup();
    await guard.sink([lost], { confirmed: true });
    expect(judged).toEqual([]);
    await guard.sink([fileRequest("/data/TV/Show/Season 01/e01.mkv")]);
    list.resolve(undefined);
    await nextTurn();
    expect(judged).toHaveLength(1);
    expect(await harness.queue.pendingCount()).toBe(2);
    expect(guard.recent()).toEqual([]);
  });
});
