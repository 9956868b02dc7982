import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { BadRequestError } from "../core/errors.ts";
import type { ScanRequest } from "../core/scan.ts";
import { captureLog } from "../../test/support/capture-log.ts";
import { describeEachStore, type QueueOpenOptions, type QueuePlace } from "../../test/support/queue-adapters.ts";
import { createManualClock, type ManualClock } from "../../test/support/manual-clock.ts";
import type { ScanQueue } from "./scan-queue.ts";

const DELAY = 180_000;

/** Retries an assertion until it passes (for work started by a timer), failing after `ms` of real time. */
async function eventually(assertion: () => void | Promise<void>, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      return await assertion();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }
}
const episode = (n: number, source = "Sonarr"): ScanRequest => ({
  path: `/tv/Show/Season 01/Show - S01E${String(n).padStart(2, "0")}.mkv`,
  kind: "file",
  source,
  event: "Download",
});

describeEachStore("the scan queue", (adapter) => {
let place: QueuePlace;
let clock: ManualClock;
let queue: ScanQueue;
const logs = captureLog();

async function open(extra: Partial<QueueOpenOptions> = {}): Promise<ScanQueue> {
  return place.open({
    clock,
    log: logs.log,
    scanDelayMs: DELAY,
    priorities: { "0": ["/Movies/"], "1": ["/TV/"] },
    ...extra,
  });
}

beforeEach(async () => {
  place = await adapter.place();
  clock = createManualClock();
  logs.records.length = 0;
  queue = await open();
});
afterEach(async () => {
  await queue.close();
  await place.cleanup();
});

describe("enqueue: merging by folder", () => {
  it("turns a file request into its folder, due one delay later", async () => {
    const start = clock.now();
    const result = await queue.enqueue([episode(1)]);
    expect(result.items).toEqual([{ id: 1, folder: "/tv/Show/Season 01", merged: false }]);
    const [item] = await queue.listPending();
    expect(item).toMatchObject({ folder: "/tv/Show/Season 01", state: "pending", dueAt: start + DELAY, priority: 1 });
    expect(item?.requests.map((r) => r.path)).toEqual([episode(1).path]);
  });

  it("merges requests for the same folder into one item, keeping every request and source", async () => {
    await queue.enqueue([episode(1)]);
    const second = await queue.enqueue([episode(2, "Sonarr (4k)"), episode(3)]);
    expect(second.items.every((i) => i.merged)).toBe(true);
    expect(await queue.pendingCount()).toBe(1);
    const [item] = await queue.listPending();
    expect(item?.requests.map((r) => r.source)).toEqual(["Sonarr", "Sonarr (4k)", "Sonarr"]);
  });

  it("reports a merge inside one batch too", async () => {
    const result = await queue.enqueue([episode(1), episode(2)]);
    expect(result.items.map((i) => i.merged)).toEqual([false, true]);
  });

  it("keeps one row for an identical repeated request, but still restarts the wait", async () => {
    await queue.enqueue([episode(1)]);
    await clock.advance(60_000);
    await queue.enqueue([episode(1)]);
    const [item] = await queue.listPending();
    expect(item?.requests).toHaveLength(1);
    expect(item?.dueAt).toBe(clock.now() + DELAY);
  });

  it("restarts the wait on each new request, but never past 3 × the delay from the first", async () => {
    const start = clock.now();
    await queue.enqueue([episode(1)]);
    await clock.advance(100_000);
    await queue.enqueue([episode(2)]);
    expect((await queue.listPending())[0]?.dueAt).toBe(start + 100_000 + DELAY);
    for (let n = 3; n < 12; n++) {
      await clock.advance(100_000);
      await queue.enqueue([episode(n)]);
    }
    expect((await queue.listPending())[0]?.dueAt).toBe(start + 3 * DELAY);
  });

  it("keeps folder requests as folders and strips the trailing slash", async () => {
    await queue.enqueue([{ path: "/tv/Show/", kind: "folder", source: "Sonarr", event: "Rename" }]);
    await queue.enqueue([{ path: "/tv/Show", kind: "folder", source: "Manual", event: "Manual" }]);
    expect((await queue.listPending()).map((i) => i.folder)).toEqual(["/tv/Show"]);
  });

  it("rejects a relative path before storing anything", async () => {
    await expect(queue.enqueue([episode(1), { ...episode(2), path: "tv/x.mkv" }])).rejects.toBeInstanceOf(
      BadRequestError,
    );
    expect(await queue.pendingCount()).toBe(0);
  });

  it("applies concurrent calls together, but refuses only the call that fails", async () => {
    const bogus = { ...episode(2), path: "/tv/Other/x.mkv", kind: "bogus" } as unknown as ScanRequest;
    const [good, bad] = await Promise.allSettled([queue.enqueue([episode(1)]), queue.enqueue([bogus])]);
    expect(good.status).toBe("fulfilled");
    expect(bad.status).toBe("rejected");
    expect((await queue.listPending()).map((i) => i.folder)).toEqual(["/tv/Show/Season 01"]);
  });

  it("logs the classic lines once the request is stored", async () => {
    await queue.enqueue([episode(1)]);
    expect(logs.messages()).toContain(`Queued Sonarr 'Download': '${episode(1).path}'; scan in 180 s.`);
    expect(logs.records.find((r) => r.msg.startsWith("Queued"))).toMatchObject({ id: 1, level: 30 });
    expect(logs.messages()).toContain(`Request for '${episode(1).path}'.`);
  });
});

describe("order and views", () => {
  it("lists pending folders by priority (lower first, unmatched = 0), then oldest first", async () => {
    await queue.enqueue([{ path: "/data/TV/A/x.mkv", kind: "file", source: "Sonarr", event: "Download" }]);
    await clock.advance(1000);
    await queue.enqueue([{ path: "/data/Movies/B/b.mkv", kind: "file", source: "Radarr", event: "Download" }]);
    await clock.advance(1000);
    await queue.enqueue([{ path: "/data/Other/C/c.mkv", kind: "file", source: "Manual", event: "Manual" }]);
    await clock.advance(1000);
    await queue.enqueue([{ path: "/data/Movies/D/d.mkv", kind: "file", source: "Radarr", event: "Download" }]);
    expect((await queue.listPending()).map((i) => [i.folder, i.priority])).toEqual([
      ["/data/Movies/B", 0],
      ["/data/Other/C", 0],
      ["/data/Movies/D", 0],
      ["/data/TV/A", 1],
    ]);
    const page = (await queue.listPending({ limit: 2, offset: 1 })).map((i) => i.folder);
    expect(page).toEqual(["/data/Other/C", "/data/Movies/D"]);
  });

  it("removes an item and answers false for an unknown id", async () => {
    await queue.enqueue([episode(1)]);
    const id = (await queue.listPending())[0]?.id ?? -1;
    expect(await queue.remove(id)).toBe(true);
    expect(await queue.remove(id)).toBe(false);
    expect(await queue.pendingCount()).toBe(0);
  });

  it("makes a pending item due now on retry", async () => {
    await queue.enqueue([episode(1)]);
    const id = (await queue.listPending())[0]?.id ?? -1;
    expect(await queue.retry(id)).toBe(true);
    expect((await queue.listPending())[0]?.dueAt).toBe(clock.now());
    expect(await queue.retry(12345)).toBe(false);
  });

  it("tells listeners the earliest time new work is due", async () => {
    const seen: number[] = [];
    queue.onWork((at) => seen.push(at));
    await queue.enqueue([episode(1)]);
    expect(seen).toEqual([clock.now() + DELAY]);
  });

  it("stores a call made just before close", async () => {
    const pending = queue.enqueue([episode(1)]);
    await queue.close();
    await expect(pending).resolves.toMatchObject({ items: [{ folder: "/tv/Show/Season 01" }] });
    queue = await open();
    expect(await queue.pendingCount()).toBe(1);
  });

  it("rejects enqueues after close", async () => {
    await queue.close();
    await expect(queue.enqueue([episode(1)])).rejects.toThrow(/closed/);
    queue = await open();
  });
});

describe("history retention", () => {
  async function finishOne(path: string): Promise<void> {
    await queue.enqueue([{ path, kind: "folder", source: "Manual", event: "Manual" }]);
    const item = (await queue.listPending()).find((i) => i.folder === path);
    if (!item) throw new Error("not queued");
    await queue.recordCheck(item.id, 1, { kind: "ready", checks: 1, scanFolder: path, files: [] });
    await queue.recordScan(item.id, 1, "plex", { status: "scanned" }, ["plex"]);
  }

  it("drops history older than the configured days at the next maintenance", async () => {
    await queue.close();
    queue = await open({ historyMaxDays: 1, maintenanceIntervalMs: 60 * 60_000 });
    await finishOne("/tv/A");
    expect(await queue.historyCount()).toBe(1);
    await clock.advance(23 * 60 * 60_000);
    expect(await queue.historyCount()).toBe(1);
    await clock.advance(2 * 60 * 60_000);
    await eventually(async () => expect(await queue.historyCount()).toBe(0));
  });

  it("prunes as history grows, not only at the maintenance tick, so memory stays near the row limit", async () => {
    await queue.close();
    queue = await open({ historyMaxRows: 200, maintenanceIntervalMs: 24 * 60 * 60_000 });
    for (let n = 0; n < 350; n++) await finishOne(`/tv/Show ${String(n)}`);
    await eventually(async () => expect(await queue.historyCount()).toBeLessThanOrEqual(300));
    expect((await queue.listHistory({ limit: 1 }))[0]?.folder).toBe("/tv/Show 349");
  });

  it("lets a finished folder keep only its first requests, and counts the others, also after a restart", async () => {
    const requests = Array.from({ length: 15 }, (_, n) => episode(n + 1));
    for (const request of requests) await queue.enqueue([request]);
    await clock.advance(3 * DELAY);
    const [item] = await queue.dueForCheck(clock.now(), 1, new Set());
    if (!item) throw new Error("not due");
    await queue.recordCheck(item.id, item.rev, { kind: "ready", checks: 1, scanFolder: item.folder, files: [] });
    const pending = await queue.getItem(item.id);
    await queue.recordScan(item.id, item.rev, "plex", { status: "scanned" }, ["plex"]);
    expect(pending?.requests).toHaveLength(15);
    const check = (view: Awaited<ReturnType<ScanQueue["getItem"]>>): void => {
      expect(view?.state).toBe("done");
      expect(view?.requests.map((r) => r.path)).toEqual(requests.slice(0, 10).map((r) => r.path));
      expect(view?.requestsDropped).toBe(5);
    };
    check(await queue.getItem(item.id));
    await queue.close();
    queue = await open();
    check(await queue.getItem(item.id));
  });

  it("prunes at open too", async () => {
    await finishOne("/tv/A");
    await queue.close();
    await clock.advance(8 * 24 * 60 * 60_000);
    queue = await open();
    expect(await queue.historyCount()).toBe(0);
  });

  it("keeps at most the configured number of history rows, newest first", async () => {
    await queue.close();
    queue = await open({ historyMaxRows: 2 });
    for (const name of ["A", "B", "C"]) {
      await finishOne(`/tv/${name}`);
      await clock.advance(1000);
    }
    await queue.close();
    queue = await open({ historyMaxRows: 2 });
    expect((await queue.listHistory()).map((i) => i.folder)).toEqual(["/tv/C", "/tv/B"]);
  });
});
});
