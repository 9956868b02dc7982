import fc from "fast-check";
import { expect, it } from "vitest";
import { constants } from "node:fs";
import { access, copyFile, mkdir, mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isDeepStrictEqual } from "node:util";
import type { Clock } from "../src/core/clock.ts";
import type { EnqueueResult, PathKind, ScanRequest } from "../src/core/scan.ts";
import type { ScanOutcome } from "../src/core/target.ts";
import type { CheckResult, WorkItem } from "../src/queue/dispatch/dispatch-port.ts";
import { type ScanQueue } from "../src/queue/scan-queue.ts";
import { createScanQueue } from "../src/queue/open-scan-queue.ts";
import { captureLog } from "./support/capture-log.ts";
import { describeEachStore, type QueueAdapter } from "./support/queue-adapters.ts";
import { createManualClock } from "./support/manual-clock.ts";
import { createQueueModel, DAY_MS, type ModelSettings, type QueueModel } from "./support/queue-model.ts";

/**
 * The queue store against a plain in-memory model (`support/queue-model.ts`, the spec). Random sequences of:
 * enqueues (merges, repeats, NFC/NFD spellings of one folder, a call the store refuses alone), file checks and scans
 * on one or two targets (started and ended as separate steps, so new work can arrive during them, or as a whole
 * dispatcher pass), failures, retries, deletes, history pruning by the maintenance timer, writes made in the same
 * turn (one log record), and restarts with new settings: clean; after a crash (the data directory copied while the
 * queue is open, as `crashCopy` in `queue-durability.test.ts`, often during a checkpoint); after a crash with a write
 * on its way (kept or lost, but only as a whole); after a crash that also lost `queue.db`. After every step the live
 * queue's pages, items and counts equal the model's; after every restart, and at the end, so does what the
 * dispatcher is handed.
 *
 * A failure is shrunk to a short list of steps; `QUEUE_MODEL_SEED` replays a run, `QUEUE_MODEL_RUNS` runs more;
 * `QM_TRACE=1` prints each step and stops at the first failure (no shrinking: a PostgreSQL run takes seconds).
 */
const HOUR_MS = 60 * 60 * 1000;
const MAINTENANCE_MS = 6 * HOUR_MS;
const UNKNOWN_ID = 1_000_000;
const RUNS = Number(process.env.QUEUE_MODEL_RUNS ?? 40);
const PG_RUNS = Number(process.env.QUEUE_MODEL_RUNS ?? 8);

// ---- Settings (may change at every restart, as a config edit would) ----------------------------------------------

/** `SERVER_SCAN_PRIORITIES` values with the priority each of the test's folders gets under them, written out. */
const PRIORITIES = [
  { option: {}, of: (): number => 0 },
  {
    option: { "1": ["/tv/"], "2": ["/music/"] },
    of: (folder: string): number => (folder.startsWith("/tv/") ? 1 : folder.startsWith("/music/") ? 2 : 0),
  },
  {
    option: { "3": ["/tv/"], "5": ["/movies/"] },
    of: (folder: string): number => (folder.startsWith("/tv/") ? 3 : folder.startsWith("/movies/") ? 5 : 0),
  },
] as const;

interface Settings {
  readonly delayMs: number;
  readonly priorities: number;
  readonly historyMaxDays: number;
  readonly historyMaxRows: number;
  /** With `checkpointRatio: 0`: 1 checkpoints after every write, so crashes land in checkpoints often. */
  readonly checkpointBytes: number;
  readonly targets: readonly string[];
}

const settingsArb: fc.Arbitrary<Settings> = fc.record({
  delayMs: fc.constantFrom(1000, 60_000),
  priorities: fc.constantFrom(0, 1, 2),
  historyMaxDays: fc.constantFrom(3, 1),
  historyMaxRows: fc.constantFrom(10_000, 2, 5),
  checkpointBytes: fc.constantFrom(1 << 20, 1, 2048),
  targets: fc.constantFrom(["plex"], ["plex", "jellyfin"]),
});

const modelSettings = (s: Settings): ModelSettings => ({
  delayMs: s.delayMs,
  priorityOf: PRIORITIES[s.priorities]?.of ?? (() => 0),
  historyMaxDays: s.historyMaxDays,
  historyMaxRows: s.historyMaxRows,
  maintenanceIntervalMs: MAINTENANCE_MS,
});

// ---- Requests -----------------------------------------------------------------------------------------------------

