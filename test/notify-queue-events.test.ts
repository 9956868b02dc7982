import { afterEach, expect, it } from "vitest";
import { TargetUnavailableError } from "../src/core/errors.ts";
import type { FailedFolder } from "../src/queue/failed-watch.ts";
import type { TargetChange } from "../src/queue/dispatch/target-delivery.ts";
import { createFakeTarget } from "./support/fake-target.ts";
import { describeEachStore, type QueuePlace } from "./support/queue-adapters.ts";
import { CHECK_DELAY_MS, createQueueHarness, fileRequest, SCAN_DELAY_MS, type QueueHarness } from "./support/queue-harness.ts";

/**
 * Where the `failed`, `target_down` and `target_up` notifications come from: the queue tells each folder its writes
 * finished as failed (once, after the write is durable, on both stores), and the dispatcher tells a target going down
 * and coming back once each way. Real queue, real dispatcher, a manual clock.
 */
describeEachStore("notification events", (adapter) => {
  let harness: QueueHarness | undefined;
  let place: QueuePlace | undefined;

  afterEach(async () => {
    await harness?.close();
    await place?.cleanup();
    harness = undefined;
    place = undefined;
  });

  async function start(targets: Parameters<typeof createQueueHarness>[0]["targets"]) {
    place = await adapter.place();
    const changes: TargetChange[] = [];
    const dispatcher = { maxFileChecks: 2, retryMaxMs: 60 * 60_000, onTargetChange: (change: TargetChange) => changes.push(change) };
    harness = await createQueueHarness({ targets, place, dispatcher });
    const failed: FailedFolder[] = [];
    harness.queue.onFailed((folders) => failed.push(...folders));
    return { harness, failed, changes };
  }

  it("a folder whose file never appears is told once, with History's reason and no server", async () => {
    const { harness, failed } = await start([createFakeTarget("plex")]);
    await harness.enqueue(fileRequest("/tv/Show/Season 01/e01.mkv"));
    await harness.advance(SCAN_DELAY_MS);
    expect(failed).toEqual([]);
    await harness.advance(CHECK_DELAY_MS);
    expect(failed).toEqual([{ id: expect.any(Number), folder: "/tv/Show/Season 01", reason: expect.stringContaining("Not found after 2 file check(s)"), targets: [] }]);
    const [item] = await harness.queue.listHistory({ state: "failed" });
    expect(failed[0]?.id).toBe(item?.id);
    await harness.advance(CHECK_DELAY_MS * 3);
    expect(failed).toHaveLength(1);
  });

  it("requests no server can scan, moved into History as failed, are told too", async () => {
    const { harness, failed } = await start([createFakeTarget("plex")]);
    const { items } = await harness.queue.enqueue([fileRequest("/nowhere/Show/e01.mkv")]);
    await harness.queue.refuseWaiting([{ id: items[0]?.id ?? 0, reason: "Not queued: no mapping." }]);
    expect(failed).toEqual([{ id: expect.any(Number), folder: "/nowhere/Show", reason: "Not queued: no mapping.", targets: [] }]);
  });

  it("a server that is down is told once down and once back, and a delivery given up names that server", async () => {
    const plex = createFakeTarget("plex");
    const jellyfin = createFakeTarget("jellyfin", () => {
      throw new TargetUnavailableError("connection refused");
    });
    jellyfin.available = false;
    const { harness, failed, changes } = await start([plex, jellyfin]);
    await harness.touch("/tv/Show/Season 01/e01.mkv");
    await harness.touch("/tv/Other/Season 01/e01.mkv");
    await harness.enqueue(fileRequest("/tv/Show/Season 01/e01.mkv"), fileRequest("/tv/Other/Season 01/e01.mkv"));
    await harness.advance(SCAN_DELAY_MS);
    await harness.advance(10 * 60_000);
    expect(changes).toEqual([{ target: "jellyfin", available: false, reason: "connection refused" }]);
    jellyfin.available = true;
    jellyfin.respond = () => ({ status: "scanned" });
    await harness.advance(10 * 60_000);
    expect(changes).toEqual([
      { target: "jellyfin", available: false, reason: "connection refused" },
      { target: "jellyfin", available: true, downSince: expect.any(Number) },
    ]);
    expect(failed).toEqual([]);
    // Given up after SERVER_RETRY_MAX_HOURS (1 h here): the folder fails, naming the server that gave it up.
    jellyfin.respond = () => {
      throw new Error("Jellyfin answered 500");
    };
    await harness.enqueue(fileRequest("/tv/Third/Season 01/e01.mkv"));
    await harness.touch("/tv/Third/Season 01/e01.mkv");
    await harness.advance(SCAN_DELAY_MS);
    await harness.advance(2 * 60 * 60_000);
    expect(failed).toEqual([{ id: expect.any(Number), folder: "/tv/Third/Season 01", reason: expect.stringContaining("jellyfin: Jellyfin answered 500"), targets: ["jellyfin"] }]);
  });
});
