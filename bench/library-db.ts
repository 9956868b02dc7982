/**
 * "Is this file already in Plex?" against a synthetic Plex library database of ~1 GB (the real table shapes from
 * test/support/plex-library-schema.ts, Plex's index names, WAL mode with a writer holding un-checkpointed rows, and
 * Plex's ICU schema pieces). Prints lookups per second, latency percentiles and the RSS of a fresh process doing
 * the lookups, for the big database and for a small one, so memory growth with database size shows.
 *
 *   node bench/library-db.ts                 # 1024 MB and 64 MB
 *   BENCH_DB_MB=256 node bench/library-db.ts # another size
 *
 * The databases live in a temp dir that is removed at the end. Note: right after the build the file is in the OS
 * page cache; a cold cache adds a few disk reads per lookup (B-tree depth ~4).
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import pino from "pino";
import { createLibraryDb } from "../src/targets/plex/library-db.ts";
import { applyPlexOnlySchema, PLEX_LIBRARY_SCHEMA } from "../test/support/plex-library-schema.ts";

const BYTES_PER_ITEM = 1_020; // measured: one item (metadata + media item + part) with all indexes
const LOOKUPS = 50_000;

if (process.argv[2] === "--measure") {
  await measure(process.argv[3] ?? "", Number(process.argv[4]));
} else {
  await main();
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "autoscan-bench-plexdb-"));
  try {
    const sizes = process.env.BENCH_DB_MB ? [Number(process.env.BENCH_DB_MB)] : [1024, 64];
    for (const mb of sizes) {
      const path = join(dir, `library-${mb}.db`);
      const items = Math.round((mb * 1024 * 1024) / BYTES_PER_ITEM);
      const started = performance.now();
      build(path, items);
      const buildS = (performance.now() - started) / 1000;
      const writer = plexWriter(path);
      const dbMb = statSync(path).size / 1024 / 1024;
      const walMb = statSync(`${path}-wal`).size / 1024 / 1024;
      console.log(`\n== ${dbMb.toFixed(0)} MB database (+${walMb.toFixed(1)} MB WAL), ${items} items, built in ${buildS.toFixed(1)} s`);
      const out = execFileSync(process.execPath, [import.meta.filename, "--measure", path, String(items)], {
        encoding: "utf8",
      });
      process.stdout.write(out);
      writer.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Plex's shape, bulk-loaded: rows first, indexes after, then WAL mode and Plex's ICU pieces. */
function build(path: string, items: number): void {
  const db = new DatabaseSync(path);
  db.exec("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA cache_size=-262144; PRAGMA temp_store=MEMORY");
  const statements = PLEX_LIBRARY_SCHEMA.split(/;\s*\n/).map((s) => s.trim()).filter(Boolean);
  const isIndex = (sql: string): boolean => /^CREATE INDEX/i.test(sql);
  const isTable = (sql: string): boolean => /^CREATE TABLE/i.test(sql);
  for (const sql of statements.filter(isTable)) db.exec(sql);
  db.exec("INSERT INTO library_sections (id, name, section_type) VALUES (1, 'Movies', 1), (2, 'TV', 2)");
  db.exec("INSERT INTO section_locations (library_section_id, root_path) VALUES (1, '/data/Movies'), (2, '/data/TV')");
  const metadata = db.prepare(
    `INSERT INTO metadata_items (id, library_section_id, parent_id, metadata_type, guid, title, title_sort, summary,
       "index", year, added_at, created_at, updated_at) VALUES (?, ?, NULL, ?, ?, ?, ?, ?, ?, 2001, ?, ?, ?)`,
  );
  const media = db.prepare(
    `INSERT INTO media_items (id, library_section_id, metadata_item_id, size, duration, bitrate, container, video_codec,
       audio_codec, width, height, created_at, updated_at) VALUES (?, ?, ?, ?, 5400000, 8000, 'mkv', 'h264', 'eac3', 1920, 1080, ?, ?)`,
  );
  const part = db.prepare(
    `INSERT INTO media_parts (id, media_item_id, directory_id, hash, file, size, duration, created_at, updated_at,
       deleted_at) VALUES (?, ?, ?, ?, ?, ?, 5400000, ?, ?, ?)`,
  );
  const summary = "A synthetic summary standing in for Plex's metadata text. ".repeat(6);
  db.exec("BEGIN");
  for (let i = 1; i <= items; i++) {
    const section = i % 3 === 0 ? 1 : 2;
    const file = fileOf(i);
    const title = section === 1 ? `Movie ${i}` : `Episode ${i}`;
    metadata.run(i, section, section === 1 ? 1 : 4, `plex://item/${i.toString(16)}`, title, title, summary, i % 24, i, i, i);
    media.run(i, section, i, 1_000_000 + i, i, i);
    part.run(i, i, Math.floor(i / 10), `${i.toString(16).padStart(40, "0")}`, file, 1_000_000 + i, i, i, i % 97 === 0 ? i : null);
    if (i % 100_000 === 0) db.exec("COMMIT; BEGIN");
  }
  db.exec("COMMIT");
  for (const sql of statements.filter((s) => isIndex(s) || !isTable(s))) db.exec(sql);
  db.exec("PRAGMA journal_mode=WAL");
  applyPlexOnlySchema(db);
  db.close();
}

