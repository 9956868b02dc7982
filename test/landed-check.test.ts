import { afterEach, describe, expect, it } from "vitest";
import type { NotifyEvent } from "../src/core/notify-event.ts";
import type { LibraryLookup } from "../src/core/target.ts";
import { startLandedChecker, type LandedChecker } from "../src/landed/landed-checker.ts";
import { landedStart } from "../src/landed/landed-start.ts";
import { createFakeTarget, type FakeTarget } from "./support/fake-target.ts";
import { SCAN_DELAY_MS, createQueueHarness, fileRequest, type QueueHarness } from "./support/queue-harness.ts";
import { describeEachStore, type QueuePlace } from "./support/queue-adapters.ts";

/**
 * The landed check over the real queue (both stores) and the real dispatcher: a target whose library is a set of
 * files (a server's library as its API answers it; the servers' own fakes are in test/support and their lookups are
 * tested in src/targets). The first look, the recheck after SERVER_LANDED_RECHECK, one rescan, `not visible`.
 */
const season = "/tv/Show/Season 01";
const episode = (n: number): string => `${season}/Show - S01E${String(n).padStart(2, "0")}.mkv`;
const RECHECK_MS = 300_000;

interface LibraryTarget extends FakeTarget {
  readonly library: Set<string>;
  looks: number;
}

/** A target whose scans fill its library `importAfterScans` scans later (Infinity: never). */
function libraryTarget(importAfterScans = 1, settleMs = 0): LibraryTarget {
  const library = new Set<string>();
  const target = createFakeTarget("plex", (_folder, context) => {
    if (target.calls.length >= importAfterScans) for (const file of context.files) library.add(file);
    for (const source of context.sources) if (source.deleted) library.delete(source.path);
    return { status: "scanned" };
  }) as LibraryTarget;
  const lookup: LibraryLookup = {
    settleMs,
    async find(files) {
      target.looks++;
      return new Map(files.map((file) => [file, library.has(file)]));
    },
  };
  Object.assign(target, { library, looks: 0, lookup });
  return target;
}