/** Few folders, so requests merge. `Cafe\u0301` is `Café` spelled in NFD: the same folder, a different path. */
const FOLDERS = ["/tv/Show/Season 01", "/movies/Film (2020)", "/music/Caf\u00e9", "/music/Cafe\u0301", "/tv/Show"];

const requestArb: fc.Arbitrary<ScanRequest> = fc
  .record({
    folder: fc.nat({ max: FOLDERS.length - 1 }),
    form: fc.constantFrom("file", "folder", "folder/"),
    file: fc.constantFrom("e1.mkv", "e2.mkv"),
    kind: fc.constantFrom<PathKind>("file", "folder", "unknown"),
    deleted: fc.boolean(),
    source: fc.constantFrom("Sonarr", "Radarr", "Manual"),
    event: fc.constantFrom("Download", "Rename"),
    received: fc.boolean(),
  })
  .map((r) => {
    const folder = FOLDERS[r.folder] ?? "/";
    const path = r.form === "file" ? `${folder}/${r.file}` : r.form === "folder/" ? `${folder}/` : folder;
    return {
      path,
      kind: r.kind,
      source: r.source,
      event: r.event,
      ...(r.deleted ? { deleted: true } : {}),
      ...(r.received ? { receivedPath: `/mnt/remote${path}` } : {}),
    };
  });

/** A request the store refuses while building its write (the `kind` CHECK): the whole call fails, alone. */
const BOGUS: ScanRequest = { path: "/tv/Bogus/x.mkv", kind: "bogus" as PathKind, source: "Sonarr", event: "Download" };

interface Call {
  readonly requests: readonly ScanRequest[];
  readonly bogus: boolean;
}

const callArb: fc.Arbitrary<Call> = fc.record({
  requests: fc.array(requestArb, { minLength: 1, maxLength: 3 }),
  bogus: fc.oneof({ arbitrary: fc.constant(false), weight: 9 }, { arbitrary: fc.constant(true), weight: 1 }),
});

// ---- Steps --------------------------------------------------------------------------------------------------------

/** How a file check or a scan in progress ends. */
interface Ending {
  readonly check: "ready" | "wait" | "failed";
  readonly scan: "scanned" | "skipped" | "error" | "interrupted";
  /** A `wait`'s or a failure's delay. */
  readonly ms: number;
  readonly retryMaxMs: number;
}

/** One write through the public API. */
type Write =
  | { readonly w: "enqueue"; readonly call: Call }
  /** One check or scan in progress ends (with the `rev` it started with). */
  | ({ readonly w: "finish"; readonly pick: number } & Ending)
  | { readonly w: "retry"; readonly pick: number }
  | { readonly w: "remove"; readonly pick: number }
  | { readonly w: "failWaiting"; readonly target: number; readonly agoMs: number };

type Op =
  /**
   * Writes made in the same turn of the event loop, as webhooks and the dispatcher make them: they go to the disk
   * in one log record, each applied in the order it was made, and each resolves or rejects on its own.
   */
  | { readonly k: "writes"; readonly writes: readonly Write[] }
  | { readonly k: "advance"; readonly ms: number }
  /** The next maintenance tick: history pruned. */
  | { readonly k: "prune" }
  /**
   * `dueForCheck`, and a file check of one of the items starts. With `sleep`, when nothing is due the clock first
   * moves to the next time something is (as the dispatcher sleeps until `nextWakeAt`).
   */
  | { readonly k: "check"; readonly sleep: boolean; readonly limit: number; readonly pick: number }
  /** `dueForTarget`, and `beginAttempt` of one of the items; `sleep` as for `check`. */
  | { readonly k: "scan"; readonly sleep: boolean; readonly target: number; readonly limit: number; readonly pick: number }
  /**
   * One whole dispatcher pass, one write after the other: every due check ends as `check` says, then every due
   * folder is scanned by each target and ends as `scan` says.
   */
  | ({ readonly k: "round" } & Ending)
  /**
   * A restart with (maybe) new settings: `clean` closes and reopens the directory; `crash` opens a copy of the files
   * taken while the queue is open; `torn` does that with one enqueue on its way, the copy starting `ticks` event-loop
   * turns after the call; `lost` is a crash after which `queue.db` is gone too (its previous snapshot and the log
   * since rebuild it).
   */
  | {
      readonly k: "reopen";
      readonly how: "crash" | "clean" | "torn" | "lost";
      readonly settings: Settings;
      readonly requests: readonly ScanRequest[];
      readonly ticks: number;
    };

