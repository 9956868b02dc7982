/**
 * The scan queue's figures (issue 4), printed, not asserted:
 *  1. ingest through the ScanSink, durable before each resolve, 20 concurrent producers, with 10,000 folders pending
 *     and 100,000 in history: requests/s and latency percentiles (target ≥ 3,000/s, p99 < 50 ms on 2 cores);
 *     half the requests merge into a waiting folder, half add a new one. The run is long enough to include at least
 *     one checkpoint of the whole file (counted), and a restart from a crash image is timed;
 *  2. a burst of 24 requests for one season within 2 s → target calls (expect exactly 1);
 *  3. 1,000 distinct due folders → time until all are dispatched (< 10 s): against a target that answers at once (the
 *     dispatcher's own cost), and one that answers in 10 ms, one and four scans at a time.
 *
 *   node bench/queue.ts                 BENCH_REQUESTS=150000 node bench/queue.ts
 */
import { copyFile, mkdir, mkdtemp, readdir, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { systemClock } from "../src/core/clock.ts";
import type { ScanRequest } from "../src/core/scan.ts";
import type { Target } from "../src/core/target.ts";
import { startLandedChecker } from "../src/landed/landed-checker.ts";
import { landedStart } from "../src/landed/landed-start.ts";
import type { WorkItem } from "../src/queue/dispatch/dispatch-port.ts";
import { createDispatcher } from "../src/queue/dispatch/dispatcher.ts";
import { migrateDatabase } from "../src/queue/sqljs/migrate.ts";
import { migrations } from "../src/queue/sqljs/migrations/index.ts";
import { createScanQueue } from "../src/queue/open-scan-queue.ts";
import { pathKey } from "../src/queue/sqljs/row-access.ts";
import { loadSqlJs } from "../src/core/sql-js.ts";
import { createFakeTarget } from "../test/support/fake-target.ts";
import { createManualClock } from "../test/support/manual-clock.ts";

const PENDING = 10_000;
const HISTORY = 100_000;
const PRODUCERS = 20;
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 80_000);
const silent = pino({ level: "silent" });

const root = await mkdtemp(join(tmpdir(), "autoscan-bench-queue-"));
try {
  const only = process.env.BENCH_ONLY;
  if (!only || only === "ingest") await ingest(join(root, "ingest"));
  if (!only || only === "burst") await burst(join(root, "burst"));
  if (!only || only === "dispatch") await dispatchThousand(join(root, "dispatch"));
} finally {
  await rm(root, { recursive: true, force: true });
}

async function ingest(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  const file = join(dir, "queue.db");
  let started = performance.now();
  await seed(file, Date.now());
  const size = (await stat(file)).size;
  console.log(`seeded ${PENDING} pending + ${HISTORY} history folders: ${mb(size)} file in ${ms(performance.now() - started)}`);

  started = performance.now();
  const queue = await createScanQueue({
    file,
    clock: systemClock,
    log: silent,
    scanDelayMs: 180_000,
    historyMaxDays: 365,
    historyMaxRows: 1_000_000,
  });
  console.log(`open (load, check, restore, first checkpoint): ${ms(performance.now() - started)}`);
  started = performance.now();
  await queue.enqueue([request("/bench/warmup/x.mkv")]);
  await queue.close();
  console.log(`close (final checkpoint of the whole file): ${ms(performance.now() - started)}`);

  const reopened = await createScanQueue({
    file,
    clock: systemClock,
    log: silent,
    scanDelayMs: 180_000,
    historyMaxDays: 365,
    historyMaxRows: 1_000_000,
  });
  const latencies: number[] = [];
  let next = 0;
  const producer = async (): Promise<void> => {
    while (next < REQUESTS) {
      const n = next++;
      // Even n: a new episode in one of the waiting seasons (a merge); odd n: a new season folder.
      const path =
        n % 2 === 0
          ? `/tv/Pending Show ${String(n % PENDING)}/Season 01/E${String(n)}.mkv`
          : `/tv/New Show ${String(n)}/Season 01/E01.mkv`;
      const t0 = performance.now();
      await reopened.enqueue([request(path)]);
      latencies.push(performance.now() - t0);
    }
  };
  // Each checkpoint renames a new file into place: count them by the file's inode.
  let checkpoints = 0;
  let inode = (await stat(file)).ino;
  const watcher = setInterval(() => {
    void stat(file).then((s) => {
      if (s.ino !== inode) checkpoints++;
      inode = s.ino;
    }, () => undefined);
  }, 10);
  const cpu = process.cpuUsage();
  started = performance.now();
  await Promise.all(Array.from({ length: PRODUCERS }, producer));
  const elapsed = performance.now() - started;
  const used = process.cpuUsage(cpu);
  clearInterval(watcher);
  latencies.sort((a, b) => a - b);
  const pct = (p: number): number => latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))] ?? 0;
  console.log(
    `ingest: ${REQUESTS} requests, ${PRODUCERS} producers, durable before each resolve: ` +
      `${Math.round(REQUESTS / (elapsed / 1000))} requests/s; latency p50 ${ms(pct(0.5))}, p99 ${ms(pct(0.99))}, ` +
      `max ${ms(latencies.at(-1) ?? 0)}; CPU ${Math.round(((used.user + used.system) / 1000 / elapsed) * 100)} %; ` +
      `pending now ${await reopened.pendingCount()}, history ${await reopened.historyCount()}; ` +
      `${checkpoints} checkpoint(s) of the whole file during the run`,
  );
  // A crash now: the disk as it is (journals first, then the file), reopened elsewhere.
  const crash = join(dir, "crash");
  await mkdir(crash);
  const names = await readdir(dir);
  let journalBytes = 0;
  for (const name of [...names.filter((n) => n.includes(".journal.")), "queue.db"]) {
    await copyFile(join(dir, name), join(crash, name));
    if (name.includes(".journal.")) journalBytes += (await stat(join(dir, name))).size;
  }
  started = performance.now();
  const restarted = await createScanQueue({
    file: join(crash, "queue.db"),
    clock: systemClock,
    log: silent,
    scanDelayMs: 180_000,
    historyMaxDays: 365,
    historyMaxRows: 1_000_000,
  });
  console.log(
    `restart after a crash (replaying ${mb(journalBytes)} of journal): ${ms(performance.now() - started)}, ` +
      `${await restarted.pendingCount()} pending restored`,
  );
  await restarted.close();
  started = performance.now();
  await reopened.close();
  console.log(`close after ingest (checkpoint of ${mb((await stat(file)).size)}): ${ms(performance.now() - started)}`);
  // Read after a full collection when there is one to call (`node --expose-gc bench/queue.ts`); `npm run bench` runs
  // with Node's defaults, as the service does, so the figure includes garbage V8 has not collected yet.
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  const memory = process.memoryUsage();
  console.log(`rss ${mb(memory.rss)}${gc ? ` after a full collection (outside V8's heap, sql.js's memory included: ${mb(memory.external)})` : ""}`);
}

