import { afterEach, expect, it } from "vitest";
import { TargetUnavailableError } from "../src/core/errors.ts";
import type { RefreshWish } from "../src/core/scan.ts";
import type { ItemRefresher, LibraryLookup } from "../src/core/target.ts";
import { startLandedChecker, type LandedChecker } from "../src/landed/landed-checker.ts";
import { landedStart } from "../src/landed/landed-start.ts";
import { createFakeTarget, type FakeTarget } from "./support/fake-target.ts";
import { SCAN_DELAY_MS, createQueueHarness, fileRequest, type QueueHarness } from "./support/queue-harness.ts";
import { describeEachStore, type QueuePlace } from "./support/queue-adapters.ts";

/**
 * Refresh in place over the real queue (both stores) and the real dispatcher and landed checker: the wish is stored
 * with the folder (any request that asked raises it), carried to the look, and the target's refresher is called only
 * once the look saw the files, with the files named; what it did is stored on the target's row as History shows it.
 */
const season = "/tv/Show/Season 01";
const episode = (n: number): string => `${season}/Show - S01E0${String(n)}.mkv`;

interface RefreshingTarget extends FakeTarget {
  readonly library: Set<string>;
  /** The next refreshes that find the server down. */
  down: number;
  readonly refreshes: { files: readonly string[]; wish: RefreshWish; visible: boolean[] }[];
}

/** A target whose scans import the files they name (or never, `imports: false`), and that refreshes what it holds. */
function refreshingTarget(imports = true): RefreshingTarget {
  const library = new Set<string>();
  const refreshes: RefreshingTarget["refreshes"] = [];
  const target = createFakeTarget("plex", (_folder, context) => {
    if (imports) for (const file of context.files) library.add(file);
    return { status: "scanned" };
  }) as RefreshingTarget;
  const lookup: LibraryLookup = { settleMs: 0, find: async (files) => new Map(files.map((file) => [file, library.has(file)])) };
  const refresher: ItemRefresher = {
    async refresh(files, wish) {
      if (target.down > 0) {
        target.down -= 1;
        throw new TargetUnavailableError("Plex is unreachable (connection refused)");
      }
      refreshes.push({ files, wish, visible: files.map((file) => library.has(file)) });
      const held = files.filter((file) => library.has(file));
      return { refreshed: held.length, missing: files.filter((file) => !library.has(file)), detail: `refreshed ${String(held.length)}` };
    },
  };
  Object.assign(target, { library, refreshes, lookup, refresher, down: 0 });
  return target;
}

