import pino from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createPlex, type Plex } from "../src/plex/create-plex.ts";
import { startFakePlex, type FakePlex } from "./support/fake-plex.ts";
import { createManualClock, type ManualClock } from "./support/manual-clock.ts";
import { createQueueHarness, fileRequest, SCAN_DELAY_MS, type QueueHarness } from "./support/queue-harness.ts";

/** The Plex API target behind the real queue and dispatcher: what happens to a scan while Plex is not fine. */
let plex: FakePlex;
let clock: ManualClock;
let built: Plex;
let harness: QueueHarness;

async function setup(token?: string): Promise<void> {
  clock = createManualClock();
  built = createPlex({
    url: plex.url,
    token: token ?? plex.token,
    timeoutMs: 2_000,
    clock,
    log: pino({ level: "silent" }),
    checkBeforeScan: false,
    waitForExternalScanners: false,
    analyze: { type: "off", directory: true },
    emptyTrash: { enabled: false, maxFiles: 100, controlFiles: [], zeroDeleted: false },
    databasePath: "",
  });
  harness = await createQueueHarness({ targets: [built.apiTarget], clock });
}

beforeEach(async () => {
  plex = await startFakePlex({
    sections: [
      { key: "1", title: "Movies", type: "movie", locations: ["/data/Movies"] },
      { key: "2", title: "Movies 4K", type: "movie", locations: ["/data/Movies4K"] },
    ],
  });
});
afterEach(async () => {
  await harness.close();
  built.close();
  await plex.close();
});

const FILE = "/data/Movies/Heat (1995)/Heat (1995).mkv";

describe("Plex API target behind the queue", () => {
  it("keeps the scan while Plex is down and delivers it once Plex is back", async () => {
    await setup();
    plex.setDown("reset");
    await harness.touch(FILE);
    await harness.enqueue(fileRequest(FILE, "Radarr"));
    await harness.advance(SCAN_DELAY_MS);
    expect(plex.scans).toEqual([]);
    expect(harness.queue.listPending()).toHaveLength(1);
    expect(harness.logs.messages().some((m) => m.includes("Plex is unreachable"))).toBe(true);

    await harness.advance(10 * 60_000); // still down: the target stays held back, nothing is lost
    expect(harness.queue.listPending()).toHaveLength(1);

    plex.setDown(false);
    await harness.advance(10 * 60_000);
    expect(plex.scans.map((s) => [s.sectionId, s.path])).toEqual([["1", "/data/Movies/Heat (1995)"]]);
    expect(harness.queue.listPending()).toHaveLength(0);
  });

  it("keeps retrying, loudly, while Plex rejects the token", async () => {
    await setup("a-wrong-token-42");
    await harness.touch(FILE);
    await harness.enqueue(fileRequest(FILE, "Radarr"));
    await harness.advance(SCAN_DELAY_MS + 30 * 60_000);
    expect(plex.scans).toEqual([]);
    expect(harness.queue.listPending()).toHaveLength(1);
    const errors = harness.logs.records.filter((r) => r.level >= 50).map((r) => r.msg);
    expect(errors.some((m) => m.includes("Plex rejected the token"))).toBe(true);
  });

  it("finishes a folder in no section as a logged skip", async () => {
    await setup();
    const file = "/data/Music/Album/01.flac";
    await harness.touch(file);
    await harness.enqueue(fileRequest(file, "Lidarr"));
    await harness.advance(SCAN_DELAY_MS);
    expect(plex.scans).toEqual([]);
    expect(harness.queue.listPending()).toHaveLength(0);
  });
});
