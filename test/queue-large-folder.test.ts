import { afterEach, expect, it, vi } from "vitest";
import type { LibraryLookup } from "../src/core/target.ts";
import { landedStart } from "../src/landed/landed-start.ts";
import type { ScanRequest } from "../src/core/scan.ts";
import { FILES_KEPT } from "../src/queue/rules/dispatch-records.ts";
import type { ScanQueue } from "../src/queue/scan-queue.ts";
import { captureLog } from "./support/capture-log.ts";
import { createFakeTarget } from "./support/fake-target.ts";
import { createManualClock } from "./support/manual-clock.ts";
import { SCAN_DELAY_MS, createQueueHarness, fileRequest, type QueueHarness } from "./support/queue-harness.ts";
import { describeEachStore, type QueuePlace } from "./support/queue-adapters.ts";

/**
 * A folder a watcher saw 50,000 files appear in is one item of 50,000 requests (bench/watch.ts `burst50k` has them
 * through the service; here 10,000 with sql.js, 2,000 with PostgreSQL, whose enqueue costs a round trip per request).
 * The dispatcher reads them at each dispatch (the check, then each target): a page at a time with a turn of the event
 * loop between (a webhook or /health answered meanwhile), and the folder is still one scan with the History and landed
 * decision it always had.
 */
const season = "/tv/Big Show/Season 01";
const landedFile = `${season}/Big Show - S01E01.mkv`;

/** Deleted files (nothing to look for on disk), then the one file that is there: the last request read decides the check. */
function folderRequests(count: number): ScanRequest[] {
  const gone = Array.from({ length: count - 1 }, (_, n) =>
    fileRequest(`${season}/Big Show - E${String(n).padStart(5, "0")}.mkv`, "Sonarr", { deleted: true, event: "EpisodeFileDelete" }),
  );
  return [...gone, fileRequest(landedFile)];
}

async function enqueueAll(count: number, enqueue: (requests: ScanRequest[]) => Promise<unknown>): Promise<void> {
  const requests = folderRequests(count);
  for (let at = 0; at < requests.length; at += 1_000) await enqueue(requests.slice(at, at + 1_000));
}