describeEachStore("the landed check", (adapter) => {
  let harness: QueueHarness | undefined;
  let checker: LandedChecker | undefined;
  let place: QueuePlace | undefined;
  const events: NotifyEvent[] = [];
  let confirm = true;

  async function setup(target: LibraryTarget, settings: { timeoutMs?: number } = {}): Promise<QueueHarness> {
    if (adapter.name !== "sql.js") place = await adapter.place();
    harness = await createQueueHarness({
      targets: [target],
      dispatcher: { landed: (t, item) => landedStart(confirm, t, item) },
      ...(place ? { place } : {}),
    });
    const h = harness;
    checker = startLandedChecker({
      queue: h.queue,
      targets: () => [target],
      settings: () => ({ recheckMs: RECHECK_MS, ...settings }),
      clock: h.clock,
      log: h.logs.log,
      notify: (event) => events.push(event),
      pollMs: 1000,
    });
    return h;
  }

  afterEach(async () => {
    await checker?.stop();
    await harness?.close();
    await place?.cleanup();
    harness = undefined;
    checker = undefined;
    place = undefined;
    events.length = 0;
    confirm = true;
  });

  /** Moves the clock by 5 s steps (real time passing between them for the checker's I/O) until `check` holds. */
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
  /** The newest delivery with a landed state (a landed check's own rescan is a folder of its own, with none). */
  const targetOf = async (h: QueueHarness) => (await h.queue.listHistory()).flatMap((item) => item.targets).find((t) => t.landed !== undefined);

  it("finds the files at the first look: landed, with the time from the request", async () => {
    const plex = libraryTarget();
    const h = await setup(plex);
    await h.touch(episode(1));
    await h.touch(episode(2));
    await h.enqueue(fileRequest(episode(1)), fileRequest(episode(2)));
    await h.advance(SCAN_DELAY_MS);
    await until(h, async () => (await targetOf(h))?.landed === "landed", 30_000);
    const view = await targetOf(h);
    expect(view).toMatchObject({ target: "plex", status: "scanned", landed: "landed" });
    expect(view?.landedAfterMs).toBeGreaterThanOrEqual(SCAN_DELAY_MS);
    expect(plex.calls).toHaveLength(1);
    expect(h.logs.messages().some((m) => m.startsWith(`Landed: 'plex' shows 2 file(s) of '${season}'`))).toBe(true);
  });

  it("looks again after SERVER_LANDED_RECHECK and finds a file that came late, without a rescan", async () => {
    const plex = libraryTarget();
    const h = await setup(plex);
    await h.touch(episode(3));
    await h.enqueue(fileRequest(episode(3)));
    // The server takes the scan but imports only later (a slow server).
    plex.respond = () => ({ status: "scanned" });
    await h.advance(SCAN_DELAY_MS);
    // The first look has missed it once its result is stored (the reason names the file).
    await until(h, async () => plex.looks === 1 && (await targetOf(h))?.landedReason !== undefined, 30_000);
    expect((await targetOf(h))?.landed).toBe("pending");
    expect((await targetOf(h))?.landedReason).toContain(episode(3));
    plex.library.add(episode(3));
    await until(h, async () => (await targetOf(h))?.landed === "landed", RECHECK_MS + 30_000);
    expect(plex.calls).toHaveLength(1);
    expect(plex.looks).toBe(2);
    expect(events).toEqual([]);
  });

  it("never visible: one rescan, then not visible with the reason, a WARNING and one notification; History filters it", async () => {
    const plex = libraryTarget(Number.POSITIVE_INFINITY);
    const h = await setup(plex);
    await h.touch(episode(4));
    await h.enqueue(fileRequest(episode(4)));
    await h.advance(SCAN_DELAY_MS);
    // Not visible, and told (the notification follows the stored outcome).
    await until(h, async () => (await targetOf(h))?.landed === "not_visible" && events.length > 0, 3 * RECHECK_MS + SCAN_DELAY_MS + 60_000);
    expect(plex.folders()).toEqual([season, season]);
    expect(plex.calls[1]?.context.sources[0]).toMatchObject({ source: "Landed check", event: "Rescan" });
    const view = await targetOf(h);
    expect(view?.landedReason).toBe(`'${episode(4)}' not visible in 'plex' after a rescan`);
    expect(events).toMatchObject([{ event: "not_visible", folder: season, target: "plex" }]);
    expect(h.logs.records.filter((r) => r.level === 40 && r.msg.startsWith("Not visible:"))).toHaveLength(1);
    expect(await h.queue.historyCount({ landed: "not_visible" })).toBe(1);
    expect(await h.queue.historyCount({ landed: "landed" })).toBe(0);
  });

  it("the rescan is a scan like any other: it follows the target's own wait, not the look's limit", async () => {
    const plex = libraryTarget(Number.POSITIVE_INFINITY);
    const h = await setup(plex, { timeoutMs: 500 });
    // The rescan: the server takes 1.5 s to answer (well within its own limit), then imports the folder.
    plex.respond = async (_folder, context) => {
      if (context.sources[0]?.source !== "Landed check") return { status: "scanned" };
      await new Promise<void>((resolve, reject) => {
        setTimeout(resolve, 1_500);
        context.signal.addEventListener("abort", () => reject(context.signal.reason as Error));
      });
      for (const file of context.files) plex.library.add(file);
      return { status: "scanned" };
    };
    await h.touch(episode(7));
    await h.enqueue(fileRequest(episode(7)));
    await h.advance(SCAN_DELAY_MS);
    await until(h, async () => ["landed", "not_visible"].includes((await targetOf(h))?.landed ?? ""), 5 * RECHECK_MS + SCAN_DELAY_MS);
    expect(await targetOf(h)).toMatchObject({ landed: "landed" });
    expect(plex.folders()).toEqual([season, season]);
    expect(events).toEqual([]);
  });

  it("a deleted file must be gone: confirmed when the library no longer lists it", async () => {
    const plex = libraryTarget();
    plex.library.add(episode(5));
    const h = await setup(plex);
    await h.touch(`${season}/`);
    await h.enqueue(fileRequest(episode(5), "Sonarr", { event: "EpisodeFileDelete", deleted: true }));
    await h.advance(SCAN_DELAY_MS);
    await until(h, async () => (await targetOf(h))?.landed === "landed", 30_000);
    expect(plex.library.has(episode(5))).toBe(false);
  });

  it("says why it did not look: a folder-only request, and checking switched off", async () => {
    const plex = libraryTarget();
    const h = await setup(plex);
    await h.touch(`${season}/`);
    await h.enqueue(fileRequest(season, "Manual", { kind: "folder" }));
    await h.advance(SCAN_DELAY_MS);
    expect(await targetOf(h)).toMatchObject({ landed: "not_checked", landedReason: "the request named a folder only" });
    confirm = false;
    await h.touch(episode(6));
    await h.enqueue(fileRequest(episode(6)));
    await h.advance(SCAN_DELAY_MS);
    expect(await targetOf(h)).toMatchObject({ landed: "not_checked", landedReason: "checking is off (SERVER_CONFIRM_LANDED)" });
    expect(plex.looks).toBe(0);
  });
});

describe("landedStart", () => {
  it("does not look for a target that cannot be asked (a chained autoscan)", () => {
    const relay = createFakeTarget("upstream");
    const item = { id: 1, rev: 1, folder: season, files: [], priority: 0, checks: 0, attempts: 0, requests: [{ path: episode(1), kind: "file" as const, deleted: false, source: "Sonarr", event: "Download" }] };
    expect(landedStart(true, relay, item)).toEqual({ look: false, reason: "'upstream' cannot be asked which files its library holds" });
  });
});