async function burst(dir: string): Promise<void> {
  await mkdir(join(dir, "media/tv/Show/Season 01"), { recursive: true });
  const clock = createManualClock();
  const queue = await createScanQueue({ file: join(dir, "queue.db"), clock, log: silent, scanDelayMs: 180_000 });
  const plex = createFakeTarget();
  const dispatcher = createDispatcher({
    queue,
    targets: [plex],
    clock,
    log: silent,
    localForms: (path) => [join(dir, "media", path)],
    maxFileChecks: 10,
    fileCheckDelayMs: 60_000,
  });
  dispatcher.start();
  const settle = (): Promise<void> => dispatcher.whenIdle();
  for (let n = 1; n <= 24; n++) {
    const path = `/tv/Show/Season 01/Show - S01E${String(n).padStart(2, "0")}.mkv`;
    await writeFile(join(dir, "media", path), "");
    await queue.enqueue([request(path)]);
    await clock.advance(80, settle);
  }
  await clock.advance(60 * 60_000, settle);
  console.log(
    `burst: 24 requests for one season within ${(24 * 80) / 1000} s → ${plex.calls.length} target call(s) ` +
      `(${plex.calls[0]?.context.sources.length ?? 0} merged requests, folder '${plex.calls[0]?.folder ?? "-"}')`,
  );
  await dispatcher.stop();
  await queue.close();
}

/**
 * 1,000 due folders, each scanned by one target: the dispatcher's own cost per folder (a target that answers at once),
 * then a target that takes 10 ms per call with one scan at a time (the default `SERVER_SCAN_CONCURRENCY`; 10 s of
 * the total is the target's own time) and with four at a time.
 */
async function dispatchThousand(dir: string): Promise<void> {
  for (const { delayMs, concurrency, lookups } of [
    { delayMs: 0, concurrency: 1, lookups: false },
    { delayMs: 0, concurrency: 1, lookups: true },
    { delayMs: 10, concurrency: 1, lookups: false },
    { delayMs: 10, concurrency: 4, lookups: false },
  ]) {
    await dispatchFolders(join(dir, `${String(delayMs)}ms-${String(concurrency)}-${String(lookups)}`), delayMs, concurrency, lookups);
  }
}

/** `lookups`: the landed check runs beside the dispatcher (a target whose library answers at once, and shows every
 *  file): the dispatch time must hold, and every folder is confirmed landed. */
