import { afterEach, expect, it } from "vitest";
import type { ScanRequest } from "../src/core/scan.ts";
import { createLivePathMapper } from "../src/paths/mapping.ts";
import { UNROUTABLE_MARK } from "../src/paths/unroutable.ts";
import { remapWith } from "../src/queue/from-config.ts";
import type { ScanQueue } from "../src/queue/scan-queue.ts";
import { captureLog } from "./support/capture-log.ts";
import { createManualClock } from "./support/manual-clock.ts";
import { describeEachStore, type QueuePlace } from "./support/queue-adapters.ts";

/**
 * A retry maps again (rules/admin.ts): a request refused because no SERVER_PATH_MAPPINGS form reached its path is
 * retried after the form was added, and waits under the mapped folder, as a fresh request for it would; the same on
 * both engines.
 */
const DELAY_MS = 5_000;
const UNMAPPED = "/tv/Unmapped Show/Season 02";
const MAPPED = "/data/TV/Unmapped Show/Season 02";
const episode = (folder: string, n: number): string => `${folder}/Unmapped Show - S02E0${String(n)}.mkv`;

function sonarr(path: string, receivedPath = path): ScanRequest {
  return { path, kind: "file", source: "Sonarr", event: "Download", receivedPath };
}

describeEachStore("a retry after a mapping change", (adapter) => {
  let place: QueuePlace | undefined;
  let queue: ScanQueue | undefined;
  afterEach(async () => {
    await queue?.close();
    await place?.cleanup();
    queue = undefined;
    place = undefined;
  });

  /** A queue whose retries map with `mapper` (no mapping at first), and a refused request as intake leaves it. */
  async function setUp(): Promise<{ q: ScanQueue; mapper: ReturnType<typeof createLivePathMapper>; refused: number; clock: ReturnType<typeof createManualClock> }> {
    place = await adapter.place();
    const clock = createManualClock();
    const mapper = createLivePathMapper({ mappings: {} });
    queue = await place.open({ clock, log: captureLog().log, scanDelayMs: DELAY_MS, remap: remapWith(mapper.toServer) });
    const { items } = await queue.enqueue([sonarr(episode(UNMAPPED, 1))]);
    const id = items[0]?.id ?? -1;
    await queue.refuseWaiting([{ id, reason: `${UNROUTABLE_MARK}'${episode(UNMAPPED, 1)}' matches no SERVER_PATH_MAPPINGS form and lies in no library.` }]);
    return { q: queue, mapper, refused: id, clock };
  }

  const addMapping = (mapper: ReturnType<typeof createLivePathMapper>): void => mapper.replace({ mappings: { "/data/TV/": ["/tv/"] } });

  it("sends a refused request, once its form is mapped, to the mapped folder, keeping what was received", async () => {
    const { q, mapper, refused, clock } = await setUp();
    addMapping(mapper);

    expect(await q.retry(refused)).toBe(true);

    // The History row it came from is gone: its one request waits under the mapped folder, a scan delay from now.
    expect(await q.getItem(refused)).toBeUndefined();
    const [waiting, ...more] = await q.listPending();
    expect(more).toEqual([]);
    expect(waiting).toMatchObject({ folder: MAPPED, state: "pending", dueAt: clock.now() + DELAY_MS });
    expect(waiting?.requests).toEqual([expect.objectContaining({ path: episode(MAPPED, 1), receivedPath: episode(UNMAPPED, 1), source: "Sonarr" })]);
    expect(await q.countByState()).toMatchObject({ pending: 1 });
  });

  it("merges the retried request into the folder's waiting item, as a new request would", async () => {
    const { q, mapper, refused } = await setUp();
    addMapping(mapper);
    // A fresh webhook for the next episode arrived after the fix, mapped at intake.
    await q.enqueue([sonarr(episode(MAPPED, 2), episode(UNMAPPED, 2))]);

    expect(await q.retry(refused)).toBe(true);

    const pending = await q.listPending();
    expect(pending.map((item) => item.folder)).toEqual([MAPPED]);
    expect(pending[0]?.requests.map((r) => r.path).sort()).toEqual([episode(MAPPED, 1), episode(MAPPED, 2)]);
  });

  it("retries in place a request today's mappings still do not reach (the path as it was)", async () => {
    const { q, refused } = await setUp();

    expect(await q.retry(refused)).toBe(true);

    expect(await q.getItem(refused)).toMatchObject({ folder: UNMAPPED, state: "pending", requests: [expect.objectContaining({ path: episode(UNMAPPED, 1) })] });
  });

  it("'Retry all failed' maps again too", async () => {
    const { q, mapper, refused } = await setUp();
    addMapping(mapper);

    expect(await q.retryFailed()).toBe(1);

    expect(await q.getItem(refused)).toBeUndefined();
    expect((await q.listPending()).map((item) => item.folder)).toEqual([MAPPED]);
  });

  it("offers, then retries, only the refused requests today's mappings now reach", async () => {
    const { q, mapper, refused } = await setUp();
    const { items } = await q.enqueue([sonarr("/music/Artist/Album/01.flac")]);
    const stillUnmapped = items[0]?.id ?? -1;
    await q.refuseWaiting([{ id: stillUnmapped, reason: `${UNROUTABLE_MARK}'/music/Artist/Album/01.flac' matches no SERVER_PATH_MAPPINGS form and lies in no library.` }]);
    expect(await q.remappedCount()).toBe(0);

    addMapping(mapper);

    expect(await q.remappedCount()).toBe(1);
    expect(await q.retryRemapped()).toBe(1);
    expect(await q.getItem(refused)).toBeUndefined();
    expect((await q.listPending()).map((item) => item.folder)).toEqual([MAPPED]);
    // The one no form reaches stays in History with its reason.
    expect(await q.getItem(stillUnmapped)).toMatchObject({ state: "failed", lastError: expect.stringContaining(UNROUTABLE_MARK) });
    expect(await q.remappedCount()).toBe(0);
  });

  it("leaves a folder watcher's requests as they are (its paths are local ones, mapped when seen)", async () => {
    const { q, mapper } = await setUp();
    const local = "/tv/Watched Show/Season 01/E01.mkv";
    const { items } = await q.enqueue([{ path: local, kind: "file", source: "Watch (tv)", event: "Created", receivedPath: local }]);
    const id = items[0]?.id ?? -1;
    addMapping(mapper);

    expect(await q.retry(id)).toBe(true);

    expect(await q.getItem(id)).toMatchObject({ folder: "/tv/Watched Show/Season 01", state: "pending" });
  });
});