const checkResultArb = fc.oneof(
  { weight: 4, arbitrary: fc.constant("ready" as const) },
  { weight: 1, arbitrary: fc.constantFrom("wait" as const, "failed" as const) },
);
const scanOutcomeArb = fc.oneof(
  { weight: 4, arbitrary: fc.constant("scanned" as const) },
  { weight: 1, arbitrary: fc.constantFrom("skipped" as const, "error" as const) },
);

const endingArb = (scan: fc.Arbitrary<Ending["scan"]>): fc.Arbitrary<Ending> =>
  fc.record({
    check: checkResultArb,
    scan,
    ms: fc.constantFrom(0, 1000, 60_000),
    retryMaxMs: fc.constantFrom(DAY_MS, 0, 30_000),
  });

const writeArb: fc.Arbitrary<Write> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ w: fc.constant("enqueue" as const), call: callArb }) },
  {
    weight: 6,
    arbitrary: fc
      .tuple(
        fc.nat({ max: 4 }),
        endingArb(fc.oneof({ weight: 5, arbitrary: scanOutcomeArb }, { weight: 1, arbitrary: fc.constant("interrupted" as const) })),
      )
      .map(([pick, ending]) => ({ w: "finish" as const, pick, ...ending })),
  },
  { weight: 2, arbitrary: fc.record({ w: fc.constant("retry" as const), pick: fc.nat({ max: 9 }) }) },
  { weight: 1, arbitrary: fc.record({ w: fc.constant("remove" as const), pick: fc.nat({ max: 9 }) }) },
  {
    weight: 1,
    arbitrary: fc.record({
      w: fc.constant("failWaiting" as const),
      target: fc.nat({ max: 1 }),
      agoMs: fc.constantFrom(0, 1000, 60_000),
    }),
  },
);

const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 16,
    arbitrary: fc.record({
      k: fc.constant("writes" as const),
      writes: fc.array(writeArb, { minLength: 1, maxLength: 3 }),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      k: fc.constant("advance" as const),
      ms: fc.oneof(fc.integer({ min: 0, max: 3000 }), fc.constantFrom(60_000, 180_000, MAINTENANCE_MS, DAY_MS, 2 * DAY_MS)),
    }),
  },
  { weight: 1, arbitrary: fc.record({ k: fc.constant("prune" as const) }) },
  {
    weight: 4,
    arbitrary: fc.record({
      k: fc.constant("check" as const),
      sleep: fc.boolean(),
      limit: fc.constantFrom(10, 1, 2),
      pick: fc.nat({ max: 4 }),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      k: fc.constant("scan" as const),
      sleep: fc.boolean(),
      target: fc.nat({ max: 1 }),
      limit: fc.constantFrom(10, 1, 2),
      pick: fc.nat({ max: 4 }),
    }),
  },
  { weight: 3, arbitrary: endingArb(scanOutcomeArb).map((ending) => ({ k: "round" as const, ...ending })) },
  {
    weight: 2,
    arbitrary: fc.record({
      k: fc.constant("reopen" as const),
      how: fc.constantFrom("crash" as const, "clean" as const, "torn" as const, "lost" as const),
      settings: settingsArb,
      requests: fc.array(requestArb, { minLength: 1, maxLength: 2 }),
      ticks: fc.nat({ max: 3 }),
    }),
  },
);

// ---- The clock ----------------------------------------------------------------------------------------------------

/**
 * The manual clock, plus a way to know that the queue's maintenance loop has finished a tick's work (prune, then a
 * checkpoint) and waits for its next tick: `sleep` hands out a thenable that notes when it is awaited. Without this
 * a tick's prune could run late, at whatever time the clock shows by then.
 */