async function dispatchFolders(dir: string, delayMs: number, concurrency: number, lookups: boolean): Promise<void> {
  const media = join(dir, "media");
  const queue = await createScanQueue({ file: join(dir, "queue.db"), clock: systemClock, log: silent, scanDelayMs: 0 });
  const requests: ScanRequest[] = [];
  for (let n = 0; n < 1000; n++) {
    const path = `/movies/Film ${String(n)} (2020)/Film ${String(n)} (2020).mkv`;
    await mkdir(join(media, path, ".."), { recursive: true });
    await writeFile(join(media, path), "");
    requests.push(request(path, "Radarr"));
  }
  await queue.enqueue(requests);
  const answer = (): Promise<{ status: "scanned" }> =>
    delayMs === 0 ? Promise.resolve({ status: "scanned" }) : new Promise((resolve) => setTimeout(() => resolve({ status: "scanned" }), delayMs));
  const plex: Target = {
    ...createFakeTarget("plex", answer),
    ...(lookups ? { lookup: { settleMs: 0, find: async (files: readonly string[]) => new Map(files.map((file) => [file, true])) } } : {}),
  };
  const checker = lookups
    ? startLandedChecker({ queue, targets: () => [plex], settings: () => ({ recheckMs: 300_000 }), clock: systemClock, log: silent })
    : undefined;
  const dispatcher = createDispatcher({
    queue,
    targets: [plex],
    clock: systemClock,
    log: silent,
    localForms: (path) => [join(media, path)],
    maxFileChecks: 10,
    fileCheckDelayMs: 60_000,
    concurrency,
    ...(lookups ? { landed: (target: Target, item: WorkItem) => landedStart(true, target, item) } : {}),
  });
  const started = performance.now();
  dispatcher.start();
  while ((await queue.pendingCount()) > 0) await new Promise((resolve) => setTimeout(resolve, 20));
  const elapsed = performance.now() - started;
  const targetTime = (delayMs * 1000) / concurrency;
  const calls = (plex as ReturnType<typeof createFakeTarget>).calls.length;
  console.log(
    `dispatch: 1,000 due folders, target answering ${delayMs === 0 ? "at once" : `in ${String(delayMs)} ms`}, ` +
      `${String(concurrency)} scan(s) at a time${lookups ? ", landed lookups on" : ""} → ${String(calls)} calls in ${ms(elapsed)} ` +
      `(${(Math.round(((elapsed - targetTime) / 1000) * 10) / 10).toFixed(1)} ms per folder beyond the target's own time)`,
  );
  if (lookups) {
    // 300 looks per minute per target: 1,000 looks take over 3 minutes by design; report how far they got meanwhile.
    const landed = await queue.historyCount({ landed: "landed" });
    console.log(`landed: ${String(landed)} of 1,000 folders confirmed by the time dispatch ended (at most 300 looks per target per minute)`);
  }
  await checker?.stop();
  await dispatcher.stop();
  await queue.close();
}

/** A queue file with `PENDING` waiting folders and `HISTORY` finished ones, written straight with sql.js. */
async function seed(file: string, now: number): Promise<void> {
  const db = new (await loadSqlJs()).Database();
  migrateDatabase(db, migrations, file);
  db.exec("BEGIN");
  const item = db.prepare(
    `INSERT INTO items (id, folder, state, priority, first_at, last_at, due_at, next_at, rev, checks, scan_folder,
       files, attempts, finished_at, ready_at) VALUES (?, ?, ?, 0, ?, ?, ?, 0, 1, ?, ?, ?, 0, ?, ?6)`,
  );
  const req = db.prepare(
    "INSERT INTO requests (item_id, path, path_key, kind, deleted, source, event, at) VALUES (?, ?, ?, 'file', 0, 'Sonarr', 'Download', ?)",
  );
  const target = db.prepare("INSERT INTO item_targets (item_id, target, status, at) VALUES (?, 'plex', 'scanned', ?)");
  for (let id = 1; id <= PENDING + HISTORY; id++) {
    const pending = id <= PENDING;
    const folder = pending
      ? `/tv/Pending Show ${String(id - 1)}/Season 01`
      : `/tv/Finished Show ${String(id)}/Season 01`;
    const at = now - (pending ? 60_000 : (HISTORY - id) * 1_000);
    const file = `${folder}/Finished Show - S01E01 - Pilot WEBDL-1080p.mkv`;
    item.run([id, folder, pending ? "pending" : "done", at, at, at + 180_000, pending ? 0 : 1, pending ? null : folder,
      pending ? null : JSON.stringify([file]), pending ? null : at + 200_000]);
    req.run([id, file, pathKey(file), at]);
    if (!pending) target.run([id, at + 200_000]);
  }
  db.exec("COMMIT");
  await writeFile(file, db.export());
  db.close();
}

function request(path: string, source = "Sonarr"): ScanRequest {
  return { path, kind: "file", source, event: "Download" };
}

function ms(value: number): string {
  return value >= 1000 ? `${(value / 1000).toFixed(2)} s` : `${value.toFixed(1)} ms`;
}

function mb(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}
