/**
 * The console's figures (issue 12), printed, not asserted: with 10,000 folders in the history and 500 waiting, how
 * long the server takes to answer each page (render included), median and slowest of 30: the Queue page, the
 * History page (first, last, a search that finds one folder, a source filter, the failed ones), and the API's history.
 *
 *   node bench/console.ts
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { queueAdminFromScanQueue } from "../src/web/from-config.ts";
import { systemClock } from "../src/core/clock.ts";
import { createScanQueue } from "../src/queue/open-scan-queue.ts";
import { migrateDatabase } from "../src/queue/sqljs/migrate.ts";
import { migrations } from "../src/queue/sqljs/migrations/index.ts";
import { loadSqlJs } from "../src/core/sql-js.ts";
import { createApp } from "../src/web/app.ts";
import { createPathMapper } from "../src/paths/mapping.ts";

const HISTORY = 10_000;
const PENDING = 500;
const RUNS = 30;
const PASS = "b3nchb3nchb3nchb3nchb3nchb3nch00";
const silent = pino({ level: "silent" });

const root = await mkdtemp(join(tmpdir(), "autoscan-bench-console-"));
try {
  const file = join(root, "queue.db");
  await seed(file, Date.now());
  const queue = await createScanQueue({ file, clock: systemClock, log: silent, scanDelayMs: 3_600_000, historyMaxRows: 100_000, lock: false });
  const app = createApp({
    sink: queue.enqueue,
    mapper: createPathMapper({ mappings: {} }),
    queue: queueAdminFromScanQueue(queue),
    health: () => ({ ready: true }),
    log: silent,
    serverPass: PASS,
    allowManualScan: true,
    ignoreList: [],
    announce: false,
    console: { changes: { subscribe: (listener) => queue.onChange(listener) }, targets: () => ["plex"] },
  });
  console.log(`${HISTORY.toLocaleString("en-US")} folders in history, ${PENDING} waiting; ${RUNS} requests each (median / slowest):`);
  const pages: [string, string, string][] = [
    ["Queue page", `/${PASS}/queue`, "500 folders waiting"],
    ["History, first page", `/${PASS}/history`, "10,000 folders"],
    ["History, last page", `/${PASS}/history?offset=9950`, "9,951–10,000"],
    ["History, search for one folder", `/${PASS}/history?q=Show%209876%2F`, "1 folder match"],
    ["History, source filter", `/${PASS}/history?source=Radarr`, "2,000 folders match"],
    ["History, failed only", `/${PASS}/history?state=failed`, "1,000 folders match"],
    ["API history, 100 items", `/api/${PASS}?cmd=history&limit=100`, '"total":10000'],
  ];
  for (const [name, path, expected] of pages) {
    const times: number[] = [];
    let size = 0;
    for (let i = 0; i < RUNS; i++) {
      const started = performance.now();
      const body = await (await app.request(path)).text();
      times.push(performance.now() - started);
      size = body.length;
      if (!body.includes(expected)) throw new Error(`${name}: the answer does not contain '${expected}'`);
    }
    times.sort((a, b) => a - b);
    console.log(`  ${name.padEnd(32)} ${ms(times[Math.floor(RUNS / 2)]!)} / ${ms(times.at(-1)!)}  (${Math.round(size / 1024)} KiB)`);
  }
  await queue.close();
} finally {
  await rm(root, { recursive: true, force: true });
}

async function seed(file: string, now: number): Promise<void> {
  const db = new (await loadSqlJs()).Database();
  migrateDatabase(db, migrations, file);
  db.exec("BEGIN");
  const item = db.prepare(
    `INSERT INTO items (id, folder, state, priority, first_at, last_at, due_at, next_at, rev, checks, scan_folder, files,
       attempts, last_error, finished_at) VALUES (?, ?, ?, 0, ?, ?, ?, 0, 1, ?, ?, ?, ?, ?, ?)`,
  );
  const req = db.prepare("INSERT INTO requests (item_id, path, kind, deleted, source, event, at) VALUES (?, ?, 'file', 0, ?, 'Download', ?)");
  const target = db.prepare("INSERT INTO item_targets (item_id, target, status, at) VALUES (?, 'plex', 'scanned', ?)");
  for (let id = 1; id <= HISTORY + PENDING; id++) {
    const pending = id > HISTORY;
    const failed = !pending && id % 10 === 0;
    const folder = `/tv/Show ${id}/Season 01`;
    const at = now - (HISTORY + PENDING - id) * 1_000;
    const path = `${folder}/Show ${id} - S01E01.mkv`;
    const state = pending ? "pending" : failed ? "failed" : "done";
    item.run([id, folder, state, at, at, at + 3_600_000, pending ? 0 : 1, pending ? null : folder, pending ? null : JSON.stringify([path]),
      failed ? 3 : 0, failed ? "Plex answered 401: the token is wrong" : null, pending ? null : at + 200_000]);
    for (let r = 0; r < 3; r++) req.run([id, r === 0 ? path : `${folder}/Show ${id} - S01E0${r + 1}.mkv`, id % 5 === 0 ? "Radarr" : "Sonarr", at]);
    if (!pending && !failed) target.run([id, at + 200_000]);
  }
  db.exec("COMMIT");
  await writeFile(file, db.export());
  db.close();
}

function ms(value: number): string {
  return `${value.toFixed(1)} ms`;
}