describeEachStore("refresh in place", (adapter) => {
  let harness: QueueHarness | undefined;
  let checker: LandedChecker | undefined;
  let place: QueuePlace | undefined;

  async function setup(target: RefreshingTarget): Promise<QueueHarness> {
    if (adapter.name !== "sql.js") place = await adapter.place();
    harness = await createQueueHarness({
      targets: [target],
      dispatcher: { landed: (t, item) => landedStart(true, t, item) },
      ...(place ? { place } : {}),
    });
    const h = harness;
    checker = startLandedChecker({ queue: h.queue, targets: () => [target], settings: () => ({ recheckMs: 60_000 }), clock: h.clock, log: h.logs.log, pollMs: 1000 });
    return h;
  }

  afterEach(async () => {
    await checker?.stop();
    await harness?.close();
    await place?.cleanup();
    harness = undefined;
    checker = undefined;
    place = undefined;
  });

  async function until(h: QueueHarness, check: () => Promise<boolean>, maxMs: number): Promise<void> {
    for (let waited = 0; waited <= maxMs; waited += 5000) {
      for (let i = 0; i < 4; i++) {
        if (await check()) return;
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      await h.advance(5000);
    }
    throw new Error(`not within ${String(maxMs)} ms of the queue's clock`);
  }
  const plexRow = async (h: QueueHarness) => (await h.queue.listHistory()).flatMap((item) => item.targets).find((t) => t.landed !== undefined);

  it("a folder refreshes if any of its requests asked, as much as the most asking one; after the look saw the files", async () => {
    const plex = refreshingTarget();
    const h = await setup(plex);
    await h.touch(episode(1));
    await h.touch(episode(2));
    await h.enqueue(fileRequest(episode(1)));
    await h.enqueue(fileRequest(episode(2), "Bazarr", { refresh: "metadata" }));
    await h.enqueue(fileRequest(episode(1), "Sonarr", { event: "Upgrade", refresh: "file" }));
    // Stored with the waiting folder before any scan.
    expect((await h.queue.listPending()).map((item) => item.refresh)).toEqual(["file"]);
    await h.advance(SCAN_DELAY_MS);
    await until(h, async () => (await plexRow(h))?.refresh !== undefined, 60_000);
    expect(plex.calls).toHaveLength(1);
    // The scan itself is told (a scan route that would re-read what the server holds may take it as leave to).
    expect(plex.calls[0]?.context.refresh).toBe("file");
    expect(plex.refreshes).toEqual([{ files: [episode(1), episode(2)], wish: "file", visible: [true, true] }]);
    expect(await plexRow(h)).toMatchObject({ landed: "landed", refresh: "refreshed", refreshDetail: "refreshed 2" });
    expect((await h.queue.listHistory())[0]?.refresh).toBe("file");
  });

  it("a folder nobody asked to refresh is only scanned", async () => {
    const plex = refreshingTarget();
    const h = await setup(plex);
    await h.touch(episode(3));
    await h.enqueue(fileRequest(episode(3)));
    await h.advance(SCAN_DELAY_MS);
    await until(h, async () => (await plexRow(h))?.landed === "landed", 60_000);
    expect(plex.refreshes).toEqual([]);
    expect(plex.calls[0]?.context).not.toHaveProperty("refresh");
    expect(await plexRow(h)).not.toHaveProperty("refresh");
    expect((await h.queue.listHistory())[0]).not.toHaveProperty("refresh");
  });

  it("files never visible are not refreshed: the row says why, nothing is sent", async () => {
    const plex = refreshingTarget(false);
    const h = await setup(plex);
    await h.touch(episode(4));
    await h.enqueue(fileRequest(episode(4), "Manual", { refresh: "file" }));
    await h.advance(SCAN_DELAY_MS);
    await until(h, async () => (await plexRow(h))?.refresh !== undefined, 400_000);
    expect(plex.refreshes).toEqual([]);
    expect(await plexRow(h)).toMatchObject({ landed: "not_visible", refresh: "not_refreshed", refreshDetail: "the files were not visible" });
  });

  it("with the landed check off there is no look to find the item: the row says why, nothing is sent", async () => {
    const plex = refreshingTarget();
    if (adapter.name !== "sql.js") place = await adapter.place();
    const h = (harness = await createQueueHarness({
      targets: [plex],
      dispatcher: { landed: (t, item) => landedStart(false, t, item) },
      ...(place ? { place } : {}),
    }));
    await h.touch(episode(5));
    await h.enqueue(fileRequest(episode(5), "Manual", { refresh: "metadata" }));
    await h.advance(SCAN_DELAY_MS);
    await until(h, async () => (await plexRow(h))?.refresh !== undefined, 60_000);
    expect(plex.refreshes).toEqual([]);
    expect(await plexRow(h)).toMatchObject({
      landed: "not_checked",
      refresh: "not_refreshed",
      refreshDetail: "the item cannot be looked up: checking is off (SERVER_CONFIRM_LANDED)",
    });
  });

  it("a server down when the refresh is due is asked again a minute later, look and refresh", async () => {
    const plex = refreshingTarget();
    plex.down = 1;
    const h = await setup(plex);
    await h.touch(episode(6));
    await h.enqueue(fileRequest(episode(6), "Manual", { refresh: "file" }));
    await h.advance(SCAN_DELAY_MS);
    await until(h, async () => (await plexRow(h))?.refresh !== undefined, 120_000);
    expect(plex.down).toBe(0);
    expect(plex.refreshes).toHaveLength(1);
    expect(await plexRow(h)).toMatchObject({ landed: "landed", refresh: "refreshed" });
  });
});