describeEachStore("a folder of many requests", (adapter) => {
  // Three pages of 1,000 and a bit: enough to see the turns between pages and between the deletion batches.
  // (PostgreSQL stores a request a round trip at a time: fewer there, still over one page.)
  const REQUESTS = adapter.name === "sql.js" ? 3_500 : 1_500;
  let place: QueuePlace | undefined;
  let harness: QueueHarness | undefined;
  afterEach(async () => {
    await harness?.close();
    await place?.cleanup();
    harness = undefined;
    place = undefined;
  });

  it("is read for its dispatch a page at a time, with turns of the event loop between the pages", async () => {
    place = await adapter.place();
    const clock = createManualClock();
    const queue = await place.open({ clock, log: captureLog().log, scanDelayMs: SCAN_DELAY_MS });
    try {
      await enqueueAll(REQUESTS, (requests) => queue.enqueue(requests));
      await clock.advance(SCAN_DELAY_MS);
      let turns = 0;
      let reading = true;
      const turn = (): void => {
        if (!reading) return;
        turns++;
        setImmediate(turn);
      };
      setImmediate(turn);
      const [item] = await queue.dueForCheck(clock.now(), 1, new Set());
      reading = false;
      expect(item?.requests).toHaveLength(REQUESTS);
      expect(item?.requests.at(-1)).toMatchObject({ path: landedFile, deleted: false });
      // Pages of 1,000: other work ran between them (reading them in one go ran none).
      expect(turns).toBeGreaterThanOrEqual(REQUESTS / 1_000 - 1);
    } finally {
      await queue.close();
    }
  }, 120_000);

  it("carries the first FILES_KEPT files the check found to its scan, not a list as long as the folder", async () => {
    place = await adapter.place();
    const clock = createManualClock();
    const queue = await place.open({ clock, log: captureLog().log, scanDelayMs: SCAN_DELAY_MS });
    try {
      await queue.enqueue([fileRequest(landedFile)]);
      await clock.advance(SCAN_DELAY_MS);
      const [item] = await queue.dueForCheck(clock.now(), 1, new Set());
      if (!item) throw new Error("the folder is not due");
      const found = Array.from({ length: FILES_KEPT + 100 }, (_, n) => `${season}/Big Show - E${String(n).padStart(5, "0")}.mkv`);
      await queue.recordCheck(item.id, item.rev, { kind: "ready", checks: 1, scanFolder: season, files: found });
      const [ready] = await queue.dueForTarget("plex", clock.now(), 1, new Set());
      expect(ready?.files).toEqual(found.slice(0, FILES_KEPT));
    } finally {
      await queue.close();
    }
  }, 120_000);

  it("retried right as it finished, waits again with the first requests its History kept, as it always did", async () => {
    place = await adapter.place();
    const clock = createManualClock();
    const queue = await place.open({ clock, log: captureLog().log, scanDelayMs: SCAN_DELAY_MS });
    try {
      await enqueueAll(1_500, (requests) => queue.enqueue(requests));
      await clock.advance(SCAN_DELAY_MS);
      const [item] = await queue.dueForCheck(clock.now(), 1, new Set());
      if (!item) throw new Error("the folder is not due");
      // It fails its check; its extra requests are being deleted a write at a time as it is retried.
      await queue.recordCheck(item.id, item.rev, { kind: "failed", checks: 1, reason: "test" });
      expect(await queue.retry(item.id)).toBe(true);
      const retried = await queue.getItem(item.id);
      expect(retried).toMatchObject({ state: "pending", requestsDropped: 1_490 });
      expect(retried?.requests).toHaveLength(10);
    } finally {
      await queue.close();
    }
  }, 120_000);

  it("stopped as it finished, lets go of the extra requests once it is open again", async () => {
    place = await adapter.place();
    const clock = createManualClock();
    const open = (): Promise<ScanQueue> => (place as QueuePlace).open({ clock, log: captureLog().log, scanDelayMs: SCAN_DELAY_MS });
    const first = await open();
    try {
      await enqueueAll(1_500, (requests) => first.enqueue(requests));
      await clock.advance(SCAN_DELAY_MS);
      const [item] = await first.dueForCheck(clock.now(), 1, new Set());
      if (!item) throw new Error("the folder is not due");
      await first.recordCheck(item.id, item.rev, { kind: "failed", checks: 1, reason: "test" });
    } finally {
      await first.close();
    }
    const queue = await open();
    try {
      await vi.waitFor(async () => expect(await queue.listHistory({ search: "Big Show - S01E01.mkv" })).toEqual([]), { timeout: 60_000, interval: 50 });
      const [failed] = await queue.listHistory();
      expect(failed).toMatchObject({ state: "failed", requestsDropped: 1_490 });
      expect(failed?.requests.map((r) => r.path)).toEqual(folderRequests(10).slice(0, 9).map((r) => r.path).concat(`${season}/Big Show - E00009.mkv`));
    } finally {
      await queue.close();
    }
  }, 120_000);

  it("is one scan with every request's source, its file checked, its History kept short and its landed look started", async () => {
    const lookup: LibraryLookup = { settleMs: 0, find: async (files) => new Map(files.map((file) => [file, true])) };
    const plex = Object.assign(createFakeTarget("plex"), { lookup });
    if (adapter.name !== "sql.js") place = await adapter.place();
    harness = await createQueueHarness({
      targets: [plex],
      dispatcher: { landed: (target, item) => landedStart(true, target, item) },
      ...(place ? { place } : {}),
    });
    const h = harness;
    await h.touch(landedFile);
    await enqueueAll(REQUESTS, (requests) => h.queue.enqueue(requests));
    // Each stored change, with the turns of the event loop that had run when it was heard.
    let turns = 0;
    let counting = true;
    const turn = (): void => {
      if (!counting) return;
      turns++;
      setImmediate(turn);
    };
    setImmediate(turn);
    const afterScan: number[] = [];
    const stop = h.queue.onChange(() => {
      if (plex.calls.length > 0) afterScan.push(turns);
    });
    await h.advance(SCAN_DELAY_MS);
    await h.advance(1_000);
    // The History keeps the folder's first 10 requests; the others go a bounded write at a time after the finish.
    const batches = Math.ceil((REQUESTS - 10) / 1_000);
    await vi.waitFor(async () => expect(await h.queue.listHistory({ search: "Big Show - S01E01.mkv" })).toEqual([]), { timeout: 60_000, interval: 50 });
    counting = false;
    stop();
    // The finishing write, then `batches` writes of 1,000 deletions, each after a turn of the event loop.
    expect(afterScan).toHaveLength(1 + batches);
    for (let n = 1; n < afterScan.length; n++) expect(afterScan[n]).toBeGreaterThan(afterScan[n - 1] ?? 0);
    expect(await h.queue.listHistory({ search: "Big Show - E00009" })).toHaveLength(1);
    expect(plex.folders()).toEqual([season]);
    expect(plex.calls[0]?.context.sources).toHaveLength(REQUESTS);
    expect(plex.calls[0]?.context.files).toEqual([landedFile]);
    expect(await h.queue.pendingCount()).toBe(0);
    const [done] = await h.queue.listHistory();
    expect(done).toMatchObject({ folder: season, state: "done", requestsDropped: REQUESTS - 10, targets: [{ target: "plex", status: "scanned", landed: "pending" }] });
    expect(done?.requests).toHaveLength(10);
  }, 120_000);
});
