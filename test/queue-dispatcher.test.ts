import { afterEach, describe, expect, it, onTestFinished } from "vitest";
import { readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { createDispatcher } from "../src/queue/dispatch/dispatcher.ts";
import { TargetAuthError, TargetUnavailableError } from "../src/core/errors.ts";
import { ContainerNotFoundError, ScannerNotFoundError } from "../src/docker/errors.ts";
import type { ScanOutcome } from "../src/core/target.ts";
import { createFakeTarget, deferred } from "./support/fake-target.ts";
import {
  CHECK_DELAY_MS,
  SCAN_DELAY_MS,
  createQueueHarness,
  fileRequest,
  type HarnessOptions,
  type QueueHarness,
} from "./support/queue-harness.ts";
import { describeEachStore, type QueuePlace } from "./support/queue-adapters.ts";

const season = "/tv/Show/Season 01";
const episode = (n: number): string => `${season}/Show - S01E${String(n).padStart(2, "0")}.mkv`;

describeEachStore("the dispatcher", (adapter) => {
let harness: QueueHarness | undefined;
let place: QueuePlace | undefined;
/** The queue of this run's store: the default file in the harness's folder, or a PostgreSQL database. */
async function placed(options: HarnessOptions): Promise<HarnessOptions> {
  if (adapter.name === "sql.js") return options;
  place ??= await adapter.place();
  return { ...options, place };
}
async function setup(options: HarnessOptions): Promise<QueueHarness> {
  harness = await createQueueHarness(await placed(options));
  return harness;
}
afterEach(async () => {
  await harness?.close();
  harness = undefined;
  await place?.cleanup();
  place = undefined;
});

describe("delay and merging", () => {
  it("turns a burst of 24 episode requests within 2 s into exactly one scan of the season", async () => {
    const plex = createFakeTarget();
    const h = await setup({ targets: [plex] });
    for (let n = 1; n <= 24; n++) {
      await h.touch(episode(n));
      await h.enqueue(fileRequest(episode(n)));
      await h.advance(80);
    }
    // The last request came 1.84 s after the first: the season is due one delay after it.
    await h.advance(SCAN_DELAY_MS - 100);
    expect(plex.calls).toHaveLength(0);
    await h.advance(20);
    expect(plex.folders()).toEqual([season]);
    expect(plex.calls[0]?.context.sources).toHaveLength(24);
    expect(plex.calls[0]?.context.files).toHaveLength(24);
    await h.advance(10 * SCAN_DELAY_MS);
    expect(plex.calls).toHaveLength(1);
    expect(await h.queue.pendingCount()).toBe(0);
    expect((await h.queue.listHistory())[0]).toMatchObject({ folder: season, state: "done", targets: [{ target: "plex" }] });
    const messages = h.logs.messages();
    expect(messages).toContain("Scan request is now being processed...");
    expect(messages).toContain(`Finished scan of '${season}' by 'plex'; 0 folder(s) left in the queue.`);
    // The burst is one folder: one INFO line when it arrived (per webhook), one per scan, one per result.
    expect(h.logs.records.filter((r) => r.level >= 30 && r.msg.startsWith("Finished scan"))).toHaveLength(1);
    expect(messages).toContain(`File '${h.dir}/media${episode(24)}' exists on check 1 of 10.`);
  });

  it("moves waiting folders no server can scan into History as failed, each with its reason, never dispatched", async () => {
    const plex = createFakeTarget();
    const h = await setup({ targets: [plex] });
    const requests = [fileRequest("/lost/Show/Season 02/e1.mkv"), fileRequest("/lost/Show/Season 02/e2.mkv"), fileRequest("/lost/Other/x.mkv")];
    const { items } = await h.queue.enqueue(requests);
    expect(items[0]?.id).toBe(items[1]?.id);
    const ids = [items[0]?.id ?? 0, items[2]?.id ?? 0];
    const refused = ids.map((id, index) => ({ id, reason: `Not queued: nowhere for '${items[index * 2]?.folder ?? ""}'.` }));
    expect(await h.queue.refuseWaiting(refused)).toEqual(ids);
    expect(await h.queue.pendingCount()).toBe(0);
    const history = await h.queue.listHistory({ state: "failed" });
    expect(history.map((item) => [item.folder, item.lastError, item.requests.length]).sort()).toEqual([
      ["/lost/Other", "Not queued: nowhere for '/lost/Other'.", 1],
      ["/lost/Show/Season 02", "Not queued: nowhere for '/lost/Show/Season 02'.", 2],
    ]);
    // A folder no longer waiting is left as it is.
    expect(await h.queue.refuseWaiting(refused)).toEqual([]);
    await h.advance(10 * SCAN_DELAY_MS);
    expect(plex.calls).toHaveLength(0);
    // Retry works as for any failed folder.
    expect(await h.queue.retryFailed()).toBe(2);
    expect(await h.queue.pendingCount()).toBe(2);
  });

  it("waits for a trickle, but never longer than 3 × the delay", async () => {
    const plex = createFakeTarget();
    const h = await setup({ targets: [plex] });
    for (let n = 1; n <= 30; n++) {
      await h.touch(episode(n));
      await h.enqueue(fileRequest(episode(n)));
      if (plex.calls.length > 0) break;
      await h.advance(60_000);
    }
    expect(plex.calls).toHaveLength(1);
    expect(plex.calls[0]?.context.sources.length).toBe(9);
  });

  it("sends due folders by priority (lower first, unmatched = 0), then oldest first", async () => {
    const busy = deferred<ScanOutcome>();
    const plex = createFakeTarget("plex", () => busy.promise);
    const h = await setup({
      targets: [plex],
      queue: { priorities: { "1": ["/tv/"], "2": ["/music/"] } },
    });
    // A first scan keeps the target busy while the others become due one by one.
    await h.touch("/movies/First/f.mkv");
    await h.enqueue(fileRequest("/movies/First/f.mkv"));
    await h.advance(SCAN_DELAY_MS);
    expect(plex.calls).toHaveLength(1);
    for (const path of ["/music/A/a.flac", "/tv/B/b.mkv", "/movies/C/c.mkv", "/tv/D/d.mkv", "/movies/E/e.mkv"]) {
      await h.touch(path);
      await h.enqueue(fileRequest(path));
      await h.advance(1000);
    }
    await h.advance(SCAN_DELAY_MS);
    expect(plex.calls).toHaveLength(1);
    plex.respond = () => ({ status: "scanned" });
    busy.resolve({ status: "scanned" });
    await h.settle();
    expect(plex.folders()).toEqual(["/movies/First", "/movies/C", "/movies/E", "/tv/B", "/tv/D", "/music/A"]);
  });

  it("scans again when a request for the folder arrives during its scan", async () => {
    const gate = deferred<ScanOutcome>();
    const plex = createFakeTarget("plex", () => gate.promise);
    const h = await setup({ targets: [plex] });
    await h.touch(episode(1));
    await h.touch(episode(2));
    await h.enqueue(fileRequest(episode(1)));
    await h.advance(SCAN_DELAY_MS);
    expect(plex.calls).toHaveLength(1);
    await h.enqueue(fileRequest(episode(2)));
    plex.respond = () => ({ status: "scanned" });
    gate.resolve({ status: "scanned" });
    await h.settle();
    expect(await h.queue.pendingCount()).toBe(1);
    await h.advance(SCAN_DELAY_MS);
    expect(plex.calls).toHaveLength(2);
    expect(plex.calls[1]?.context.sources.map((s) => s.path)).toEqual([episode(1), episode(2)]);
    expect(await h.queue.pendingCount()).toBe(0);
  });

  it("picks up pending work restored from the file after a restart", async () => {
    const first = await createQueueHarness(await placed({ targets: [] }));
    // The restarted harness reuses the folder and does not own it: it goes once the test is over.
    onTestFinished(() => rm(first.dir, { recursive: true, force: true }));
    await first.touch(episode(1));
    await first.enqueue(fileRequest(episode(1)));
    await first.dispatcher.stop();
    await first.queue.close();
    const plex = createFakeTarget();
    const h = await setup({ targets: [plex], dir: first.dir, clock: first.clock });
    const restored = adapter.name === "sql.js" ? `Restored 1 scan request(s) from '${first.dir}/queue.db'.` : "1 folder(s) waiting";
    expect(h.logs.messages().some((line) => line.includes(restored))).toBe(true);
    await h.advance(SCAN_DELAY_MS);
    expect(plex.folders()).toEqual([season]);
  });
});

describe("file checks", () => {
  it("checks again later while a file is missing, without holding up other folders", async () => {
    const plex = createFakeTarget();
    const h = await setup({ targets: [plex] });
    await h.enqueue(fileRequest(episode(1)));
    await h.touch("/movies/Film/Film.mkv");
    await h.enqueue(fileRequest("/movies/Film/Film.mkv", "Radarr"));
    await h.advance(SCAN_DELAY_MS);
    expect(plex.folders()).toEqual(["/movies/Film"]);
    const local = `${h.dir}/media${episode(1)}`;
    expect(h.logs.messages()).toContain(
      `File '${local}' did not exist on check 1 of 10. Checking again in 60 seconds...`,
    );
    await h.touch(episode(1));
    await h.advance(CHECK_DELAY_MS);
    expect(plex.folders()).toEqual(["/movies/Film", season]);
    expect(h.logs.messages()).toContain(`File '${local}' exists on check 2 of 10.`);
  });

  it("gives up after the last check and keeps the folder as failed with the reason", async () => {
    const plex = createFakeTarget();
    const h = await setup({ targets: [plex], dispatcher: { maxFileChecks: 3 } });
    await h.enqueue(fileRequest(episode(1)));
    await h.advance(SCAN_DELAY_MS + 3 * CHECK_DELAY_MS);
    expect(plex.calls).toHaveLength(0);
    const local = `${h.dir}/media${episode(1)}`;
    expect(h.logs.messages()).toContain(`File '${local}' not found after 3 check(s); not scanning '${season}'.`);
    const [failed] = await h.queue.listHistory();
    expect(failed).toMatchObject({ state: "failed", fileChecks: 3 });
    expect(failed?.lastError).toContain(local);
  });

  it("falls back to the folder on exhaustion when SERVER_SCAN_FOLDER_ON_FILE_EXISTS_EXHAUSTION is on", async () => {
    const plex = createFakeTarget();
    const h = await setup({
      targets: [plex],
      dispatcher: { maxFileChecks: 2, scanFolderOnFileExistsExhaustion: true },
    });
    await h.touch(`${season}/`);
    await h.enqueue(fileRequest(episode(1)));
    await h.advance(SCAN_DELAY_MS + 2 * CHECK_DELAY_MS);
    expect(plex.folders()).toEqual([season]);
  });

  it("scans for the files that exist when others never appear", async () => {
    const plex = createFakeTarget();
    const h = await setup({ targets: [plex], dispatcher: { maxFileChecks: 2 } });
    await h.touch(episode(1));
    await h.enqueue(fileRequest(episode(1)), fileRequest(episode(2)));
    await h.advance(SCAN_DELAY_MS + 2 * CHECK_DELAY_MS);
    expect(plex.folders()).toEqual([season]);
    expect(plex.calls[0]?.context.files).toEqual([episode(1)]);
  });

  it("skips the check for deletions", async () => {
    const plex = createFakeTarget();
    const h = await setup({ targets: [plex] });
    await h.enqueue(fileRequest(episode(1), "Sonarr", { deleted: true, event: "EpisodeFileDelete" }));
    await h.advance(SCAN_DELAY_MS);
    expect(plex.folders()).toEqual([season]);
  });

  it("scans an unclassified path that turns out to be a folder as that folder", async () => {
    const plex = createFakeTarget();
    const h = await setup({ targets: [plex] });
    await h.touch("/tv/Show.Name.S01/");
    await h.enqueue({ path: "/tv/Show.Name.S01", kind: "unknown", source: "Manual", event: "Manual" });
    await h.advance(SCAN_DELAY_MS);
    expect(plex.folders()).toEqual(["/tv/Show.Name.S01"]);
  });
});

describe("failures and retries", () => {
  it("backs off from an unavailable target, probes it, and never holds back another target", async () => {
    const down = createFakeTarget("down", () => {
      throw new TargetUnavailableError("connect ECONNREFUSED 127.0.0.1:32400");
    });
    const up = createFakeTarget("up");
    const h = await setup({ targets: [down, up] });
    for (const name of ["A", "B", "C"]) {
      await h.touch(`/movies/${name}/${name}.mkv`);
      await h.enqueue(fileRequest(`/movies/${name}/${name}.mkv`, "Radarr"));
    }
    await h.advance(SCAN_DELAY_MS);
    // (With PostgreSQL a folder whose row another write holds at that moment is passed over for the next one.)
    expect(up.folders().sort()).toEqual(["/movies/A", "/movies/B", "/movies/C"]);
    expect(down.calls).toHaveLength(1);
    down.available = false;
    await h.advance(5_000);
    expect(down.probes).toBe(1);
    expect(down.calls).toHaveLength(1);
    down.available = true;
    down.respond = () => ({ status: "scanned" });
    await h.advance(10_000);
    expect(down.probes).toBe(2);
    expect(down.folders()).toEqual(["/movies/A", "/movies/A", "/movies/B", "/movies/C"]);
    expect(up.calls).toHaveLength(3);
    expect(await h.queue.pendingCount()).toBe(0);
  });

  it("retries a failing folder with backoff, passing the attempt number, and only to the target that failed", async () => {
    let failures = 2;
    const flaky = createFakeTarget("flaky", () => {
      if (failures-- > 0) throw new Error("scanner exited with code 1");
      return { status: "scanned" };
    });
    const steady = createFakeTarget("steady");
    const h = await setup({ targets: [flaky, steady] });
    await h.touch(episode(1));
    await h.enqueue(fileRequest(episode(1)));
    await h.advance(SCAN_DELAY_MS);
    expect(flaky.calls).toHaveLength(1);
    await h.advance(4_999);
    expect(flaky.calls).toHaveLength(1);
    await h.advance(1);
    expect(flaky.calls).toHaveLength(2);
    await h.advance(10_000);
    expect(flaky.calls.map((c) => c.context.attempt)).toEqual([1, 2, 3]);
    expect(steady.calls).toHaveLength(1);
    expect((await h.queue.listHistory())[0]).toMatchObject({ state: "done", attempts: 2 });
  });

  it("fails a folder after the retry limit, and a manual retry re-sends only to targets that had not finished", async () => {
    const broken = createFakeTarget("broken", () => {
      throw new Error("boom");
    });
    const fine = createFakeTarget("fine");
    const h = await setup({ targets: [broken, fine], dispatcher: { retryMaxMs: 60_000 } });
    await h.touch(episode(1));
    await h.enqueue(fileRequest(episode(1)));
    await h.advance(SCAN_DELAY_MS + 5 * 60_000);
    const [failed] = await h.queue.listHistory();
    expect(failed).toMatchObject({ state: "failed", lastError: "broken: boom" });
    expect(failed?.targets.map((t) => t.target)).toEqual(["fine"]);
    const attempts = broken.calls.length;
    expect(h.logs.messages().some((m) => m.startsWith(`Giving up on '${season}'`))).toBe(true);

    broken.respond = () => ({ status: "scanned" });
    expect(await h.queue.retry(failed?.id ?? -1)).toBe(true);
    await h.settle();
    await h.advance(1);
    expect(broken.calls).toHaveLength(attempts + 1);
    expect(fine.calls).toHaveLength(1);
    expect((await h.queue.listHistory())[0]).toMatchObject({ state: "done" });
  });

  it("gives up the delivery a target that stayed down failed for longer than the limit; a folder it never tried waits for it", async () => {
    const down = createFakeTarget("plex", () => {
      throw new TargetUnavailableError("503 Service Unavailable");
    });
    down.available = false;
    const h = await setup({ targets: [down], dispatcher: { retryMaxMs: 30 * 60_000 } });
    for (const name of ["A", "B"]) {
      await h.touch(`/movies/${name}/${name}.mkv`);
      await h.enqueue(fileRequest(`/movies/${name}/${name}.mkv`, "Radarr"));
    }
    await h.advance(SCAN_DELAY_MS);
    expect(down.calls).toHaveLength(1);
    await h.advance(40 * 60_000);
    // A was sent and failed for 30 minutes: given up. B was never sent (the target was down): it waits, nothing lost.
    expect((await h.queue.listHistory()).map((i) => [i.folder, i.state, i.deliveries.map((d) => [d.target, d.failed])])).toEqual([
      ["/movies/A", "failed", [["plex", true]]],
    ]);
    expect((await h.queue.listPending()).map((i) => i.folder)).toEqual(["/movies/B"]);
    down.available = true;
    down.respond = () => ({ status: "scanned" });
    await h.advance(5 * 60_000);
    expect(down.folders()).toEqual(["/movies/A", "/movies/B"]);
    expect(await h.queue.pendingCount()).toBe(0);
  });

  it("keeps each target's wait for a folder across a restart, and one target's failures hold back no other target", async () => {
    let failing = true;
    const flaky = createFakeTarget("flaky", () => {
      if (failing) throw new Error("scanner exited with code 1");
      return { status: "scanned" };
    });
    const steady = createFakeTarget("steady");
    const first = await createQueueHarness(await placed({ targets: [flaky, steady] }));
    onTestFinished(() => rm(first.dir, { recursive: true, force: true }));
    await first.touch(episode(1));
    await first.enqueue(fileRequest(episode(1)));
    await first.advance(SCAN_DELAY_MS);
    expect(flaky.calls).toHaveLength(1);
    expect(steady.calls).toHaveLength(1);
    const [waiting] = await first.queue.listPending();
    expect(waiting?.deliveries).toEqual([
      { target: "flaky", attempts: 1, nextAttemptAt: expect.any(Number), lastError: expect.stringContaining("scanner exited"), failed: false },
    ]);
    const retryAt = waiting?.deliveries[0]?.nextAttemptAt ?? 0;
    // A restart keeps the wait: nothing is sent to 'flaky' before it ends, and it is sent then.
    await first.dispatcher.stop();
    await first.queue.close();
    const h = await setup({ targets: [flaky, steady], dir: first.dir, clock: first.clock });
    failing = false;
    await h.advance(Math.max(0, retryAt - h.clock.now() - 1));
    expect(flaky.calls).toHaveLength(1);
    await h.advance(1_000);
    expect(flaky.calls).toHaveLength(2);
    expect(steady.calls).toHaveLength(1);
    expect(await h.queue.pendingCount()).toBe(0);
  });

  it.each([
    ["it rejects our credentials", () => new TargetAuthError("401 Unauthorized: check PLEX_TOKEN"), "401 Unauthorized"],
    ["its scanner is not where PLEX_SCANNER says", () => new ScannerNotFoundError("No Plex Media Scanner at /wrong/path"), "/wrong/path"],
    ["its container does not exist", () => new ContainerNotFoundError("plex", ["sonarr"]), 'No container named "plex"'],
  ])("holds a target back for 5 minutes, as a whole, when %s", async (_case, error, logged) => {
    const plex = createFakeTarget("plex", () => {
      throw error();
    });
    const h = await setup({ targets: [plex] });
    for (const n of [1, 2, 3]) {
      await h.touch(`/movies/M${String(n)}/M${String(n)}.mkv`);
      await h.enqueue(fileRequest(`/movies/M${String(n)}/M${String(n)}.mkv`, "Radarr"));
    }
    await h.advance(SCAN_DELAY_MS);
    // One folder found the problem; the others wait for the target instead of failing on their own.
    expect(plex.calls).toHaveLength(1);
    await h.advance(5 * 60_000 - 1);
    expect(plex.probes).toBe(0);
    await h.advance(1);
    expect(plex.probes).toBe(1);
    expect(h.logs.records.some((r) => r.level === 50 && r.msg.includes(logged))).toBe(true);
  });

  it("a folder failed while its target was down, then retried, gets a fresh wait: one error after the retry does not fail it", async () => {
    let failNext = 0;
    const plex = createFakeTarget("plex", () => {
      if (failNext > 0) {
        failNext -= 1;
        throw new TargetUnavailableError("503 Plex is starting");
      }
      return { status: "scanned" };
    });
    plex.available = false;
    failNext = 1_000;
    const h = await setup({ targets: [plex], dispatcher: { retryMaxMs: 30 * 60_000 } });
    await h.touch(episode(1));
    await h.enqueue(fileRequest(episode(1)));
    await h.advance(SCAN_DELAY_MS);
    // Down for 40 minutes: the folder is given up (SERVER_RETRY_MAX_HOURS here is 30 min).
    for (let i = 0; i < 10; i++) await h.advance(5 * 60_000);
    const [failed] = await h.queue.listHistory();
    expect(failed).toMatchObject({ state: "failed" });
    // Plex is back but answers one 503 while it starts: the retried folder waits a little, then is scanned.
    plex.available = true;
    failNext = 1;
    await h.queue.retry(failed!.id);
    await h.advance(1_000);
    expect((await h.queue.getItem(failed!.id))?.state).toBe("pending");
    await h.advance(5 * 60_000);
    expect((await h.queue.getItem(failed!.id))?.state).toBe("done");
  });

  it("does not hammer a folder the target keeps refusing while the target itself answers", async () => {
    // Plex answers GET / (the availability probe), but the refresh of this folder fails every time.
    const plex = createFakeTarget("plex", () => {
      throw new TargetUnavailableError("500 Internal Server Error from /library/sections/1/refresh");
    });
    const h = await setup({ targets: [plex] });
    await h.touch(episode(1));
    await h.enqueue(fileRequest(episode(1)));
    await h.advance(SCAN_DELAY_MS);
    await h.advance(10 * 60_000);
    // The folder's own backoff (5 s, 10 s, 20 s … up to 5 min) holds, whatever the probe says: ≤ 8 tries in 10 min,
    // where a probe that reset it sent the folder every ~5 s (120 tries).
    expect(plex.calls.length).toBeLessThanOrEqual(8);
    expect(plex.probes).toBeGreaterThan(0);
  });
});

describe("command hooks", () => {
  it("runs the before and after commands once per folder round, with the folder in the environment", async () => {
    const plex = createFakeTarget("plex");
    const other = createFakeTarget("other");
    const h = await setup({ targets: [plex, other] });
    const log = join(h.dir, "hooks.log");
    await h.dispatcher.stop();
    const withHooks = createDispatcher({
      queue: h.queue,
      targets: [plex, other],
      clock: h.clock,
      log: h.logs.log,
      localForms: (path) => [join(h.dir, "media", path)],
      maxFileChecks: 1,
      fileCheckDelayMs: CHECK_DELAY_MS,
      commands: {
        before: `echo "before $AUTOSCAN_FOLDER ($AUTOSCAN_SOURCES)" >> '${log}'`,
        after: `echo "after $AUTOSCAN_FOLDER" >> '${log}'; exit 1`,
        timeoutMs: 10_000,
      },
    });
    withHooks.start();
    await h.touch(episode(1));
    await h.queue.enqueue([fileRequest(episode(1))]);
    await h.clock.advance(SCAN_DELAY_MS, () => withHooks.whenIdle());
    expect(plex.calls).toHaveLength(1);
    expect(other.calls).toHaveLength(1);
    expect((await readFile(log, "utf8")).split("\n")).toEqual([`before ${season} (Sonarr)`, `after ${season}`, ""]);
    expect((await h.queue.listHistory())[0]?.state).toBe("done");
    await withHooks.stop();
  });
});

describe("concurrency and shutdown", () => {
  it("runs one scan at a time per target by default, and more when configured", async () => {
    for (const concurrency of [1, 3]) {
      const gates = [deferred<ScanOutcome>(), deferred<ScanOutcome>(), deferred<ScanOutcome>()];
      let call = 0;
      const plex = createFakeTarget("plex", () => gates[call++]?.promise ?? { status: "scanned" });
      const h = await createQueueHarness({ targets: [plex], dispatcher: { concurrency } });
      for (const name of ["A", "B", "C"]) {
        await h.touch(`/movies/${name}/x.mkv`);
        await h.enqueue(fileRequest(`/movies/${name}/x.mkv`, "Radarr"));
      }
      await h.advance(SCAN_DELAY_MS);
      expect(plex.calls).toHaveLength(concurrency);
      for (const gate of gates) gate.resolve({ status: "scanned" });
      await h.settle();
      expect(plex.calls).toHaveLength(3);
      await h.close();
    }
  });

  it("waits for a scan in progress on stop, then records it", async () => {
    const gate = deferred<ScanOutcome>();
    const plex = createFakeTarget("plex", () => gate.promise);
    const h = await setup({ targets: [plex] });
    await h.touch(episode(1));
    await h.enqueue(fileRequest(episode(1)));
    await h.advance(SCAN_DELAY_MS);
    const stopping = h.dispatcher.stop({ timeoutMs: 5_000 });
    setTimeout(() => gate.resolve({ status: "scanned" }), 50);
    expect(await stopping).toEqual({ drained: true, abandoned: 0 });
    expect((await h.queue.listHistory())[0]).toMatchObject({ state: "done" });
  });

  it("aborts a scan that outlives the stop timeout and keeps its folder queued", async () => {
    const plex = createFakeTarget("plex", (_folder, context) => {
      return new Promise((_resolve, reject) => {
        context.signal.addEventListener("abort", () => reject(new Error("aborted")));
      });
    });
    const h = await setup({ targets: [plex] });
    await h.touch(episode(1));
    await h.enqueue(fileRequest(episode(1)));
    await h.advance(SCAN_DELAY_MS);
    expect(await h.dispatcher.stop({ timeoutMs: 100 })).toEqual({ drained: false, abandoned: 1 });
    expect(await h.queue.pendingCount()).toBe(1);
    expect((await h.queue.listPending())[0]?.attempts).toBe(0);
  });

  it("queues but sends nothing without targets", async () => {
    const h = await setup({ targets: [] });
    await h.touch(episode(1));
    await h.enqueue(fileRequest(episode(1)));
    await h.advance(SCAN_DELAY_MS * 2);
    expect(await h.queue.pendingCount()).toBe(1);
    expect(h.logs.messages()).toContain("No scan targets are configured: scan requests are queued but not sent.");
  });
});
});
