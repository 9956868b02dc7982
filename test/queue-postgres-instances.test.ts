import pg from "pg";
import { afterEach, beforeEach, expect, it } from "vitest";
import { StoreUnavailableError } from "../src/core/errors.ts";
import type { ScanRequest } from "../src/core/scan.ts";
import { createPgScanQueue } from "../src/queue/open-scan-queue.ts";
import type { ScanQueue } from "../src/queue/scan-queue.ts";
import { captureLog } from "./support/capture-log.ts";
import { createManualClock, type ManualClock } from "./support/manual-clock.ts";
import { findPostgresBin, startPostgresCluster } from "./support/postgres-cluster.ts";
import { createTestDatabase, describeWithPostgres, dropTestDatabase } from "./support/postgres.ts";

/**
 * Several instances on one PostgreSQL queue, in one process (two queues with their own ids on one database, on one
 * manual clock): who dispatches a due folder, what a lapsed claim means, merging into a folder another instance is
 * scanning, requests for one folder arriving at two instances at once. The whole service with SIGKILL is
 * `multi-instance.test.ts`.
 */
const DELAY = 60_000;
const LEASE = 15_000;
const episode = (show: string, n: number): ScanRequest => ({
  path: `/tv/${show}/Season 01/${show} - S01E${String(n).padStart(2, "0")}.mkv`,
  kind: "file",
  source: "Sonarr",
  event: "Download",
});