function createTestClock(): { readonly clock: Clock; advance(ms: number): Promise<void> } {
  const inner = createManualClock();
  let latest = { awaited: true };
  const clock: Clock = {
    now: () => inner.now(),
    sleep(ms, signal) {
      const slept = inner.sleep(ms, signal);
      const mark = { awaited: false };
      latest = mark;
      const thenable = {
        then(onDone?: () => unknown, onError?: (error: unknown) => unknown) {
          mark.awaited = true;
          return slept.then(onDone, onError);
        },
      };
      return thenable as unknown as Promise<void>;
    },
  };
  async function settle(): Promise<void> {
    await new Promise((resolve) => setImmediate(resolve));
    const deadline = Date.now() + 10_000;
    while (!latest.awaited) {
      if (Date.now() > deadline) throw new Error("the queue's maintenance did not finish a tick within 10 s");
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
  }
  return { clock, advance: (ms) => inner.advance(ms, settle) };
}

// ---- One run ------------------------------------------------------------------------------------------------------

type InFlight =
  | { readonly kind: "check"; readonly item: WorkItem }
  | { readonly kind: "scan"; readonly item: WorkItem; readonly target: string };

interface Live {
  queue: ScanQueue;
  dir: string;
  settings: Settings;
}

/**
 * The crash here is a copy of the files as the kernel holds them, so what fsync guarantees is not under test
 * (`queue-kill.test.ts` kills a real process for that): a tmpfs, where one is writable, makes a run about 10× faster.
 */
async function makeScratchDir(): Promise<{ dir: string; cleanup(): Promise<void> }> {
  const base = await access("/dev/shm", constants.W_OK).then(
    () => "/dev/shm",
    () => tmpdir(),
  );
  const dir = await mkdtemp(join(base, "autoscan-model-"));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

async function runSteps(adapter: QueueAdapter, initial: Settings, ops: readonly Op[]): Promise<void> {
  // PostgreSQL keeps the queue in its own database; a restart there is a close and an open (what PostgreSQL makes
  // durable is its business: the SIGKILL tests check a whole instance dying).
  const pgPlace = adapter.name === "postgresql" ? await adapter.place() : undefined;
  const temp = await makeScratchDir();
  const { clock, advance } = createTestClock();
  const logs = captureLog("warn");
  let dirs = 0;
  const newDir = async (): Promise<string> => {
    const dir = join(temp.dir, `data-${String(dirs++)}`);
    await mkdir(dir);
    return dir;
  };
  const open = (dir: string, s: Settings): Promise<ScanQueue> => {
    const common = {
      clock,
      log: logs.log,
      scanDelayMs: s.delayMs,
      priorities: PRIORITIES[s.priorities]?.option ?? {},
      historyMaxDays: s.historyMaxDays,
      historyMaxRows: s.historyMaxRows,
      maintenanceIntervalMs: MAINTENANCE_MS,
    };
    if (pgPlace) return pgPlace.open(common);
    return createScanQueue({
      file: join(dir, "queue.db"),
      clock,
      log: logs.log,
      scanDelayMs: s.delayMs,
      priorities: PRIORITIES[s.priorities]?.option ?? {},
      historyMaxDays: s.historyMaxDays,
      historyMaxRows: s.historyMaxRows,
      checkpointBytes: s.checkpointBytes,
      checkpointRatio: 0,
      maintenanceIntervalMs: MAINTENANCE_MS,
      lock: false,
    });
  };

  const firstDir = await newDir();
  const live: Live = { queue: await open(firstDir, initial), dir: firstDir, settings: initial };
  let model: QueueModel = createQueueModel(modelSettings(initial), clock.now());
  let inFlight: InFlight[] = [];
  const seen = new Set<number>();
  const ids = (): number[] => [...seen].sort((a, b) => a - b).concat(UNKNOWN_ID);

  try {
    await expectSame(live.queue, model, clock, ids(), "at the first open");
    for (const [step, op] of ops.entries()) {
      const where = `after step ${String(step)} (${op.k})`;
      if (process.env.QM_TRACE) console.error(new Date().toISOString(), where, JSON.stringify(op).slice(0, 300));
      switch (op.k) {
        case "writes": {
          // The embedded store: every call is made before any is awaited, each puts its write in line at once, in this
          // order (one log record). PostgreSQL writes each in a transaction of its own, and concurrent transactions
          // commit in no set order: there each call is made once the one before it has settled.
          const made: Made[] = [];
          for (const write of op.writes) {
            const call = launch(write);
            if (!call) continue;
            made.push(call);
            if (pgPlace) await call.result.catch(() => undefined);
          }
          await expectResults(made, where);
          break;
        }
        case "advance":
          await advance(op.ms);
          model.advance(op.ms);
          break;
        case "prune": {
          const ms = model.state.nextMaintenanceAt - model.state.now;
          await advance(ms);
          model.advance(ms);
          break;
        }
        case "check": {
          const skip = new Set(inFlight.filter((f) => f.kind === "check").map((f) => f.item.id));
          if (op.sleep && model.dueForCheck(op.limit, skip).length === 0) await sleepUntilReady();
          const due = await live.queue.dueForCheck(clock.now(), op.limit, skip);
          expect(due, `${where}: dueForCheck`).toEqual(model.dueForCheck(op.limit, skip));
          const item = due[op.pick % Math.max(1, due.length)];
          if (item) inFlight.push({ kind: "check", item });
          break;
        }
        case "scan": {
          const target = live.settings.targets[op.target % live.settings.targets.length] ?? "plex";
          const skip = new Set(inFlight.filter((f) => f.kind === "scan" && f.target === target).map((f) => f.item.id));
          if (op.sleep && model.dueForTarget(target, op.limit, skip).length === 0) await sleepUntilReady();
          const due = await live.queue.dueForTarget(target, clock.now(), op.limit, skip);
          expect(due, `${where}: dueForTarget(${target})`).toEqual(model.dueForTarget(target, op.limit, skip));
          const item = due[op.pick % Math.max(1, due.length)];
          if (!item) break;
          const start = await live.queue.beginAttempt(item.id, item.rev);
          expect(start, `${where}: beginAttempt`).toEqual(model.beginAttempt(item.id, item.rev));
          if (start?.go) inFlight.push({ kind: "scan", item, target });
          break;
        }
        case "round": {
          const none = new Set<number>();
          const checks = await live.queue.dueForCheck(clock.now(), 1000, none);
          expect(checks, `${where}: dueForCheck`).toEqual(model.dueForCheck(1000, none));
          for (const item of checks) await expectResults([ending({ kind: "check", item }, op)], where);
          for (const target of live.settings.targets) {
            const scans = await live.queue.dueForTarget(target, clock.now(), 1000, none);
            expect(scans, `${where}: dueForTarget(${target})`).toEqual(model.dueForTarget(target, 1000, none));
            for (const item of scans) {
              const start = await live.queue.beginAttempt(item.id, item.rev);
              expect(start, `${where}: beginAttempt`).toEqual(model.beginAttempt(item.id, item.rev));
              if (start?.go) await expectResults([ending({ kind: "scan", item, target }, op)], where);
            }
          }
          break;
        }
        case "reopen": {
          model = await reopen(op, model);
          inFlight = [];
          await expectDispatchSame(live, model, clock, where);
          break;
        }
      }
      for (const item of model.state.items) seen.add(item.id);
      await expectSame(live.queue, model, clock, ids(), where);
    }
    model = await reopen({ k: "reopen", how: "crash", settings: live.settings, requests: [], ticks: 0 }, model);
    await expectSame(live.queue, model, clock, ids(), "after the last crash");
    await expectDispatchSame(live, model, clock, "after the last crash");
  } finally {
    await live.queue.close().catch(() => {});
    await temp.cleanup();
    await pgPlace?.cleanup();
  }

  /** Makes the write's call on the live queue; `expected` later applies it to the model. */
  function launch(write: Write): Made | undefined {
    const pickId = (pick: number): number => ids()[pick % ids().length] ?? UNKNOWN_ID;
    switch (write.w) {
      case "enqueue": {
        const { call } = write;
        return {
          what: "enqueue",
          result: live.queue.enqueue(call.bogus ? [...call.requests, BOGUS] : call.requests),
          expected: () => (call.bogus ? REFUSED : { items: model.enqueue(call.requests) }),
        };
      }
      case "finish": {
        const entry = inFlight.splice(write.pick % Math.max(1, inFlight.length), 1)[0];
        return entry && ending(entry, write);
      }
      case "retry": {
        const id = pickId(write.pick);
        return { what: `retry(${String(id)})`, result: live.queue.retry(id), expected: () => model.retry(id) };
      }
      case "remove": {
        const id = pickId(write.pick);
        return { what: `remove(${String(id)})`, result: live.queue.remove(id), expected: () => model.remove(id) };
      }
      case "failWaiting": {
        const target = live.settings.targets[write.target % live.settings.targets.length] ?? "plex";
        const reason = `${target}: unavailable`;
        return {
          what: `failWaitingFor(${target})`,
          result: live.queue.failWaitingFor(target, write.agoMs, reason, live.settings.targets),
          expected: () => model.failWaitingFor(target, write.agoMs, reason, live.settings.targets),
        };
      }
    }
  }

  /** The call that ends a check or a scan in progress. */
  function ending(entry: InFlight, how: Ending): Made {
    const { item } = entry;
    if (entry.kind === "check") {
      const checks = item.checks + 1;
      const result: CheckResult =
        how.check === "ready"
          ? {
              kind: "ready",
              checks,
              scanFolder: item.folder,
              files: item.requests.filter((r) => r.kind === "file" && !r.deleted).map((r) => r.path),
            }
          : how.check === "wait"
            ? { kind: "wait", checks, waitMs: how.ms }
            : { kind: "failed", checks, reason: "the file never appeared" };
      return {
        what: `recordCheck(${String(item.id)}, ${how.check})`,
        result: live.queue.recordCheck(item.id, item.rev, result),
        expected: () => model.recordCheck(item.id, item.rev, result),
      };
    }
    const { target } = entry;
    const what = `${how.scan} scan of ${String(item.id)} by ${target}`;
    if (how.scan === "interrupted") {
      return { what, result: live.queue.recordInterrupted(item.id), expected: () => model.recordInterrupted(item.id) };
    }
    if (how.scan === "error") {
      const failure = { error: `${target}: boom`, retryInMs: how.ms, retryMaxMs: how.retryMaxMs };
      return {
        what,
        result: live.queue.recordFailure(item.id, item.rev, target, failure, live.settings.targets),
        expected: () => model.recordFailure(item.id, item.rev, target, failure, live.settings.targets),
      };
    }
    const outcome: ScanOutcome =
      how.scan === "scanned" ? { status: "scanned", detail: `section ${target}` } : { status: "skipped", reason: "in no library" };
    const all = live.settings.targets;
    return {
      what,
      result: live.queue.recordScan(item.id, item.rev, target, outcome, all),
      expected: () => model.recordScan(item.id, item.rev, target, outcome, all),
    };
  }

  /** Moves the clock to the next time a pending item becomes ready, if any. */
  async function sleepUntilReady(): Promise<void> {
    const at = model.nextReadyAt();
    if (at === undefined) return;
    await advance(at - clock.now());
    model.advance(at - model.state.now);
  }

  /** Restarts the live queue as `op` says; returns the model it must now equal. */
  async function reopen(op: Extract<Op, { k: "reopen" }>, before: QueueModel): Promise<QueueModel> {
    let candidates: QueueModel[] = [before];
    let dir = live.dir;
    if (op.how === "clean") {
      await live.queue.close();
    } else if (pgPlace) {
      // A write on its way when the instance stops: committed or not, as a whole.
      const writing = op.how === "torn" ? live.queue.enqueue(op.requests) : undefined;
      for (let i = 0; i < op.ticks; i++) await new Promise((resolve) => setImmediate(resolve));
      await live.queue.close();
      const result = await writing?.catch(() => undefined);
      if (writing && result) {
        const after = before.clone();
        expect(result, "the write on its way during the stop").toEqual({ items: after.enqueue(op.requests) });
        candidates = [before, after];
      }
    } else {
      let writing: Promise<EnqueueResult> | undefined;
      if (op.how === "torn") {
        writing = live.queue.enqueue(op.requests);
        for (let i = 0; i < op.ticks; i++) await new Promise((resolve) => setImmediate(resolve));
      }
      dir = await newDir();
      await crashCopy(live.dir, dir);
      if (op.how === "lost") await rm(join(dir, "queue.db"), { force: true });
      if (writing) {
        const result = await writing;
        const after = before.clone();
        expect(result, "the write on its way during the crash").toEqual({ items: after.enqueue(op.requests) });
        candidates = [before, after];
      }
      await live.queue.close();
      await rm(live.dir, { recursive: true, force: true });
    }
    logs.records.length = 0;
    live.queue = await open(dir, op.settings);
    live.dir = dir;
    live.settings = op.settings;
    for (const candidate of candidates) candidate.open(modelSettings(op.settings));
    const errors = logs.records
      .filter((record) => record.level >= 50)
      .map((record) => record.msg)
      .filter((msg) => !(op.how === "lost" && msg.includes("is missing but its previous snapshot is there")));
    expect(errors, `${op.how} reopen: the store reported damage or loss`).toEqual([]);
    // A write on its way when the files were copied is kept or lost as a whole: the queue equals one of the two.
    const views = { pending: await live.queue.listPending({ limit: 1000 }), history: await live.queue.listHistory({ limit: 1000 }) };
    const matching = candidates.find((candidate) =>
      isDeepStrictEqual(views, { pending: candidate.listPending(), history: candidate.listHistory() }),
    );
    return matching ?? candidates.at(-1) ?? before;
  }
}

/** A call made on the live queue, and what the model says it answers (applying it to the model). */
interface Made {
  readonly what: string;
  readonly result: Promise<unknown>;
  expected(): unknown;
}

/** The model's answer to a call the queue must refuse as a whole. */
const REFUSED = Symbol("refused");

/** Waits for all the calls, then holds each answer to the model's, applying the calls to the model in order. */
async function expectResults(made: readonly Made[], where: string): Promise<void> {
  const settled = await Promise.allSettled(made.map((m) => m.result));
  made.forEach((m, i) => {
    const expected = m.expected();
    const outcome = settled[i];
    if (expected === REFUSED) expect(outcome?.status, `${where}: ${m.what} (with a bogus request)`).toBe("rejected");
    else expect(outcome, `${where}: ${m.what}`).toEqual({ status: "fulfilled", value: expected });
  });
}

/** What users see: the queue and history pages, each item by id, the counts, and when the dispatcher wakes. */
async function expectSame(queue: ScanQueue, model: QueueModel, clock: Clock, ids: readonly number[], where: string): Promise<void> {
  expect(clock.now(), `${where}: the model's clock`).toBe(model.state.now);
  expect(await queue.listPending({ limit: 1000 }), `${where}: pending`).toEqual(model.listPending());
  expect(await queue.listHistory({ limit: 1000 }), `${where}: history`).toEqual(model.listHistory());
  expect(await queue.pendingCount(), `${where}: pendingCount`).toBe(model.pendingCount());
  expect(await queue.historyCount(), `${where}: historyCount`).toBe(model.listHistory().length);
  for (const id of ids) expect(await queue.getItem(id), `${where}: getItem(${String(id)})`).toEqual(model.getItem(id));
  // A hint: waking early is harmless, waking late is not.
  const wake = await queue.nextWakeAt(clock.now());
  const ready = model.nextReadyAt();
  if (ready === undefined) expect(wake === undefined || wake > clock.now(), `${where}: nextWakeAt ${String(wake)}`).toBe(true);
  else expect(wake !== undefined && wake > clock.now() && wake <= ready, `${where}: nextWakeAt ${String(wake)}, due ${String(ready)}`).toBe(true);
}

/** What the dispatcher is handed, in full (as a fresh process sees it after a restart). */
async function expectDispatchSame(live: Live, model: QueueModel, clock: Clock, where: string): Promise<void> {
  const none = new Set<number>();
  expect(await live.queue.dueForCheck(clock.now(), 1000, none), `${where}: dueForCheck`).toEqual(model.dueForCheck(1000, none));
  for (const target of ["plex", "jellyfin"]) {
    expect(await live.queue.dueForTarget(target, clock.now(), 1000, none), `${where}: dueForTarget(${target})`).toEqual(
      model.dueForTarget(target, 1000, none),
    );
  }
}

/**
 * The disk as a crash now would leave it, copied while the queue is open (a checkpoint may be running). Journals
 * first, then the previous snapshot, then the file: a journal is deleted only after the files that hold its changes
 * are in place, so this order never misses a change any of them held.
 */
async function crashCopy(from: string, to: string): Promise<void> {
  const names = await readdir(from);
  for (const name of [...names.filter((n) => n.includes(".journal.")), "queue.db.prev", "queue.db"]) {
    await copyFile(join(from, name), join(to, name)).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== "ENOENT") throw error;
    });
  }
}

describeEachStore("the queue store against its model", (adapter) => {
  it(
    "equals the model after every step, every restart and every crash",
    async () => {
      await fc.assert(
        fc.asyncProperty(settingsArb, fc.array(opArb, { maxLength: 60, size: "max" }), (settings, ops) => runSteps(adapter, settings, ops)),
        {
          // Each PostgreSQL step is dozens of round trips to the server: fewer runs, the same properties.
          numRuns: adapter.name === "postgresql" ? PG_RUNS : RUNS,
          endOnFailure: Boolean(process.env.QM_TRACE),
          ...(process.env.QUEUE_MODEL_SEED ? { seed: Number(process.env.QUEUE_MODEL_SEED) } : {}),
        },
      );
    },
    // Passing takes seconds; a failure shrinks (re-running sequences) and gets the time to say what failed.
    300_000,
  );
});
