import pino from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createPlex, type Plex } from "../src/targets/plex/create-plex.ts";
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

/**
 * The fake Plex answers over real sockets, which the manual clock does not wait for (the dispatcher counts a target's
 * answer as outside work): move the clock a minute at a time, with a moment of real time for the answer, until
 * `done` holds.
 */
async function advanceUntil(done: () => boolean | Promise<boolean>, what: string, maxMinutes = 60): Promise<void> {
  for (let minute = 0; minute < maxMinutes; minute++) {
    if (await done()) return;
    await harness.advance(60_000);
    for (let i = 0; i < 20 && !(await done()); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  }
  if (!(await done())) throw new Error(`${what}: not after ${maxMinutes} minutes (log: ${harness.logs.messages().join(" | ")})`);
}

describe("Plex API target behind the queue", () => {
  it("keeps the scan while Plex is down and delivers it once Plex is back", async () => {
    await setup();
    plex.setDown("reset");
    await harness.touch(FILE);
    await harness.enqueue(fileRequest(FILE, "Radarr"));
    await harness.advance(SCAN_DELAY_MS);
    await advanceUntil(() => harness.logs.messages().some((m) => m.includes("Plex is unreachable")), "Plex reported down");
    expect(plex.scans).toEqual([]);
    expect(await harness.queue.listPending()).toHaveLength(1);

    await advanceUntil(() => false, "", 10).catch(() => undefined); // still down for 10 minutes: nothing is lost
    expect(await harness.queue.listPending()).toHaveLength(1);

    plex.setDown(false);
    await advanceUntil(async () => (await harness.queue.listPending()).length === 0, "the scan was delivered");
    expect(plex.scans.map((s) => [s.sectionId, s.path])).toEqual([["1", "/data/Movies/Heat (1995)"]]);
  });

  it("keeps retrying, loudly, while Plex rejects the token", async () => {
    await setup("a-wrong-token-42");
    await harness.touch(FILE);
    await harness.enqueue(fileRequest(FILE, "Radarr"));
    await harness.advance(SCAN_DELAY_MS);
    await advanceUntil(() => harness.logs.records.some((r) => r.level >= 50 && r.msg.includes("Plex rejected the token")), "token rejected", 30);
    expect(plex.scans).toEqual([]);
    expect(await harness.queue.listPending()).toHaveLength(1);
    const errors = harness.logs.records.filter((r) => r.level >= 50).map((r) => r.msg);
    expect(errors.some((m) => m.includes("Plex rejected the token"))).toBe(true);
  });

  it("finishes a folder in no section as a logged skip", async () => {
    await setup();
    const file = "/data/Music/Album/01.flac";
    await harness.touch(file);
    await harness.enqueue(fileRequest(file, "Lidarr"));
    await harness.advance(SCAN_DELAY_MS);
    await advanceUntil(async () => (await harness.queue.listPending()).length === 0, "the folder was finished");
    expect(plex.scans).toEqual([]);
  });
});