describeWithPostgres("several instances on one PostgreSQL queue", () => {
  let url: string;
  let clock: ManualClock;
  const logs = captureLog();
  const open: ScanQueue[] = [];
  const instance = async (name: string): Promise<ScanQueue> => {
    const queue = await createPgScanQueue({ url, instance: name, leaseMs: LEASE, clock, timeFromClock: true, log: logs.log, scanDelayMs: DELAY });
    open.push(queue);
    return queue;
  };

  beforeEach(async () => {
    url = await createTestDatabase();
    clock = createManualClock();
    logs.records.length = 0;
  });
  afterEach(async () => {
    for (const queue of open.splice(0)) await queue.close().catch(() => undefined);
    await dropTestDatabase(url);
  });

  it("gives each due folder to one instance, and the other instance's folders stay out of reach while it renews", async () => {
    const [a, b] = [await instance("a"), await instance("b")];
    await a.enqueue([episode("One", 1), episode("Two", 1), episode("Three", 1)]);
    await clock.advance(DELAY);
    const none = new Set<number>();
    const [takenByA, takenByB] = await Promise.all([a.dueForCheck(clock.now(), 2, none), b.dueForCheck(clock.now(), 10, none)]);
    const ids = [...takenByA, ...takenByB].map((item) => item.id).sort();
    expect(ids).toHaveLength(3);
    expect(new Set(ids).size).toBe(3);
    // Asked again, each sees only its own (and nothing new): the other's claims hold.
    expect((await b.dueForCheck(clock.now(), 10, new Set(takenByB.map((i) => i.id)))).length).toBe(0);
    expect((await a.dueForCheck(clock.now(), 10, new Set(takenByA.map((i) => i.id)))).length).toBe(0);
  });

  it("lets a survivor take over a folder whose holder stopped renewing, and the old holder no longer starts its scan", async () => {
    const [a, b] = [await instance("a"), await instance("b")];
    await a.enqueue([episode("One", 1)]);
    await clock.advance(DELAY);
    const [item] = await a.dueForCheck(clock.now(), 1, new Set());
    if (!item) throw new Error("not due");
    await a.recordCheck(item.id, item.rev, { kind: "ready", checks: 1, scanFolder: item.folder, files: [] });
    const [again] = await a.dueForTarget("plex", clock.now(), 1, new Set());
    expect((await a.beginAttempt(item.id, again?.rev ?? 0))?.go).toBe(true);
    // a "dies" mid-scan: no renewal (the manual clock moves past its lease; its real-time renewal uses the same clock,
    // so it is closed without releasing by simply never renewing again) — b must wait out the lease.
    expect(await b.dueForTarget("plex", clock.now(), 1, new Set())).toEqual([]);
    expect(await b.nextWakeAt(clock.now())).toBeLessThanOrEqual(clock.now() + LEASE + 1);
    await clock.advance(LEASE + 1);
    const [taken] = await b.dueForTarget("plex", clock.now(), 1, new Set());
    expect(taken?.id).toBe(item.id);
    const warning = logs.records.find((r) => String(r.msg).startsWith("Took over"));
    expect(warning).toMatchObject({ id: item.id, from: "a", unfinished: 1 });
    // The old holder's attempt of its own is refused now: it lost the claim.
    expect(await a.beginAttempt(item.id, item.rev)).toBeUndefined();
    expect((await b.beginAttempt(item.id, item.rev))?.go).toBe(true);
    expect(await b.recordScan(item.id, item.rev, "plex", { status: "scanned" }, ["plex"])).toEqual({ completed: true });
  });

  it("merges a request arriving at another instance into a folder being scanned: that scan does not count, the folder is scanned again", async () => {
    const [a, b] = [await instance("a"), await instance("b")];
    await a.enqueue([episode("One", 1)]);
    await clock.advance(DELAY);
    const [item] = await a.dueForCheck(clock.now(), 1, new Set());
    if (!item) throw new Error("not due");
    await a.recordCheck(item.id, item.rev, { kind: "ready", checks: 1, scanFolder: item.folder, files: [] });
    // Checked folders are let go; the next ask for a target claims it again.
    expect((await a.dueForTarget("plex", clock.now(), 1, new Set())).map((i) => i.id)).toEqual([item.id]);
    expect((await a.beginAttempt(item.id, item.rev))?.go).toBe(true);
    const merged = await b.enqueue([episode("One", 2)]);
    expect(merged.items).toEqual([{ id: item.id, folder: "/tv/One/Season 01", merged: true }]);
    expect(await a.recordScan(item.id, item.rev, "plex", { status: "scanned" }, ["plex"])).toBeUndefined();
    const view = await b.getItem(item.id);
    expect(view).toMatchObject({ state: "pending", requests: [{ path: episode("One", 1).path }, { path: episode("One", 2).path }] });
  });

  it("keeps one waiting item per folder when two instances take requests for it at the same moment", async () => {
    const [a, b] = [await instance("a"), await instance("b")];
    const calls = Array.from({ length: 40 }, (_, n) => (n % 2 === 0 ? a : b).enqueue([episode("Same", n + 1), episode(`Other ${String(n % 5)}`, n)]));
    await Promise.all(calls);
    const pending = await a.listPending({ limit: 100 });
    expect(pending.map((item) => item.folder).sort()).toEqual([
      "/tv/Other 0/Season 01", "/tv/Other 1/Season 01", "/tv/Other 2/Season 01", "/tv/Other 3/Season 01", "/tv/Other 4/Season 01",
      "/tv/Same/Season 01",
    ]);
    expect(pending.find((item) => item.folder === "/tv/Same/Season 01")?.requests).toHaveLength(40);
  });

  it("never deadlocks when three instances write overlapping folders in different orders at once: every request is stored", async () => {
    const queues = [await instance("a"), await instance("b"), await instance("c")];
    const shows = ["A", "B", "C", "D", "E", "F"];
    let seed = 7;
    const next = (n: number): number => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
    let sent = 0;
    const refused: string[] = [];
    for (let round = 0; round < 6; round++) {
      // Each instance gets a burst of writes in the same turn, their folders in an order of its own.
      const calls = queues.flatMap((queue) =>
        Array.from({ length: 30 }, () => {
          const requests = [episode(shows[next(6)] ?? "A", ++sent), episode(shows[next(6)] ?? "B", ++sent)];
          return queue.enqueue(requests).catch((error: unknown) => void refused.push(String(error)));
        }),
      );
      await Promise.all(calls);
    }
    expect(refused).toEqual([]);
    const pending = await queues[0]?.listPending({ limit: 100 });
    expect(pending?.reduce((sum, item) => sum + item.requests.length, 0)).toBe(sent);
    // Not one deadlock was even detected (and silently run again): PostgreSQL's own count for this database.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      const stats = await admin.query<{ deadlocks: string }>("SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()");
      expect(Number(stats.rows[0]?.deadlocks)).toBe(0);
    } finally {
      await admin.end();
    }
  });

  it("hands a cleanly stopped instance's folders to the others at once", async () => {
    const [a, b] = [await instance("a"), await instance("b")];
    await a.enqueue([episode("One", 1)]);
    await clock.advance(DELAY);
    expect(await a.dueForCheck(clock.now(), 1, new Set())).toHaveLength(1);
    expect(await b.dueForCheck(clock.now(), 1, new Set())).toHaveLength(0);
    await a.close();
    expect(await b.dueForCheck(clock.now(), 1, new Set())).toHaveLength(1);
  });

  it("lets another instance take a folder this one let go of (it waits here for an anchor)", async () => {
    const [a, b] = [await instance("a"), await instance("b")];
    await a.enqueue([episode("One", 1)]);
    await clock.advance(DELAY);
    const [item] = await a.dueForCheck(clock.now(), 1, new Set());
    if (!item) throw new Error("not due");
    expect(await b.dueForCheck(clock.now(), 1, new Set())).toEqual([]);
    await a.release?.(item.id);
    expect((await b.dueForCheck(clock.now(), 1, new Set())).map((i) => i.id)).toEqual([item.id]);
    // No takeover: it was let go, not lost.
    expect(logs.records.some((r) => String(r.msg).startsWith("Took over"))).toBe(false);
  });

  it("tells another instance's dispatcher about new work", async () => {
    const [a, b] = [await instance("a"), await instance("b")];
    const heard: number[] = [];
    b.onWork((at) => heard.push(at));
    await a.enqueue([episode("One", 1)]);
    for (let i = 0; i < 200 && heard.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(heard).toEqual([clock.now() + DELAY]);
  });
});