/** A connection that keeps writing like a running Plex: its rows stay in the -wal file, not yet checkpointed. */
function plexWriter(path: string): DatabaseSync {
  const writer = new DatabaseSync(path);
  writer.exec("PRAGMA wal_autocheckpoint=0; BEGIN");
  const part = writer.prepare("INSERT INTO media_parts (media_item_id, file, size) VALUES (?, ?, ?)");
  for (let i = 1; i <= 2_000; i++) part.run(i, `/data/Movies/New ${i}/New ${i}.mkv`, 42);
  writer.exec("COMMIT");
  return writer;
}

function fileOf(i: number): string {
  if (i % 3 === 0) return `/data/Movies/Movie ${i} (${1950 + (i % 70)})/Movie ${i} (${1950 + (i % 70)}) - 1080p.mkv`;
  const show = Math.floor(i / 240);
  return `/data/TV/Show ${show}/Season ${String((i % 12) + 1).padStart(2, "0")}/Show ${show} - S${(i % 12) + 1}E${i % 24} - Episode ${i}.mkv`;
}

async function measure(path: string, items: number): Promise<void> {
  const mb = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
  const rssBefore = process.memoryUsage().rss;
  const library = createLibraryDb({ path, log: pino({ level: "silent" }), disableSizeCheck: true });
  const local = join(tmpdir(), `autoscan-bench-local-${process.pid}.mkv`);
  writeFileSync(local, Buffer.alloc(42));
  const sized = createLibraryDb({ path, log: pino({ level: "silent" }) });
  let seed = 12345;
  const random = (): number => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
  const timings = new Float64Array(LOOKUPS);
  let hits = 0;
  const started = performance.now();
  for (let n = 0; n < LOOKUPS; n++) {
    const i = 1 + Math.floor(random() * items);
    const file = n % 4 === 3 ? `/data/Movies/Missing ${i}/Missing.mkv` : fileOf(i);
    const t0 = performance.now();
    if (await library.isInLibrary(file)) hits++;
    timings[n] = performance.now() - t0;
  }
  const elapsed = performance.now() - started;
  const walHit = await library.isInLibrary("/data/Movies/New 7/New 7.mkv");
  const sizedHit = await sized.isInLibrary("/data/Movies/New 7/New 7.mkv", local);
  const itemStart = performance.now();
  for (let n = 0; n < 5_000; n++) await library.findItems([fileOf(1 + Math.floor(random() * items))]);
  const itemMs = (performance.now() - itemStart) / 5_000;
  const rssAfter = process.memoryUsage().rss;
  timings.sort();
  const pct = (p: number): string => (timings[Math.min(LOOKUPS - 1, Math.floor((p / 100) * LOOKUPS))] ?? 0).toFixed(3);
  console.log(`isInLibrary: ${LOOKUPS} lookups (75% hits, ${hits} found) in ${(elapsed / 1000).toFixed(2)} s`);
  console.log(`  ${Math.round(LOOKUPS / (elapsed / 1000))} lookups/s; p50 ${pct(50)} ms, p99 ${pct(99)} ms, max ${pct(100)} ms`);
  console.log(`  row only in the -wal file seen: ${walHit}; with the size check (stat): ${sizedHit}`);
  console.log(`findItems (part → item → parent): ${itemMs.toFixed(3)} ms per file`);
  console.log(`RSS: ${mb(rssBefore)} before opening, ${mb(rssAfter)} after all lookups (+${mb(rssAfter - rssBefore)})`);
  library.close();
  sized.close();
  rmSync(local, { force: true });
}
