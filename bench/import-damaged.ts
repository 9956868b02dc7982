/**
 * A plex_autoscan `queue.db` of 20,000 waiting rows moved over whole, with 64 KB of garbage two-thirds in, and cut to
 * half: for each, the rows read and lost, the time to read the file alone (plex-autoscan-file.ts: the walk, and the
 * id-by-id search past the damage), and the time of the whole import into a fresh embedded queue (real sql.js, real
 * files). Median of 3 runs each.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openPlexAutoscanQueue } from "../src/queue/plex-autoscan-file.ts";
import { describeDamage, importPlexAutoscanQueue, type ImportSummary } from "../src/queue/plex-autoscan-import.ts";
import { createScanQueue } from "../src/queue/open-scan-queue.ts";
import { captureLog } from "../test/support/capture-log.ts";
import { createManualClock } from "../test/support/manual-clock.ts";
import { backlogPaths, damagePlexAutoscanQueue, writePlexAutoscanQueue } from "../test/support/plex-autoscan-queue.ts";

const ROWS = 20_000;
const RUNS = 3;
const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;

async function once(dir: string, damage: "none" | "garbage" | "truncate"): Promise<{ readMs: number; importMs: number; summary: ImportSummary }> {
  const file = join(dir, `plex_autoscan-${damage}.db`);
  await rm(file, { force: true });
  writePlexAutoscanQueue(file, backlogPaths(ROWS));
  if (damage !== "none") damagePlexAutoscanQueue(file, damage);
  const open = async () => {
    const opened = await openPlexAutoscanQueue(file);
    if (opened.kind !== "queue") throw new Error(`${file}: not read as plex_autoscan's queue (${opened.kind})`);
    return opened.queue;
  };
  const reading = await open();
  let began = performance.now();
  for (const row of reading.rows(0)) void row;
  const readMs = performance.now() - began;
  reading.close();

  const queueFile = join(dir, `queue-${damage}.db`);
  await rm(queueFile, { force: true });
  const queue = await createScanQueue({ file: queueFile, clock: createManualClock(), log: captureLog().log, scanDelayMs: 180_000, lock: false });
  const source = await open();
  began = performance.now();
  const summary = await importPlexAutoscanQueue({ source, queue });
  const importMs = performance.now() - began;
  source.close();
  await queue.close();
  await rm(dir, { recursive: true, force: true }).catch(() => undefined);
  return { readMs, importMs, summary };
}

for (const damage of ["none", "garbage", "truncate"] as const) {
  const reads: number[] = [];
  const imports: number[] = [];
  let summary: ImportSummary | undefined;
  for (let run = 0; run < RUNS; run++) {
    const dir = await mkdtemp(join(tmpdir(), "autoscan-bench-import-"));
    const result = await once(dir, damage);
    reads.push(result.readMs);
    imports.push(result.importMs);
    summary = result.summary;
  }
  const label = { none: "intact", garbage: "64 KB of garbage 2/3 in", truncate: "cut to half" }[damage];
  console.log(
    `${ROWS.toLocaleString("en-US")} rows, ${label}: ${summary?.rows.toLocaleString("en-US") ?? "?"} read; file read ${median(reads).toFixed(0)} ms, ` +
      `import ${median(imports).toFixed(0)} ms (median of ${String(RUNS)}).${summary ? describeDamage(summary) : ""}`,
  );
}