describeWithPostgres("the PostgreSQL queue when the database goes away", () => {
  it("answers requests with 'unavailable' (nothing stored) while it is down, says so in its health, and takes them again after", async () => {
    const found = findPostgresBin();
    if (!found.ok) throw new Error(found.reason);
    const cluster = await startPostgresCluster(found);
    const logs = captureLog();
    const clock = createManualClock();
    const queue = await createPgScanQueue({ url: cluster.url, instance: "a", leaseMs: LEASE, clock, timeFromClock: true, log: logs.log, scanDelayMs: DELAY, probeIntervalMs: 100 });
    try {
      const stored = await queue.enqueue([episode("Before", 1)]);
      await cluster.pause();
      await expect(queue.enqueue([episode("During", 1)])).rejects.toBeInstanceOf(StoreUnavailableError);
      expect(queue.health()).toMatchObject({ writable: false, problem: expect.stringContaining("cannot be reached") });
      expect(queue.writable()).toBe(false);
      await cluster.resume();
      for (let i = 0; i < 300 && !queue.health().writable; i++) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(queue.health()).toEqual({ writable: true });
      const after = await queue.enqueue([episode("After", 1)]);
      const folders = (await queue.listPending()).map((item) => item.folder);
      expect(folders).toEqual(["/tv/Before/Season 01", "/tv/After/Season 01"]);
      expect(stored.items[0]?.id).toBeLessThan(after.items[0]?.id ?? 0);
    } finally {
      await queue.close().catch(() => undefined);
      await cluster.stop();
    }
  }, 60_000);
});
